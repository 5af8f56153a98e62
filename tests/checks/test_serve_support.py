"""SERVE314: a command against the installed vllm-ascend release's own support matrix (serve/support-matrix, read from
each release's docs/source/user_guide/support_matrix/ by matrix sync). Each failure has its control."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.support_matrix import doc_families, is_model, model_keys
from ascend_doctor.report import Status
from ascend_doctor.sync.archive import open_tree
from ascend_doctor.sync.support_matrix import read_feature_pairs, read_models
from tests.checks.test_serve_checks import QWEN, facts, npu, on_release, run_check
from tests.helpers import REPO, shipped

SDISTS = Path(os.environ.get("ASCEND_DOCTOR_SDISTS", REPO.parent / "sdists"))


def _model(tmp_path, folder: str, config: dict) -> str:
    d = tmp_path / folder
    d.mkdir()
    (d / "config.json").write_text(json.dumps(config))
    return str(d)


_on = on_release


def _chips(name: str):
    smi = npu(4)
    for c in smi.info.chips:
        c.name = name
    return smi


def test_a_model_the_release_marks_not_supported_fails_with_its_issue(tmp_path):
    llama4 = _model(tmp_path, "Llama-4-Scout-17B-16E-Instruct",
                    {"model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"]})
    out = run_check("SERVE314", _on(facts(f"vllm serve {llama4}"), "0.13.0"))
    assert out.status == Status.FAIL
    assert "vllm-ascend 0.13.0's support matrix marks Llama4 ❌ not supported" in out.message
    assert "https://github.com/vllm-project/vllm-ascend/issues/1972" in out.message
    ok = run_check("SERVE314", _on(facts(f"vllm serve {QWEN}"), "0.13.0"))  # Qwen3: ✅
    assert ok.status == Status.PASS and "Qwen3" in ok.message


def test_a_feature_the_models_row_marks_unsupported(tmp_path):
    m = _model(tmp_path, "MiniMax-M2.5", {"model_type": "minimax_m2", "architectures": ["MiniMaxM2ForCausalLM"]})
    out = run_check("SERVE314", _on(facts(f"vllm serve {m} --enable-lora"), "0.21.0rc1"))
    assert out.status == Status.FAIL and "LoRA (--enable-lora) is marked ❌ for MiniMax-M2.5" in out.message
    ok = run_check("SERVE314", _on(facts(f"vllm serve {m} --tensor-parallel-size 8"), "0.21.0rc1"))
    assert ok.status == Status.PASS


def test_a_pair_of_features_the_release_marks_incompatible():
    fc1 = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}
    bad = facts(f"vllm serve {QWEN} --additional-config " + '{"lmhead_tensor_parallel_size":8}', env=fc1)
    out = run_check("SERVE314", _on(bad, "0.21.0rc1"))
    assert out.status == Status.FAIL and "Flashcomm1 (VLLM_ASCEND_ENABLE_FLASHCOMM1=1) with Lmhead TP" in out.message
    ok = run_check("SERVE314", _on(facts(f"vllm serve {QWEN}", env=fc1), "0.21.0rc1"))
    assert ok.status == Status.PASS


def test_a_pair_the_releases_own_tutorials_run_warns_naming_them():
    """0.21.0rc1's feature_matrix.md marks Flashcomm1 + Mlapo ❌, and its DeepSeek-V3.2, GLM-5 and Kimi-K2.5
    tutorials export both switches (matrix sync: tutorial_pairs): the release's docs disagree, so the pair warns with
    both sources instead of failing the release's own commands (docs/research/tutorial-controls.md)."""
    env = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1", "VLLM_ASCEND_ENABLE_MLAPO": "1"}
    out = run_check("SERVE314", _on(facts(f"vllm serve {QWEN}", env=env), "0.21.0rc1"))
    assert out.status == Status.WARN, out.message
    assert "feature_matrix.md marks the pair ❌" in out.message and "models/DeepSeek-V3.2.md:143" in out.message
    assert "the release's docs disagree" in out.message


def test_a_cell_scoped_to_one_chip_counts_only_on_that_chip(tmp_path):
    m = _model(tmp_path, "Qwen3-30B-A3B", {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"],
                                           "torch_dtype": "bfloat16"})
    duo = facts(f"vllm serve {m} --dtype bfloat16", npus=_chips("310P3"))
    out = run_check("SERVE314", _on(duo, "0.30.0rc2"))
    assert out.status == Status.FAIL and "BF16 (--dtype bfloat16) is marked ❌ for Qwen3-30B-A3B on Atlas 300I DUO" \
        in out.message
    a2 = run_check("SERVE314", _on(facts(f"vllm serve {m} --dtype bfloat16"), "0.30.0rc2"))
    assert a2.status == Status.PASS


def test_a_model_listed_for_other_hardware_warns(tmp_path):
    m = _model(tmp_path, "Hy3-preview", {"model_type": "hy3", "architectures": ["HY3ForCausalLM"]})
    out = run_check("SERVE314", _on(facts(f"vllm serve {m}"), "0.21.0rc1"))  # 910B3: A2, the row lists A3
    assert out.status == Status.WARN and "listed for A3 only" in out.message and "A2 (910B3)" in out.message
    assert run_check("SERVE314", _on(facts(f"vllm serve {m}", npus=_chips("Ascend910")), "0.21.0rc1")).status \
        == Status.PASS


def test_a_chip_no_row_of_the_release_names_is_not_judged_by_the_hardware_column(tmp_path):
    """Before 0.23.0 no row of vllm-ascend's support matrix names a 300I Duo (every row says A2/A3; the 310P has its
    own guide): "listed for A2/A3 only" on a 310P host was a warning on every model — questioned by blind holdout
    h38b (vllm-ascend#11406: 0.21.0rc1's own 310P page serves Eco-Tech/Qwen3-32B-w8a8sc-310-vllm) and a false warning
    in h38c (#8284: Qwen3-30B-A3B on 0.18.0rc1's 310P, which runs once fp8 KV is dropped; 0.15.0rc1's notes: "310P
    now supports MoE models"). The column is silent there, not against the model. From 0.23.0 the matrix has
    Atlas 300I DUO rows, and a model listed for A2/A3 only still warns on a 310P."""
    qwen3 = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}
    for folder in ("Qwen3-32B-w8a8sc-310-vllm-tp4", "Qwen3-32B"):
        m = _model(tmp_path, folder, qwen3)
        out = run_check("SERVE314", _on(facts(f"vllm serve {m}", npus=_chips("310P3")), "0.21.0rc1"))
        assert out.status == Status.PASS and "listed for" not in out.message, out.message
        assert any("does not cover this host's chips" in str(e.excerpt) for e in out.evidence)
    nxt = _model(tmp_path, "Qwen3-Next-80B-A3B-Instruct", {"model_type": "qwen3_next",
                                                          "architectures": ["Qwen3NextForCausalLM"]})
    out = run_check("SERVE314", _on(facts(f"vllm serve {nxt}", npus=_chips("310P3")), "0.23.0"))
    assert out.status == Status.WARN and "Qwen3-Next is listed for A2/A3 only" in out.message, out.message
    release, _ = Knowledge().support_matrix.row_for("0.21.0rc1")
    assert release.tutorial_serving("/m/Qwen3-32B-w8a8sc-310-vllm-tp4", {"310P"}) == "310P hardwares/310p.md:158"
    assert release.tutorial_serving("/m/qwen3-32b-w8a8", {"310P"}) == ""  # W8A8 is not W8A8SC: no separator after
    assert release.tutorial_serving("/m/Qwen3-32B-w8a8sc-310-vllm-tp4", {"A2"}) == ""  # another chip's tutorial


def test_a_checkpoint_newer_than_the_release_warns_naming_the_first_matrix_that_lists_it(tmp_path):
    """GLM-5.2 on 0.21.0rc1, whose matrix predates it: "no row for this model" was a pass. The first later release
    whose matrix lists the checkpoint (0.22.1rc1) is named; a model no matrix lists, or one the installed matrix
    lists, gets no such warning. (The h38b thread that raised it, vllm-ascend#11208, ran GLM-5.2 on 0.22.1rc1, whose
    matrix does list it — the release's docs claim what the release lacked: not caught by this.) Rows are matched by
    the folder's name at a word boundary, the most specific row (`GLM-5.2`, not `GLM-5/5.1`)."""
    glm = {"model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"]}
    m = _model(tmp_path, "GLM-5.2-w8a8", glm)
    out = run_check("SERVE314", _on(facts(f"vllm serve {m}"), "0.21.0rc1"))
    assert out.status == Status.WARN, out.message
    assert "GLM-5.2-w8a8 has no row in vllm-ascend 0.21.0rc1's support matrix; the first release whose matrix lists " \
           "it is 0.22.1rc1 (GLM-5.2)" in out.message
    later = run_check("SERVE314", _on(facts(f"vllm serve {m}"), "0.22.1rc1"))
    assert "the first release whose matrix lists it" not in later.message
    old = run_check("SERVE314", _on(facts(f"vllm serve {m}"), "0.9.1"))  # its `Model | Supported` table is read
    assert "vllm-ascend 0.9.1's support matrix; the first release whose matrix lists it is 0.22.1rc1" in old.message
    assert run_check("SERVE314", _on(facts(f"vllm serve {QWEN}"), "0.23.0")).status == Status.PASS


def test_a_checkpoint_the_releases_own_tutorial_serves_is_not_newer_than_the_release(tmp_path):
    """0.13.0rc1's model table has no Kimi-K2-Thinking row (0.13.0rc2's is the first), but its own tutorial serves
    the checkpoint on A3: the release does not predate the model, so no such warning (an h38k false warning); the
    evidence says both."""
    m = _model(tmp_path, "Kimi-K2-Thinking", {"model_type": "kimi_k2", "architectures": ["KimiK2ForCausalLM"]})
    out = run_check("SERVE314", _on(facts(f"vllm serve {m}"), "0.13.0rc1"))
    assert "may predate" not in out.message, out.message
    assert any("Kimi-K2-Thinking.md" in e.excerpt and "0.13.0rc2" in e.excerpt for e in out.evidence)


def test_rows_are_matched_by_the_most_specific_name_beginning_the_folder():
    from types import SimpleNamespace

    from ascend_doctor.knowledge.support_matrix import rows_of

    table = Knowledge().support_matrix

    def rows(folder: str, version: str) -> list:
        return rows_of(table.row_for(version)[0], SimpleNamespace(config={}, path=f"/m/{folder}", model=folder))

    assert rows("Qwen3-Next-80B-A3B-Instruct", "0.21.0rc1") == ["Qwen3-Next"]  # not Qwen3 as well
    assert rows("GLM-5.1-w8a8", "0.21.0rc1") == ["GLM-5/5.1"]  # a version after the slash is the first name's
    assert rows("GLM-5.2-w8a8", "0.21.0rc1") == []  # GLM-5 does not begin GLM-5.2
    assert rows("Llama-3.1-8B-Instruct", "0.23.0") == ["Llama2/3/3.1/3.2"]
    assert rows("DeepSeek-V3.2-W8A8", "0.23.0") == ["DeepSeek V3.2"]  # not DeepSeek V3/3.1


def test_unknowns_and_skips():
    assert run_check("SERVE314", _on(facts(f"vllm serve {QWEN}"), "0.99.0")).status == Status.UNKNOWN
    f = facts(f"vllm serve {QWEN}")
    f["python"].distributions = [d for d in f["python"].distributions if d.name != "vllm-ascend"]
    assert run_check("SERVE314", f).status == Status.SKIP


# The reader and the matching ------------------------------------------------------------------------------------------
MODELS = """| Model | Support | Note | BF16 | Supported Hardware | LoRA | Doc |
|---|---|---|---|---|---|---|
| Qwen3-Moe | ✅ | | ✅ | A2/A3 | ❌ | [x](y) |
| Qwen3-Dense | ✅ | | ❌ | Atlas 300I DUO | 🟡 | |
| Llama4 | ❌ | [1972](https://github.com/vllm-project/vllm-ascend/issues/1972) | |
| InternVL2.0/2.5<br>Mono-InternVL | ❌ | [2064](https://x/2064) | |
"""


def test_the_reader_keeps_only_verdicts():
    got = read_models(MODELS)
    assert got["not_supported"] == ["Llama4", "InternVL2.0/2.5/Mono-InternVL"]
    assert got["notes"] == ["Llama4: https://github.com/vllm-project/vllm-ascend/issues/1972",
                            "InternVL2.0/2.5/Mono-InternVL: https://x/2064"]
    assert got["model_feature"] == ["Qwen3-Moe [A2/A3]: LoRA", "Qwen3-Dense [Atlas 300I DUO]: BF16"]
    assert got["hardware"] == ["Qwen3-Moe: A2/A3", "Qwen3-Dense: Atlas 300I DUO"]
    pairs = "| Feature | A | B |\n| - | - | - |\n| A | ✅ | |\n| [<abbr title='b'>B</abbr>](u) | ❌ | ✅ |\n"
    assert read_feature_pairs(pairs) == ["A + B"]


def test_model_matching_is_exact_on_names_and_a_prefix_on_checkpoint_folders():
    class M:
        def __init__(self, path, config):
            self.path, self.config, self.model = path, config, path

    keys, folder = model_keys(M("/models/Qwen3-30B-A3B-Instruct-2507", {"model_type": "qwen3_moe",
                                                                       "architectures": ["Qwen3MoeForCausalLM"]}))
    assert is_model("Qwen3-Moe", keys, folder) and is_model("Qwen3-30B-A3B", keys, folder)
    assert not is_model("Qwen3", keys, folder) and not is_model("Qwen3-Next", keys, folder)
    assert doc_families("A2/A3") == {"A2", "A3"} and doc_families("Atlas 300I DUO") == {"310P"}
    assert doc_families("950DT Products") == {"A5"}


@pytest.mark.parametrize("name", ["vllm_ascend-0.13.0.tar.gz", "vllm_ascend-0.23.0.tar.gz",
                                  "vllm_ascend-0.30.0rc2.tar.gz"])
def test_a_shipped_row_is_what_sync_reads_from_its_sdist(name):
    """The stored PyPI sdist (ASCEND_DOCTOR_SDISTS/va; skipped on a plain clone) gives the shipped row exactly."""
    from ascend_doctor.sync.ascend import read_own
    from ascend_doctor.sync.run import serve_parser
    from ascend_doctor.sync.support_matrix import FIELDS, read_support_matrix

    path = SDISTS / "va" / name
    if not path.is_file():
        pytest.skip(f"{path} not stored here")
    tree = open_tree(str(path))
    got = read_support_matrix(tree.read, tree.listdir, serve_parser(Knowledge().matrix, read_own(tree).vllm_tag))
    row, how = Knowledge().support_matrix.row_for(name.split("-")[1].removesuffix(".tar.gz"))
    assert how == "exact" and all(got[k] == getattr(row, k) for k in FIELDS) and got["where"] == row.where


def test_exec_replay_fails_a_feature_the_release_marks_unsupported_for_the_model_on_this_chip(tmp_path):
    """`exec --replay` of the healthy A2 snapshot, its stack moved to vllm-ascend 0.21.0rc1 / vLLM 0.21.0: the
    release's matrix marks LoRA ❌ for MiniMax-M2.5 on A2/A3; the model folder's name says which row it is."""
    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    data = json.loads((REPO / "examples" / "healthy-a2.snapshot.json").read_text())
    for d in data["python_envs"]["default"]["distributions"]:
        d["version"] = {"vllm": "0.21.0", "vllm-ascend": "0.21.0rc1"}.get(d["name"], d["version"])
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps(data))

    def run(*flags):
        r = CliRunner().invoke(cli, ["exec", "--replay", str(snap), "--select", "SERVE314", "--format", "json",
                                     "-o", "-", "--", "vllm", "serve", "/models/MiniMax-M2.5", *flags])
        report = json.JSONDecoder().raw_decode(r.output, r.output.index("{"))[0]
        return r.exit_code, next(f for f in report["findings"] if f["code"] == "SERVE314")

    code, f = run("--enable-lora")
    assert code == 1 and f["status"] == "fail" and "LoRA (--enable-lora) is marked ❌ for MiniMax-M2.5 on A2/A3" \
        in f["message"]
    code, f = run("--tensor-parallel-size", "8")
    assert code == 0 and f["status"] == "pass"


def test_serve305_counts_the_hccl_buffers_the_server_environment_sets():
    """#41: 2 x HCCL_BUFFSIZE per communicator; deployments set 512-1024 MB, not CANN's default 200."""
    default = run_check("SERVE305", facts(f"vllm serve {QWEN} --tensor-parallel-size 2"))
    big = run_check("SERVE305", facts(f"vllm serve {QWEN} --tensor-parallel-size 2", env={"HCCL_BUFFSIZE": "1024"}))
    text = lambda f: " ".join(str(e.excerpt) for e in f.evidence)  # noqa: E731
    assert "HCCL_BUFFSIZE=200" in text(default) and "HCCL_BUFFSIZE=1024" in text(big)


def test_serve305_sizes_the_kv_cache_at_the_kv_cache_dtype(tmp_path):
    """#41: the KV dtype was always 2 bytes; `--kv-cache-dtype fp8` stores one."""
    from tests.deploy import configs as C

    m = _model(tmp_path, "Qwen3-8B", C.QWEN3_8B)

    def per_token(flags):
        out = run_check("SERVE305", facts(f"vllm serve {m} {flags}"))
        return " ".join(str(e.excerpt) for e in out.evidence)

    assert "× 2 B = 4096 B per layer" in per_token("") and "× 1 B = 2048 B per layer" in per_token(
        "--kv-cache-dtype fp8")


def test_serve305_on_a_310p_halves_the_kv_budget_for_the_installed_release(tmp_path):
    """SERVE305 reads the installed vllm-ascend for the 310P halving (a fact it declares): 0.18.0rc1 on, the table
    has the workspace term; 0.17.0rc1 not."""
    from tests.deploy import configs as C

    m = _model(tmp_path, "Qwen3-8B", C.QWEN3_8B)
    duo = lambda v: on_release(facts(f"vllm serve {m} --max-model-len 4096 --dtype float16",  # noqa: E731
                                     npus=_chips("310P3")), v)
    text = lambda f: " ".join(str(e.excerpt) for e in f.evidence)  # noqa: E731
    new, old = run_check("SERVE305", duo("0.21.0rc1")), run_check("SERVE305", duo("0.17.0rc1"))
    assert "worker_310p.py" in text(new) and "worker_310p.py" not in text(old)


def _dev(f: dict, ascend: str, vllm: str) -> dict:
    from ascend_doctor.seam.host import Distribution

    f = on_release(f, ascend)
    f["python"].distributions = [d for d in f["python"].distributions if d.name != "vllm"] + [
        Distribution(name="vllm", version=vllm)]
    return f


def test_a_development_build_is_judged_by_the_release_pairing_its_vllm_and_only_warns(tmp_path):
    """A build of main named after a stale tag (setuptools-scm counts from the last tag it reaches: vllm-ascend
    0.19.1rc2.dev1265 beside vLLM 0.25.1, #14260) had no support matrix ("not recorded"); it is now judged against
    the release that pairs its vLLM, and what that release rules out only warns (the build may differ)."""
    m = _model(tmp_path, "MiniMax-M2.5", {"model_type": "minimax_m2", "architectures": ["MiniMaxM2ForCausalLM"]})
    out = run_check("SERVE314", _dev(facts(f"vllm serve {m} --enable-lora"), "0.19.1rc2.dev40", "0.21.0"))
    assert out.status == Status.WARN and "LoRA (--enable-lora) is marked ❌ for MiniMax-M2.5" in out.message
    assert "0.19.1rc2.dev40 is a development build, judged against 0.21.0rc1's matrix" in out.message
    ok = run_check("SERVE314", _dev(facts(f"vllm serve {m} --tensor-parallel-size 8"), "0.19.1rc2.dev40", "0.21.0"))
    assert ok.status == Status.PASS and "judged against 0.21.0rc1's matrix" in ok.message
    between = run_check("SERVE314", _dev(facts(f"vllm serve {m} --enable-lora"), "0.21.0rc2.dev3", "0.21.0"))
    assert between.status == Status.UNKNOWN  # a build between two tags of one line: no stand-in of another era


# The shape of vllm-ascend 0.21.0rc1's docs/source/tutorials/hardwares/310p.md (its title, a deployment section, two
# served checkpoints, one left to a variable), written here, not copied.
HW_310P = """# Atlas 300I DUO

## Online Inference on NPU

#### Qwen3-8B-W8A8SC

```bash
vllm serve Eco-Tech/Qwen3-8B-w8a8sc-310-vllm/TP1/Qwen3-8B-w8a8sc-310-vllm-tp1 \\
    --tensor-parallel-size 1 --dtype float16
```

#### Qwen3-32B-W8A8SC

```bash
vllm serve Eco-Tech/Qwen3-32B-w8a8sc-310-vllm/TP4/Qwen3-32B-w8a8sc-310-vllm-tp4 --tensor-parallel-size 4
vllm serve $MODEL_PATH --tensor-parallel-size 4
```
"""


def test_the_tutorial_reader_keeps_each_served_checkpoint_once_per_chip():
    from ascend_doctor.sync.support_matrix import read_tutorial_models
    from ascend_doctor.sync.tutorials import read_tutorial

    commands = read_tutorial(HW_310P, "docs/source/tutorials/hardwares/310p.md")
    got = read_tutorial_models(commands + commands)  # a page read twice adds nothing
    assert got == ["310P: Eco-Tech/Qwen3-32B-w8a8sc-310-vllm/TP4/Qwen3-32B-w8a8sc-310-vllm-tp4 hardwares/310p.md:15",
                   "310P: Eco-Tech/Qwen3-8B-w8a8sc-310-vllm/TP1/Qwen3-8B-w8a8sc-310-vllm-tp1 hardwares/310p.md:8"]


def test_the_older_model_tables_are_read_too():
    """0.9.1rc2-0.11.0rc0 name the column `Supported` (Model | Supported | Note): matrix sync skipped them, so
    0.9.1's "Gemma-3 ❌ (#496)" and 0.10.0rc1's "XLM-RoBERTa-based ❌ (#1960)" were never held against a command."""
    from ascend_doctor.sync.support_matrix import read_models

    table = "| Model | Supported | Note |\n|---|---|---|\n| Qwen3 | ✅ | |\n| Gemma-3 | ❌ | [#496](https://x/496) |\n"
    got = read_models(table)
    assert got["models"] == ["Qwen3", "Gemma-3"] and got["not_supported"] == ["Gemma-3"]
    assert got["notes"] == ["Gemma-3: https://x/496"]
    release, _ = Knowledge().support_matrix.row_for("0.10.0rc1")
    assert "XLM-RoBERTa-based" in release.not_supported and "Whisper" in release.not_supported


def test_a_tutorial_checkpoint_spelled_with_or_without_a_hyphen_before_its_version_is_one_checkpoint():
    """An h38k false warning: the tutorial served `GLM-5.2-w8a8` and the folder was spelled `GLM5.2-w8a8` (or the
    reverse); row names are already matched without a `-` between a letter and a digit, the tutorials now too."""
    from ascend_doctor.knowledge.support_matrix import _same_checkpoint

    release = next(r for r in shipped().support_matrix.release if r.version == "0.22.1rc1")
    assert release.tutorial_serving("/models/GLM5.2-w8a8", {"A2"}).startswith("A2 models/GLM5.2.md")
    assert release.tutorial_serving("/models/GLM-5.2-w8a8", {"A2"}).startswith("A2 models/GLM5.2.md")
    assert _same_checkpoint("glm-4.5-air-w8a8", "glm4.5-air-w8a8")
    assert not _same_checkpoint("glm-5.2-w8a8", "glm-5.1-w8a8") and not _same_checkpoint("qwen3-32b", "qwen3-8b")


def test_a_checkpoint_a_later_row_names_beside_a_model_the_release_lists_is_not_newer(tmp_path):
    """h38l: Qwen3.6-27B on 0.19.1rc1, whose table lists Qwen3.5-27B; 0.22.1rc1's row is `Qwen3.5-27B / Qwen3.6-27B`:
    the same model line, so no "the installed release may predate it". GLM-5.2 on 0.21.0rc1 still warns."""
    m = _model(tmp_path, "Qwen3.6-27B-w8a8", {"model_type": "qwen3_6_unknown", "architectures": ["NoSuchArch"]})
    out = run_check("SERVE314", _on(facts(f"vllm serve {m}"), "0.19.1rc1"))
    assert "may predate" not in out.message, out.message
    assert any("Qwen3.5-27B / Qwen3.6-27B" in e.excerpt for e in out.evidence)


def test_another_size_of_a_model_line_the_release_serves_is_not_newer(tmp_path):
    """h38n (#7944): Qwen3.5-35B-A3B on 0.18.0rc1, whose model table names no Qwen3.5 but whose tutorials serve
    Qwen3.5-397B-A17B (and 0.23.0 is the first to list the 35B): the release does not predate the model line. A
    name without a size (GLM-5.2, above) is no line of its own and still warns."""
    from checks.serve_support import _model_line

    m = _model(tmp_path, "Qwen3.5-35B-A3B", {"model_type": "qwen3_5_unknown", "architectures": ["NoSuchArch"]})
    out = run_check("SERVE314", _on(facts(f"vllm serve {m}"), "0.18.0rc1"))
    assert "may predate" not in out.message, out.message
    assert any("Qwen3.5-397B-A17B" in e.excerpt and "same model line" in e.excerpt for e in out.evidence)
    assert _model_line("Qwen3-VL-235B-A22B-Instruct") == "qwen3-vl" and _model_line("DeepSeek-V3.2") == ""
    assert _model_line("Qwen3.5-0.8B") == "qwen3.5" and _model_line("GLM-4.6") == ""
