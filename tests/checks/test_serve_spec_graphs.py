"""SERVE317: the speculative tokens against the capture sizes of FULL decode graphs — vLLM's rounding
(`adjust_cudagraph_sizes_for_spec_decode`) and vllm-ascend's sequence-parallel switches per release, from the
`serve/sequence-parallel` table. The fixture commands are the DSpark tutorial's single-node command of vllm-ascend
0.25.1rc1 (TP 4, dspark with 5 speculative tokens, FULL_DECODE_ONLY, FlashComm1) and variations of it."""

from __future__ import annotations

import json

import pytest

from ascend_doctor.knowledge.sequence_parallel import sequence_parallel
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts, run_check
from tests.helpers import shipped

T = shipped().sequence_parallel


def _opt(name: str, value: dict) -> str:
    return f"--{name} {json.dumps(value, separators=(',', ':'))}"


def command(tokens: int = 5, tp: int = 4, mode="FULL_DECODE_ONLY", additional=None, sizes=None, extra: str = ""):
    comp = {} if mode is None else {"cudagraph_mode": mode}
    if sizes is not None:
        comp["cudagraph_capture_sizes"] = sizes
    parts = [f"--tensor-parallel-size {tp}",
             _opt("speculative-config", {"method": "dspark", "num_speculative_tokens": tokens, "enforce_eager": True})]
    parts += [_opt("compilation-config", comp)] if comp else []
    parts += [_opt("additional-config", additional)] if additional is not None else []
    return " ".join(parts + ([extra] if extra else []))


def judge(extra: str, ascend="0.25.1rc1", vllm="0.25.1", env=None):
    out = facts(f"vllm serve {QWEN} {extra}", env=env, model=False)
    dists = [Distribution(name="vllm", version=vllm)] + ([Distribution(name="vllm-ascend", version=ascend)]
                                                         if ascend else [])
    out["python"] = PythonEnv(distributions=dists)
    return run_check("SERVE317", out)


def test_the_dspark_tutorial_command_of_0_25_1rc1_is_refused_as_vllm_refuses_it():
    f = judge(command(additional={"enable_flashcomm1": True}))
    assert f.status == Status.FAIL
    assert "both a multiple of 6 (num_speculative_tokens + 1) required by spec-decode and 4 (tensor_parallel_size)" \
        in f.message and "--additional-config enable_flashcomm1=True" in f.message and "vLLM 0.25.1" in f.message
    assert '"num_speculative_tokens" 3 or 7' in f.remediation  # 4 and 8 are multiples of TP 4


@pytest.mark.parametrize("tokens, tp, multiple", [(3, 4, 4), (1, 4, 4), (7, 4, 8), (5, 2, 6), (5, 6, 6)])
def test_speculative_tokens_compatible_with_tp_pass(tokens, tp, multiple):
    f = judge(command(tokens, tp, additional={"enable_flashcomm1": True}))
    assert f.status == Status.PASS and f"FULL decode graphs at multiples of {multiple}" in f.message


def test_the_switch_that_decides_is_the_release_s_own():
    env = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}
    assert judge(command(), env=env).status == Status.FAIL  # 0.25.1rc1: the variable when the key is not given
    off = judge(command(additional={"enable_flashcomm1": False}), env=env)
    assert off.status == Status.PASS and "multiples of 6" in off.message  # the key given decides
    # shared-expert DP turns it on with expert parallelism and TP > 1 only (AscendConfig)
    assert judge(command(additional={"enable_shared_expert_dp": True}, extra="--enable-expert-parallel")).status \
        == Status.FAIL
    assert judge(command(additional={"enable_shared_expert_dp": True})).status == Status.PASS
    # 0.26.0rc1: shared-expert DP no longer turns it on
    assert judge(command(additional={"enable_shared_expert_dp": True}), ascend="0.26.0rc1", vllm="0.26.0").status \
        == Status.PASS
    # 0.16.0rc1-0.20.1: only the variables; the additional-config key did not exist
    assert judge(command(additional={"enable_flashcomm1": True}), ascend="0.19.1rc1", vllm="0.19.1").status \
        == Status.PASS
    assert judge(command(), ascend="0.19.1rc1", vllm="0.19.1", env=env).status == Status.FAIL
    # 0.13.x: pass_config.enable_sp too
    sp = '--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY","pass_config":{"enable_sp":true}}'
    cmd = command(mode=None) + " " + sp
    assert judge(cmd, ascend="0.13.0rc3", vllm="0.13.0").status == Status.FAIL
    assert judge(cmd, ascend="0.19.1rc1", vllm="0.19.1").status == Status.PASS  # not a switch there


def test_sequence_parallel_switch_terms():
    row = T.sp_of("0.25.1rc1")
    assert sequence_parallel(row, {}, {}, {}) == (False, [])
    assert sequence_parallel(row, {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "0"}, None, None)[0] is False
    on, seen = sequence_parallel(row, {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "true"}, None, None)
    assert on is None and "not an integer" in seen[0]  # vllm-ascend's bool(int(...)) cannot read it
    assert not T.sp_of("0.14.0rc1").graph_sizes and T.sp_of("0.27.1rc1") is None and T.sp_of("0.30.0rc2").aligned


def test_from_0_29_0rc1_vllm_ascend_aligns_the_sizes_itself():
    f = judge(command(additional={"enable_flashcomm1": True}), ascend="0.29.0rc1", vllm="0.29.0")
    assert f.status == Status.PASS and "aligns the sizes to lcm(n + 1, TP) itself" in f.message


def test_a_development_build_is_judged_by_the_release_pairing_its_vllm_and_only_warned():
    """vllm-ascend#14260's build: 0.19.1rc2.dev1265 (named after a stale tag) serving vLLM 0.25.1."""
    f = judge(command(additional={"enable_flashcomm1": True}), ascend="0.19.1rc2.dev1265")
    assert f.status == Status.WARN and "judged by the rules of vllm-ascend 0.25.1rc1" in f.message


def test_no_size_left_after_rounding():
    f = judge(command(8, tp=1, sizes=[1, 2, 4, 8]))
    assert f.status == Status.FAIL and "No valid cudagraph sizes after rounding to multiple of 9" in f.message
    assert "at least 9" in f.remediation
    assert judge(command(3, tp=1, sizes=[1, 2, 4, 8])).status == Status.PASS
    big = command(8, tp=1, extra='--compilation-config.max_cudagraph_capture_size 16', sizes=[1, 2, 4, 8])
    assert judge(big).status == Status.PASS  # the dotted form raises the largest size


def test_what_vllm_does_not_round():
    assert judge(command(extra="--enforce-eager", additional={"enable_flashcomm1": True})).status == Status.PASS
    assert judge(command(mode="PIECEWISE", additional={"enable_flashcomm1": True})).status == Status.PASS
    # vLLM up to 0.19.1 rounds only the modes with a separate decode routine
    f = judge(command(mode="FULL", additional={"enable_flashcomm1": True}), ascend="0.13.0rc3", vllm="0.13.0")
    assert f.status == Status.PASS and "FULL_DECODE_ONLY, FULL_AND_PIECEWISE only" in f.message


def test_what_is_not_known_is_said():
    default = judge(command(mode=None, additional={"enable_flashcomm1": True}))
    assert default.status == Status.UNKNOWN and "default cudagraph_mode" in default.message
    assert judge(command(3, mode=None, additional={"enable_flashcomm1": True})).status == Status.PASS
    f = judge(command(additional={"enable_flashcomm1": True}), ascend="0.14.0rc1", vllm="0.14.1")
    assert f.status == Status.PASS and "not judged" in f.message and "0.14.0rc1 is not recorded" in f.message
    assert judge(command(), vllm="0.11.0", ascend="0.11.0rc1").status == Status.UNKNOWN
    assert judge(command(), env={"VLLM_USE_V2_MODEL_RUNNER": "1"}).status == Status.SKIP
    assert judge("--tensor-parallel-size 4").status == Status.SKIP


def test_a_huge_tp_from_a_paste_is_judged_quickly():
    import time

    start = time.monotonic()
    f = judge(command(5, tp=10**9, additional={"enable_flashcomm1": True}))
    assert f.status == Status.FAIL and time.monotonic() - start < 2
