"""SERVE326: the unit in which the server reuses a cached prefix, and whether requests can ever share that much
(ascend_doctor.knowledge.prefix_unit)."""

from __future__ import annotations

from ascend_doctor.deploy.arch import read_architecture
from ascend_doctor.deploy.hybrid import GDN_MODEL_TYPES, HybridPages, gdn_pages
from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.prefix_unit import (
    HYBRID_PREFIX_FROM,
    LARGE_SHARE,
    eagle_style,
    hybrid_release_ok,
    largest_ratio,
    prefix_unit,
    smaller_v4_unit,
    standard_block,
    v4_block,
    v4_takes_32,
)
from ascend_doctor.plugin import check, ev
from ascend_doctor.report import Status
from ascend_doctor.text.versions import try_parse_version

from ._serve import cmd_evidence, cmd_or_skip, model_config, served_length, unreadable


def _speculation(cmd):
    """(method, speculative tokens) of --speculative-config; ("", 0) without one or when it cannot be read; (None, 0)
    when the paste cuts its value (the method is not known)."""
    if cmd.is_cut("speculative_config"):
        return None, 0
    spec, err = cmd.json_value("speculative_config") if cmd.has("speculative_config") else (None, None)
    if err or not isinstance(spec, dict):
        return "", 0
    tokens = spec.get("num_speculative_tokens")
    return str(spec.get("method") or ""), tokens if isinstance(tokens, int) and 0 < tokens <= 64 else 0


def _hybrid_block(ctx, cmd, cfg, release, tp, spec_tokens):
    """(block, why) of a Gated DeltaNet hybrid: the attention block that makes its pages equal."""
    a = read_architecture(cfg)
    kv = str(cmd.get("kv_cache_dtype") or "auto").lower()
    kv_bytes = 1 if kv.startswith(("fp8", "int8")) else (a.dtype_bytes or 2)
    pages = gdn_pages(a, tp, 1, 1, kv_bytes, a.dtype_bytes or kv_bytes, release, spec_tokens,
                      ctx.knowledge.hybrid_pages)
    if not isinstance(pages, HybridPages):
        return None, pages
    return pages.block, T("the attention block that matches the linear-attention state at TP {tp}, {rule} pages",
                          tp=tp, rule=pages.rule)


def _block(ctx, cmd, cfg, release, given, spec_tokens):
    """(block, why, compression ratio) the server runs with, or (None, why, 1)."""
    mt = str(cfg.get("model_type") or "")
    if mt == "deepseek_v4":
        block, why = v4_block(ctx.knowledge.release_rules, release, given)
        return block, why, largest_ratio(cfg)
    if mt in GDN_MODEL_TYPES:
        if not hybrid_release_ok(release):
            return None, T("vllm-ascend {version} predates prefix caching of a Gated DeltaNet hybrid ({first} on)",
                           version=release, first=HYBRID_PREFIX_FROM), 1
        tp = cmd.int_opt("tensor_parallel_size") or 1
        block, why = _hybrid_block(ctx, cmd, cfg, release, tp, spec_tokens)
        return block, why, 1
    block, why = standard_block(ctx.knowledge.release_rules, release, given, mt)
    return block, why, 1


# Options that make the server a pooling model, whose prefix-caching default depends on its pooling type.
_POOLING = ("runner", "convert", "task")
ENGINE_SWITCH = "VLLM_USE_V1"  # a vLLM whose envs.py still reads it may run the V0 engine (prefix caching off)


def _engine_switch(ctx, release):
    """The vLLM (installed, or paired with the vllm-ascend release by the matrix) whose envs.py still reads
    VLLM_USE_V1 — the names-vllm `env` rows read by matrix sync: up to vLLM 0.11.0 —, or None. There the engine, and
    with it the prefix-caching default, follows the variable."""
    dist = ctx.fact("python").dist("vllm")
    row = ctx.matrix.vllm_ascend_release(release)
    table = ctx.knowledge.release_names.get("vllm")
    for version in [*([dist.version] if dist is not None else []), *(row.vllm if row is not None else [])]:
        names, _ = table.row_for(version) if table is not None else (None, "")
        if names is not None and ENGINE_SWITCH in (names.joined("env") or ()):
            return version
    return None


def _off_by_default(ctx, cmd, cfg, release):
    """Why prefix caching is off for a command that does not set it, or None when vLLM's V1 engine turns it on:
    vLLM (EngineArgs: `enable_prefix_caching` None -> ModelConfig.is_prefix_caching_supported, read in the 0.13.0,
    0.17.0, 0.20.2 and 0.22.1 sdists) enables it for a decoder-only generative model, DeepSeek-V4 among them, and
    not for a hybrid (Gated DeltaNet, Mamba) model — "Hybrid models does not support prefix caching since the feature
    is still experimental". A pooling model's default depends on its pooling type: not judged."""
    switch = _engine_switch(ctx, release)
    if switch is not None:
        return T("vLLM {vllm} still reads VLLM_USE_V1 (its envs.py): whether prefix caching is on by default "
                 "follows the engine it picks, and the command does not turn it on (--enable-prefix-caching)",
                 vllm=switch)
    if str(cfg.get("model_type") or "") in GDN_MODEL_TYPES:
        return T("vLLM leaves prefix caching off by default for a hybrid model; the command does not turn it on "
                 "(--enable-prefix-caching)")
    if any(cmd.get(o) not in (None, "generate", "auto", "none") for o in _POOLING):
        return T("a pooling model's prefix-caching default depends on its pooling type; the command does not set "
                 "it (--enable-prefix-caching)")
    return None


def _fix(ctx, cfg, unit, block, release):
    """What makes the unit smaller on this deployment, and the way out where nothing does."""
    smaller = smaller_v4_unit(unit, block) if str(cfg.get("model_type") or "") == "deepseek_v4" else None
    ways = []
    if smaller and v4_takes_32(ctx.knowledge.release_rules, release):
        ways.append(T("pass --block-size 32 (a unit of {smaller} tokens; vllm-ascend#10710)", smaller=smaller))
    elif smaller:
        ways.append(T("install vllm-ascend 0.21.0rc1 or later and pass --block-size 32 (a unit of {smaller} tokens)",
                      smaller=smaller))
    if unit.context_parallel:
        ways.append(T("a smaller --decode-context-parallel-size or --prefill-context-parallel-size"))
    ways.append(T("turn prefix caching off (--no-enable-prefix-caching) if requests do not share that much"))
    return T("To reuse shorter prefixes: {ways}.", ways=join("; or ", ways))


@check("SERVE326", "serve-prefix-unit", severity="warning", stage="serve",
       needs=["serve_cmd", "python", "serve_model"])
def prefix_unit_check(ctx):
    """Requests can share enough to hit the prefix cache

    What it checks: with prefix caching on — `--enable-prefix-caching`, or vLLM's V1 default for a decoder-only
    generative model (DeepSeek-V4 too; not a hybrid model, not a pooling model), which `--no-enable-prefix-caching`
    turns off — the unit in which the server records and reuses prefixes — the block vllm-ascend runs with (128 for
    most models whatever --block-size says; DeepSeek-V4's 32/64/128; a Gated DeltaNet hybrid's state-sized block),
    times DeepSeek-V4's 1:128 compression, times the decode and prefill context-parallel sizes — and what a request
    must share with an earlier one before anything is reused (one unit, two with EAGLE/MTP speculative decoding,
    which recomputes the last matched block). It warns when that is at least 8,192 tokens or not below
    --max-model-len.

    Why it matters: nothing fails — the prefix cache just never hits, and every repeated system prompt is prefilled
    again. DeepSeek-V4 at block 128 needs 16,384 shared tokens, 32,768 with MTP (vllm-project/vllm-ascend#10710);
    at block 32, prompts under 4,096 tokens hit nothing (#16270).

    How to fix: for DeepSeek-V4 pass `--block-size 32` (vllm-ascend 0.21.0rc1 or later); otherwise a smaller
    context-parallel size, or `--no-enable-prefix-caching` where requests do not share that much.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    explicit = cmd.has("enable_prefix_caching")
    if explicit and not cmd.flag("enable_prefix_caching"):
        return ctx.skip(T("the command turns prefix caching off (--no-enable-prefix-caching)"))
    dist = ctx.fact("python").dist("vllm-ascend")
    if dist is None:
        return ctx.skip(T("vllm-ascend is not installed in the serving python"))
    if try_parse_version(dist.version) is None:
        return ctx.unknown(T("vllm-ascend {version} is not a release number: the block it runs with is not known",
                             version=dist.version))
    m = ctx.try_fact("serve_model")
    if m is None or m.config is None:
        why = unreadable(m)
        return ctx.unknown(T("the unit depends on the model, which is not read: {why}", why=why), cause=why)
    cfg = model_config(ctx, m)
    off = None if explicit else _off_by_default(ctx, cmd, cfg, dist.version)
    if off is not None:
        return ctx.skip(off)
    method, spec_tokens = _speculation(cmd)
    try:
        given = cmd.int_opt("block_size")
        dcp = cmd.int_opt("decode_context_parallel_size") or 1
        pcp = cmd.int_opt("prefill_context_parallel_size") or 1
        block, why, ratio = _block(ctx, cmd, cfg, dist.version, given, spec_tokens)
        length, how = served_length(ctx, cmd)
    except ValueError as exc:  # SERVE301 fails the option itself
        return ctx.unknown(T("a size on the command line is not an integer: {exc}", exc=exc), [cmd_evidence(cmd)])
    if block is None:
        return ctx.unknown(T("the block the server runs with is not known: {why}", why=why), [cmd_evidence(cmd)])
    unit = prefix_unit(block, why, ratio, dcp, pcp, eagle_style(method))
    outcome = _verdict(ctx, cmd, cfg, unit, block, method, length, how, dist.version, by_default=not explicit)
    smaller = smaller_v4_unit(unit, block) if str(cfg.get("model_type") or "") == "deepseek_v4" else None
    if outcome.status == Status.WARN and getattr(cmd, "partial", False) and given is None and smaller \
            and v4_takes_32(ctx.knowledge.release_rules, dist.version):
        return ctx.unknown(T("{said}; the paste shows only part of the command, and a --block-size where it is cut "
                             "would change the unit (at 32: {smaller} tokens)", said=outcome.message,
                             smaller=smaller), outcome.evidence)
    if outcome.status == Status.WARN and not explicit and getattr(cmd, "partial", False):
        return ctx.unknown(T("{said}; prefix caching is on by default here, and the paste shows only part of the "
                             "command: a --no-enable-prefix-caching where it is cut would turn it off",
                             said=outcome.message), outcome.evidence)
    if method is None and outcome.status != Status.WARN:
        doubled = prefix_unit(block, why, ratio, dcp, pcp, True)
        if doubled.least_shared >= LARGE_SHARE or (length is not None and doubled.least_shared >= length):
            return ctx.unknown(T("{said}; --speculative-config is cut in the paste, and with an EAGLE or MTP method a "
                                 "request must share {least} tokens", said=outcome.message,
                                 least=doubled.least_shared), outcome.evidence)
    return outcome


def _verdict(ctx, cmd, cfg, unit, block, method, length, how, release, by_default=False):
    """warn when what a request must share is at least LARGE_SHARE or not below max_model_len; pass otherwise."""
    factors = join(" × ", unit.factors)
    evidence = [cmd_evidence(cmd), ev(T("prefix-cache unit"), T("{factors}; block: {why}", factors=factors,
                                                                   why=unit.block_why))]
    if by_default:
        evidence.append(ev(T("prefix caching"), T("on by default: vLLM's V1 engine turns it on for a decoder-only "
                                                  "generative model; the command does not turn it off "
                                                  "(--no-enable-prefix-caching)")))
    said = T("vllm-ascend {version} reuses cached prefixes in whole units of {unit} tokens ({factors}; block: "
             "{why}); a request reuses nothing unless it shares at least {least} tokens with an earlier one and is "
             "longer than that", version=release, unit=unit.unit, factors=factors, why=unit.block_why,
             least=unit.least_shared)
    if unit.eagle:
        said = T("{said} (speculative method {method} recomputes the last matched unit)", said=said, method=method)
    fix = _fix(ctx, cfg, unit, block, release)
    if length is not None and unit.least_shared >= length:
        return ctx.warn(T("{said}, and no request is that long ({how}): the prefix cache can never hit", said=said,
                          how=how), evidence, remediation=fix)
    if unit.least_shared >= LARGE_SHARE:
        return ctx.warn(T("{said}: a shared system prompt or tool list shorter than that is prefilled again every "
                          "time", said=said), evidence, remediation=fix)
    return ctx.ok(said, evidence)
