"""VLLM104: the installed distributions' requirements are met (`pip check`), less the conflicts the vllm-ascend
images ship on purpose (the `depcheck/dependency-allowlist` table), judged against the release rows.

Facts: `python` (each distribution's Requires-Dist, read from metadata; a paste lists none, so triage does not judge
it)."""

from __future__ import annotations

from typing import List, Optional

from ascend_doctor.i18n import T
from ascend_doctor.knowledge.depcheck import find_conflicts, pin_index
from ascend_doctor.plugin import check, ev
from ascend_doctor.seam.host import normalize_name
from ascend_doctor.text.versions import try_parse_version

from ._vllm import ROW_FIELD


def _official_build_listed(ctx, c) -> Optional[bool]:
    """Whether the matrix row of the requiring vllm-ascend release names the installed build (True/False), or None
    when no row or field tells. The `official-build` allowance rests on that premise: a `.postN` the release's own
    table does not list is the conflict pip reports, not a harmless image build (#22)."""
    if normalize_name(c.requirer) != "vllm-ascend":
        return True  # the allowance's own rule; the images' builds are a vllm-ascend matter only
    row = ctx.matrix.vllm_ascend_release(c.requirer_version)
    field = ROW_FIELD.get(c.name)
    if row is None or field is None or not getattr(row, field):
        return None
    want = try_parse_version(c.installed)
    return any(v == c.installed or (want is not None and try_parse_version(v) == want) for v in getattr(row, field))



# Distributions whose broken requirements break serving; other conflicts warn.
STACK = frozenset({"vllm", "vllm-ascend", "torch", "torch-npu", "triton-ascend", "transformers", "torchvision",
                   "torchaudio", "tokenizers", "safetensors", "huggingface-hub", "numpy", "mooncake-transfer-engine"})


@check("VLLM104", "pip-check", severity="error", needs=["python"])
def pip_check(ctx):
    """Installed distributions' requirements are met (`pip check`), minus documented-harmless conflicts

    What it checks: every installed distribution's `Requires-Dist` (markers evaluated for the serving interpreter)
    against what is installed, like `python -m pip check`, from metadata only. Conflicts vllm-ascend documents as
    harmless are allowed by data (the `depcheck/dependency-allowlist` table: vLLM's CUDA torch pin,
    vllm-ascend#754) and shown as allowed. A conflict involving the serving stack fails; others warn.

    Why it matters: vllm-ascend's installation guide ends with `python -m pip check` for a reason: a missing or wrong
    torch-npu, triton-ascend or transformers fails at import or at the first request, far from the cause.

    How to fix: install what the conflict lines ask for (e.g. `pip install torch-npu==2.8.0.post2`), reinstalling
    vllm-ascend's pins last, and re-run `python -m pip check`.
    """
    py = ctx.fact("python")
    conflicts = find_conflicts(py, ctx.knowledge.allowlist)
    unverified = []
    for c in conflicts:
        if c.allowed_by == "official-build":
            listed = _official_build_listed(ctx, c)
            if listed is False:  # a build of the pinned release that this release's own table does not name
                c.allowed_by = None
            elif listed is None:
                unverified.append(c)
    real = [c for c in conflicts if not c.allowed_by]
    allowed = [c for c in conflicts if c.allowed_by]
    evidence = []
    if real:
        evidence.append(ev(f"pip check ({py.executable or 'python'})", "\n".join(c.line() for c in real)))
    if allowed:
        evidence.append(ev("allowed conflicts (the `depcheck/dependency-allowlist` table)", "\n".join(
            f"{c.line()}\n  allowed by {c.allowed_by}: {c.allowed_reason} [source: {'; '.join(c.allowed_source)}]"
            for c in allowed)))
    if not real and unverified:
        return ctx.unknown(T("{n} conflict(s) would be harmless dev/post builds of the pinned release, but the matrix "
                             "does not record which builds the installed release ships: {lines}", n=len(unverified),
                             lines="; ".join(c.line() for c in unverified)), evidence)
    if not real:
        return ctx.ok(T("no broken requirements among {n_distributions} distributions{value}",
                        n_distributions=len(py.distributions),
                        value=T(" ({n_allowed} documented-harmless conflict(s) allowed)",
                                n_allowed=len(allowed)) if allowed else ''),
                      evidence)
    stack = [c for c in real if normalize_name(c.requirer) in STACK or c.name in STACK]
    wants: List[str] = []
    for c in stack or real:
        spec = f"'{c.requirement}'" if any(ch in c.requirement for ch in "<>!~,[") else c.requirement
        if spec not in wants:
            wants.append(spec)
    fix = (T("`pip install {wants}` (then reinstall vllm-ascend's pins if they moved) and `python -m pip check`.",
             wants=' '.join(wants) + pin_index(ctx.matrix, [c.requirement for c in stack or real])))
    summary = "; ".join(c.line() for c in (stack or real)[:3]) + (" …" if len(stack or real) > 3 else "")
    if stack:
        return ctx.fail(T("{n_real} broken requirement(s), {n_stack} in the serving stack: {summary}",
                          n_real=len(real), n_stack=len(stack), summary=summary), evidence,
                        remediation=fix)
    return ctx.warn(T("{n_real} broken requirement(s) outside the serving stack: {summary}", n_real=len(real),
                      summary=summary), evidence,
                    remediation=fix)
