"""ENV checks: environment variables of the serving environment that vllm-ascend documents (matrix-facts §5, §6).

Facts: `env` (the environment the doctor runs in: run it the way `vllm serve` runs) and `python` (which vLLM /
vllm-ascend is installed, to know which variables still mean something).
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.evaluator import ev
from ascend_doctor.i18n import T
from ascend_doctor.registry import check
from ascend_doctor.versions import try_parse_version, version_in


def _vllm_version(py, env) -> Optional[str]:
    """The vLLM version that counts: VLLM_VERSION when set (vllm-ascend reads it instead), else the installed one."""
    override = (env.get("VLLM_VERSION") or "").strip()
    if override:
        return override
    d = py.vllm_dist() if py is not None else None
    return d.version if d else None


@check("ENV101", "npu-alloc-conf", severity="info", needs=["env", "python"])
def npu_alloc_conf(ctx):
    """PYTORCH_NPU_ALLOC_CONF enables expandable segments (recommendation)

    What it checks: whether PYTORCH_NPU_ALLOC_CONF is set, and to `expandable_segments:True` as vllm-ascend's docs
    set it (172 occurrences in docs/source; FAQ "out of memory … fragmentation").

    Why it matters: without expandable segments the NPU caching allocator fragments HBM under changing batch
    shapes; long-running servers then fail with `NPU out of memory` although enough memory is free in total.

    How to fix: `export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True` in the environment that starts
    `vllm serve` (docker: `-e PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`).
    """
    env = ctx.fact("env")
    py = ctx.try_fact("python")
    if py is not None and py.dist("torch-npu") is None:
        return ctx.skip(T("torch_npu is not installed: PYTORCH_NPU_ALLOC_CONF is not used"))
    value = env.get("PYTORCH_NPU_ALLOC_CONF")
    evidence = [ev("env: PYTORCH_NPU_ALLOC_CONF", value if value is not None else "(not set)")]
    if value is None or not value.strip():
        return ctx.warn(T("PYTORCH_NPU_ALLOC_CONF is not set: HBM may fragment on a long-running server"), evidence)
    opts = {k.strip().lower(): v.strip().lower() for k, _, v in
            (part.partition(":") for part in value.split(",")) if k.strip()}
    if opts.get("expandable_segments") == "true":
        return ctx.ok(T("PYTORCH_NPU_ALLOC_CONF={value}", value=value), evidence)
    if "expandable_segments" in opts:
        return ctx.warn(T("PYTORCH_NPU_ALLOC_CONF={value} turns expandable segments off", value=value), evidence)
    return ctx.ok(T("PYTORCH_NPU_ALLOC_CONF={value} (set deliberately; vllm-ascend's docs mostly use "
                    "expandable_segments:True)", value=value), evidence)


def _versions_evidence(py, env) -> list:
    out = []
    for name in ("vllm-ascend", "vllm"):
        d = py.dist(name) if py is not None else None
        out.append(ev(f"distribution: {name}", d.version if d else "not installed"))
    if env.get("VLLM_VERSION"):
        out.append(ev("env: VLLM_VERSION", env["VLLM_VERSION"]))
    return out


@check("ENV102", "vllm-use-v1-legacy", severity="error", needs=["env", "python"])
def vllm_use_v1_legacy(ctx):
    """VLLM_USE_V1=0 (the removed V0 engine) is not requested

    What it checks: VLLM_USE_V1=0 with a vllm-ascend or vLLM that no longer has the V0 engine: vllm-ascend
    v0.10.0rc1 release notes "V0 is completely removed" (v0.9.1 already: "V0 Engine is not supported … always set
    VLLM_USE_V1=1"); vLLM removed VLLM_USE_V1 itself in 0.12.0.

    Why it matters: a deployment that still exports VLLM_USE_V1=0 (old docs, old systemd units) asks for an engine
    vllm-ascend cannot run: start-up fails on vllm-ascend 0.10/0.11, and on vLLM ≥ 0.12 the setting is silently
    ignored, so the deployment does not run what its configuration says.

    How to fix: remove VLLM_USE_V1 from the environment (`unset VLLM_USE_V1`; delete `-e VLLM_USE_V1=0` from
    `docker run`, `Environment=VLLM_USE_V1=0` from the unit); V1 is the only engine.
    """
    env = ctx.fact("env")
    value = env.get("VLLM_USE_V1")
    evidence = [ev("env: VLLM_USE_V1", value if value is not None else "(not set)")]
    if value is None or value.strip() != "0":
        if value is not None:
            return ctx.ok(T("VLLM_USE_V1=0 is not set (VLLM_USE_V1={value})", value=value), evidence)
        return ctx.ok(T("VLLM_USE_V1=0 is not set"), evidence)
    py = ctx.fact("python")
    evidence += _versions_evidence(py, env)
    va = py.dist("vllm-ascend")
    vv = try_parse_version(_vllm_version(py, env))
    vav = try_parse_version(va.version) if va else None
    if vav is not None and version_in(vav, ">=0.10.0rc1"):
        return ctx.fail(T("VLLM_USE_V1=0 requests the V0 engine, which vllm-ascend {version} removed (V0 completely "
                          "removed since v0.10.0rc1)", version=va.version), evidence)
    if vv is not None and version_in(vv, ">=0.12.0"):
        return ctx.fail(T("VLLM_USE_V1=0 requests the V0 engine, which vLLM {version} no longer has (the variable "
                          "was removed in 0.12.0 and is ignored)", version=vv), evidence)
    if vav is not None and version_in(vav, ">=0.9.1"):
        return ctx.warn(T("VLLM_USE_V1=0 with vllm-ascend {version}: its release notes say the V0 engine is not "
                          "supported; set VLLM_USE_V1=1", version=va.version), evidence,
                        remediation=T("`export VLLM_USE_V1=1` (vllm-ascend v0.9.1 release notes)."))
    if vav is None and vv is None:
        return ctx.unknown(T("VLLM_USE_V1=0 is set, but neither vllm nor vllm-ascend is installed to judge it"),
                           evidence)
    return ctx.ok(T("VLLM_USE_V1=0 on a release that still has the V0 engine"), evidence)


@check("ENV103", "vllm-use-v1-ignored", severity="warning", needs=["env", "python"])
def vllm_use_v1_ignored(ctx):
    """VLLM_USE_V1 is not set on a vLLM that ignores it

    What it checks: VLLM_USE_V1 set to any value with vLLM ≥ 0.12.0, which removed the variable from vllm/envs.py.

    Why it matters: it does nothing there, yet suggests a choice that no longer exists; from vLLM 0.18 unknown
    VLLM_* variables are logged as `Unknown vLLM environment variable detected: VLLM_USE_V1`, and with
    `--fail-on-environ-validation` the server refuses to start.

    How to fix: delete VLLM_USE_V1 from the serving environment (`unset VLLM_USE_V1`, `docker run -e`, systemd
    `Environment=`, Kubernetes `env:`).
    """
    env = ctx.fact("env")
    value = env.get("VLLM_USE_V1")
    evidence = [ev("env: VLLM_USE_V1", value if value is not None else "(not set)")]
    if value is None:
        return ctx.ok(T("VLLM_USE_V1 is not set"), evidence)
    py = ctx.fact("python")
    evidence += _versions_evidence(py, env)
    vv = try_parse_version(_vllm_version(py, env))
    if vv is None:
        return ctx.unknown(T("VLLM_USE_V1={value} is set, but the vLLM version is unknown", value=value), evidence)
    if version_in(vv, ">=0.12.0"):
        return ctx.warn(T("VLLM_USE_V1={value} is ignored by vLLM {version} (removed in 0.12.0)", value=value,
                          version=vv), evidence)
    return ctx.ok(T("VLLM_USE_V1={value} is still read by vLLM {version}", value=value, version=vv), evidence)
