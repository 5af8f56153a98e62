"""SERVE407: the host versions the installed release's KV-pool guide requires for the transfer variables set."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.knowledge.hardware import families
from ascend_doctor.knowledge.kv_pool_env import WHAT, holds, spoken, term_name
from ascend_doctor.plugin import FactUnavailable, check, ev

from ._serve import ascend_release, cmd_or_skip

MOONCAKE = ("mooncake-transfer-engine", "mooncake-transfer-engine-npu")  # the guides install either


@check("SERVE407", "serve-kv-pool-host-versions", severity="error", stage="serve",
       needs=["serve_cmd", "server_env", "python", "npu_smi", "stack"])
def kv_pool_host_versions(ctx):
    """The KV transfer variables set are ones the host's HDK, CANN and mooncake support

    What it checks: on a server with `--kv-transfer-config`, each variable the installed vllm-ascend's KV-pool guide
    tells you to export (`ASCEND_ENABLE_USE_FABRIC_MEM=1` on A3, `HCCL_INTRA_ROCE_ENABLE=1` on A2, the Ascend 950
    `ASCEND_GLOBAL_RESOURCE_CONFIG`) against the host versions the guide's table requires for this chip family: the
    HDK (the driver version), CANN and the mooncake transfer engine (the `serve/kv-pool-env` rows, read from each
    release's sdist). Below a required version fails; below a recommended one, or above a version the guide gives
    the variable up to, warns; a variable the guide gives for another chip family warns; a version not known is
    unknown. What no probe reads (the LingQu network version)
    is named, not judged.

    Why it matters: the transfer engine registers the KV memory through the driver at start, and an HDK that lacks
    the fabric-memory path refuses it: `Register mem ret:207000` … `Failed to mount segment: INVALID_PARAMS` on the
    decode node of a Mooncake KV pool set up by the guide (vllm-ascend#8420; the maintainer: "If you want to use
    `ASCEND_ENABLE_USE_FABRIC_MEM=1` Please make sure you have: HDK >= 26.0.0, CANN >= 9.0.0, LingQu CC >=1.5.0").
    The requirement changed between releases (HDK >= 26.0.0 in 0.18.0rc1; >= 26.0, or >= 25.5 with mooncake >=
    0.3.11, from 0.22.1rc1; CANN >= 9.1.0 from 0.30.0rc1).

    How to fix: upgrade what the finding names (the NPU driver and firmware, CANN, or `mooncake-transfer-engine`),
    or use the guide's variable for your versions instead (`ASCEND_BUFFER_POOL=4:8` on A3 with HDK 25.5 up to
    0.21.0rc1).
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    if cmd.get("kv_transfer_config") is None:
        return ctx.ok(T("no --kv-transfer-config: the KV-pool variables do not apply"))
    va, out = ascend_release(ctx, T("the KV-pool guide's requirements"))
    if out:
        return out
    rows, at = ctx.knowledge.kv_pool_env.for_release(va.version)
    if not rows:
        return ctx.skip(T("vllm-ascend {version}'s KV-pool guide has no requirement table this doctor reads",
                          version=va.version))
    env = ctx.fact("server_env")
    set_here = {}
    for name in sorted({r.variable for r in rows}):
        try:
            value = env.get(name)
        except FactUnavailable:
            continue  # not shown: nothing set is judged
        if value is not None:
            set_here[name] = value
    matching = [r for r in rows if set_here.get(r.variable) == r.value]
    if not matching:
        return ctx.ok(T("none of the variables vllm-ascend {at}'s KV-pool guide sets a requirement for is set",
                        at=at))
    return _judge(ctx, matching, at)


def _judge(ctx, matching, at: str):
    fams = families(ctx.try_fact("npu_smi"))
    if fams is None or set(fams) == {"?"}:
        return ctx.unknown(T("the NPUs are not known (no npu-smi table): which chip family's requirements apply "
                             "cannot be told"))
    have = _versions(ctx)
    evidence = [ev("stack", ", ".join(f"{WHAT[k]} {v or '?'}" for k, v in have.items())),
                ev(f"matrix: serve/kv-pool-env.toml (vllm-ascend {at})", "; ".join(
                    f"{r.variable}={r.value} on {r.hardware}: {r.says}" for r in matching))]
    fails, warns, unknown, met, notes = [], [], [], [], []
    for variable in sorted({r.variable for r in matching}):
        mine = [r for r in matching if r.variable == variable and r.hardware in fams]
        if not mine:
            warns.append(T("vllm-ascend {at}'s KV-pool guide gives {var} for {hw} only; this host's NPUs are {fam}",
                           at=at, var=variable, hw="/".join(sorted({r.hardware for r in matching
                                                                     if r.variable == variable})),
                           fam="/".join(sorted(fams))))
            continue
        for r in mine:
            verdict, words = _requirement(r, have)
            notes += [T("not checked: {what}", what=u) for u in r.unchecked]
            line = T("{var}={value} on {hw} needs {need} (vllm-ascend {at}'s KV-pool guide): {words}",
                     var=r.variable, value=r.value, hw=r.hardware, need=r.says, at=at, words=words)
            if verdict is None:
                unknown.append(line)
            elif verdict is False:
                # a recommendation, or only an upper bound missed (the guide gives another variable for newer HDKs)
                (warns if r.recommended or _only_upper_bounds(r, have) else fails).append(line)
            else:
                met.append(line)
    fix = T("Upgrade what the finding names (NPU driver and firmware, CANN, mooncake-transfer-engine), or use the "
            "guide's variable for your versions.")
    tail = "".join(f"; {n}" for n in sorted(set(notes)))
    if fails:
        return ctx.fail("; ".join(fails + warns) + tail, evidence, remediation=fix)
    if warns:
        return ctx.warn("; ".join(warns) + tail, evidence, remediation=fix)
    if unknown:
        return ctx.unknown("; ".join(unknown) + tail, evidence)
    return ctx.ok("; ".join(met) + tail, evidence)


def _only_upper_bounds(r, have: dict) -> bool:
    """Every term the host misses is a `name<X` (ASCEND_BUFFER_POOL's `HDK < 26.0.0` on a 26.0 driver)."""
    missed = [t for a in r.hdk_any + r.all_of for t in a.split(",") if holds(t, have) is False]
    return bool(missed) and all("<" in t and ">=" not in t for t in missed)


def _versions(ctx) -> dict:
    stack = ctx.fact("stack").stack
    py = ctx.try_fact("python")
    moon = next((d for d in (py.dist(n) for n in MOONCAKE) if d is not None), None) if py is not None else None
    return {"hdk": stack.driver, "cann": stack.cann, "mooncake": moon.version if moon is not None else None}


def _requirement(r, have: dict) -> tuple[Optional[bool], str]:
    """(whether the row holds on `have`: None when a version it needs is not known, the words that say why)."""
    alts = [(a, [holds(t, have) for t in a.split(",")]) for a in r.hdk_any]
    alt_ok = [a for a, res in alts if all(x is True for x in res)]
    alt_bad = [a for a, res in alts if any(x is False for x in res)]
    rest = [(t, holds(t, have)) for t in r.all_of]
    seen = ", ".join(f"{WHAT[k]} {v}" for k, v in have.items() if v)
    if (alts and len(alt_bad) == len(alts)) or any(x is False for _, x in rest):
        short = [spoken(a) for a in alt_bad] if alts and len(alt_bad) == len(alts) else []
        short += [spoken(t) for t, x in rest if x is False]
        return False, T("this host has {seen}, short of {short}", seen=seen or "-", short=" / ".join(short))
    if (alts and not alt_ok) or any(x is None for _, x in rest):
        terms = [t for a, _ in alts for t in a.split(",")] + [t for t, _ in rest]
        missing = sorted({WHAT[term_name(t)] for t in terms if holds(t, have) is None})
        return None, T("not known here: {missing}", missing=", ".join(missing))
    return True, T("met ({seen})", seen=seen)
