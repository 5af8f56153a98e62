"""SERVE311: combinations a vllm-ascend release refuses, breaks on or overrides (matrices/serve/release-rules.toml)."""

from __future__ import annotations

import json

from ascend_doctor.knowledge.release_rules import CONDITIONS
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts, npu, run_check
from tests.helpers import shipped


def judge(extra: str, ascend: str, env=None, model=True, npus=None):
    out = facts(f"vllm serve {QWEN} {extra}", env=env, model=model, npus=npus)
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=ascend),
                                             Distribution(name="vllm", version="0.13.0"),
                                             Distribution(name="triton-ascend", version="3.2.0")])  # REL-B11-001
    out.setdefault("env", env or {})
    return run_check("SERVE311", out)


def test_every_rule_names_a_condition_the_check_knows():
    assert all(r.when in CONDITIONS for r in shipped().release_rules)


def test_block_size_16_is_replaced_from_0_12():  # vllm-ascend#7563
    f = judge("--block-size 16", "0.13.0")
    assert f.status == Status.WARN
    assert "REL-B13-003: vllm-ascend 0.13.0 replaces the setting — \"Block size is set to 128 if prefix cache or " \
           "chunked prefill is enabled.\"" in f.message
    assert judge("--block-size 128", "0.13.0").status == Status.PASS
    assert judge("--block-size 16 --no-enable-prefix-caching --no-enable-chunked-prefill", "0.13.0").status \
        == Status.PASS


def test_a_model_type_the_release_exempts_keeps_its_block_size():  # refresh_block_size returns early for it
    f = judge('--block-size 16 --hf-overrides {"model_type":"qwen3_next"}', "0.13.0")
    assert f.status == Status.PASS


def test_a_rule_with_exempt_model_types_cannot_tell_without_the_model():
    """REL-B13-003 exempts Qwen3-Next and DeepSeek-V4: with no config.json read (a paste whose model is "$MODEL"),
    the block size may be kept — unknown, not a warning (an h38h judge's false warning, generically)."""
    f = judge("--block-size 16", "0.13.0", model=False)
    assert f.status == Status.UNKNOWN and "REL-B13-003" in f.message, f.message


def test_an_unreadable_vllm_ascend_version_is_unknown():
    f = judge("--block-size 16", "weird-build")
    assert f.status == Status.UNKNOWN and "weird-build" in f.message


def test_prefix_caching_with_another_block_size_is_refused_on_0_7_3():
    f = judge("--enable-prefix-caching --block-size 64", "0.7.3")
    assert f.status == Status.FAIL and "If prefix caching is enabled, block size must be set to 128." in f.message


def test_prefix_caching_on_the_v0_engine_breaks_at_the_first_prefill():  # vllm-ascend#133
    f = judge("--enable-prefix-caching", "0.7.3rc1")
    assert f.status == Status.FAIL and "fails on it at the first request" in f.message
    assert "Prefix cache and chunked prefill are currently not supported." in f.message
    # vLLM 0.8.0-0.9.1 keep NPU on V0 unless VLLM_USE_V1=1; vLLM 0.9.2 (vllm-ascend 0.9.2rc1) makes V1 the default
    f = judge("--enable-prefix-caching", "0.9.1")
    assert f.status == Status.FAIL and "REL-B13-005" in f.message
    assert judge("--enable-prefix-caching", "0.9.1", env={"VLLM_USE_V1": "1"}).status == Status.PASS
    assert judge("--enable-prefix-caching", "0.9.2rc1").status == Status.PASS
    f = judge("--enable-prefix-caching", "0.9.2rc1", env={"VLLM_USE_V1": "0"})
    assert f.status == Status.FAIL and "REL-B13-010" in f.message


def test_the_engine_npu_runs_when_vllm_use_v1_is_not_set():  # vllm-ascend#1305
    f = judge("", "0.8.5rc1")
    assert f.status == Status.WARN and "REL-B23-001" in f.message
    assert "npu is experimental on VLLM_USE_V1=1. Falling back to V0 Engine." in f.message
    assert "VLLM_USE_V1=1" in f.remediation
    f = judge("", "0.9.1")
    assert f.status == Status.FAIL and "REL-B23-002" in f.message and "does not support it" in f.message
    assert judge("", "0.9.1", env={"VLLM_USE_V1": "1"}).status == Status.PASS
    assert judge("", "0.9.2rc1").status == Status.PASS
    assert judge("", "0.7.3").status == Status.PASS  # vLLM 0.7.3: V0 is the engine everyone runs, nothing replaced


def test_ascend_scheduler_rules():
    sched = '--additional-config {"ascend_scheduler_config":{"enabled":true}}'
    f = judge(f"{sched} --scheduling-policy priority", "0.9.1")
    assert f.status == Status.FAIL and "currently AscendScheduler only supports fcfs policy, got priority" in f.message
    f = judge(f"{sched} --max-num-batched-tokens 2048 --max-model-len 8192", "0.9.1")
    assert f.status == Status.FAIL and "max_num_batched_tokens (2048) is smaller than max_model_len (8192)" in f.message
    assert judge(f"{sched} --max-num-batched-tokens 2048 --max-model-len 8192", "0.9.2rc1").status == Status.PASS


def test_torchair_with_enforce_eager():
    f = judge('--enforce-eager --additional-config {"torchair_graph_config":{"enabled":true}}', "0.11.0")
    assert f.status == Status.FAIL and "Can't enable graph mode and eager mode at the same time." in f.message


def test_lora_rows():
    assert "No module named 'vllm_ascend.lora'" in judge("--enable-lora", "0.8.4rc1").message
    f = judge("--enable-lora --fully-sharded-loras --tensor-parallel-size 2", "0.13.0")  # vllm-ascend#6143
    assert f.status == Status.FAIL and "REL-B22-005" in f.message
    assert judge("--enable-lora --fully-sharded-loras --tensor-parallel-size 2", "0.17.0rc1").status == Status.PASS
    f = judge("--enable-lora", "0.8.5rc1", env={"VLLM_USE_V1": "1"})  # V1 on 0.8.x: no LoRA
    assert f.status == Status.FAIL and "REL-B22-002" in f.message
    f = judge("--enable-lora", "0.8.5rc1")  # unset: vLLM 0.8.5 runs V0 on NPU, which serves LoRA
    assert f.status == Status.WARN and "REL-B22-002" not in f.message and "REL-B23-001" in f.message
    f = judge("--enable-lora", "0.8.5rc1", env={"VLLM_USE_V1": "0"})  # V0 LoRA: no REL-B22 row; ENV102 speaks
    assert f.status == Status.PASS


def test_a_rule_that_needs_the_model_is_unknown_without_it():
    f = judge("--enable-lora --enable-expert-parallel", "0.23.0", model=False)
    assert f.status == Status.UNKNOWN and "REL-B22-006" in f.message
    f = judge("--enable-lora --enable-expert-parallel", "0.23.0")  # Qwen3-8B: dense, no fused MoE LoRA layer
    assert f.status == Status.PASS


def test_without_vllm_ascend_nothing_applies():
    out = facts(f"vllm serve {QWEN}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm", version="0.13.0")])
    assert run_check("SERVE311", out).status == Status.SKIP


def test_qwen3_next_in_graph_mode_breaks_on_0_11():  # vllm-ascend#5005, #3868
    nxt = '--hf-overrides {"model_type":"qwen3_next"}'
    f = judge(nxt, "0.11.0rc3")
    assert f.status == Status.FAIL and "REL-B15-001" in f.message and "aclgraph_support" in f.message
    assert "--enforce-eager" in f.remediation
    assert judge(nxt + " --enforce-eager", "0.11.0rc3").status == Status.PASS
    assert judge(nxt + ' --compilation-config {"cudagraph_mode":"NONE"}', "0.11.0").status == Status.PASS
    assert judge(nxt, "0.12.0rc1").status == Status.PASS  # PR #3812
    assert judge(nxt, "0.10.2rc1").status == Status.PASS  # no ACL-graph builder query yet
    assert judge("", "0.11.0").status == Status.PASS  # Qwen3-8B



def _quant(method: str) -> str:
    return '--hf-overrides {"quantization_config":{"quant_method":"%s","bits":4}}' % method


def test_a_quantization_the_release_does_not_run():  # vllm-ascend#1233, #6484, #7131, #1997
    f = judge(_quant("awq"), "0.11.0")  # hijacked into the msModelSlim loader
    assert f.status == Status.FAIL and "REL-B27-001" in f.message and "awq" in f.message
    assert "BF16" in f.remediation
    f = judge(_quant("mxfp4"), "0.13.0")
    assert f.status == Status.FAIL and "mxfp4 quantization is currently not supported in npu." in f.message
    f = judge(_quant("gptq"), "0.23.0rc1")
    assert f.status == Status.FAIL and "REL-B27-003" in f.message
    f = judge("--quantization awq", "0.13.0")  # the flag is what vLLM verifies
    assert f.status == Status.FAIL and "awq quantization" in f.message


def test_the_quantizations_a_release_runs_pass():
    assert judge(_quant("compressed-tensors"), "0.13.0").status == Status.PASS
    assert judge(_quant("fp8"), "0.21.0rc1", npus=chips("950PR")).status == Status.PASS
    assert judge(_quant("ascend"), "0.11.0").status == Status.PASS
    assert judge("--quantization ascend", "0.10.0rc1").status == Status.PASS
    assert judge("", "0.11.0").status == Status.PASS  # no quantization_config
    assert judge(_quant("awq"), "0.7.3").status == Status.PASS  # no row read before 0.8.4rc1


def chips(name: str, n: int = 8):
    smi = npu(n)
    for c in smi.info.chips:
        c.name = name
    return smi


def _fp8(**extra) -> str:
    qc = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128], **extra}
    return "--hf-overrides " + json.dumps({"quantization_config": qc}, separators=(",", ":"))


def test_fp8_weights_on_a2_fail_to_load_on_0_21_to_0_26():  # vllm-ascend#12675
    f = judge(_fp8(), "0.23.0")
    assert f.status == Status.FAIL and "REL-B27-005" in f.message
    assert "MXFP8 and MXFP4 kernels of Ascend 950" in f.message and "on A2 (910B3) the weights fail to load" in f.message
    assert "msModelSlim W8A8" in f.remediation and "--quantization ascend" in f.remediation
    assert judge(_fp8(), "0.26.0rc1", npus=chips("Ascend910")).status == Status.FAIL  # A3
    assert judge(_fp8(), "0.23.0", npus=chips("950PR")).status == Status.PASS  # the chip the kernels are for
    assert judge(_fp8(), "0.20.2rc1").status == Status.FAIL  # refused by the platform (REL-B27-002)


def test_a_chip_rule_without_the_chips_is_unknown_and_only_when_it_applies():
    no_table = npu(0)  # npu-smi listed no chip
    f = judge(_fp8(), "0.23.0", npus=no_table)
    assert f.status == Status.UNKNOWN and "REL-B27-005" in f.message and "A2/A3/310P only" in f.message
    assert judge("", "0.23.0", npus=no_table).status == Status.PASS  # a bf16 checkpoint: no chip rule applies


def test_fp8_from_0_27_is_converted_on_a2_and_refused_without_block_scales():
    f = judge(_fp8(), "0.27.1rc1")  # block-wise: served, at twice the memory
    assert f.status == Status.WARN and "REL-B27-008" in f.message and "twice the memory" in f.message
    assert judge(_fp8(), "0.30.0rc2", npus=chips("950DT")).status == Status.PASS
    f = judge(_fp8(weight_block_size=None), "0.27.1rc1", npus=chips("950DT"))
    assert f.status == Status.FAIL and "REL-B27-007" in f.message and "no weight_block_size" in f.message
    f = judge(_fp8(activation_scheme="static"), "0.30.0rc2")
    assert f.status == Status.FAIL and "activation_scheme static" in f.message


def test_mx_and_deepseek_v4_native_weights_need_ascend_950():
    f = judge(_quant("mxfp8"), "0.30.0rc2")
    assert f.status == Status.FAIL and "REL-B27-006" in f.message and "A2 (910B3)" in f.message
    assert judge(_quant("mxfp8"), "0.30.0rc2", npus=chips("950PR")).status == Status.PASS
    assert judge(_quant("mxfp8"), "0.26.0rc1").status == Status.FAIL  # not registered yet: REL-B27-003
    dsv4 = _fp8()[:-2] + '},"model_type":"deepseek_v4"}'
    f = judge(dsv4, "0.27.1rc1")
    assert f.status == Status.FAIL and "REL-B27-006" in f.message and "REL-B27-008" not in f.message


def test_a_quantization_rule_without_the_model_is_unknown():
    f = judge("", "0.13.0", model=False)
    assert f.status == Status.UNKNOWN and "REL-B27-002" in f.message
    assert judge("--quantization ascend", "0.13.0", model=False).status != Status.FAIL


def test_ascend_launch_blocking_with_graphs_is_refused_from_0_11_0rc1_to_0_28():  # vllm-ascend PR #3574
    blocking = {"ASCEND_LAUNCH_BLOCKING": "1"}
    f = judge("", "0.25.1rc1", env=blocking)
    assert f.status == Status.FAIL and "REL-B15-002" in f.message and "ASCEND_LAUNCH_BLOCKING=1" in f.message
    assert "--enforce-eager" in f.remediation
    assert judge("--enforce-eager", "0.25.1rc1", env=blocking).status == Status.PASS  # no graph: accepted
    assert judge('--compilation-config {"cudagraph_mode":"NONE"}', "0.13.0", env=blocking).status == Status.PASS
    assert judge("", "0.25.1rc1", env={"ASCEND_LAUNCH_BLOCKING": "0"}).status == Status.PASS
    assert judge("", "0.25.1rc1", env={"ASCEND_LAUNCH_BLOCKING": "true"}).status == Status.PASS  # compared to "1"
    assert judge("", "0.29.0rc1", env=blocking).status == Status.PASS  # the check is gone
    assert judge("", "0.11.0rc0", env=blocking).status == Status.PASS  # not yet


def test_deepseek_v4_block_size_is_replaced_as_each_release_replaces_it():  # vllm-ascend#14479
    v4 = '--hf-overrides {"model_type":"deepseek_v4"}'
    f = judge(v4 + " --block-size 256", "0.25.1rc1")
    assert f.status == Status.WARN and "REL-B13-011" in f.message and "Setting block size to 32" in f.message
    assert judge(v4 + " --block-size 64", "0.25.1rc1").status == Status.PASS
    assert judge(v4, "0.25.1rc1").status == Status.PASS  # no --block-size
    f = judge(v4 + " --block-size 64", "0.20.2rc1")  # 0.20.2rc1: always 128
    assert f.status == Status.WARN and "REL-B13-012" in f.message
    off = " --no-enable-prefix-caching --no-enable-chunked-prefill"  # REL-B13-003 out of the way
    assert judge(v4 + " --block-size 256" + off, "0.25.1rc1", model=False).status == Status.UNKNOWN


def test_an_8_bit_kv_cache_on_a_dsa_model_is_replaced_by_the_model_dtype():  # vllm-ascend#7685
    dsa = '--hf-overrides {"index_topk":2048}'
    f = judge(dsa + " --kv-cache-dtype fp8", "0.25.1rc1")
    assert f.status == Status.WARN and "REL-B28-001" in f.message and "--kv-cache-dtype fp8 is not used" in f.message
    assert judge(dsa + " --kv-cache-dtype auto", "0.25.1rc1").status == Status.PASS
    assert judge(dsa + " --kv-cache-dtype bfloat16", "0.25.1rc1").status == Status.PASS
    assert judge("--kv-cache-dtype fp8", "0.25.1rc1").status == Status.PASS  # Qwen3-8B: no DSA indexer
    assert judge(dsa + " --kv-cache-dtype fp8", "0.29.0rc1").status == Status.PASS  # SFA C8 from then on
    assert judge(dsa + " --kv-cache-dtype fp8", "0.14.0rc1").status == Status.PASS


def test_enable_kv_nz_only_on_an_mla_decode_node():
    nz = '--additional-config {"enable_kv_nz":true}'
    mla = '--hf-overrides {"model_type":"deepseek_v3","kv_lora_rank":512,"qk_rope_head_dim":64,"q_lora_rank":1536}'
    d_node = '--kv-transfer-config {"kv_connector":"MooncakeConnectorV1","kv_role":"kv_consumer"}'
    f = judge(f"{nz} {mla}", "0.25.1rc1")
    assert f.status == Status.FAIL and "REL-B29-001" in f.message and "can only be used in D node" in f.message
    assert "REL-B29-002" not in f.message  # an MLA model
    f = judge(f"{nz} {d_node}", "0.25.1rc1")  # Qwen3-8B: GQA
    assert f.status == Status.FAIL and "REL-B29-002" in f.message and "REL-B29-001" not in f.message
    assert judge(f"{nz} {mla} {d_node}", "0.25.1rc1").status == Status.PASS
    assert judge(f"{nz} {mla} {d_node.replace('kv_consumer', 'kv_producer')}", "0.25.1rc1").status == Status.FAIL
    dsa = mla.replace('"q_lora_rank":1536}', '"q_lora_rank":1536,"index_topk":2048}')
    assert "REL-B29-002" in judge(f"{nz} {dsa} {d_node}", "0.25.1rc1").message
    assert judge(f"{nz} {mla}", "0.13.0rc1").status == Status.PASS  # before the check


def test_layer_sharding_off_a_prefill_node_is_refused_from_0_18_0_to_0_23():
    """The DeepSeek-V3.2 tutorial of vllm-ascend 0.18.0 passes `layer_sharding` on its single-node command, which
    that release refuses (platform.py _validate_layer_sharding_config)."""
    ls = '--additional-config {"layer_sharding":["q_b_proj","o_proj"]}'
    f = judge(ls, "0.18.0")
    assert f.status == Status.FAIL and "REL-B29-003" in f.message and "P node" in f.message
    p_node = '--kv-transfer-config {"kv_connector":"MooncakeConnectorV1","kv_role":"kv_producer"}'
    assert judge(f"{ls} {p_node}", "0.18.0").status == Status.PASS
    assert judge(f"{ls} {p_node.replace('kv_producer', 'kv_both')}", "0.23.0").status == Status.FAIL
    assert judge(ls, "0.18.0rc1").status == Status.PASS and judge(ls, "0.24.0rc1").status == Status.PASS
    assert judge('--additional-config {"layer_sharding":[]}', "0.18.0").status == Status.PASS


def test_the_recompute_scheduler_on_a_pd_mixed_server_is_refused():  # vllm-ascend PRs #11265, #11537
    on = '--additional-config {"recompute_scheduler_enable":true}'
    f = judge(on, "0.23.0")
    assert f.status == Status.FAIL and "REL-B29-004" in f.message
    both = '--kv-transfer-config {"kv_connector":"MooncakeConnectorV1","kv_role":"kv_both"}'
    assert judge(f"{on} {both}", "0.18.0").status == Status.FAIL
    d = both.replace("kv_both", "kv_consumer")
    assert judge(f"{on} {d}", "0.23.0").status == Status.PASS
    nested = '--additional-config {"scheduler_config":{"recompute_scheduler_enable":true}}'
    assert judge(nested, "0.25.1rc1").status == Status.FAIL  # where 0.25.1rc1 moved it
    assert judge('--additional-config {"recompute_scheduler_enable":false}', "0.23.0").status == Status.PASS
    assert judge(on, "0.18.0rc1").status == Status.PASS  # no such check yet


def _moe(model_type: str = "qwen3_moe") -> str:
    over = {"model_type": model_type, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768}
    return "--hf-overrides " + json.dumps(over, separators=(",", ":"))


def test_a_moe_model_on_a_300i_duo_before_its_moe_kernels_is_unsupported():  # vllm-ascend#1813
    """0.9.2rc1-310p: "qwen3-moe is not supported on 310I series … such as MoeGatingTopKSoftmax"; the release notes of
    0.15.0rc1 are the first to add MoE models on 310P. Pangu-Pro-MoE, which the older 310P guides run, is exempt; a
    dense model, an A2 host and 0.15.0rc1 are not concerned."""
    f = judge(_moe(), "0.13.0", npus=chips("310P3", 4))
    assert f.status == Status.FAIL and "REL-A19-001" in f.message and "MoeGatingTopKSoftmax" in f.message
    assert "0.15.0rc1" in f.remediation
    assert "REL-A19-001" not in judge(_moe(), "0.15.0rc1", npus=chips("310P3", 4)).message
    assert "REL-A19-001" not in judge(_moe(), "0.13.0").message  # 910B3
    assert "REL-A19-001" not in judge(_moe("PanguProMoE"), "0.13.0", npus=chips("310P3", 4)).message
    assert "REL-A19-001" not in judge("", "0.13.0", npus=chips("310P3", 4)).message


def _with(extra: str, ascend: str, *dists: tuple[str, str]):
    out = facts(f"vllm serve {QWEN} {extra}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=ascend),
                                             Distribution(name="vllm", version="0.13.0")]
                              + [Distribution(name=n, version=v) for n, v in dists])
    out.setdefault("env", {})
    return run_check("SERVE311", out)


def test_qwen3_next_without_triton_ascend_is_refused():  # vllm-ascend#3212: "No module named 'triton'"
    """The Qwen3-Next tutorials of 0.10.2rc1-0.13.0rc3 install triton-ascend by hand ("The Triton Ascend is required
    when you run Qwen3 Next"); from 0.13.0 vllm-ascend's requirements install it. Without it the model cannot start;
    with it (the pass control), or for another model, or before the release that serves Qwen3-Next, no rule holds."""
    nxt = '--enforce-eager --hf-overrides {"model_type":"qwen3_next"}'  # eager: 0.11's graph rule aside
    f = _with(nxt, "0.11.0")
    assert f.status == Status.FAIL and "REL-B11-001" in f.message and "Triton Ascend is required" in f.message
    assert "triton-ascend is not installed in the serving python" in f.evidence[1].excerpt
    assert "matrix pins --vllm-ascend" in f.remediation
    assert _with(nxt, "0.11.0", ("triton-ascend", "3.2.0.dev20250914")).status == Status.PASS
    assert "REL-B11-001" not in _with("", "0.11.0").message
    assert "REL-B11-001" not in _with(nxt, "0.10.1rc1").message
    assert "REL-B11-001" in _with(nxt, "0.18.0").message  # a release that installs it: removed since


def test_flashcomm_with_a_vl_model_is_refused_where_the_release_checks_it():  # vllm-ascend #4222, #5848
    """0.11.0rc2-0.12.0rc1 call a model VL by "VL" in its first architecture name, 0.13.0rc1 and 0.14.0rc1 by a
    vision_config (or thinker_config); both read VLLM_ASCEND_ENABLE_FLASHCOMM and VLLM_ASCEND_ENABLE_FLASHCOMM1. 0.13.0
    has no such check; a text model or FlashComm off passes."""
    vl = '--hf-overrides {"architectures":["Qwen2_5_VLForConditionalGeneration"],"vision_config":{"depth":32}}'
    for release, env, rule in (("0.11.0", {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}, "REL-B16-001"),
                               ("0.12.0rc1", {"VLLM_ASCEND_ENABLE_FLASHCOMM": "1"}, "REL-B16-001"),
                               ("0.13.0rc1", {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}, "REL-B16-002"),
                               ("0.14.0rc1", {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}, "REL-B16-003")):
        f = judge(vl, release, env=env)
        assert f.status == Status.FAIL and rule in f.message and "VL models doesn't support FLASHCOMM" in f.message
        assert rule not in judge(vl, release, env={"VLLM_ASCEND_ENABLE_FLASHCOMM1": "0"}).message
        assert rule not in judge("", release, env=env).message  # Qwen3-8B: not VL
    assert "REL-B16" not in judge(vl, "0.13.0", env={"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}).message


def test_an_encoder_only_model_is_refused_by_the_releases_whose_v1_attention_refuses_it():  # vllm-ascend#4796
    """vLLM 0.10.1.1 runs BERT/RoBERTa models on V1, whose attention in vllm-ascend 0.10.1rc1-0.11.0rc0 raises for
    any attention type but decoder; 0.11.0rc1 admits ENCODER_ONLY, and 0.10.0rc1's vLLM keeps them on V0."""
    xlmr = '--hf-overrides {"architectures":["XLMRobertaForSequenceClassification"]}'
    f = _with(xlmr, "0.10.2rc1")
    assert f.status == Status.FAIL and "REL-B11-002" in f.message and "PallasAttentionBackendImpl" in f.message
    assert "0.11.0rc1" in f.remediation
    assert "REL-B11-002" not in _with(xlmr, "0.11.0rc1").message
    assert "REL-B11-002" not in _with(xlmr, "0.10.0rc1").message
    assert "REL-B11-002" not in _with("", "0.10.2rc1").message  # a decoder model


def test_full_graphs_with_an_mtp_draft_break_a_model_without_mla_on_0_12_to_0_13_0rc1():
    """vllm-ascend#6085 (GLM-4.7 W8A8 on the v0.13.0rc1 image, cudagraph_mode FULL_DECODE_ONLY with an MTP draft:
    every worker raised NotImplementedError from attention_v1's build_for_graph_capture)."""
    full = '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"} '
    mtp = '--speculative-config {"method":"mtp","num_speculative_tokens":1}'
    f = judge(full + mtp, "0.13.0rc1")
    assert f.status == Status.FAIL and "REL-B15-003" in f.message, f.message
    assert "building dummy metadata for DecodeOnly state" in f.message and "PIECEWISE" in f.remediation
    assert judge(full + mtp.replace('"mtp"', '"glm4_moe_mtp"'), "0.12.0rc1").status == Status.FAIL
    assert judge(full + mtp, "0.13.0rc2").status == Status.PASS  # captured in the ChunkedPrefill state
    assert judge(mtp, "0.13.0rc1").status == Status.PASS  # the default PIECEWISE graphs
    assert judge(full + mtp + " --enforce-eager", "0.13.0rc1").status == Status.PASS
    mla = ' --hf-overrides {"model_type":"deepseek_v3","kv_lora_rank":512,"qk_rope_head_dim":64}'
    assert judge(full + mtp + mla, "0.13.0rc1").status == Status.PASS  # the MLA builder builds SpecDecoding
    assert judge(full + mtp, "0.13.0rc1", model=False).status == Status.UNKNOWN


def test_quantization_ascend_on_the_server_command_line_is_refused_before_0_9_0rc1():
    """vllm-ascend#2819 (vllm 0.7.3 + vllm-ascend 0.7.3.post1: `vllm serve … --quantization ascend` is no accepted
    choice); the v0.9.0rc1 release notes: "online serve with ascend quantization works now" (#877)."""
    f = judge("--quantization ascend", "0.7.3.post1")
    assert f.status == Status.FAIL and "REL-B27-010" in f.message and "invalid choice: 'ascend'" in f.message
    assert "0.9.0rc1" in f.remediation and 'quantization=\"ascend\"' in f.remediation
    assert "REL-B27-010" in judge("--quantization ascend", "0.8.5rc1").message
    assert "REL-B27-010" not in judge("--quantization ascend", "0.9.0rc1").message
    assert "REL-B27-010" not in judge("", "0.8.5rc1").message


def test_an_offline_launch_takes_no_argument_parser():
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    text = "vllm 0.8.5\nvllm-ascend 0.8.5rc1\n\nllm = LLM(model='/models/Qwen2.5-7B-w8a8', quantization='ascend')\n"
    f = {x.code: x for x in triage_text(text, "paste.md", load_registry()).findings}["SERVE311"]
    assert "REL-B27-010" not in f.message, f.message
    served = text.replace("llm = LLM(model='/models/Qwen2.5-7B-w8a8', quantization='ascend')",
                          "vllm serve /models/Qwen2.5-7B-w8a8 --quantization ascend")
    f = {x.code: x for x in triage_text(served, "paste.md", load_registry()).findings}["SERVE311"]
    assert "REL-B27-010" in f.message, f.message


def test_an_off_grid_max_num_seqs_leaves_the_largest_decode_batches_without_a_graph():
    """vllm-ascend#16049: from 0.18.0rc1 the release's default capture ceiling is max_num_seqs x decode query length
    (vLLM's is twice that), and vLLM's grid (1, 2, 4, multiples of 8) does not reach 12: batches 9-12 ran eager.
    0.30.0rc1 adds the ceiling to the list; a grid value, explicit sizes, eager mode or vLLM's default pass."""
    f = judge("--max-num-seqs 12", "0.25.1rc1")
    assert f.status == Status.WARN and "REL-B15-004" in f.message, f.message
    assert "12 here" in f.message and "stops at 8" in f.message and "9-12 tokens" in f.message
    assert "0.30.0rc1" in f.remediation and "cudagraph_capture_sizes" in f.remediation
    mtp = ' --speculative-config {"method":"mtp","num_speculative_tokens":1}'
    f = judge("--max-num-seqs 10" + mtp, "0.18.0rc1")  # 10 x 2 = 20: stops at 16
    assert f.status == Status.WARN and "20 here" in f.message and "stops at 16" in f.message
    assert "REL-B15-004" not in judge("--max-num-seqs 12" + mtp, "0.25.1rc1").message  # 24: on the grid
    for ok in ("--max-num-seqs 16", "--max-num-seqs 12 --enforce-eager", "--max-num-seqs 600", "",
               '--max-num-seqs 12 --compilation-config {"cudagraph_capture_sizes":[1,2,4,8,12]}',
               '--max-num-seqs 12 --compilation-config {"cudagraph_mode":"NONE"}'):
        assert "REL-B15-004" not in judge(ok, "0.25.1rc1").message, ok
    assert "REL-B15-004" not in judge("--max-num-seqs 12", "0.30.0rc1").message
    assert "REL-B15-004" not in judge("--max-num-seqs 12 --max-num-batched-tokens 10", "0.25.1rc1").message  # added
    assert "REL-B15-004" in judge("--max-num-seqs 12 --max-num-batched-tokens 4096", "0.25.1rc1").message
    # a value that is no number (two options run together in a paste) is not this rule's to judge; no crash (h38l)
    f = judge("--max-num-seqs 12 --max-num-batched-tokens 50--seed", "0.25.1rc1")
    assert f.status != Status.ERROR and "REL-B15-004" not in f.message
    assert "REL-B15-004" not in judge("--max-num-seqs 12", "0.17.0rc1").message  # vLLM's x 2: 24
    unknown = judge('--max-num-seqs 12 --speculative-config {"method":"mtp"}', "0.25.1rc1")
    assert "REL-B15-004" in unknown.message and unknown.status == Status.UNKNOWN, unknown.message


def test_the_capture_ceiling_boundaries_are_one_fact_in_two_tables():
    """REL-B15-004's releases are those whose ceiling is the release's own (serve/graph-budget `ascend_ceiling`) and
    not yet captured (`ceiling_captured`): the rule and SERVE312's capture-list model cannot drift apart."""
    from tests.helpers import shipped

    k = shipped()
    row = next(r for r in k.release_rules if r.id == "REL-B15-004")
    d = k.graph_budget.defaults
    assert row.vllm_ascend == f"{d.ascend_ceiling},<{d.ceiling_captured.lstrip('>=')}"


def test_a_pooling_model_on_a_300i_duo_is_refused_by_0_14_to_0_19():
    """The 310P attention-mask builder of 0.14.0rc1-0.19.1rc1 raises for vLLM's pooling runner (an h38j thread ran
    an embedding model on a 300I Duo); 0.20.2rc1 serves pooling models there. The runner as vLLM resolves it: a
    pooling --task/--runner/--convert, or an architecture vLLM's defaults run as pooling; an A2 is not judged."""
    duo = chips("310P3")
    for extra in ("--task embed", "--runner pooling", "--convert classify",
                  '--hf-overrides {"architectures":["XLMRobertaForSequenceClassification"]}'):
        f = judge(extra, "0.18.0", npus=duo)
        assert f.status == Status.FAIL and "REL-B11-003" in f.message, (extra, f.message)
        assert "310P does not support runner_type='pooling'" in f.message and "0.20.2rc1" in f.remediation
    assert "REL-B11-003" not in judge("--task embed", "0.20.2rc1", npus=duo).message
    assert "REL-B11-003" not in judge("--task embed", "0.13.0", npus=duo).message
    assert "REL-B11-003" not in judge("--task embed", "0.18.0", npus=chips("910B3")).message
    assert "REL-B11-003" not in judge("--runner generate", "0.18.0", npus=duo).message
    assert "REL-B11-003" not in judge("", "0.18.0", npus=duo).message  # Qwen3ForCausalLM: generate


def test_a_decoder_embedding_model_with_prefix_caching_breaks_on_0_13_to_0_17():
    """vllm-ascend#5725: on 0.13.0rc1-0.17.0rc1 every pooling model runs through encoder attention, which does not
    read the prefix cache, so a repeated prompt was embedded wrong; PR #7452 (0.18.0rc1) keeps causal pooling models
    on the cached path. Prefix caching is on when the flag says so, or by vLLM's default for LAST/ALL pooling of a
    decoder model; MEAN pooling, --no-enable-prefix-caching, an encoder-only model or a generative run pass; a
    pooling type the command does not show is not known."""
    last = ' --pooler-config {"pooling_type":"LAST"}'
    f = judge("--task embed" + last, "0.17.0rc1")  # Qwen3-8B's config: a causal LM, run as a pooling model
    assert f.status == Status.FAIL and "REL-B13-013" in f.message, f.message
    assert "LAST pooling: prefix caching on" in next(e.excerpt for e in f.evidence if "REL-B13-013" in e.source)
    assert "--no-enable-prefix-caching" in f.remediation
    assert "REL-B13-013" in judge("--runner pooling --enable-prefix-caching", "0.13.0rc1").message
    for extra, release in (("--task embed --no-enable-prefix-caching" + last, "0.17.0rc1"),
                           ("--task embed" + last, "0.18.0rc1"), ("--task embed" + last, "0.12.0rc1"),
                           ("", "0.17.0rc1"), ('--task embed --pooler-config {"pooling_type":"MEAN"}', "0.17.0rc1"),
                           ('--hf-overrides {"architectures":["XLMRobertaForSequenceClassification"]}', "0.17.0rc1")):
        assert "REL-B13-013" not in judge(extra, release).message, (extra, release)
    unknown = judge("--task embed", "0.17.0rc1")  # the checkpoint's pooling type is not read
    assert unknown.status == Status.UNKNOWN and "REL-B13-013" in unknown.message and "pooling type" in unknown.message
    assert judge("--task embed" + last, "0.17.0rc1", model=False).status == Status.UNKNOWN  # BERT or not


def test_a_compressed_tensors_checkpoint_on_a_300i_duo_does_not_load():
    """From 0.15.0rc1 the platform registers its compressed-tensors config only off 310P (an h38j thread: an LLM
    Compressor W8A8 checkpoint on the 0.18.0rc1-310p image failed to load); A2 and msModelSlim checkpoints pass."""
    ct = '--hf-overrides {"quantization_config":{"quant_method":"compressed-tensors"}}'
    f = judge(ct, "0.18.0rc1", npus=chips("310P3"))
    assert f.status == Status.FAIL and "REL-B27-011" in f.message and "AscendModelSlimConfig310" in f.message
    assert "--quantization ascend" in f.remediation
    assert "REL-B27-011" not in judge(ct, "0.18.0rc1", npus=chips("910B3")).message
    assert "REL-B27-011" not in judge(ct, "0.14.0rc1", npus=chips("310P3")).message
    assert "REL-B27-011" not in judge("--quantization ascend", "0.18.0rc1", npus=chips("310P3")).message
    unread = judge("", "0.18.0rc1", npus=chips("310P3"), model=False)  # the checkpoint's method is not known
    assert unread.status == Status.UNKNOWN and "REL-B27-011" in unread.message


def test_a_prefill_node_on_0_23_0_runs_without_preemption():
    """vllm-ascend#15802: 0.23.0 and 0.23.0.post1 turn scheduler preemption off on a kv_producer node, which stalled
    a 1P1D deployment under load; 0.23.0rc1, 0.24.0rc1 and a decode node are not affected."""
    p = '--kv-transfer-config {"kv_connector":"MooncakeConnectorV1","kv_role":"kv_producer"}'
    for release in ("0.23.0", "0.23.0.post1"):
        f = judge(p, release)
        assert f.status == Status.WARN and "REL-B29-005" in f.message and "preemption is disabled" in f.message
    for extra, release in ((p, "0.23.0rc1"), (p, "0.24.0rc1"), (p.replace("kv_producer", "kv_consumer"), "0.23.0")):
        assert "REL-B29-005" not in judge(extra, release).message, (extra, release)


def test_pooling_rules_on_a_model_whose_config_is_not_read():
    """Without the model's config.json the architecture decides nothing: a name that suggests a pooling model leaves
    the pooling rules unjudged; any other name is taken for the generative model it almost always is, so SERVE311 is
    not made unknown for every unread config. A rule of other chips than the host's is not asked at all."""
    def run(model, release, npus):
        out = facts(f"vllm serve {model} --max-model-len 1024", model=False, npus=npus)
        out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=release),
                                                 Distribution(name="vllm", version="0.13.0"),
                                                 Distribution(name="triton-ascend", version="3.2.0")])
        out.setdefault("env", {})
        return run_check("SERVE311", out)

    f = run("/models/Qwen3-Embedding-4B", "0.18.0", chips("310P3"))
    assert f.status == Status.UNKNOWN and "REL-B11-003" in f.message, f.message
    assert "REL-B11-003" not in run("/models/Qwen3-Embedding-4B", "0.18.0", chips("910B3")).message
    assert "REL-B11-003" not in run("/models/Qwen3-8B", "0.18.0", chips("310P3")).message


def test_flashcomm1_with_shared_expert_overlap_and_data_parallel_hangs_on_a3():
    """vllm-ascend#16446: FlashComm1 + multistream_overlap_shared_expert + DP > 1 hung at start-up on A3 (any two of
    the three start; the fix #16450 is in no release through 0.30.0rc2). A warning: 0.30.0rc2's GLM-5.2 tutorial runs
    the three together. The variable or the --additional-config key turns FlashComm1 on (the key decides where
    given); each control drops one of the three."""
    overlap = '--additional-config {"multistream_overlap_shared_expert":true}'
    both = '--additional-config {"multistream_overlap_shared_expert":true,"enable_flashcomm1":true}'
    fc = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}
    a3 = chips("Ascend910_9391", 16)
    f = judge(f"-dp 2 -tp 8 {overlap}", "0.28.0rc1", env=fc, npus=a3)
    assert f.status == Status.WARN and "REL-B29-006" in f.message and "hung at start-up" in f.message
    assert "may hang on it at start-up" in f.message and "tutorial runs the three together" in f.message
    assert any("VLLM_ASCEND_ENABLE_FLASHCOMM1=1" in e.excerpt for e in f.evidence)
    assert "multistream_overlap_shared_expert" in f.remediation
    assert "REL-B29-006" in judge(f"-dp 2 -tp 8 {both}", "0.30.0rc2", npus=a3).message
    for extra, env in ((f"-tp 8 {overlap}", fc), (f"-dp 2 -tp 8 {overlap}", {}), ("-dp 2 -tp 8", fc),
                       (f"-dp 2 -tp 8 {both.replace('true}', 'false}')}", fc)):
        assert "REL-B29-006" not in judge(extra, "0.28.0rc1", env=env, npus=a3).message, (extra, env)
    assert "REL-B29-006" not in judge(f"-dp 2 -tp 8 {overlap}", "0.27.1rc1", env=fc, npus=a3).message
    assert "REL-B29-006" not in judge(f"-dp 2 -tp 4 {overlap}", "0.28.0rc1", env=fc, npus=chips("910B3")).message


def test_deepseek_v3_before_the_release_that_runs_it_breaks():  # vllm-ascend#72, #206
    """v0.7.1rc1's own table marks DeepSeek v3 ✅, but the maintainers' tracking issue and 0.7.3rc1's release notes
    say it runs from 0.7.3rc1: on 0.7.1rc1 it stops in load_model ('Torch not compiled with CUDA enabled')."""
    ds = '--hf-overrides {"model_type":"deepseek_v3","architectures":["DeepseekV3ForCausalLM"]}'
    f = judge(ds, "0.7.1rc1")
    assert f.status == Status.FAIL and "REL-B11-004" in f.message and "Torch not compiled with CUDA" in f.message
    assert "0.7.3rc1" in f.remediation
    assert "REL-B11-004" not in judge(ds, "0.7.3rc1").message
    assert "REL-B11-004" not in judge("", "0.7.1rc1").message  # another model


def test_a_module_the_release_s_wheel_leaves_out_warns_for_what_imports_it():
    """REL-A2-*: the subpackages a release's wheel leaves out (no __init__.py, so find_packages skips them) and what
    reaches their import — a warning, since the official images' editable install is not affected (vllm-ascend#1156:
    `pip install vllm-ascend==v0.9.0rc1`, VLLM_USE_V1=1, "No module named 'vllm_ascend.compilation'")."""
    f = judge("", "0.9.0rc1", env={"VLLM_USE_V1": "1"})
    assert f.status == Status.WARN and "REL-A2-001" in f.message and "vllm_ascend.compilation" in f.message
    assert "PyPI package" in f.message and "0.9.0rc2" in f.remediation
    assert "REL-A2-001" not in judge("--enforce-eager", "0.9.0rc1", env={"VLLM_USE_V1": "1"}).message
    assert "REL-A2-001" not in judge("", "0.9.0rc1", env={"VLLM_USE_V1": "0"}).message  # V0: no torch.compile
    torchair = '--additional-config {"torchair_graph_config":{"enabled":true}}'
    assert "REL-A2-001" not in judge(torchair, "0.9.0rc1", env={"VLLM_USE_V1": "1"}).message
    assert "REL-A2-001" not in judge("", "0.9.0rc2", env={"VLLM_USE_V1": "1"}).message
    f = judge("", "0.13.0rc3")  # its worker imports vllm_ascend.models.layer: every deployment
    assert f.status == Status.WARN and "REL-A2-002" in f.message and "REL-A2-003" not in f.message
    assert "REL-A2-003" in judge("", "0.13.0rc3", env={"USE_MULTI_BLOCK_POOL": "1"}).message
    assert judge("", "0.13.0").status == Status.PASS
    assert "REL-A2-004" in judge("", "0.19.1rc1", env={"VLLM_USE_V2_MODEL_RUNNER": "1"}).message
    assert "REL-A2-004" not in judge("", "0.19.1rc1", env={"VLLM_USE_V2_MODEL_RUNNER": "0"}).message


def test_a_paste_that_names_the_official_image_is_not_held_to_the_wheel_s_holes(tmp_path):
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    cmd = "export VLLM_USE_V1=1\nvllm serve /models/Qwen3-8B --tensor-parallel-size 1\n"
    reg = load_registry(entry_points=False)
    wheel = triage_text("vllm-ascend: 0.9.0rc1\nvllm: 0.9.0\n" + cmd, "p.md", reg, RunOptions())
    f = next(x for x in wheel.findings if x.code == "SERVE311")
    assert f.status == Status.WARN and "REL-A2-001" in f.message
    image = triage_text("image: quay.io/ascend/vllm-ascend:v0.9.0rc1\n" + cmd, "p.md", reg, RunOptions())
    assert "REL-A2-001" not in next(x for x in image.findings if x.code == "SERVE311").message


def test_an_editable_install_of_the_release_s_source_has_the_modules_its_wheel_leaves_out():
    from ascend_doctor.parsers.vllm_source import InstalledVllm

    out = facts(f"vllm serve {QWEN}", env={"VLLM_USE_V1": "1"}, model=True)
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version="0.9.0rc1"),
                                             Distribution(name="vllm", version="0.9.0")])
    out.setdefault("env", {"VLLM_USE_V1": "1"})
    out["vllm_files"] = InstalledVllm(vllm_ascend_version="0.9.0rc1", vllm_ascend_editable=True)
    assert "REL-A2-001" not in run_check("SERVE311", out).message
    out["vllm_files"] = InstalledVllm(vllm_ascend_version="0.9.0rc1", vllm_ascend_editable=False)
    f = run_check("SERVE311", out)
    assert f.status == Status.WARN and "REL-A2-001" in f.message and "if installed from its PyPI package" in f.message


def test_reasoning_behind_enable_reasoning_on_vllm_0_7_and_0_8():
    """vLLM 0.7.3-0.8.5 (vllm-ascend 0.7.3rc1-0.8.5rc1) parse reasoning only with --enable-reasoning, refuse it
    without a parser, and (0.7.3) refuse it beside tool calling; from 0.9 the parser alone is enough."""
    f = judge("--reasoning-parser deepseek_r1", "0.8.4rc1")
    assert f.status == Status.WARN and "REL-B6-001" in f.message and "--enable-reasoning" in f.remediation
    assert "REL-B6-001" not in judge("--enable-reasoning --reasoning-parser deepseek_r1", "0.8.4rc1").message
    assert "REL-B6-001" not in judge("--reasoning-parser deepseek_r1", "0.9.1", env={"VLLM_USE_V1": "1"}).message
    f = judge("--enable-reasoning", "0.8.5rc1", env={"VLLM_USE_V1": "0"})
    assert f.status == Status.FAIL and "REL-B6-002" in f.message
    both = "--enable-reasoning --reasoning-parser deepseek_r1 --enable-auto-tool-choice --tool-call-parser hermes"
    f = judge(both, "0.7.3")
    assert f.status == Status.FAIL and "REL-B6-003" in f.message
    assert "REL-B6-003" not in judge(both, "0.8.4rc1").message
