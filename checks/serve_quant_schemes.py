"""SERVE322: the quantization types of the served msModelSlim checkpoint against the methods the installed
vllm-ascend release builds for them — from the `serve/quant-schemes` table (ascend_doctor.knowledge.quant_schemes:
the release's own registry, method map or quantizer classes)."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.textsafe import clipped

from ._serve import judged_release, model_or_outcome

KINDS = ("linear", "moe")
SHOWN = 6  # the types a finding names
NZ = "VLLM_ASCEND_ENABLE_NZ"


@check("SERVE322", "serve-quant-scheme", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "python", "server_env"])
def quant_scheme(ctx):
    """Every quantization type of the msModelSlim checkpoint has a method in the installed vllm-ascend release

    What it checks: the types quant_model_description.json gives the checkpoint's weights (`W8A8`,
    `W8A8_DYNAMIC`, `W4A8_DYNAMIC`, `W8A8_MIX`…), an expert's weight for a MoE layer and every other for a linear
    layer, against the methods the installed release builds per type and layer kind (the `serve/quant-schemes`
    table, read from each release's own code: 0.8.4rc2-0.30.0rc2). Two changes across the releases: `W8A8`
    (static) MoE layers are built only by 0.9.2rc1-0.12.0rc1, and `W4A8_DYNAMIC` linear layers by 0.9.1rc2-0.9.1
    and 0.10.0rc1-0.26.0rc1 (0.27.1rc1 registers only its MoE method). And where the release casts a `W4A8_DYNAMIC`
    linear layer's int4 weights to FRACTAL_NZ after loading (0.13.0rc1-0.26.0rc1, whenever `VLLM_ASCEND_ENABLE_NZ`
    is not 0 — its default is 1), that the description's `group_size` (256 when it gives none) is 64 or 128: CANN's
    WeightQuantBatchMatmul accepts no other on NZ int4 weights. A release whose quantizer hands the layers to
    mindie_turbo (0.8.4rc2-0.9.1rc1, 0.9.2rc1) is unknown while that package is installed. Attention (KV-cache)
    types are not judged here.

    Why it matters: vllm-ascend looks each layer's type up when it builds the model and stops at start where it
    has no method (`Currently, vLLM Ascend doesn't support quant_type=W4A8_DYNAMIC for layer_type=linear`). With the
    NZ cast, start-up fails at the first W4A8 matmul: `antiquantGroupSize should be 128 or 64, but actual
    antiquantGroupSize is [256]` — with the group size the Qwen3-8B-W4A8 tutorial of 0.17.0rc1-0.19.1rc1 quantizes
    with (vllm-ascend#10834, #8770; the maintainer: "When group_size is 256, the weight cannot be converted to NZ").

    How to fix: serve the checkpoint on a release that builds its types (the finding names them), or quantize it
    again with types the installed release builds; for the NZ group size, `export VLLM_ASCEND_ENABLE_NZ=0` before
    `vllm serve`, or quantize again with msModelSlim's `--group_size 128`.
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    flag = cmd.get("quantization")
    if not m.quant_description_files or (flag is not None and flag != "ascend"):
        return ctx.skip(T("{path} is not served as an msModelSlim checkpoint (no quant_model_description.json, or "
                          "--quantization {flag})", path=m.path, flag=flag or T("not given")))
    if m.quant_layers is None:
        return ctx.unknown(T("the types of {file} were not read: {why}", file=m.quant_description_files[0],
                             why=m.quant_coverage_why_not or T("the description is not a JSON object")))
    va, stand_in, out = judged_release(ctx, T("the quantization methods table"))
    if out is not None:
        return out
    release = stand_in or va
    table = ctx.knowledge.quant_schemes
    row = table.row_of(release)
    described = clipped("; ".join(f"{kind}: {', '.join(sorted(types))}" for kind, types in
                                  sorted(m.quant_layers.items())), 300)
    evidence = [ev(f"dir: {m.path}", f"{m.quant_description_files[0]}: {described or T('no quantized weights')}"
                   + (f"; group_size {m.quant_group_size}" if m.quant_group_size is not None else ""))]
    if row is None:
        return ctx.unknown(T("the quantization methods of vllm-ascend {release} are not recorded (the "
                             "serve/quant-schemes table reads {first}-{last})", release=release,
                             first=table.release[0].releases[0], last=table.release[-1].releases[-1]), evidence)
    evidence.append(ev(f"matrix: serve/quant-schemes {row.id}",
                       f"vllm-ascend {', '.join(row.releases)}: " + "; ".join(f"{k} {'/'.join(v)}" for k, v in
                                                                        sorted(row.schemes.items()))
                       + f"\nsource: {'; '.join(row.source)}"))
    if row.mindie_turbo and _installed(ctx, "mindie-turbo", "mindie_turbo"):
        return ctx.unknown(T("mindie_turbo is installed: vllm-ascend {release} hands the quantized layers to its "
                             "quantizer, whose types are not recorded", release=release), evidence)
    missing = [(kind, clipped(qtype), clipped(weight, 120)) for kind in KINDS
               for qtype, weight in sorted(m.quant_layers.get(kind, {}).items())
               if kind not in row.schemes.get(qtype, [])][:SHOWN]  # a hostile description names a thousand types
    if missing:
        return _missing(ctx, m, release, missing, evidence)
    nz = _nz_group(ctx, m, row, release, evidence)
    if nz is not None:
        return nz
    return ctx.ok(T("vllm-ascend {release} builds a method for every quantized layer of {file} ({described})",
                    release=release, file=m.quant_description_files[0], described=described or T("none")), evidence)


def _installed(ctx, *names: str) -> bool:
    py = ctx.fact("python")
    return any(py.dist(n) is not None for n in names)


def _missing(ctx, m, release: str, missing: list, evidence: list):
    table = ctx.knowledge.quant_schemes
    said = []
    for kind, qtype, weight in missing:
        where = table.accepting(qtype, kind)
        said.append(T("{weight} is {qtype}, and vllm-ascend {release} builds no {qtype} method for {kind} layers "
                      "({where})", weight=weight, qtype=qtype, release=release, kind=kind,
                      where=T("built by {releases}", releases=where) if where else T("no recorded release builds "
                                                                                     "one")))
    row = table.row_of(release)
    offered = {kind: sorted(t for t, kinds in row.schemes.items() if kind in kinds) for kind, _, _ in missing}
    return ctx.fail(T("{file}: {said}: vllm-ascend stops at start when it builds the model",
                      file=m.quant_description_files[0], said="; ".join(said)), evidence,
                    remediation=T("Serve the checkpoint on a release that builds these types (above), or quantize "
                                  "it again with types vllm-ascend {release} builds: {offered}.", release=release,
                                  offered="; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(offered.items()))))


def _nz_group(ctx, m, row, release: str, evidence: list) -> Optional[object]:
    """The outcome of the NZ group-size rule, None when it does not apply or holds."""
    if not row.w4a8_linear_nz or "W4A8_DYNAMIC" not in m.quant_layers.get("linear", {}):
        return None
    group = m.quant_group_size if m.quant_group_size is not None else row.w4a8_group_default
    sizes = ctx.knowledge.quant_schemes.nz_int4_group_sizes
    if group is None or group in sizes:
        return None
    given = T("group_size {group}", group=group) if m.quant_group_size is not None else \
        T("no group_size (vllm-ascend {release} assumes {group})", release=release, group=group)
    weight = clipped(m.quant_layers["linear"]["W4A8_DYNAMIC"], 120)
    consequence = T("vllm-ascend {release} casts the int4 weights of its W4A8_DYNAMIC linear layers ({weight}) to "
                    "FRACTAL_NZ, where CANN's WeightQuantBatchMatmul accepts a group size of only {sizes} "
                    "(`antiquantGroupSize should be 128 or 64`); {file} has {given}", release=release,
                    weight=weight, sizes=" or ".join(str(n) for n in sizes), file=m.quant_description_files[0],
                    given=given)
    table = ctx.knowledge.quant_schemes
    evidence.append(ev("matrix: serve/quant-schemes nz_int4_group_sizes",
                       f"{', '.join(str(n) for n in sizes)}\nsource: {'; '.join(table.nz_int4_source)}"))
    fix = T("Add `export {var}=0` before `vllm serve` (the int4 weights stay ND), or quantize again with msModelSlim's "
            "`--group_size 128`.", var=NZ)
    try:
        raw = ctx.fact("server_env").get(NZ)
    except FactUnavailable as exc:
        return ctx.unknown(T("{consequence}; whether {var} is 0 is not known: {why}", consequence=consequence,
                             var=NZ, why=exc.reason), evidence, remediation=fix)
    if raw is None and row.nz_default is None:
        return ctx.unknown(T("{consequence}; {var} is not set, and vllm-ascend {release}'s default for it is not "
                             "recorded", consequence=consequence, var=NZ, release=release), evidence, remediation=fix)
    value = str(raw if raw is not None else row.nz_default).strip()
    seen = f"{NZ}={clipped(raw)}" if raw is not None else T("{var} not set (default {default})", var=NZ,
                                                   default=row.nz_default)
    evidence.append(ev("env", seen))
    try:
        nz_off = int(value) == 0
    except ValueError:
        return ctx.fail(T("{var}={value} is not an integer: vllm-ascend reads it with int() and stops at import",
                          var=NZ, value=value), evidence, remediation=fix)
    if nz_off:
        return ctx.ok(T("{file} has {given} and {seen}: the int4 weights stay ND", file=m.quant_description_files[0],
                        given=given, seen=seen), evidence)
    return ctx.fail(T("{consequence}, and {seen}", consequence=consequence, seen=seen), evidence, remediation=fix)
