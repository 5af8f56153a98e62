"""SERVE321: FlashComm1 on a VL model that the installed vllm-ascend release neither refuses nor supports, judged
by the release's own guide and code (`serve/flashcomm-vl`).

The warning cases are written after vllm-ascend#8990 (Qwen3.5-27B w8a8 at TP 2 with VLLM_ASCEND_ENABLE_FLASHCOMM1=1
on the v0.19.1rc1 image; the maintainer: "vllm-ascend does not support Flash Comm V1 for 27B model", linking the
sequence-parallelism guide) and vllm-ascend#6261 (Qwen3-Omni-30B-A3B with VLLM_ASCEND_ENABLE_FLASHCOMM=1, TP 2 and
expert parallelism on 0.13.0rc2, failing in dynamo at start). The configs are reduced to the keys the check reads."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts, run_check
from tests.checks.test_serve_flashcomm import stack

FC1 = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}
# Qwen3.5's published config: a VL model (vision_config) whose text model is dense
QWEN35 = {"model_type": "qwen3_5", "architectures": ["Qwen3_5ForConditionalGeneration"],
          "text_config": {"model_type": "qwen3_5_text", "hidden_size": 5120, "num_hidden_layers": 64},
          "vision_config": {"depth": 27}}
OMNI_MOE = {"model_type": "qwen3_omni_moe", "architectures": ["Qwen3OmniMoeForConditionalGeneration"],
            "thinker_config": {"text_config": {"num_experts": 128, "num_experts_per_tok": 8}}}
QWEN3_VL = {"model_type": "qwen3_vl", "architectures": ["Qwen3VLForConditionalGeneration"],
            "text_config": {"hidden_size": 4096}, "vision_config": {"depth": 27}}
KIMI_VL_MLA = {"model_type": "kimi_k25", "architectures": ["KimiK25ForConditionalGeneration"],
               "text_config": {"kv_lora_rank": 512, "n_routed_experts": 384}, "vision_config": {"depth": 27}}


def judge(extra="--tensor-parallel-size 2", ascend="0.19.1rc1", vllm="0.19.1", env=FC1, config=QWEN35):
    return run_check("SERVE321", stack(extra, ascend, vllm, env, config))


def test_a_vl_model_the_guide_marks_x_and_the_code_does_not_adapt_warns():
    f = judge()
    assert f.status == Status.WARN, f.message
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1=1" in f.message and "model_type qwen3_5" in f.message
    assert "vllm-ascend 0.19.1rc1's guide" in f.message and "VL + Dense" in f.message
    assert "Qwen3-VL (patch_qwen3vl.py)" in f.message and "does not refuse it at start" in f.message
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1=0" in f.remediation and '"enable_sp": true' in f.remediation
    assert any("sequence_parallelism.md:47" in str(e.excerpt) for e in f.evidence)


@pytest.mark.parametrize("config, ascend, vllm, status, said", [
    (QWEN3_VL, "0.19.1rc1", "0.19.1", Status.PASS, "adapts it to Qwen3-VL"),  # patch_qwen3vl.py
    (KIMI_VL_MLA, "0.18.0rc1", "0.18.0", Status.PASS, "VL models with MLA"),  # ops/mla.py asks is_vl_model
    (QWEN35, "0.23.0", "0.23.0", Status.PASS, "eager/graph"),  # that guide runs it for VL + Dense
    ({"model_type": "qwen3", "hidden_size": 4096}, "0.19.1rc1", "0.19.1", Status.PASS, "not a VL model"),
    (QWEN35, "0.17.0rc1", "0.17.0", Status.SKIP, "refuses"),  # SERVE318's and REL-B16's to fail
    (QWEN35, "0.30.0rc2", "0.30.0", Status.SKIP, "not recorded"),  # FlashComm1 reworked: no switch row
])
def test_the_controls(config, ascend, vllm, status, said):
    f = judge(ascend=ascend, vllm=vllm, config=config)
    assert f.status == status and said in f.message, f.message


def test_flashcomm1_off_passes_and_an_unread_model_is_unknown():
    assert judge(env={}).status == Status.PASS
    assert judge(env={"VLLM_ASCEND_ENABLE_FLASHCOMM1": "0"}).status == Status.PASS
    assert judge(config={}).status == Status.PASS  # a config without vision keys is a text model
    out = facts(f"vllm serve {QWEN} --tensor-parallel-size 2", env=FC1)
    out["serve_model"] = None
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm", version="0.19.1"),
                                             Distribution(name="vllm-ascend", version="0.19.1rc1")])
    assert run_check("SERVE321", out).status == Status.UNKNOWN


def test_a_release_without_a_guide_is_judged_by_the_first_later_one_and_says_so():
    """The v0.13.0 branch (0.13.0rc2-0.13.0) lifted 0.13.0rc1's refusal for Qwen3-VL (vllm-ascend#5848) and has no
    guide; an Omni MoE model there is judged by 0.15.0rc1's guide, which marks VL + MoE `x`."""
    f = judge("--tensor-parallel-size 2 --enable-expert-parallel", ascend="0.13.0rc2", vllm="0.13.0",
              config=OMNI_MOE)
    assert f.status == Status.WARN, f.message
    assert "the guide of vllm-ascend 0.15.0rc1 (vllm-ascend 0.13.0rc2 has none" in f.message
    assert "VL + MoE" in f.message and "thinker_config" in f.message
    ok = judge("--tensor-parallel-size 2", ascend="0.13.0rc2", vllm="0.13.0", config=QWEN3_VL)
    assert ok.status == Status.PASS and "Qwen3-VL" in ok.message


def test_quantized_uses_the_guide_s_quantized_table():
    f = judge("--tensor-parallel-size 2 --quantization ascend")
    assert f.status == Status.WARN and "with quantization" in f.message
    assert '"enable_sp": true' not in f.remediation  # the guide's SP cell with quantization is `x`


def test_the_release_s_own_tutorials_stand_against_the_guide_s_x():
    """0.19.1rc1's Qwen3.5-397B-A17B tutorial serves the w8a8-mtp copy with VLLM_ASCEND_ENABLE_FLASHCOMM1=1 and
    expert parallelism, though its guide marks VL + MoE `x`: that model passes (its tutorial), another VL MoE model
    is unknown (the two sources disagree for its class), a VL dense model still warns (no tutorial runs one)."""
    from tests.checks.test_serve_checks import facts as serve_facts

    ep = "--tensor-parallel-size 16 --enable-expert-parallel"
    out = stack(ep, "0.19.1rc1", "0.19.1", FC1, None)
    tutorial = serve_facts(f"vllm serve /models/Qwen3.5-397B-A17B-w8a8-mtp {ep}", env=FC1)
    out["serve_cmd"] = tutorial["serve_cmd"]
    out["serve_model"].config = {"model_type": "qwen3_5_moe", "vision_config": {"depth": 27},
                                 "text_config": {"num_experts": 512}}
    f = run_check("SERVE321", out)
    assert f.status == Status.PASS and "own tutorial serves Qwen3.5-397B-A17B-w8a8-mtp" in f.message, f.message
    other = judge(ep, config=OMNI_MOE)
    assert other.status == Status.UNKNOWN and "Qwen3.5-397B-A17B-w8a8-mtp (VL + MoE)" in other.message, other.message
    assert judge().status == Status.WARN


def test_a_vllm_ascend_version_that_is_no_version_is_unknown_not_a_crash():
    for code, f in (("SERVE321", judge(ascend="weird-build")),
                    ("SERVE318", run_check("SERVE318", stack(ascend="weird-build", env=FC1)))):
        assert f.status == Status.UNKNOWN and "weird-build" in f.message and "FlashComm1 rules" in f.message, code
