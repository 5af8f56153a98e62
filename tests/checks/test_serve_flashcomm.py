"""SERVE318: what the installed vllm-ascend release refuses at start with FlashComm1 on — TP 1, or a MoE model
without --enable-expert-parallel — with the switches each release reads (`serve/sequence-parallel`)."""

from __future__ import annotations

import pytest

from ascend_doctor.knowledge.sequence_parallel import has_experts
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts, run_check

MOE = {"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "num_experts": 128,
       "num_experts_per_tok": 8, "hidden_size": 2048, "num_hidden_layers": 48}


def stack(extra: str = "", ascend="0.25.1rc1", vllm="0.25.1", env=None, config=None) -> dict:
    """The facts of `vllm serve QWEN extra` on a vLLM / vllm-ascend pair, with a config.json when given."""
    out = facts(f"vllm serve {QWEN} {extra}".strip(), env=env)
    if config is not None:
        out["serve_model"].config = config
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm", version=vllm),
                                             Distribution(name="vllm-ascend", version=ascend)])
    return out


def judge(extra: str = "", ascend="0.25.1rc1", vllm="0.25.1", env=None, config=None):
    return run_check("SERVE318", stack(extra, ascend, vllm, env, config))


FC1 = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}


def test_flashcomm1_at_tp1_is_refused_as_the_release_refuses_it():
    f = judge(env=FC1)
    assert f.status == Status.FAIL and "Flash Comm v1 is only supported when tp_size > 1." in f.message
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1=1" in f.message and "--tensor-parallel-size 2 or more" in f.remediation
    assert judge("--tensor-parallel-size 2", env=FC1).status == Status.PASS


def test_a_moe_model_needs_expert_parallel():
    f = judge("--tensor-parallel-size 4", env=FC1, config=MOE)
    assert f.status == Status.FAIL and "requires enable_expert_parallel=True for MoE models" in f.message
    assert judge("--tensor-parallel-size 4 --enable-expert-parallel", env=FC1, config=MOE).status == Status.PASS
    assert judge("--tensor-parallel-size 4", config=MOE).status == Status.PASS  # FlashComm1 off


@pytest.mark.parametrize("extra, env, ascend, status", [
    ('--additional-config {"enable_flashcomm1":true}', None, "0.25.1rc1", Status.FAIL),
    ('--additional-config {"enable_flashcomm1":false}', FC1, "0.25.1rc1", Status.PASS),  # the key given decides
    ('--additional-config {"enable_flashcomm1":true}', None, "0.19.1rc1", Status.PASS),  # not a switch before 0.20.2
    # shared-expert DP turns FlashComm1 on only with expert parallelism and TP > 1 (AscendConfig), so never at TP 1
    ('--additional-config {"enable_shared_expert_dp":true}', None, "0.25.1rc1", Status.PASS),
    ('--additional-config {"enable_shared_expert_dp":true}', None, "0.26.0rc1", Status.PASS),
    ('--compilation-config {"pass_config":{"enable_sp":true}}', None, "0.13.0rc3", Status.FAIL),
    ('--compilation-config {"pass_config":{"enable_sp":true}}', None, "0.16.0rc1", Status.PASS),
    ("", {"VLLM_ASCEND_ENABLE_FLASHCOMM": "1"}, "0.15.0rc1", Status.FAIL),
])
def test_the_switches_are_the_release_s_own(extra, env, ascend, status):
    assert judge(extra, ascend=ascend, env=env).status == status


def test_what_is_not_judged():
    assert judge(env=FC1, ascend="0.27.1rc1").status == Status.SKIP  # FlashComm1 turned off instead
    assert judge(env=FC1, ascend="0.30.0rc2").status == Status.SKIP
    assert judge(env={"VLLM_ASCEND_ENABLE_FLASHCOMM1": "true"}).status == Status.UNKNOWN  # bool(int("true")) fails
    dev = judge(env=FC1, ascend="0.19.1rc2.dev1265")  # stands for 0.25.1rc1 (pairs vLLM 0.25.1)
    assert dev.status == Status.WARN and "judged by the rules of vllm-ascend 0.25.1rc1" in dev.message


def test_experts_are_found_as_vllm_ascend_finds_them():
    assert has_experts(MOE) and has_experts({"text_config": {"moe": {"n_routed_experts": 8}}})
    assert not has_experts({"model_type": "qwen3", "hidden_size": 4096})


def test_a_hostile_config_is_read_without_recursion():
    deep: dict = {}
    node = deep
    for _ in range(5000):  # deeper than Python's recursion limit
        node["x"] = {}
        node = node["x"]
    node["num_experts"] = 8
    assert has_experts(deep)
    assert not has_experts({f"k{i}": i for i in range(200_000)})  # the key budget ends the walk


def test_a_switch_value_is_quoted_clipped():
    f = judge(env={"VLLM_ASCEND_ENABLE_FLASHCOMM1": "x" * 5000})
    assert f.status == Status.UNKNOWN and "x" * 5000 not in f.message and len(f.message) < 600


def test_shared_expert_dp_at_tp1_is_the_tutorials_own_layout():
    """vllm-ascend 0.23.0's DeepSeek-V4-Flash tutorial (docs/source/tutorials/models/DeepSeek-V4-Flash.md:292 of the
    sdist) serves DP 4 at TP 1 with expert parallelism and `"enable_shared_expert_dp": true`: AscendConfig keeps the
    key off below TP 2 (`… and enable_expert_parallel and tensor_parallel_size > 1`, vllm_ascend/ascend_config.py
    :114-122), so FlashComm1 stays off and nothing is refused. Found by bench/tutorial_controls.py."""
    cmd = ('--data-parallel-size 4 --enable-expert-parallel --additional-config '
           '{"multistream_overlap_shared_expert":true,"enable_shared_expert_dp":true}')
    f = judge(cmd, ascend="0.23.0", vllm="0.23.0")
    assert f.status == Status.PASS, f.message
    assert "no effect without --enable-expert-parallel and TP > 1" in f.message
    # with TP 2 and expert parallelism it is on, and both refusals are then out of reach
    assert judge("--tensor-parallel-size 2 --enable-expert-parallel --additional-config "
                 '{"enable_shared_expert_dp":true}', ascend="0.23.0", vllm="0.23.0", config=MOE).status == Status.PASS



VL = {"model_type": "qwen2_5_vl", "architectures": ["Qwen2_5_VLForConditionalGeneration"], "hidden_size": 3584,
      "num_hidden_layers": 28, "vision_config": {"depth": 32}}


def test_a_vl_model_with_flashcomm1_is_refused_by_0_15_to_0_17():
    """0.15.0rc1-0.17.0rc1 assert `not is_vl_model` first under their FlashComm1 switch ('Flash Comm V1 is not
    supported for VL models'); 0.18.0rc1 drops the assert (the pass control), and a text model passes."""
    f = judge("--tensor-parallel-size 2", ascend="0.17.0rc1", vllm="0.17.0", env=FC1, config=VL)
    assert f.status == Status.FAIL and "Flash Comm V1 is not supported for VL models" in f.message, f.message
    assert "vision_config" in f.message
    assert judge("--tensor-parallel-size 2", ascend="0.15.0rc1", vllm="0.15.0", env=FC1, config=VL).status \
        == Status.FAIL
    assert judge("--tensor-parallel-size 2", ascend="0.18.0rc1", vllm="0.18.0", env=FC1, config=VL).status \
        == Status.PASS
    assert judge("--tensor-parallel-size 2", ascend="0.17.0rc1", vllm="0.17.0", env=FC1).status == Status.PASS


def test_a_command_shown_in_part_is_not_judged_on_the_options_it_does_not_show():
    """A paste that elides part of the command: TP 1 and "no --enable-expert-parallel" are what it does not show,
    not what it runs (h38h, generically: SERVE318 failed TP 1 on a command that stopped at `...`)."""
    out = stack(env=FC1, config=MOE)
    out["serve_cmd"] = out["serve_cmd"].model_copy(update={"partial": True})
    f = run_check("SERVE318", out)
    assert f.status == Status.UNKNOWN and "TP size" in f.message and "--enable-expert-parallel" in f.message
