"""SERVE323: the host memory the attention mask of some vllm-ascend releases takes at start-up (the
`serve/host-attn-mask` table; ascend_doctor.knowledge.host_mask)."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.knowledge.host_mask import mask_bytes
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.units import human_bytes as _gib
from ascend_doctor.text.versions import SpecifierSet, try_parse_version

from ._serve import cmd_evidence, cmd_or_skip, ranks_here, served_length


@check("SERVE323", "serve-host-attn-mask", severity="error", stage="serve",
       needs=["serve_cmd", "python", "serve_model", "memory", "cann"])
def host_attn_mask(ctx):
    """The attention mask the release builds on the host fits in the host's memory

    What it checks: on the vllm-ascend releases that pre-build the causal attention mask from max_model_len in every
    worker process (0.9.1rc3-0.9.1, 0.10.1rc1-0.10.2rc1, and 0.11.0rc0 with a CANN other than 8.3), the host memory
    the [L, L] masks of this node's workers take: 2 bytes an element once kept (float16/bfloat16), 9 while each is
    built (float32 intermediates), for L = --max-model-len or the length vLLM derives from config.json, against the
    host's memory (the container's limit where smaller).

    Why it matters: the memory grows with the square of the context length and with the ranks on the node: 128k on
    one rank keeps 32 GiB and peaks near 144 GiB; 256k on 8 ranks keeps about 1 TiB (vllm-project/vllm-ascend#3454).
    The workers are killed or the host swaps before a request is served.

    How to fix: lower `--max-model-len`, or install vllm-ascend 0.11.0rc1 or later (the mask is built from
    max_num_batched_tokens; on 0.11.0rc0, CANN 8.3 does the same).
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    dist = ctx.fact("python").dist("vllm-ascend")
    if dist is None:
        return ctx.skip(T("vllm-ascend is not installed in the serving python"))
    table = ctx.knowledge.host_mask
    row = table.row_for(dist.version)
    if row is None:
        return ctx.skip(T("vllm-ascend {version} does not build the attention mask from max_model_len on the host",
                          version=dist.version))
    evidence = [ev(f"serve/host-attn-mask ({row.vllm_ascend})", "; ".join(row.source[:2]))]
    if row.unless_cann:
        c = ctx.try_fact("cann")
        v = try_parse_version(c.version) if c is not None and c.found and c.version else None
        if v is None:
            return ctx.unknown(T("vllm-ascend {version} builds the mask from max_model_len unless CANN is {cann}, and "
                                 "the CANN version is not known", version=dist.version, cann=row.unless_cann), evidence)
        if SpecifierSet(row.unless_cann).contains(v):
            return ctx.ok(T("vllm-ascend {version} with CANN {cann} builds the mask from max_num_batched_tokens",
                            version=dist.version, cann=c.version), evidence)
    try:
        length, how = served_length(ctx, cmd)
        workers, _tp, _pp, _dp, _nodes, shape = ranks_here(cmd)
    except ValueError as exc:  # SERVE301/303 fail the option itself
        return ctx.unknown(T("a size on the command line is not an integer: {exc}", exc=exc), evidence)
    if length is None:
        return ctx.unknown(T("the mask is [max_model_len, max_model_len], and max_model_len is not known: {why}",
                             why=how), evidence + [cmd_evidence(cmd)])
    kept = mask_bytes(length, workers, table.cost.kept_bytes)
    peak = mask_bytes(length, workers, table.cost.peak_bytes)
    evidence.append(ev(T("command line"), f"{how}; {shape}: {workers} worker(s) here"))
    said = T("vllm-ascend {version} builds a {n} x {n} attention mask on the host in each of {workers} worker(s) "
             "({how}): {kept} kept ({each} each), up to {peak} while they are built", version=dist.version,
             n=length, workers=workers, how=how, kept=_gib(kept), each=_gib(kept // workers), peak=_gib(peak))
    fix = T("Lower --max-model-len (the mask grows with its square), or install vllm-ascend 0.11.0rc1 or later, "
            "which builds it from max_num_batched_tokens.")
    mem = ctx.try_fact("memory")
    if mem is None:  # a paste: the amounts are the finding, the host's memory is what is missing
        return ctx.unknown(T("{said}; the host's memory is not known", said=said), evidence, remediation=fix)
    total, avail, limited = mem.usable()
    where = T("the container's limit") if limited else "/proc/meminfo"
    evidence.append(ev(where, T("{total} in total, {avail} available", total=_gib(total),
                                avail=_gib(avail) if avail is not None else "?")))
    if kept > total:
        return ctx.fail(T("{said}, more than the host's {total}", said=said, total=_gib(total)), evidence,
                        remediation=fix)
    if avail is None:  # an old kernel without MemAvailable: the total is all that is known
        return ctx.unknown(T("{said}, within the host's {total}; what is available is not reported (no "
                             "MemAvailable)", said=said, total=_gib(total)), evidence, remediation=fix)
    if peak > avail:
        return ctx.warn(T("{said}, more than the {avail} available if the workers build it at once", said=said,
                          avail=_gib(avail)), evidence, remediation=fix)
    return ctx.ok(T("{said}, within the {avail} available", said=said, avail=_gib(avail)), evidence)
