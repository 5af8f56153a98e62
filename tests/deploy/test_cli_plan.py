"""`ascend-doctor plan` end to end on model directories written here (config.json + safetensors headers)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy import configs as C
from tests.helpers import REPO


def model_dir(tmp_path: Path, cfg: dict, tensor_bytes: int) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    header = json.dumps({"w": {"dtype": "BF16", "shape": [tensor_bytes // 2], "data_offsets": [0, tensor_bytes]}})
    # the header only: the checkpoint is sized from it, its tensors are never read
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header.encode())
    return d


def plan(*args: str, env: dict = None):
    import os

    e = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100", **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", "plan", *args], capture_output=True, text=True,
                          env=e, cwd=REPO, timeout=120)


def test_a_model_that_fits_gets_a_layout_a_memory_table_and_a_serve_command(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, 65_524_000_000)
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "8", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    chosen = doc["plan"]["chosen"]
    assert chosen["layout"]["tp"] == 2 and chosen["max_len"] == 40960
    assert doc["model"]["weights"]["source"] == "safetensors headers of 1 file(s)"
    argv = doc["serve"]["argv"]
    assert argv[:5] == ["vllm", "serve", str(d), "--tensor-parallel-size", "2"]
    assert argv[argv.index("--tool-call-parser") + 1] == "hermes"
    assert doc["release"]["image"].startswith("quay.io/ascend/vllm-ascend:v")
    weights = next(t for t in chosen["budget"]["terms"] if t["name"] == "weights")
    assert weights["bytes"] == 65_524_000_000 // 2 and "65524000000 B" in weights["inputs"]


def test_nothing_fits_exits_1_and_says_how_much_is_short(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, 65_524_000_000)
    r = plan("--model", str(d), "--chip", "910B4", "--npus", "1")
    assert r.returncode == 1, r.stderr
    # 0.23.0.post1 charges a 32 MiB runtime reserve (deploy/runtime-reserve), not 1 GiB
    assert "no layout fits on 1 rank(s)" in r.stdout and "short by: 35.21 GiB per rank" in r.stdout
    assert "would fit: 4 × 910B4 on 1 node(s): TP4, --max-model-len 40960" in r.stdout  # the fewest ranks that do
    assert max(len(line) for line in r.stdout.splitlines()) <= 100


def test_usage_errors_are_one_line_exit_2(tmp_path):
    r = plan("--model", str(tmp_path / "absent"), "--chip", "910B3", "--npus", "1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a directory" in r.stderr
    d = model_dir(tmp_path, C.QWEN3_8B, 16_000_000_000)
    r = plan("--model", str(d), "--chip", "H100", "--npus", "1")
    assert r.returncode == 2 and "910B3" in r.stderr
    (d / "config.json").write_text("{not json")
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "1")
    assert r.returncode == 2 and "config.json is not valid JSON" in r.stderr


def test_chinese_plan_reads_chinese(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_8B, 16_381_000_000)
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "1", "--lang", "zh")
    assert r.returncode == 0, r.stderr
    assert "结论" in r.stdout and "每个 rank 的内存" in r.stdout


def _catalogue_ids() -> list[str]:
    from tests.helpers import shipped

    return [m.id for m in shipped().catalogue]


@pytest.mark.parametrize("chip, npus", [("910B3", 8), ("A3", 16), ("310P3", 2)])
@pytest.mark.parametrize("model", _catalogue_ids())
def test_every_catalogue_model_gets_an_answer_offline_in_under_a_second(model, chip, npus):
    import time

    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    t0 = time.monotonic()
    r = CliRunner().invoke(cli, ["plan", "--model", model, "--chip", chip, "--npus", str(npus), "--format", "json"])
    elapsed = time.monotonic() - t0
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.output)
    assert doc["exit_code"] == r.exit_code and doc["model"]["name"] == model
    verdict = doc["plan"]["verdict"]
    assert verdict in ("fits", "shortened", "unknown", "none")
    if verdict in ("fits", "shortened"):
        assert doc["serve"]["argv"][:2] == ["vllm", "serve"] and doc["plan"]["chosen"]["capacity"]["concurrency"] >= 1
    else:
        assert doc["plan"]["candidates"] and all(c["why"] for c in doc["plan"]["candidates"])
    assert elapsed < 1.0, f"{elapsed:.2f} s"


def test_the_catalogue_says_what_fits_where():
    """Spot checks with the tutorials' own words: DeepSeek-R1 W8A8 "requires 1 A3 (64G x16) or 2 A2 (64G x8)";
    a 0.6 B model fits anywhere; Qwen3-235B does not fit two 300I Duo chips."""
    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    def verdict(*args):
        r = CliRunner().invoke(cli, ["plan", *args, "--format", "json"])
        return json.loads(r.output)["plan"]["verdict"]

    assert verdict("--model", "DeepSeek-R1", "--chip", "A3", "--npus", "16") == "fits"
    assert verdict("--model", "DeepSeek-R1", "--chip", "910B3", "--npus", "8") == "none"
    assert verdict("--model", "DeepSeek-R1", "--chip", "910B3", "--npus", "16", "--nodes", "2") == "fits"
    assert verdict("--model", "Qwen3-0.6B", "--chip", "310P3", "--npus", "1") == "fits"
    assert verdict("--model", "Qwen3-235B-A22B", "--chip", "310P3", "--npus", "2") == "none"


def test_the_chip_and_its_count_come_from_npu_smi_when_not_given():
    r = plan("--model", "Qwen3-32B", "--replay", "examples/healthy-a2.snapshot.json", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["chip"]["id"], doc["want"]["ranks"]) == ("910B3", 8)
    r = plan("--model", "Qwen3-32B", "--replay", "examples/a3-busy.snapshot.json", "--format", "json")
    doc = json.loads(r.stdout)
    # npu-smi's `Ascend910` dies, two per card: 16, of which 4 (NPUs 0 and 1) are 93% held by another job (#41)
    assert (doc["chip"]["id"], doc["want"]["ranks"]) == ("A3", 12)
    assert any("held by another job" in str(n) and "/dev/davinci3" in str(n) for n in doc["plan"]["notes"])
    assert "/dev/davinci0" not in doc["serve"]["docker"] and "/dev/davinci4" in doc["serve"]["docker"]
    r = plan("--model", "Qwen3-32B", "--replay", "examples/container-missing-devices.snapshot.json")
    assert r.returncode == 2 and "give --chip and --npus" in r.stderr and r.stderr.count("\n") == 1


def test_a_release_can_be_forced_and_a_driver_kept():
    r = plan("--model", "Qwen3-32B", "--chip", "910B3", "--npus", "4", "--vllm-ascend", "0.13.0", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["release"]["vllm_ascend"] == "0.13.0"
    r = plan("--model", "Qwen3-32B", "--chip", "910B3", "--npus", "4", "--vllm-ascend", "9.9.9")
    assert r.returncode == 2 and "not a release of the matrix" in r.stderr
    r = plan("--model", "Qwen3-32B", "--replay", "examples/healthy-a2.snapshot.json", "--keep-driver", "--format",
             "json")
    assert r.returncode == 0, r.stderr
    assert "runs on driver 25.5.0" in json.loads(r.stdout)["release"]["driver_note"]


def test_the_plan_json_follows_its_schema_and_masks_a_secret_in_a_path(tmp_path):
    pytest.importorskip("jsonschema")
    import jsonschema

    schema = json.loads(plan_schema())
    d = tmp_path / "glpat-AbCdEfGhIjKlMnOpQrSt"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(C.QWEN3_8B))
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "1", "--format", "json")
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, schema)
    assert "glpat-AbCdEfGhIjKlMnOpQrSt" not in r.stdout
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "1")
    assert r.returncode == 0 and "glpat-AbCdEfGhIjKlMnOpQrSt" not in r.stdout


def plan_schema() -> str:
    import os

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", "schema", "--plan"], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=60, check=True).stdout


def test_the_plan_writes_the_docker_run_of_the_release_image(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, 65_524_000_000)
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "8", "--format", "json")
    doc = json.loads(r.stdout)
    docker = doc["serve"]["docker"]
    assert docker[:2] == ["docker", "run"] and docker[-1] == doc["release"]["image"]
    devices = [docker[i + 1] for i, w in enumerate(docker) if w == "--device"]
    assert devices[:2] == ["/dev/davinci0", "/dev/davinci1"] and "/dev/davinci2" not in devices  # TP2: two NPUs
    assert {"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"} <= set(devices)
    assert f"{d}:{d}:ro" in docker and "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in docker
    assert "--net=host" in docker  # HCCL between the two NPUs


def test_when_nothing_fits_the_alternatives_are_sized_not_guessed():
    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    def alts(*args):
        r = CliRunner().invoke(cli, ["plan", *args, "--format", "json"])
        return json.loads(r.output)["plan"]["alternatives"]

    # the tutorials' own words: DeepSeek-R1 W8A8 "requires 1 A3 (64G x16) or 2 A2 (64G x8)"
    assert alts("--model", "DeepSeek-R1", "--chip", "910B3", "--npus", "8")[0].startswith("16 × 910B3 on 2 node(s)")
    bf16 = alts("--model", "Qwen3-32B", "--chip", "910B3", "--npus", "1", "--weights", "bf16")
    assert any(a.startswith("a W8A8 checkpoint") for a in bf16) and bf16[0].startswith("2 × 910B3 on 1 node(s)")
    long = alts("--model", "Qwen3-32B", "--chip", "910B4", "--npus", "2", "--weights", "w8a8", "--max-model-len",
                "40960", "--concurrency", "8")
    assert any(a.startswith("--max-model-len ") for a in long)


def test_hostile_model_files_give_a_note_or_a_one_line_error_never_a_false_fit(tmp_path):
    import struct as st

    bad = tmp_path / "inf"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps(C.QWEN3_8B).replace("40960", "Infinity")
                                     .replace('["Qwen3ForCausalLM"]', '"Qwen3ForCausalLM"'))
    header = json.dumps({"w": {"dtype": "BF16", "shape": [1], "data_offsets": [0, "9"]}}).encode()
    (bad / "model.safetensors").write_bytes(st.pack("<Q", len(header)) + header)
    r = plan("--model", str(bad), "--chip", "910B3", "--npus", "1", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["model"]["weights"]["total_bytes"] > 16e9  # not 0 B from a header without sizes: estimated
    assert "give no tensor sizes" in doc["model"]["weights"]["source"]
    assert any("no usable context length" in n for n in doc["plan"]["notes"])
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "config.json").write_text("[" * 100000)
    r = plan("--model", str(deep), "--chip", "910B3", "--npus", "1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nested too deeply" in r.stderr


@pytest.mark.parametrize("name", ["model.safetensors", "config.json"])
def test_a_fifo_in_the_model_folder_is_refused_not_read(tmp_path, name):
    """#40 item 8: a FIFO named model.safetensors hung `plan` (and the serve probes) forever."""
    import os
    import time

    d = model_dir(tmp_path, C.QWEN3_32B, 1024)
    (d / name).unlink()
    os.mkfifo(d / name)
    t0 = time.monotonic()
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "8")
    assert time.monotonic() - t0 < 60
    assert r.returncode == 2
    assert f"{name}: it is a FIFO, not a regular file" in r.stderr or "no config.json" in r.stderr  # isfile: False


def test_a_link_out_of_the_model_folder_is_refused_and_the_hub_cache_layout_is_not(tmp_path):
    """#40 item 11: `config.json -> /etc/…` was read (and a template's text quoted). A folder that is itself a link,
    and the Hugging Face cache's snapshots/<rev>/* -> ../../blobs/* links, are the normal layouts."""
    d = model_dir(tmp_path, C.QWEN3_32B, 65_524_000_000)
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(C.QWEN3_32B))
    (d / "config.json").unlink()
    (d / "config.json").symlink_to(outside)
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "8")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"is a link to {outside}, outside the model folder {d}" in r.stderr
    repo = tmp_path / "hub" / "models--Qwen--Qwen3-32B"
    (repo / "blobs").mkdir(parents=True)
    (repo / "snapshots").mkdir()
    (repo / "blobs" / "c0ffee").write_text(json.dumps(C.QWEN3_32B))
    (d / "config.json").unlink()
    d.rename(repo / "snapshots" / "abc123")
    (repo / "snapshots" / "abc123" / "config.json").symlink_to("../../blobs/c0ffee")
    (tmp_path / "served").symlink_to(repo / "snapshots" / "abc123")  # the folder given is itself a link
    r = plan("--model", str(tmp_path / "served"), "--chip", "910B3", "--npus", "8", "--format", "json")
    assert r.returncode == 0, r.stderr


@pytest.mark.localhost
def test_the_hosts_file_reader_refuses_a_fifo_without_blocking(tmp_path):
    import os

    from ascend_doctor.seam.localhost import LocalHost

    os.mkfifo(tmp_path / "config.json")
    r = LocalHost().read_file(str(tmp_path / "config.json"))
    assert not r.ok and "not a regular file" in r.error_message
    assert LocalHost().read_file("/proc/self/status").ok  # procfs entries are regular files


# #41 item 5: the interface ------------------------------------------------------------------------------------------
def test_markdown_is_markdown_and_o_writes_the_file(tmp_path):
    """Tables for the memory, code blocks for the commands (a plan pasted into an issue renders), and `-o FILE` like
    the other commands (written atomically; nothing on stdout)."""
    out = tmp_path / "plan.md"
    r = plan("--model", "Qwen/Qwen3-8B", "--chip", "910B3", "--npus", "1", "--format", "markdown", "-o", str(out))
    assert r.returncode == 0 and r.stdout == ""
    text = out.read_text()
    assert "| | GiB | |\n|---|---:|---|" in text and "| × 0.9 |" in text and "| **= KV cache** |" in text
    assert "```bash\nPYTORCH_NPU_ALLOC_CONF=expandable_segments:True vllm serve Qwen/Qwen3-8B" in text
    assert text.count("```") % 2 == 0
    j = tmp_path / "plan.json"
    r = plan("--model", "Qwen/Qwen3-8B", "--chip", "910B3", "--npus", "1", "--format", "json", "-o", str(j))
    assert r.returncode == 0 and json.loads(j.read_text())["plan"]["verdict"] == "fits"


def test_a_misspelt_model_name_gets_the_near_catalogue_names():
    r = plan("--model", "Qwen3-23B", "--chip", "910B3", "--npus", "8")
    assert r.returncode == 2 and "did you mean Qwen/Qwen3-32B" in r.stderr


def test_every_plan_option_has_help():
    import click

    from ascend_doctor.cli.plan import plan as command

    bare = [p.opts[0] for p in command.params if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert bare == []


def test_diagnose_writes_to_a_file(tmp_path):
    log = tmp_path / "serve.log"
    log.write_text("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n")
    out = tmp_path / "d.json"
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "diagnose", str(log), "--format", "json", "-o",
                        str(out)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 1 and r.stdout == "" and json.loads(out.read_text())["matches"]
    txt = tmp_path / "d.txt"
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "diagnose", str(log), "-o", str(txt)],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 1 and "pta-npu-oom" in txt.read_text()


def test_plan_keeps_the_a2_context_rule_and_the_lint_names_a_longer_explicit_one():
    """#41: `plan` proposed --max-model-len 163840 for DeepSeek-R1 on 910B3 though HW-A2-001 says the engine gets
    stuck above 65536 on A2; it now caps the model's own context there (a --max-model-len the user gives is kept).
    HW103 names a longer explicit value without warning it: the rule's one report is of the derived default, and a
    held-out stack (h38g) ran an explicit longer length."""
    r = plan("--model", "deepseek-ai/DeepSeek-R1", "--chip", "910B3", "--npus", "16", "--nodes", "2",
             "--format", "json")
    doc = json.loads(r.stdout)
    argv = doc["serve"]["argv"]
    assert argv[argv.index("--max-model-len") + 1] == "65536"
    assert any("HW-A2-001" in str(n) for n in doc["plan"]["notes"])
    r = plan("--model", "deepseek-ai/DeepSeek-R1", "--chip", "910B3", "--npus", "16", "--nodes", "2",
             "--max-model-len", "98304", "--format", "json")
    argv = json.loads(r.stdout)["serve"]["argv"]
    assert argv[argv.index("--max-model-len") + 1] == "98304"
    a3 = json.loads(plan("--model", "deepseek-ai/DeepSeek-R1", "--chip", "A3", "--npus", "16", "--format",
                         "json").stdout)
    assert not any("HW-A2-001" in str(n) for n in a3["plan"]["notes"])
    healthy = str(REPO / "examples" / "healthy-a2.snapshot.json")
    lint = subprocess.run([sys.executable, "-m", "ascend_doctor", "exec", "--replay", healthy, "--select", "HW103",
                           "--format", "json", "-o", "-", "--", "vllm", "serve", "/models/m", "--max-model-len",
                           "163840"], capture_output=True, text=True, cwd=REPO)
    report = json.JSONDecoder().raw_decode(lint.stderr, lint.stderr.index("{"))[0]  # exec reports on stderr
    f = next(x for x in report["findings"] if x["code"] == "HW103")
    assert f["status"] == "pass" and "given explicitly, above the 65536 of HW-A2-001 on A2" in f["message"]


def test_310p_halves_the_kv_budget_from_the_release_that_does():
    """#41: vllm-ascend >= 0.18.0rc1 gives the 310P KV cache half of the memory left (worker_310p.py:
    determine_available_memory, "halved for workspace", vllm-ascend#14274); 0.17.0rc1 does not. The device total is
    the 43.24 GiB torch_npu reports there (#14004)."""
    def kv(*extra):
        doc = json.loads(plan("--model", "Qwen/Qwen3-8B", "--chip", "310P3", "--npus", "1", "--format", "json",
                              *extra).stdout)
        b = doc["plan"]["chosen"]["budget"]
        return b, {t["name"]: t for t in b["terms"]}

    b, terms = kv()
    work = next(t for n, t in terms.items() if "half the rest" in n)
    assert work["bytes"] == b["kv_bytes"] or work["bytes"] == b["kv_bytes"] + 1
    assert "worker_310p.py" in work["inputs"] and b["visible"]["bytes"] == 44278 * 2**20
    old, old_terms = kv("--vllm-ascend", "0.17.0rc1")
    assert not any("half the rest" in n for n in old_terms)
    assert old["kv_bytes"] > 1.9 * b["kv_bytes"]


def test_a_multi_node_plan_prints_one_command_per_node_that_the_lint_passes():
    """#41: `plan --nodes 2` printed one 8-device container with --data-parallel-size 8 and nothing for the second
    node. Now: node 0 serves the API (--data-parallel-address "$HEAD_IP"), node 1 runs --headless from its start
    rank, each with the interface variables of vllm-ascend's multi-node tutorials and its own container; each node's
    command passes the serve lint on an 8-NPU A2 host."""
    r = plan("--model", "deepseek-ai/DeepSeek-R1", "--chip", "910B3", "--npus", "16", "--nodes", "2",
             "--format", "json")
    nodes = json.loads(r.stdout)["serve"]["nodes"]
    assert [n["role"] for n in nodes] == ["head", "worker"]
    head, worker = nodes[0]["argv"], nodes[1]["argv"]
    assert head[head.index("--data-parallel-size-local") + 1] == "4" and "--headless" not in head
    assert worker[worker.index("--data-parallel-start-rank") + 1] == "4" and "--headless" in worker
    assert nodes[0]["env"]["HCCL_IF_IP"] == "$LOCAL_IP" and "-e" in nodes[1]["docker"]
    healthy = str(REPO / "examples" / "healthy-a2.snapshot.json")
    for n in nodes:
        env = [f"{k}={v}" for k, v in n["env"].items()]
        lint = subprocess.run([sys.executable, "-m", "ascend_doctor", "exec", "--replay", healthy, "--", "env", *env,
                               *n["argv"]], capture_output=True, text=True, cwd=REPO)
        assert lint.returncode == 0, lint.stderr[-2000:]
    text = plan("--model", "deepseek-ai/DeepSeek-R1", "--chip", "910B3", "--npus", "16", "--nodes", "2").stdout
    assert "node 1 (worker):" in text and '--data-parallel-address "$HEAD_IP"' in text


def test_a_hybrid_is_paged_by_the_rule_of_the_release_the_plan_installs():
    """The release plan proposes decides a hybrid's page rule (deploy/hybrid.py): the formula names it."""
    r = plan("--model", "Qwen3-Next-80B-A3B-Instruct", "--chip", "910B3", "--npus", "8", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    release, kv = doc["release"]["vllm_ascend"], doc["plan"]["chosen"]["kv"]
    assert kv["hybrid"]["rule"] and f"vllm-ascend {release}:" in kv["formula"]
    forced = json.loads(plan("--model", "Qwen3-Next-80B-A3B-Instruct", "--chip", "910B3", "--npus", "8",
                             "--vllm-ascend", "0.13.0", "--format", "json").stdout)
    assert forced["plan"]["chosen"]["kv"]["hybrid"]["rule"] == "pad-state"


def test_a_block_fp8_checkpoint_gets_a_release_that_runs_it_and_is_sized_as_loaded(tmp_path):
    """A native FP8 checkpoint (`quant_method fp8`, block scales) on A2: the final releases refuse or cannot load it
    (REL-B27-002, REL-B27-005), 0.27.1rc1 on serves it converted to BF16 (REL-B27-008) — plan installs such a
    release and sizes the converted weights, so its command passes SERVE311 and SERVE305 alike."""
    fp8 = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    d = model_dir(tmp_path, {**C.QWEN3_32B, "quantization_config": fp8}, 34_000_000_000)
    r = plan("--model", str(d), "--chip", "910B3", "--npus", "2", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    release = doc["release"]["vllm_ascend"]
    from ascend_doctor.text.versions import parse_version

    assert parse_version(release) >= parse_version("0.27.1rc1")
    assert any("REL-B27-005" in str(why) for why in doc["release"]["passed_over"])
    assert doc["model"]["weights"]["total_bytes"] > 1.8 * 34_000_000_000  # the linear layers doubled
    assert any("converts the block-wise FP8 weights to BF16 on A2 (REL-B27-008)" in str(n)
               for n in doc["plan"]["notes"])


def test_a_catalogue_conversion_is_not_judged_by_the_hub_checkpoints_quantization():
    """DeepSeek-R1's hub config declares FP8; the W8A8 checkpoint plan sizes is msModelSlim's (served with
    --quantization ascend) and the BF16 one declares none: no release is passed over for FP8, none is sized as a
    BF16 conversion of FP8 weights."""
    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    for fmt in ("w8a8", "bf16"):
        r = CliRunner().invoke(cli, ["plan", "--model", "DeepSeek-R1", "--chip", "A3", "--npus", "16", "--weights",
                                     fmt, "--format", "json"])
        doc = json.loads(r.output)
        assert "rc" not in doc["release"]["vllm_ascend"]  # a final release, as for any BF16 or W8A8 checkpoint
        assert not any("REL-B27" in str(why) for why in doc["release"]["passed_over"]), doc["release"]
        assert not any("REL-B27" in str(n) for n in doc["plan"]["notes"])


def test_a_model_that_ships_its_own_config_code_is_planned_with_trust_remote_code(tmp_path):
    """SERVE201's rule, applied by plan to the release it installs: MiniCPM-V-2_6's model_type `minicpmv` is in no
    recorded transformers nor in vLLM's config registry, and its config.json maps its own classes (auto_map): vLLM
    stops at `trust_remote_code` without the option. The printed command carries it and says to review the code;
    the serve lint then passes the config (SERVE201) on a stack of that vLLM line."""
    from ascend_doctor.report import Status
    from tests.checks.test_serve_checks import facts, npu, run_check

    doc = json.loads(plan("--model", "openbmb/MiniCPM-V-2_6", "--chip", "910B3", "--npus", "1",
                          "--format", "json").stdout)
    argv = doc["serve"]["argv"]
    assert "--trust-remote-code" in argv
    assert any("review its Python files" in w for w in doc["serve"]["why"])
    plain = json.loads(plan("--model", "Qwen/Qwen3-8B", "--chip", "910B3", "--npus", "1", "--format", "json").stdout)
    assert "--trust-remote-code" not in plain["serve"]["argv"]
    d = tmp_path / "minicpmv"
    d.mkdir()
    (d / "config.json").write_text((REPO / "matrices" / "deploy" / "models" / "openbmb--MiniCPM-V-2_6.json").read_text())
    cmd = f"vllm serve {d} --max-model-len 4096"
    assert run_check("SERVE201", facts(cmd, npus=npu(1))).status == Status.FAIL
    assert run_check("SERVE201", facts(cmd + " --trust-remote-code", npus=npu(1))).status == Status.PASS
