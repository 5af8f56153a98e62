"""What the HW checks share (checks/hardware.py, hardware_kv.py, hardware_nodes.py): the rules of the matrix's
hardware-rules.toml that apply to this host's chip families and installed vllm-ascend, and the outcome of violating
them."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.knowledge.hardware import families
from ascend_doctor.plugin import ev


def host_families(ctx):
    """family -> chip names of this host: the `npu_family` fact (npu-smi's; in a paste without a usable table, the
    family its image's suffix names, with no chip names), else npu-smi's table; None when neither tells."""
    told = ctx.try_fact("npu_family")
    return told.families if told is not None else families(ctx.try_fact("npu_smi"))


def one_family(ctx) -> Optional[str]:
    """The chip family of this host when it is exactly one (the image variant whose pins a release ships: VLLM102,
    DRV104), else None."""
    known = [f for f in (host_families(ctx) or {}) if f != "?"]
    return known[0] if len(known) == 1 else None


def chip_names(fams: dict, family: str) -> list:
    """The chips of `family` on this host, or the family's own name where only the family is known (an image)."""
    return fams.get(family) or ([family] if family in fams else [])


def rules_of_kind(ctx, kind: str):
    """(rules that apply, evidence, None) or (.., .., outcome): the family (the `npu_family` fact: npu-smi's, or a
    paste's image suffix), vllm-ascend's version."""
    py = ctx.try_fact("python")
    va = py.dist("vllm-ascend") if py is not None else None
    told = ctx.try_fact("npu_family")  # npu-smi's; a paste without its table: the family its image's suffix names
    fams = told.families if told is not None else families(ctx.fact("npu_smi"))
    if fams is None:
        smi = ctx.fact("npu_smi")  # unavailable (hung, crashed): the engine reports it with the probe's own reason
        why = smi.reason() or "npu-smi gave no chip table"
        # cause/see: the console groups this with the other checks the same npu-smi problem stopped
        return [], [], ctx.unknown(T("cannot tell the hardware family: {why}", why=why), cause=why,
                                   see=["DRV101", "CTR102", "CTR104", "NPU102"])
    if all(fams.values()):  # chips named: npu-smi's table
        evidence = [ev(T("npu-smi chips"), "; ".join(f"{f}: {len(n)}x {n[0]}" for f, n in sorted(fams.items())))]
    else:
        evidence = [ev(told.source, ", ".join(sorted(fams)))]
    if va is None:
        return [], evidence, ctx.skip(T("vllm-ascend is not installed in the serving python"), evidence)
    rules = []
    for fam in sorted(f for f in fams if f != "?"):
        rules.extend(ctx.matrix.serve_rules_for(fam, va.version, kind))
    if not rules:
        named = ", ".join(sorted(f for f in fams if f != "?")) or "no vllm-ascend family"
        return [], evidence, ctx.skip(T("no documented {kind} rule for {named} with vllm-ascend {version}", kind=kind,
                                        named=named, version=va.version),
                                      evidence)
    for r in rules:
        evidence.append(ev(f"matrix {r.id} ({', '.join(r.hardware)}, vllm-ascend {r.vllm_ascend})",
                           f"{r.says}\nsource: {'; '.join(r.source)}"))
    return rules, evidence, None


def violated(ctx, rules, message: str, evidence, remediation: str, **details):
    """fail when any violated rule is an error, else warn; the message names the rule ids and confidence."""
    ids = ", ".join(r.id + (" (medium confidence)" if r.confidence != "high" else "") for r in rules)
    text = f"{message} [{ids}]"
    if any(r.severity in ("critical", "error") for r in rules):
        return ctx.fail(text, evidence, remediation=remediation, rules=[r.id for r in rules], **details)
    return ctx.warn(text, evidence, remediation=remediation, rules=[r.id for r in rules], **details)


def serve_rules(ctx, kind: str):
    """(serve_cmd, rules, evidence, None) or (.., .., .., outcome): the command a serve-stage HW check lints and the
    rules of `kind` for this host's family and release (serve_or_skip, then rules_of_kind)."""
    cmd, skip = serve_or_skip(ctx)
    if skip:
        return None, [], [], skip
    rules, evidence, out = rules_of_kind(ctx, kind)
    return cmd, rules, evidence, out


def serve_or_skip(ctx):
    """(serve_cmd, None) or (None, skip): the same rule as the SERVE checks' cmd_or_skip (checks/_serve.py)."""
    cmd = ctx.try_fact("serve_cmd")
    if cmd is None:
        return None, ctx.skip(T("no vllm serve command to lint (use `ascend-doctor exec -- vllm serve …`)"))
    if not cmd.recognized:
        return None, ctx.skip(T("not a vllm serve / api_server command line: nothing to lint"))
    return cmd, None
