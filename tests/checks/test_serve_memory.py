"""SERVE305 (serve-memory-fits) and the promise of #24: the serve lint and `plan` judge with one deployment model — a
command `plan` prints passes the lint on the same NPUs, and a sizing problem the lint finds names what plan chooses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts, npu, run_check
from tests.deploy import configs as C
from tests.helpers import shipped

QWEN3_32B_BYTES = 65_524_246_528  # bf16: 32,762,123,264 parameters × 2 B (the estimate the plan makes from config)


def model_dir(tmp_path: Path, cfg: dict, total_size: int, name: str = "model") -> str:
    d = tmp_path / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total_size},
                                                                "weight_map": {}}))
    return str(d)


def verdict(command: str, n: int = 8):
    return run_check("SERVE305", facts(command, npus=npu(n)))


def test_a_layout_that_fits_passes_with_the_kv_capacity(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, QWEN3_32B_BYTES)
    out = verdict(f"vllm serve {d} -tp 2 --max-model-len 40960 --max-num-batched-tokens 4096")
    assert out.status == Status.PASS, out.message
    assert "183808 tokens" in out.message and "4.49 request(s) of 40960" in out.message
    assert "metadata.total_size" in out.evidence[-1].excerpt


def test_weights_that_do_not_fit_fail_and_name_the_layout_plan_chooses(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, QWEN3_32B_BYTES)
    out = verdict(f"vllm serve {d} -tp 1 --max-model-len 40960")
    assert out.status == Status.FAIL and "the weights alone take 61.02 GiB per rank" in out.message
    assert "`ascend-doctor plan` chooses TP2 with --max-model-len 40960" in out.remediation


def test_a_context_that_does_not_fit_names_the_max_model_len_that_does(tmp_path):
    d = model_dir(tmp_path, C.QWEN3_32B, QWEN3_32B_BYTES)
    short = verdict(f"vllm serve {d} -tp 2 --max-model-len 40960 --gpu-memory-utilization 0.55")
    assert short.status == Status.FAIL and "less than one request of --max-model-len 40960" in short.message
    fits = short.details["max_model_len_that_fits"]
    assert 0 < fits < 40960 and f"--max-model-len {fits}" in short.remediation
    edge = verdict(f"vllm serve {d} -tp 2 --max-model-len 40960 --gpu-memory-utilization 0.6")
    assert edge.status == Status.WARN and "within the estimated terms" in edge.message
    again = verdict(f"vllm serve {d} -tp 2 --max-model-len {fits} --gpu-memory-utilization 0.55")
    assert again.status == Status.PASS, again.message


def test_a_model_whose_kv_cache_cannot_be_sized_is_unknown(tmp_path):
    mamba = dict(C.QWEN3_NEXT, model_type="some_mamba_hybrid")  # linear layers that are not Gated DeltaNet
    d = model_dir(tmp_path, mamba, 162_000_000_000)
    out = verdict(f"vllm serve {d} -tp 4 --max-model-len 32768")
    assert out.status == Status.UNKNOWN and "linear-attention" in out.message


def test_a_gated_deltanet_hybrid_is_sized(tmp_path):
    """Qwen3-Next at the tutorial's TP4: its linear layers' state is paged with the attention layers (hybrid.py)."""
    d = model_dir(tmp_path, C.QWEN3_NEXT, 162_000_000_000)
    out = verdict(f"vllm serve {d} -tp 4 --max-model-len 32768")
    assert out.status == Status.PASS and "tokens of KV cache" in out.message
    assert any("Gated DeltaNet hybrid" in str(e) for e in out.evidence)


SERVE_LINT = ("SERVE104", "SERVE105", "SERVE203", "SERVE204", "SERVE301", "SERVE302", "SERVE303", "SERVE304",
              "SERVE305")


def _catalogue_ids() -> list[str]:
    return [m.id for m in shipped().catalogue]


@pytest.mark.parametrize("chip_n", [8, 4, 1])
@pytest.mark.parametrize("model", _catalogue_ids())
def test_the_command_plan_prints_passes_the_serve_lint_on_the_same_npus(tmp_path, model, chip_n):
    """#41 item 3: every catalogue model, planned for the fixture stack's release (vllm-ascend 0.13.0rc3) on 1, 4
    and 8 free 910B3: when plan prints a command, the serve lint passes it on the same NPUs (SERVE305 sizes it with
    the same deployment model, hybrids included)."""
    from ascend_doctor.deploy.catalogue import catalogue_files, find_model
    from tests.deploy.test_published import NOT_SIZED

    if model in NOT_SIZED:
        pytest.skip(f"{model}: plan cannot size its KV cache ({NOT_SIZED[model]}), tested in test_published")
    files = catalogue_files(find_model(model, shipped().catalogue))
    d = model_dir(tmp_path, files.config, files.weights.total_bytes)
    r = CliRunner().invoke(cli, ["plan", "--model", d, "--chip", "910B3", "--npus", str(chip_n), "--vllm-ascend",
                                 "0.13.0rc3", "--format", "json"])
    doc = json.loads(r.output)
    if doc["plan"]["verdict"] == "none":
        assert r.exit_code == 1
        pytest.skip(f"{model} does not fit on {chip_n} × 910B3 (plan prints no command)")
    assert r.exit_code == 0, r.output
    f = facts(" ".join(doc["serve"]["argv"]), npus=npu(chip_n))
    bad = {code: out.message for code in SERVE_LINT
           if (out := run_check(code, f)).status in (Status.FAIL, Status.ERROR, Status.UNKNOWN)}
    assert bad == {}


def _with_template(tmp_path: Path, cfg: dict, template: str) -> str:
    d = tmp_path / "tmpl-model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "chat_template.jinja").write_text(template)
    return str(d)


def test_serve203_judges_the_parser_by_the_markup_the_template_writes(tmp_path):
    """One rule with plan (deploy.toolparser): a llama model whose template writes `<tool_call>` needs hermes, which
    the family table alone could not say; a Qwen3 whose template writes DeepSeek markup fails with hermes."""
    from tests.checks.test_serve_checks import facts
    from tests.helpers import DATA

    hermes = (DATA / "vllm" / "chatml_tools.jinja").read_text()
    d = _with_template(tmp_path, C.SMOLLM2_135M, hermes)
    ok = run_check("SERVE203", facts(f"vllm serve {d} --enable-auto-tool-choice --tool-call-parser hermes"))
    assert ok.status == Status.PASS and "hermes markup the chat template writes" in ok.message
    bad = run_check("SERVE203", facts(f"vllm serve {d} --enable-auto-tool-choice --tool-call-parser llama3_json"))
    assert bad.status == Status.FAIL and "`--tool-call-parser hermes`" in bad.remediation
    ds = ("{% for tool in tools %}{{ tool }}{% endfor %}{% if m.role == 'tool' %}x{% endif %}"
          "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>")
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "config.json").write_text(json.dumps(C.QWEN3_8B))
    (tmp_path / "q" / "chat_template.jinja").write_text(ds)
    out = run_check("SERVE203", facts(f"vllm serve {tmp_path / 'q'} --enable-auto-tool-choice --tool-call-parser "
                                      "hermes"))
    assert out.status == Status.FAIL and "deepseek" in out.remediation


def test_the_poorest_npu_used_bounds_the_verdict(tmp_path):
    """A mixed node (910B3 64 GB and 910B4 32 GB): TP2 over NPU 0 and 1 is judged by the 32 GB one."""
    from ascend_doctor.parsers.npu_smi import NpuChip, NpuSmiInfo
    from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
    from tests.checks.test_serve_checks import facts

    chips = [NpuChip(npu_id=0, chip_id=0, name="910B3", health="OK", hbm_used_mb=3000, hbm_total_mb=65536),
             NpuChip(npu_id=1, chip_id=0, name="910B4", health="OK", hbm_used_mb=3000, hbm_total_mb=32768)]
    mixed = NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0),
                       info=NpuSmiInfo(chips=chips))
    d = model_dir(tmp_path, C.QWEN3_32B, QWEN3_32B_BYTES)
    out = run_check("SERVE305", facts(f"vllm serve {d} -tp 2 --max-model-len 40960", npus=mixed))
    assert out.status == Status.FAIL and "the weights alone take 30.51 GiB per rank" in out.message


@pytest.mark.parametrize("model, weights, npus, nodes", [("deepseek-ai/DeepSeek-R1", "w8a8", 16, 2),
                                                         ("deepseek-ai/DeepSeek-R1", "w8a8", 32, 4),
                                                         ("Qwen/Qwen3-235B-A22B", "bf16", 16, 2),
                                                         ("Qwen/Qwen3-Next-80B-A3B-Instruct", "bf16", 16, 2)])
def test_every_node_command_of_a_multi_node_plan_passes_the_serve_lint_on_its_node(model, weights, npus, nodes):
    """#41's reproductions: a multi-node plan prints one command per node (head and headless workers); each passes
    the serve lint — SERVE305 included, and HW103's A2 context rule — with that node's 8 NPUs and environment."""
    r = CliRunner().invoke(cli, ["plan", "--model", model, "--weights", weights, "--chip", "910B3", "--npus",
                                 str(npus), "--nodes", str(nodes), "--vllm-ascend", "0.13.0rc3", "--format", "json"])
    doc = json.loads(r.output)
    if doc["plan"]["verdict"] == "none":
        assert r.exit_code == 1
        pytest.skip(f"{model} ({weights}) does not fit on {npus} × 910B3")
    assert r.exit_code == 0, r.output
    per_node = doc["serve"]["nodes"]
    assert len(per_node) == nodes and [n["role"] for n in per_node][0] == "head"
    for node in per_node:
        f = facts(" ".join(node["argv"]), npus=npu(npus // nodes), env=node["env"])
        bad = {code: out.message for code in SERVE_LINT + ("HW103",)
               if (out := run_check(code, f)).status in (Status.FAIL, Status.ERROR)}
        assert bad == {}, (node["role"], node["argv"])


def test_an_mtp_speculative_config_adds_the_mtp_layers_kv_cache(tmp_path):
    """vllm-ascend#6847: with MTP on, GLM-5's cache holds 78 + 1 layers (the logged tokens follow only with the
    MTP layer). DeepSeek-V3's one MTP layer: 62 latents per token instead of 61; a separate draft model is not
    counted here; a hybrid's conv state widens with the speculative tokens."""
    d = model_dir(tmp_path, C.DEEPSEEK_V3, 700_000_000_000)
    base = "vllm serve {d} -tp 16 -dp 1 --enable-expert-parallel --max-model-len 8192".format(d=d)
    plain = verdict(base, n=16)
    mtp = verdict(base + ' --speculative-config {"method":"mtp","num_speculative_tokens":1}', n=16)
    assert "61 full-attention layer(s)" in " ".join(str(e) for e in plain.evidence)
    text = " ".join(str(e) for e in mtp.evidence)
    assert "62 full-attention layer(s)" in text and "1 MTP layer(s) run and cache K and V beside the model's 61" in text
    eagle = verdict(base + ' --speculative-config {"method":"eagle3","model":"/d","num_speculative_tokens":1}', n=16)
    assert "61 full-attention layer(s)" in " ".join(str(e) for e in eagle.evidence)


def test_mtp_on_a_hybrid_adds_its_layer_and_widens_the_conv_state(tmp_path):
    """Qwen3-Next's MTP layer is a full-attention layer (13 beside 36 linear); 2 speculative tokens widen each linear
    layer's conv state from 3 to 5 steps: (2 × 16 × 128 + 32 × 128) / TP 4 × 5 × 2 B = 20,480 B."""
    d = model_dir(tmp_path, dict(C.QWEN3_NEXT, mtp_num_hidden_layers=1), 162_000_000_000)  # as Qwen3.5's configs
    out = verdict(f'vllm serve {d} -tp 4 --max-model-len 32768 --speculative-config '
                  '{"method":"qwen3_next_mtp","num_speculative_tokens":2}')
    text = " ".join(str(e) for e in out.evidence)
    assert "conv 20480 B" in text and "groups of 13 layers" in text, text


def test_graph_capture_needs_room_above_the_memory_utilization(tmp_path):
    """Graph capture follows the KV cache, in the 1 − gmu left: 0.99 of 60.94 GiB leaves 0.61 GiB, less than the
    0.79 GiB vllm-ascend has logged for a capture (warn); eager mode, or 0.98 (1.22 GiB left), passes."""
    d = model_dir(tmp_path, C.QWEN3_32B, QWEN3_32B_BYTES)
    cmd = f"vllm serve {d} -tp 2 --max-model-len 40960 --max-num-batched-tokens 4096"
    tight = verdict(cmd + " --gpu-memory-utilization 0.99")
    assert tight.status == Status.WARN and "graph capture runs after the KV cache" in tight.message, tight.message
    assert "0.61 GiB" in tight.message and "--gpu-memory-utilization 0.98" in tight.remediation
    assert verdict(cmd + " --gpu-memory-utilization 0.99 --enforce-eager").status == Status.PASS
    assert verdict(cmd + " --gpu-memory-utilization 0.98").status == Status.PASS


def test_the_kv_cache_dtype_is_sized_as_vllm_ascend_stores_it(tmp_path):
    """`--kv-cache-dtype int8` (vllm-ascend's C8, the W8A8C8 tutorials) stores K and V in one byte: twice the tokens
    of the bf16 cache (before, int8 was read as the model's two bytes: a context that fits could fail). An 8-bit MLA
    cache is packed with its scales and a 16-bit rope part: not sized, said so — never the plain latent at 1 B."""
    d = model_dir(tmp_path, C.QWEN3_32B, QWEN3_32B_BYTES)
    base = f"vllm serve {d} -tp 2 --max-model-len 40960 --max-num-batched-tokens 4096"
    bf16, int8 = verdict(base), verdict(base + " --kv-cache-dtype int8")
    assert bf16.status == int8.status == Status.PASS, int8.message
    assert "183808 tokens" in bf16.message and "367744 tokens" in int8.message
    odd = verdict(base + " --kv-cache-dtype turboquant_4bit_nc")
    assert odd.status == Status.UNKNOWN and "--kv-cache-dtype turboquant_4bit_nc is not sized" in odd.message
    mla = model_dir(tmp_path, C.DEEPSEEK_V2_LITE, 31_000_000_000, name="mla")
    packed = verdict(f"vllm serve {mla} -tp 2 --max-model-len 32768 --kv-cache-dtype int8")
    assert packed.status == Status.UNKNOWN and "on an MLA model" in packed.message
    assert verdict(f"vllm serve {mla} -tp 2 --max-model-len 32768").status == Status.PASS


def test_features_that_keep_weights_whole_are_budgeted_as_the_release_does_it(tmp_path):
    """FlashComm1 (sequence parallelism) leaves the shared experts unsharded on vllm-ascend 0.11.0rc1-0.25.1rc1
    (the deploy/replication rows): SERVE305 budgets them like the weights and says so in the budget; from 0.26.0rc1
    FlashComm1 no longer does (the same command fits as without it)."""
    from tests.checks.test_serve_checks import on_release

    d = model_dir(tmp_path, C.DEEPSEEK_V2_LITE, 31_400_000_000)
    base = f"vllm serve {d} -tp 2 --enable-expert-parallel --max-model-len 163840 --gpu-memory-utilization 0.355"
    assert verdict(base).status == Status.PASS
    for on in (f"env VLLM_ASCEND_ENABLE_FLASHCOMM1=1 {base}",
               base + " --compilation-config {\"pass_config\":{\"enable_sp\":true}}"):
        out = run_check("SERVE305", on_release(facts(on, npus=npu(8)), "0.13.0"))
        assert out.status == Status.WARN and "less than one request of --max-model-len 163840" in out.message, \
            out.message
        budget = next(e.excerpt for e in out.evidence if e.source == "deployment model (ascend-doctor plan)")
        assert "− weights kept whole by shared-expert-dp: 0.42 GiB — shared experts whole on every rank (0.42 GiB) " \
               "(vllm-ascend 0.13.0: vllm_ascend/ops/linear_op.py get_parallel_op" in budget, budget
    later = run_check("SERVE305", on_release(facts(f"env VLLM_ASCEND_ENABLE_FLASHCOMM1=1 {base}", npus=npu(8)),
                                             "0.27.1rc1"))
    assert later.status == Status.PASS and "kept whole" not in str(later.evidence), later.message


def test_features_a_release_was_not_read_for_are_bounded_not_ignored(tmp_path):
    """A release the rows do not cover (a development build, one before the first row): the most the features can
    add is the bound — a command that fits only without it warns; one that fits with it passes and says so."""
    from tests.checks.test_serve_checks import on_release

    d = model_dir(tmp_path, C.DEEPSEEK_V2_LITE, 31_400_000_000)
    base = f"vllm serve {d} -tp 2 --enable-expert-parallel --max-model-len 163840 --gpu-memory-utilization 0.355"
    out = run_check("SERVE305", on_release(facts(f"env VLLM_ASCEND_ENABLE_FLASHCOMM1=1 {base}", npus=npu(8)),
                                           "0.10.2rc1"))
    assert out.status == Status.WARN and "shared experts whole on every rank (0.42 GiB)" in out.message, out.message
    roomy = run_check("SERVE305", on_release(
        facts(f"env VLLM_ASCEND_ENABLE_FLASHCOMM1=1 {base.replace('0.355', '0.5')}", npus=npu(8)), "0.10.2rc1"))
    assert roomy.status == Status.PASS and "at most 0.42 GiB more weights per rank" in roomy.message


def test_the_replication_bound_is_the_unsharded_share_of_what_each_feature_keeps_whole():
    from ascend_doctor.deploy.arch import read_architecture
    from ascend_doctor.deploy.replication import bound, features

    v32 = read_architecture(dict(C.DEEPSEEK_V3, model_type="deepseek_v32", index_topk=2048, index_head_dim=128,
                                 index_n_heads=64))
    on = features({"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}, {"enable_mlapo": True}, None, v32)
    assert on == ["shared-expert-dp", "dsa-cp", "mlapo"]
    extra, _ = bound(v32, "w8a8", 8, on)
    shared = 58 * 3 * 7168 * 2048 * 7 / 8
    q_b, kv_b = 1536 * 128 * 192, 512 * 128 * 256
    mlapo = 61 * (7168 * 1536 + 7168 * 576 + q_b / 8)
    assert extra == int(shared + 61 * (q_b + kv_b) * 7 / 8 + mlapo)
    assert features({}, {}, None, v32) == [] and bound(v32, "w8a8", 8, [])[0] == 0


def test_the_kv_cache_dtype_a_release_replaces_is_sized_as_it_runs(tmp_path):
    """vllm-ascend 0.15.0rc1-0.28.x replace an 8-bit --kv-cache-dtype with the model's dtype on a DeepSeek-sparse-
    attention model (SERVE311 REL-B28-001, vllm-ascend#7685): the memory check sizes the 16-bit cache it will get,
    from the same row, and says why; from 0.29.0rc1 the 8-bit cache is its SFA C8 layout, not sized here."""
    from tests.checks.test_serve_checks import on_release

    dsa = dict(C.DEEPSEEK_V2_LITE, model_type="deepseek_v32", index_topk=2048, index_head_dim=128, index_n_heads=64)
    d = model_dir(tmp_path, dsa, 31_400_000_000, name="dsa")
    cmd = f"vllm serve {d} -tp 2 --max-model-len 32768 --kv-cache-dtype fp8"
    replaced = run_check("SERVE305", on_release(facts(cmd, npus=npu(8)), "0.25.1rc1"))
    assert replaced.status == Status.PASS, replaced.message
    assert any("uses the model's dtype, not --kv-cache-dtype fp8 (REL-B28-001)" in e.excerpt
               for e in replaced.evidence)
    plain = run_check("SERVE305", on_release(facts(cmd.replace(" --kv-cache-dtype fp8", ""), npus=npu(8)), "0.25.1rc1"))
    assert plain.message == replaced.message  # the same 16-bit cache
    later = run_check("SERVE305", on_release(facts(cmd, npus=npu(8)), "0.29.0rc1"))
    assert later.status == Status.UNKNOWN and "on an MLA model" in later.message


def test_block_fp8_weights_are_sized_as_the_bf16_the_release_converts_them_to(tmp_path):
    """vllm-ascend 0.27.1rc1 on (REL-B27-008): off Ascend 950 the FP8 blocks are resolved to BF16 at load — twice the
    checkpoint's bytes on every rank; the release before ran no FP8 on A2 at all (SERVE311 fails it)."""
    from ascend_doctor.seam.host import Distribution, PythonEnv

    fp8 = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    d = model_dir(tmp_path, {**C.QWEN3_32B, "quantization_config": fp8}, QWEN3_32B_BYTES // 2)

    def sized(ascend: str):
        f = facts(f"vllm serve {d} -tp 1 --max-model-len 8192", npus=npu(8))
        f["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=ascend),
                                               Distribution(name="vllm", version="0.27.1")])
        return run_check("SERVE305", f)

    out = sized("0.27.1rc1")  # the linear layers double; the embeddings were BF16 in the checkpoint already
    assert out.status == Status.FAIL and "the weights alone take 58.26 GiB per rank" in out.message
    loaded = next(e.excerpt for e in out.evidence if e.source == "weights as loaded")
    assert "converts the block-wise FP8 weights to BF16 on A2 (REL-B27-008): 30.51 GiB in the checkpoint, 58.26 " \
           "GiB loaded" in loaded
    assert sized("0.26.0rc1").status == Status.PASS  # sized as the checkpoint's one byte per weight


def test_a_vision_model_says_its_encoder_profile_is_not_in_the_budget(tmp_path):
    """vLLM's profile run puts a dummy image batch through the encoder and keeps its outputs; the budget does not
    count it (no processor config in the catalogue), and both SERVE305 and plan say so rather than stay silent."""
    vl = model_dir(tmp_path, C.QWEN3_VL_8B, 17_534_189_280, "vl")
    out = verdict(f"vllm serve {vl} -tp 1 --max-model-len 32768")
    assert out.status == Status.PASS and "multimodal encoder's profile run" in out.evidence[-1].excerpt
    text = verdict(f"vllm serve {model_dir(tmp_path, C.QWEN3_32B, QWEN3_32B_BYTES)} -tp 2 --max-model-len 8192")
    assert "encoder's profile run" not in text.evidence[-1].excerpt
    r = CliRunner().invoke(cli, ["plan", "--model", "Qwen/Qwen3-VL-8B-Instruct", "--chip", "910B3", "--npus", "1",
                                 "--format", "json"])
    assert any("multimodal encoder's profile run" in n for n in json.loads(r.output)["plan"]["notes"])
    r = CliRunner().invoke(cli, ["plan", "--model", "Qwen/Qwen3-8B", "--chip", "910B3", "--npus", "1",
                                 "--format", "json"])
    assert not any("profile run" in n for n in json.loads(r.output)["plan"]["notes"])
