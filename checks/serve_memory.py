"""SERVE305: the serve command's memory, judged with the deployment model `ascend-doctor plan` uses
(ascend_doctor/deploy) — the same weights, KV-cache and budget arithmetic, so a command plan prints passes here, and
a sizing problem found here names the value plan would choose."""

from __future__ import annotations

from ascend_doctor.deploy.arch import derived_max_len, mtp_layers, read_architecture, text_config, with_mtp
from ascend_doctor.deploy.budget import GRAPH_HEADROOM, Layout
from ascend_doctor.deploy.chips import DEFAULT_RESERVE_MIB, Chip, find_chip
from ascend_doctor.deploy.plan import Want, fitting_len, gib, make_plan, size
from ascend_doctor.deploy.vision import ENCODER_PROFILE_NOTE
from ascend_doctor.deploy.weights import as_loaded, estimate, format_of, measured
from ascend_doctor.i18n import T, shown
from ascend_doctor.plugin import check, ev

from ._serve import cmd_evidence, config_unknown, int_opt, model_config, model_or_outcome, visible_npus

NPU_BATCHED_TOKENS = 2048  # vLLM's serve default where the device memory is unknown, as on NPU (deploy-facts.md §3f)


def _chip(npu, chips) -> Chip:
    """The chip table's row for npu-smi's name at npu-smi's own memory total, else one built from that total
    (visible: estimated)."""
    known = find_chip(npu.name or "", chips)
    total = npu.hbm_total_mb or npu.memory_total_mb or 0
    if known is not None:
        return known.with_total(total)
    return Chip(id=npu.name or "?", family="unknown", memory_mib=max(total, DEFAULT_RESERVE_MIB + 1),
                sources=["npu-smi info on this host"])


def _options(cmd, arch):
    """(Layout, Want, max_len, dtype bytes) from the serve command, vLLM's defaults where it says nothing."""
    tp, pp = int_opt(cmd, "tensor_parallel_size", 1), int_opt(cmd, "pipeline_parallel_size", 1)
    dp = int_opt(cmd, "data_parallel_size", 1)
    ep = bool(cmd.get("enable_expert_parallel"))
    max_len = cmd.int_opt("max_model_len")
    if max_len is None or max_len <= 0:
        max_len = arch.max_len or 0
    gmu = cmd.float_opt("gpu_memory_utilization")
    dtype = str(cmd.get("dtype") or "auto")
    nbytes = 4 if dtype in ("float32", "float") else 2  # `auto` loads float32 checkpoints in 16 bits too
    want = Want(ranks=tp * pp * dp, max_len=max_len or None, gmu=0.9 if gmu is None else min(max(gmu, 0.01), 1.0),
                batched_tokens=int_opt(cmd, "max_num_batched_tokens", NPU_BATCHED_TOKENS),
                max_seqs=int_opt(cmd, "max_num_seqs", 256), dtype_bytes=nbytes,
                kv_cache_dtype=str(cmd.get("kv_cache_dtype") or "auto"))
    return Layout(tp=tp, dp=dp, pp=pp, ep=ep and tp * dp > 1), want, max_len


def _buffsize(ctx) -> dict:
    """{"hccl_buffsize_mb": N} from the server's HCCL_BUFFSIZE (deployments set 512-1024 MB; CANN's default is 200),
    {} when it is not set or not a positive number."""
    env = ctx.try_fact("server_env") or {}
    raw = str(env.get("HCCL_BUFFSIZE", "")).strip()
    return {"hccl_buffsize_mb": int(raw)} if raw.isdigit() and int(raw) > 0 else {}


def _speculation(cmd, cfg, arch):
    """(the model as the engine sizes it, speculative tokens per step, evidence or None): an MTP method drafting
    from the checkpoint's own MTP layers (no draft `model`) runs those layers beside the model — each caches K and
    V like a decoder layer (vllm-ascend#6847: GLM-5's 78 layers + 1 MTP layer give the logged tokens), and the
    speculative tokens widen a hybrid's conv state. A separate draft model is not sized here."""
    from ascend_doctor.knowledge.serve_features import used

    spec, err = cmd.json_value("speculative_config") if cmd.has("speculative_config") else (None, None)
    if err or not isinstance(spec, dict):
        return arch, 0, None
    method = str(spec.get("method") or "")
    tokens = spec.get("num_speculative_tokens")
    tokens = tokens if isinstance(tokens, int) and 0 < tokens <= 64 else 0
    layers = mtp_layers(cfg) or 0
    if not used("MTP", cmd, {}, None)[1] or spec.get("model") or not 0 < layers <= 16:
        return arch, tokens if arch.linear_layers else 0, None
    drafted = with_mtp(arch, layers)
    return drafted, tokens, ev(T("command line"), T("--speculative-config method {method}: {n} MTP layer(s) run and "
                                                   "cache K and V beside the model's {layers}",
                                                   method=method, n=layers, layers=arch.layers))


def _release(ctx) -> dict:
    """The installed vllm-ascend, as Want needs it: where it halves the KV budget on this chip (310P from
    0.18.0rc1) and its page rule for hybrid models."""
    py = ctx.try_fact("python")
    dist = py.dist("vllm-ascend") if py is not None else None
    return {"vllm_ascend": dist.version if dist is not None else None}


def _kv_cache_dtype(ctx, cmd, cfg: dict, release, given: str):
    """(the KV cache dtype the installed release will use, evidence): --kv-cache-dtype as given, unless a release rule
    of SERVE311 says the release replaces it (REL-B28-001: the model's dtype for a DeepSeek-sparse-attention model,
    vllm-ascend 0.15.0rc1-0.28.x) — one table for both checks."""
    from ascend_doctor.knowledge.release_rules import answer, rules_for
    from ascend_doctor.text.versions import try_parse_version

    if not release or try_parse_version(release) is None:
        return given, []
    env = ctx.try_fact("server_env") or {}
    for rule in rules_for(ctx.knowledge.release_rules, release):
        if rule.when != "index_topk_cache_dtype":
            continue
        hit = answer(rule, cmd, env, cfg)
        if hit and hit[0]:
            return "auto", [ev(T("KV cache dtype"), T("vllm-ascend {release} uses the model's dtype, not "
                                                      "--kv-cache-dtype {given} ({rule})", release=release,
                                                      given=given, rule=rule.id))]
    return given, []


def _format(m, arch) -> str:
    """The checkpoint's weight format (msModelSlim's description, the config), fp32 loaded as 16 bits."""
    fmt = format_of(arch, {"x.weight": m.quant_type} if m.quant_type else None) or "bf16"
    return "bf16" if fmt == "fp32" else fmt


def _weights(m, arch):
    fmt = _format(m, arch)
    if m.checkpoint_bytes:
        return measured(arch, m.checkpoint_bytes, m.checkpoint_source, fmt)
    return estimate(arch, fmt)


def _budget_evidence(cand, ws, vision: bool = False) -> list:
    b = cand.budget
    lines = [f"checkpoint: {ws.total_bytes} B ({shown(ws.source)})",
             f"{shown(b.visible.name)}: {gib(b.visible.bytes)} × {b.gmu:g} = {gib(b.requested)}"]
    lines += [f"− {shown(t.name)}: {gib(t.bytes)}" + (" (estimate)" if t.estimate else "") + f" — {shown(t.inputs)}"
              for t in b.terms]
    lines.append(f"= KV cache: {gib(b.kv_bytes)}")
    if cand.capacity is not None:
        lines.append(f"{cand.kv.bytes_per_token} B/token ({shown(cand.kv.formula)}) → {cand.capacity.tokens} tokens")
    if vision:
        lines.append(shown(ENCODER_PROFILE_NOTE))
    return [ev(T("deployment model (ascend-doctor plan)"), "\n".join(lines))]


@check("SERVE305", "serve-memory-fits", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "npu_smi", "devices", "server_env", "python"])
def memory_fits(ctx):
    """Each rank holds its share of the weights and the KV cache of one full-length request

    What it checks: the serve command's layout (TP, PP, DP, expert parallelism), `--max-model-len`,
    `--gpu-memory-utilization` and `--max-num-batched-tokens` against the NPUs' memory, with the arithmetic of
    `ascend-doctor plan`: the checkpoint's bytes (model.safetensors.index.json, else from config.json and the
    quantization) as the installed release holds them (block-wise FP8 converted to BF16 on A2/A3 from vllm-ascend
    0.27.1rc1, REL-B27-008), sharded as vLLM shards them; the activation peak and runtime reserve (estimates); HCCL
    buffers; and the KV cache per token after vLLM's formulas (GQA heads per rank, MLA latents and DSA indexer keys,
    sliding windows, Gated DeltaNet states paged as the installed vllm-ascend pages them, the MTP layers an MTP
    `--speculative-config` runs) at `--kv-cache-dtype` (auto: the model's dtype; the fp8 ones and vllm-ascend's
    int8: one byte; an 8-bit MLA cache and other formats: not sized); each NPU at the memory npu-smi shows for it;
    `HCCL_BUFFSIZE` from the server's environment; on a 310P with vllm-ascend 0.18.0rc1 or later, half of what is
    left for operator workspace; in graph mode, at least 1 GiB left above `--gpu-memory-utilization` for the ACL
    graph capture; with FlashComm1, DSA context parallelism, shared-expert DP or MLAPO on, the weights they keep
    whole on every rank as the installed release does it (the deploy/replication rows: shared experts, q_b/kv_b and
    one full o_proj under DSA context parallelism, MLAPO's copy), or, for a release the rows do not cover, that it
    still fits with the most they can keep.

    Why it matters: vLLM stops at start-up when the weights do not fit (`NPU out of memory` while loading) or when
    the KV cache cannot hold one request of max_model_len (`To serve at least one request with the models's max seq
    len (N), (X GiB KV cache is needed, which is larger than the available KV cache memory (Y GiB)`) — after minutes
    of loading.

    How to fix: Use the layout or the `--max-model-len` the finding names (what `ascend-doctor plan` chooses for this
    model and these NPUs), a quantized checkpoint, or more NPUs.
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    if m.config is None:
        return config_unknown(ctx, m)
    cfg = model_config(ctx, m)
    arch = read_architecture(cfg, derived_max_len(text_config(cfg))[0])
    try:
        layout, want, max_len = _options(cmd, arch)
    except ValueError as exc:
        return ctx.fail(T("a numeric option is not a number: {exc}", exc=exc), [cmd_evidence(cmd)])
    arch, spec_tokens, drafted = _speculation(cmd, cfg, arch)
    chips, evidence, why = visible_npus(ctx, cmd)
    if chips is None or not chips:
        return ctx.unknown(T("cannot size against the NPUs: {why}", why=why or T("no NPU visible")), evidence)
    if not max_len:
        return ctx.unknown(T("no --max-model-len and none derived from config.json"), evidence)
    # The rank with the least memory bounds every rank (vLLM sizes the KV cache by the poorest worker).
    used = chips[:max(layout.ranks, 1)] or chips
    poorest = min(used, key=lambda c: c.hbm_total_mb or c.memory_total_mb or 0)
    chip, ws = _chip(poorest, ctx.knowledge.chips), _weights(m, arch)
    release = _release(ctx)
    ws, converted = as_loaded(ws, arch, ctx.knowledge.release_rules, release["vllm_ascend"], chip.family, cfg, cmd,
                              ctx.try_fact("server_env") or {})
    kv_dtype, replaced = _kv_cache_dtype(ctx, cmd, cfg, release["vllm_ascend"], want.kv_cache_dtype)
    evidence += ([ev(T("weights as loaded"), converted)] if converted else []) + replaced
    want = want.model_copy(update={"kv_halved_by": chip.kv_halved_by(release["vllm_ascend"]), **release,
                                   "kv_cache_dtype": kv_dtype,
                                   "spec_tokens": spec_tokens, "page_rules": ctx.knowledge.hybrid_pages,
                                   "dsa_rules": ctx.knowledge.dsa_pages,
                                   "reserve_rules": ctx.knowledge.runtime_reserve,
                                   "hccl_rules": ctx.knowledge.hccl_groups,
                                   **_buffsize(ctx)})
    fmt, options = "bf16" if converted else _format(m, arch), _feature_options(ctx, cmd)
    kept = _kept_whole(ctx, options, arch, fmt, layout.tp, release["vllm_ascend"])
    cand = size(arch, ws, chip, want, layout, max_len, extra=[kept] if kept is not None and kept.bytes else [])
    evidence += ([cmd_evidence(cmd)] + ([drafted] if drafted else [])
                 + _budget_evidence(cand, ws, arch.vision or arch.audio))
    out = _verdict(ctx, arch, ws, chip, want, layout, cand, len(chips), evidence)
    if kept is None:  # the release's behaviour under the switches set is not in the rows: bound it
        out = _replicated(ctx, options, arch, fmt, (layout, want, cand), out, evidence)
    return _graph_headroom(ctx, cmd, cand, want, out, evidence)


def _feature_options(ctx, cmd) -> tuple:
    """((environment, --additional-config, pass_config), kv_role) the replication rules read, parsed once."""
    additional, _ = cmd.json_value("additional_config")
    compilation, _ = cmd.json_value("compilation_config")
    transfer, _ = cmd.json_value("kv_transfer_config")
    role = str(transfer.get("kv_role")) if isinstance(transfer, dict) else None
    return (ctx.try_fact("server_env") or {}, additional, (compilation or {}).get("pass_config")), role


def _kept_whole(ctx, options, arch, fmt: str, tp: int, release):
    """The budget term of the weights the command's features keep whole on every rank, as the installed release
    does it (the deploy/replication rows); a zero term when none is on; None when the release's behaviour under the
    switches set is not in the rows."""
    from ascend_doctor.deploy.budget import Term
    from ascend_doctor.deploy.replication import kept_whole

    command, role = options
    kept = kept_whole(arch, fmt, tp, command, release, ctx.knowledge.replication, kv_role=role)
    if kept is None:
        return None
    return Term(name=T("weights kept whole by {features}", features=", ".join(kept.features) or "-"),
                bytes=kept.bytes, inputs=kept.words)


def _replicated(ctx, options, arch, fmt: str, sized, out, evidence):
    """A command that fits, with features that keep more weights whole per rank than vLLM's sharding
    (deploy/replication.py): still a pass if it fits with the most they can add, said so; else a warning."""
    from ascend_doctor.deploy.kv import ASCEND_BLOCK, capacity
    from ascend_doctor.deploy.replication import bound, features

    layout, want, cand = sized
    if out.status.value != "pass" or cand.capacity is None:
        return out
    on = features(*options[0], arch)
    extra, what = bound(arch, fmt, layout.tp, on)
    if not extra:
        return out
    left = capacity(cand.kv, max(cand.budget.kv_bytes - extra, 0), cand.max_len, ASCEND_BLOCK, want.batched_tokens)
    if left.concurrency >= 1:
        return ctx.ok(T("{message}; at most {extra} more weights per rank under the features on ({what}): still "
                        "about {tokens} tokens", message=out.message, extra=gib(extra), what=what,
                        tokens=left.tokens), evidence)
    return ctx.warn(T("{message}, but the features on may keep up to {extra} more weights on every rank ({what}): "
                      "then the KV cache holds {tokens} tokens, less than one request of --max-model-len {max_len}",
                      message=out.message, extra=gib(extra), what=what, tokens=left.tokens,
                      max_len=cand.max_len), evidence,
                    remediation=T("Lower --max-model-len or raise --gpu-memory-utilization, or check the KV cache size "
                                  "vllm-ascend logs at start-up (`GPU KV cache size`)."))


def _graph_headroom(ctx, cmd, cand, want, out, evidence):
    """A command that fits, in graph mode, with less than GRAPH_HEADROOM left above --gpu-memory-utilization: the
    capture that follows the KV cache has no room (warn; `out` otherwise)."""
    from ascend_doctor.knowledge.serve_features import used

    left = int(cand.budget.visible.bytes * (1 - want.gmu))
    if out.status.value != "pass" or left >= GRAPH_HEADROOM or not used("ACL Graph", cmd, {}, None)[1]:
        return out
    ok = int((1 - GRAPH_HEADROOM / cand.budget.visible.bytes) * 100) / 100
    return ctx.warn(T("{message}; but graph capture runs after the KV cache is allocated, in the {left} "
                      "--gpu-memory-utilization {gmu} leaves, and vllm-ascend has logged up to 0.79 GiB for it "
                      "(vllm-ascend#2959: out of memory while capturing at 1.0)", message=out.message,
                      left=gib(left), gmu=f"{want.gmu:g}"), evidence,
                    remediation=T("Use `--gpu-memory-utilization {ok}` or lower, or `--enforce-eager`.", ok=f"{ok:g}"))


def _verdict(ctx, arch, ws, chip, want, layout, cand, n_chips, evidence):
    b = cand.budget
    weights = b.terms[0]  # budget() lists the weights first
    if weights.bytes > b.requested:
        plan = make_plan(arch, ws, chip, want.model_copy(update={"ranks": max(n_chips, 1), "max_len": None}))
        better = (T("`ascend-doctor plan` chooses {layout} with --max-model-len {max_len} on these {n} NPU(s)",
                    layout=plan.chosen.layout.label(), max_len=plan.chosen.max_len, n=n_chips)
                  if plan.chosen is not None else
                  T("no layout fits on these {n} NPU(s): use a quantized checkpoint or more NPUs", n=n_chips))
        return ctx.fail(T("{layout}: the weights alone take {weights} per rank, more than the {requested} "
                          "--gpu-memory-utilization {gmu} gives", layout=layout.label(), weights=gib(weights.bytes),
                          requested=gib(b.requested), gmu=f"{want.gmu:g}"), evidence, remediation=better)
    if cand.kv.unknown:
        return ctx.unknown(T("the weights fit ({weights} per rank), but the KV cache cannot be sized: {why}",
                             weights=gib(weights.bytes), why=cand.kv.unknown), evidence)
    cap = cand.capacity
    if cap.concurrency >= 1:
        return ctx.ok(T("{layout}: about {tokens} tokens of KV cache per rank, {conc} request(s) of {max_len} tokens "
                        "(estimate)", layout=layout.label(), tokens=cap.tokens, conc=f"{cap.concurrency:.2f}",
                        max_len=cand.max_len), evidence)
    fits = fitting_len(arch, ws, chip, want.model_copy(update={"concurrency": 1}), layout, cand.max_len)
    slack = sum(t.bytes for t in b.terms if t.estimate)
    msg = T("{layout}: the KV cache left ({kv}) holds {tokens} tokens, less than one request of --max-model-len "
            "{max_len}", layout=layout.label(), kv=gib(max(b.kv_bytes, 0)), tokens=cap.tokens, max_len=cand.max_len)
    fix = (T("Use `--max-model-len {fits}` (what `ascend-doctor plan` chooses for this layout), raise "
             "--gpu-memory-utilization, or use more NPUs.", fits=fits) if fits else
           T("Use more NPUs or a quantized checkpoint (`ascend-doctor plan` sizes the options)."))
    needed = cand.max_len * cand.kv.bytes_per_token
    if b.kv_bytes + slack < needed:  # short even if every estimate were zero: vLLM will refuse to start
        return ctx.fail(msg, evidence, remediation=fix, max_model_len_that_fits=fits)
    return ctx.warn(msg + T(" (within the estimated terms: vLLM may still start)"), evidence, remediation=fix,
                    max_model_len_that_fits=fits)
