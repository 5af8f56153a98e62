"""SERVE323: the [L, L] attention mask vllm-ascend 0.9.1rc3-0.9.1, 0.10.1rc1-0.10.2rc1 and 0.11.0rc0 (CANN other than
8.3) build on the host in every worker (vllm-ascend#3454: 256k on 8 ranks took about 1 TB)."""

from __future__ import annotations

from ascend_doctor.probes.host_facts import MemoryFact
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts, run_check

GIB = 1 << 30


def judge(extra: str, release: str, *, total_gib: int = 1024, avail_gib: int = 900, cann: str = "8.2.RC1"):
    from tests.checks.test_cann_checks import cann as cann_fact

    out = facts(f"vllm serve {QWEN} {extra}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=release),
                                             Distribution(name="vllm", version="0.10.2")])
    out["memory"] = MemoryFact(total_kib=total_gib * GIB // 1024, available_kib=avail_gib * GIB // 1024)
    out["cann"] = cann_fact(version=cann)
    return run_check("SERVE323", out)


def test_a_256k_context_on_eight_ranks_does_not_fit_the_host():
    f = judge("--max-model-len 262144 -tp 8", "0.10.2rc1", total_gib=768, avail_gib=700)
    assert f.status == Status.FAIL, f.message
    # 8 x 262144^2 x 2 bytes = 1024 GiB kept, in the project's units (text.units.human_bytes)
    assert "8 worker(s)" in f.message and "1 TiB kept (128 GiB each)" in f.message
    assert "more than the host's 768 GiB" in f.message
    assert "--max-model-len" in f.remediation


def test_the_peak_while_building_warns_and_a_short_context_passes():
    warn = judge("--max-model-len 131072", "0.9.1", total_gib=512, avail_gib=100)
    assert warn.status == Status.WARN and "up to 144 GiB while they are built" in warn.message, warn.message
    ok = judge("--max-model-len 32768 -tp 2", "0.10.1rc1")
    assert ok.status == Status.PASS and "within the 900 GiB available" in ok.message


def test_releases_that_bound_or_do_not_build_the_mask_are_not_judged():
    assert judge("--max-model-len 262144 -tp 8", "0.10.0rc1").status == Status.SKIP  # min(L, 10000)
    assert judge("--max-model-len 262144 -tp 8", "0.11.0rc1").status == Status.SKIP  # max_num_batched_tokens
    rc0 = judge("--max-model-len 262144 -tp 8", "0.11.0rc0", cann="8.3.RC1")
    assert rc0.status == Status.PASS and "max_num_batched_tokens" in rc0.message
    assert judge("--max-model-len 262144 -tp 8", "0.11.0rc0", cann="8.2.RC1", total_gib=768).status == Status.FAIL


def test_the_derived_length_counts_when_the_command_gives_none():
    f = judge("-tp 1", "0.10.2rc1")  # Qwen3-8B's config: 40960 positions
    assert f.status == Status.PASS and "derived from config.json" in f.message, f.message


def test_what_cannot_be_seen_is_unknown_with_the_reason():
    """0.11.0rc0 decides by the CANN, so a CANN not known leaves it open; a model whose config cannot be read and no
    --max-model-len leave L open; on a paste (no host memory) the amounts are stated and the verdict is open."""
    from tests.checks.test_cann_checks import cann as cann_fact

    out = facts(f"vllm serve {QWEN} --max-model-len 262144")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version="0.11.0rc0")])
    out["memory"] = MemoryFact(total_kib=GIB, available_kib=GIB)
    out["cann"] = cann_fact(version="8.2.RC1").model_copy(update={"version": None})
    f = run_check("SERVE323", out)
    assert f.status == Status.UNKNOWN and "unless CANN is ==8.3.*" in f.message and "not known" in f.message
    blind = facts("vllm serve /nowhere/model -tp 2", model=False)
    blind["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version="0.10.2rc1")])
    blind["memory"] = MemoryFact(total_kib=GIB, available_kib=GIB)
    f = run_check("SERVE323", blind)
    assert f.status == Status.UNKNOWN and "max_model_len is not known" in f.message
    paste = facts(f"vllm serve {QWEN} --max-model-len 262144 -tp 8")
    paste["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version="0.10.2rc1")])
    f = run_check("SERVE323", paste)
    assert f.status == Status.UNKNOWN and "1 TiB kept" in f.message and "memory is not known" in f.message


def test_without_mem_available_a_mask_within_the_total_is_unknown_not_a_pass():
    """An old kernel reports no MemAvailable: the total bounds the kept masks (a failure above it), but whether the
    peak fits what is free is not known — no pass on the total alone."""
    out = facts(f"vllm serve {QWEN} --max-model-len 32768 -tp 2")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version="0.10.1rc1")])
    out["memory"] = MemoryFact(total_kib=1024 * GIB // 1024, available_kib=None)
    f = run_check("SERVE323", out)
    assert f.status == Status.UNKNOWN and "no MemAvailable" in f.message, f.message
