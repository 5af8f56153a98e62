"""HW108: the KV cache dtype the command asks for, against what the hardware family runs (the matrix's
hardware-rules.toml, kind `forbidden_kv_cache_dtype`)."""

from __future__ import annotations

from ascend_doctor.i18n import T, known
from ascend_doctor.knowledge.hardware import families
from ascend_doctor.plugin import check, ev

from ._hardware import rules_of_kind, serve_or_skip, violated


@check("HW108", "hw-kv-cache-dtype", severity="error", stage="serve",
       needs=["serve_cmd", "python", "npu_smi", "npu_family"])
def serve_kv_cache_dtype(ctx):
    """The KV cache dtype is one this hardware runs

    What it checks: `--kv-cache-dtype` against the rules of the matrix for this host's chip family and the installed
    vllm-ascend release: fp8 KV caches on an Atlas 300I Duo (every release) and on A2/A3 (no fp8 attention: an
    error up to 0.27.1rc1, a warning from it, where DeepSeek-V4's cache is pinned to the model dtype), and `fp8`
    on A2/A3/300I Duo from vllm-ascend 0.29.0rc1, which asserts that the chip's hardware profile has fp8 attention
    (only the Ascend 950's has). Without `--kv-cache-dtype` (or with `auto`) the cache takes the model's dtype:
    nothing to judge.

    Why it matters: vLLM offers fp8 KV caches on every platform. On a 300I Duo a server started with
    `--kv-cache-dtype fp8` comes up and crashes at its first request (vllm-ascend#8284: "300I DUO not supports
    kv-cache-dtype fp8"), and so does an A2 with fp8 or fp8_e5m2 (#8102: "FP8 is not support in A3"); from
    0.29.0rc1 vllm-ascend stops `fp8` at start-up with a bare AssertionError (platform.py check_and_update_config).

    How to fix: drop `--kv-cache-dtype` on these chips; the finding quotes the rule and its source.
    """
    cmd, skip = serve_or_skip(ctx)
    if skip:
        return skip
    given = cmd.get("kv_cache_dtype")
    if not isinstance(given, str) or given.strip().lower() in ("", "auto"):
        return ctx.skip(T("no --kv-cache-dtype (the KV cache takes the model's dtype)"))
    rules, evidence, out = rules_of_kind(ctx, "forbidden_kv_cache_dtype")
    if out:
        return out
    value = given.strip().lower()
    evidence.insert(0, ev("--kv-cache-dtype", cmd.source("kv_cache_dtype") or given))
    broken = [r for r in rules if value in r.values]
    here = set(families(ctx.fact("npu_smi")) or ())
    hw = ", ".join(sorted({h for r in (broken or rules) for h in r.hardware} & here))
    if not broken:
        return ctx.ok(T("--kv-cache-dtype {value} is not one the {hw} rules rule out", value=value, hw=hw), evidence)
    return violated(ctx, broken, T("--kv-cache-dtype {value} is not supported on {hw} with this vllm-ascend release",
                                   value=value, hw=hw), evidence, remediation=known(broken[0].fix),
                    kv_cache_dtype=value)
