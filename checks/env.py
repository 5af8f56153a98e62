"""ENV checks: environment variables of the serving environment that vllm-ascend documents (matrix-facts §5, §6).

Facts: `server_env` (the environment the server will see: the one it inherits — the doctor's, so run it the way
`vllm serve` runs — with a command line's `env K=V` over it) and `python` (which vLLM / vllm-ascend is installed, to
know which variables still mean something). Each variable is judged here once, for `check` and `exec` alike.
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.core.registry import retire
from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.versions import try_parse_version, version_in


def _vllm_version(py, env) -> Optional[str]:
    """The vLLM version that counts: VLLM_VERSION when set (vllm-ascend reads it instead), else the installed one."""
    override = (env.get("VLLM_VERSION") or "").strip()
    if override:
        return override
    d = py.vllm_dist() if py is not None else None
    return d.version if d else None


retire("SERVE403", into="ENV101", why=T("the server's PYTORCH_NPU_ALLOC_CONF is judged once, by ENV101, on the "
                                        "environment the server will see"))


@check("ENV101", "npu-alloc-conf", severity="info", needs=["server_env", "python"])
def npu_alloc_conf(ctx):
    """PYTORCH_NPU_ALLOC_CONF enables expandable segments (recommendation)

    What it checks: whether PYTORCH_NPU_ALLOC_CONF is set, and to `expandable_segments:True` as vllm-ascend's docs
    set it (172 occurrences in docs/source; FAQ "out of memory … fragmentation").

    Why it matters: without expandable segments the NPU caching allocator fragments HBM under changing batch
    shapes; long-running servers then fail with `NPU out of memory` although enough memory is free in total.

    How to fix: `export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True` in the environment that starts
    `vllm serve` (docker: `-e PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`).
    """
    env = ctx.fact("server_env")
    py = ctx.try_fact("python")
    if py is not None and py.dist("torch-npu") is None:
        return ctx.skip(T("torch_npu is not installed: PYTORCH_NPU_ALLOC_CONF is not used"))
    value = env.get("PYTORCH_NPU_ALLOC_CONF")
    evidence = [ev(f"{env.where('PYTORCH_NPU_ALLOC_CONF')}: PYTORCH_NPU_ALLOC_CONF",
                   value if value is not None else "(not set)")]
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
        out.append(ev(f"{env.where('VLLM_VERSION')}: VLLM_VERSION", env["VLLM_VERSION"]))
    return out


retire("ENV103", into="ENV102", why=T("VLLM_USE_V1 set on a vLLM that ignores it is one verdict of ENV102"))
retire("SERVE401", into="ENV102", why=T("the server's VLLM_USE_V1 is judged once, by ENV102, on the environment the "
                                        "server will see"))


@check("ENV102", "vllm-use-v1", severity="error", needs=["server_env", "python"])
def vllm_use_v1(ctx):
    """VLLM_USE_V1 asks for nothing the installed release removed or ignores

    What it checks: VLLM_USE_V1 in the environment the server will see (the one it inherits, with a command line's
    `env K=V` over it) against the installed releases, by the vLLM version vllm-ascend reads (VLLM_VERSION when set):
    unset passes; on vLLM ≥ 0.12.0, which removed the variable from vllm/envs.py, any value is a leftover that is
    ignored (a warning); `0` with vllm-ascend ≥ v0.10.0rc1 on a vLLM that still reads it fails ("V0 is completely
    removed", v0.10.0rc1 release notes); `0` with vllm-ascend v0.9.1–v0.9.x warns (its notes: "V0 Engine is not
    supported … always set VLLM_USE_V1=1"); on older releases V0 still exists and `0` passes.

    Why it matters: a deployment that still exports VLLM_USE_V1=0 (old docs, old systemd units) asks vllm-ascend
    0.10/0.11 for an engine it cannot run, and start-up fails; on vLLM ≥ 0.12 the setting does nothing yet suggests a
    choice that no longer exists, and from vLLM 0.18 it is logged as `Unknown vLLM environment variable detected:
    VLLM_USE_V1` (with `--fail-on-environ-validation` the server refuses to start).

    How to fix: remove VLLM_USE_V1 from the serving environment (`unset VLLM_USE_V1`; delete `-e VLLM_USE_V1=0` from
    `docker run`, `Environment=VLLM_USE_V1=0` from the unit, `env VLLM_USE_V1=0` from the command); V1 is the only
    engine.
    """
    env = ctx.fact("server_env")
    value = env.get("VLLM_USE_V1")
    if value is None:
        return ctx.ok(T("VLLM_USE_V1 is not set"), [ev("env: VLLM_USE_V1", "(not set)")])
    evidence = [ev(f"{env.where('VLLM_USE_V1')}: VLLM_USE_V1", value)]
    py = ctx.fact("python")
    evidence += _versions_evidence(py, env)
    va = py.dist("vllm-ascend")
    vv = try_parse_version(_vllm_version(py, env))
    vav = try_parse_version(va.version) if va else None
    if vv is not None and version_in(vv, ">=0.12.0"):
        return ctx.warn(T("VLLM_USE_V1={value} is ignored by vLLM {version} (the variable was removed in 0.12.0): "
                          "remove it", value=value, version=vv), evidence)
    if value.strip() != "0":
        if vv is None and vav is None:
            return ctx.unknown(T("VLLM_USE_V1={value} is set, but neither vllm nor vllm-ascend is installed to judge "
                                 "it", value=value), evidence)
        return ctx.ok(T("VLLM_USE_V1={value} (the V1 engine)", value=value), evidence)
    if vav is not None and version_in(vav, ">=0.10.0rc1"):
        return ctx.fail(T("VLLM_USE_V1=0 requests the V0 engine, which vllm-ascend {version} removed (V0 completely "
                          "removed since v0.10.0rc1)", version=va.version), evidence)
    if vav is not None and version_in(vav, ">=0.9.1"):
        return ctx.warn(T("VLLM_USE_V1=0 with vllm-ascend {version}: its release notes say the V0 engine is not "
                          "supported; set VLLM_USE_V1=1", version=va.version), evidence,
                        remediation=T("`export VLLM_USE_V1=1` (vllm-ascend v0.9.1 release notes)."))
    if vav is None and vv is None:
        return ctx.unknown(T("VLLM_USE_V1=0 is set, but neither vllm nor vllm-ascend is installed to judge it"),
                           evidence)
    return ctx.ok(T("VLLM_USE_V1=0 on a release that still has the V0 engine"), evidence)
