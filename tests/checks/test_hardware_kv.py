"""HW108: --kv-cache-dtype against the hardware rules (matrices/hardware-rules.toml, kind forbidden_kv_cache_dtype)."""

from __future__ import annotations

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts, npu, on_release, run_check


def _chips(name: str):
    smi = npu(4)
    for c in smi.info.chips:
        c.name = name
    return smi


def _judge(command: str, chip: str, release: str):
    return run_check("HW108", on_release(facts(command, npus=_chips(chip)), release))


def test_fp8_kv_cache_on_a_300i_duo_fails_with_the_maintainers_words():
    """vllm-ascend#8284: Qwen3-30B-A3B on v0.18.0rc1-310p with --kv-cache-dtype fp8 started, then crashed at the first
    request; "300I DUO not supports kv-cache-dtype fp8"."""
    out = _judge("vllm serve /models/qwen3-30b-a3b --kv-cache-dtype fp8", "310P3", "0.18.0rc1")
    assert out.status == Status.FAIL, out.message
    assert out.message == "--kv-cache-dtype fp8 is not supported on 310P with this vllm-ascend release [HW-310P-013]"
    assert "Drop `--kv-cache-dtype`" in out.remediation and any("8284" in str(e.excerpt) for e in out.evidence)
    assert _judge("vllm serve /models/qwen3-30b-a3b", "310P3", "0.18.0rc1").status == Status.SKIP
    assert _judge("vllm serve /models/qwen3-30b-a3b --kv-cache-dtype auto", "310P3", "0.18.0rc1").status \
        == Status.SKIP


def test_fp8_on_a2_is_refused_from_the_release_that_asserts_fp8_attention():
    """0.29.0rc1's check_and_update_config asserts FP8_ATTENTION for cache_dtype "fp8" (the A5 profile only): an
    error. Earlier releases accept any fp8 cache and crash when it is used (#8102, a 910B2 with fp8 and fp8_e5m2):
    an error up to 0.27.1rc1, a warning from it (DeepSeek-V4's cache is pinned to the model dtype there), as for
    fp8_e4m3/fp8_e5m2, which the assert does not compare."""
    new = _judge("vllm serve /m --kv-cache-dtype fp8", "910B3", "0.30.0rc2")
    assert new.status == Status.FAIL and "[HW-A2-003, HW-A2-005]" in new.message and "on A2 " in new.message
    old = _judge("vllm serve /m --kv-cache-dtype fp8_e5m2", "910B3", "0.18.0")
    assert old.status == Status.FAIL and "[HW-A2-004]" in old.message
    assert _judge("vllm serve /m --kv-cache-dtype fp8", "910B3", "0.9.1").status == Status.SKIP  # no rule that old
    late = _judge("vllm serve /m --kv-cache-dtype fp8_e4m3", "910B3", "0.30.0rc2")
    assert late.status == Status.WARN and "[HW-A2-005]" in late.message
    assert _judge("vllm serve /m --kv-cache-dtype fp8_inc", "910B3", "0.18.0").status == Status.PASS
    both = _judge("vllm serve /m --kv-cache-dtype fp8", "310P3", "0.30.0rc2")
    assert both.status == Status.FAIL and "HW-310P-013" in both.message and "HW-A2-003" in both.message
    assert "on 310P " in both.message


def test_without_the_chip_table_the_kv_cache_dtype_is_not_judged():
    """npu-smi gave no table (not installed, hung): which family's rules apply is not known — unknown, not a pass."""
    from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact

    f = on_release(facts("vllm serve /m --kv-cache-dtype fp8", npus=_chips("310P3")), "0.18.0rc1")
    f["npu_smi"] = NpuSmiFact(found=False, command=CommandSummary(argv=["npu-smi", "info"], returncode=None))
    out = run_check("HW108", f)
    assert out.status == Status.UNKNOWN and "cannot tell the hardware family" in out.message
