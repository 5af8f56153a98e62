"""deploy/reserve.py: the non-torch memory vllm-ascend charges a rank besides the HCCL buffers, as each release
measures it at start-up (the deploy/runtime-reserve rows)."""

from __future__ import annotations

from tests.helpers import shipped


def test_the_runtime_reserve_follows_how_the_release_profiles_non_torch_memory():
    """Before 0.15.0rc1 vllm-ascend charged all the process's non-torch memory (1 GiB: the ACL context and
    runtime); from vllm-ascend PR #6625 only what the profile run added (0.01-0.03 GiB logged at TP1)."""
    from ascend_doctor.deploy.reserve import reserve_term

    rows = shipped().runtime_reserve
    old, new = reserve_term("0.13.0", rows), reserve_term("0.23.0.post1", rows)
    assert (old.bytes, new.bytes) == (1 << 30, 32 << 20)
    assert "since it started" in str(old.inputs) and "added since the start-up snapshot" in str(new.inputs)
    assert "PR #6625" in str(new.inputs)
    assert reserve_term("0.6.0", rows).bytes == 1 << 30 and "not covered" in str(reserve_term("0.6.0", rows).inputs)
    assert reserve_term("0.15.0rc2.dev3+g1", rows).bytes == 32 << 20
    assert reserve_term("0.20.0", []).bytes == 1 << 30  # no rows loaded: the 1 GiB estimate
