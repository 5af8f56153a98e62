"""SERVE204: the quantization of the served checkpoint against `--quantization` and what the installed vllm-ascend
detects by itself (the `serve/release-features` table); SERVE211: whether its msModelSlim description names every
layer of the weights beside it."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.knowledge.hardware import families
from ascend_doctor.plugin import check, ev

from ._serve import config_unknown, model_config, model_or_outcome, rejected_name, stack_names


@check("SERVE204", "serve-quantization-flag", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "python"])
def quantization_flag(ctx):
    """An Ascend-quantized checkpoint is served with --quantization ascend (and only such a checkpoint)

    What it checks: a `quant_model_description*.json` in the model directory (msModelSlim output: W8A8,
    W8A8_DYNAMIC, W4A8…), or `quantization_config.quant_method: ascend` in config.json, against `--quantization`.
    Without the flag, a release that detects the msModelSlim description itself passes: vllm-ascend v0.15.0rc1, and
    v0.17.0rc1 on (the `serve/release-features` table, read at the tags; the detection was reverted for
    v0.16.0rc1).

    Why it matters: without `--quantization ascend` a release that does not detect the checkpoint loads the int8
    weights as if they were bf16 and fails on shape/dtype mismatches (or produces garbage); with `--quantization
    ascend` on an unquantized checkpoint vLLM stops with `Cannot find the config file for ascend`.

    How to fix: Add `--quantization ascend` for msModelSlim-quantized weights (e.g. `*-w8a8*` directories) on a
    release that does not detect them; drop it for bf16 weights.
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    cfg = model_config(ctx, m) if m.config is not None else {}
    qc = cfg.get("quantization_config") if isinstance(cfg.get("quantization_config"), dict) else {}
    method = str(qc.get("quant_method") or "") if qc else ""
    ascend_q = bool(m.quant_description_files) or method == "ascend"
    flag = cmd.get("quantization")
    described = T("quant description: {files}", files=", ".join(m.quant_description_files) or T("none"))
    evidence = [ev(f"dir: {m.path}", described
                   + (f" (model_quant_type {m.quant_type})" if m.quant_type else "")
                   + (f"; config.json quantization_config.quant_method: {method}" if method else ""))]
    if flag is not None:
        evidence.append(ev(T("command line"), cmd.source("quantization")))
    kind = m.quant_type or "Ascend-quantized"
    if ascend_q and flag is None and m.quant_description_files:
        found = _detects_modelslim(ctx)
        if found is not None:
            return found
    if ascend_q and flag != "ascend":
        return ctx.fail(T("{path} is an Ascend {kind} checkpoint but {value}", path=m.path, kind=kind,
                          value=T("--quantization is {flag}",
                                  flag=flag) if flag else T("--quantization ascend is not given")),
                        evidence, remediation=T("Add `--quantization ascend` to the vllm serve command line."))
    if flag == "ascend" and not ascend_q:
        if m.config is None:
            return config_unknown(ctx, m, evidence)
        return ctx.fail(T("--quantization ascend but {path} has no quant_model_description.json: vLLM stops with "
                          "`Cannot find the config file for ascend`", path=m.path), evidence,
                        remediation=T("Drop `--quantization ascend` for unquantized (bf16) weights, or point at the "
                                      "msModelSlim output directory."))
    if ascend_q:
        return ctx.ok(T("Ascend {kind} checkpoint served with --quantization ascend", kind=kind), evidence)
    if method:
        return ctx.ok(T("not an Ascend-quantized checkpoint; config.json declares quant_method {method}, which vLLM "
                        "reads from config.json{value}", method=method,
                        value=T(" (--quantization {flag})", flag=flag) if flag else ''), evidence)
    return ctx.ok(T("unquantized checkpoint{value}", value=T(", --quantization {flag}", flag=flag) if flag else ''),
                  evidence)


def _detects_modelslim(ctx):
    """The outcome when the installed vllm-ascend detects an msModelSlim checkpoint itself (pass) or cannot be told
    (unknown); None when it does not, so the missing flag is a failure."""
    dist = ctx.fact("python").dist("vllm-ascend")
    features = ctx.knowledge.release_features
    row = features.row("modelslim-autodetect")
    if dist is None:
        return ctx.unknown(T("whether --quantization ascend is needed depends on the vllm-ascend release (it "
                             "detects msModelSlim checkpoints itself in {ranges}), and vllm-ascend is not installed in "
                             "the serving python", ranges=" or ".join(row.vllm_ascend)))
    has = features.has("modelslim-autodetect", dist.version)
    evidence = [ev("matrix: serve/release-features modelslim-autodetect", f"{' or '.join(row.vllm_ascend)}: "
                   f"{row.says}\nsource: {'; '.join(row.source)}")]
    if has is None:
        return ctx.unknown(T("vllm-ascend {version} cannot be compared with the releases that detect msModelSlim "
                             "checkpoints ({ranges})", version=dist.version, ranges=" or ".join(row.vllm_ascend)),
                           evidence)
    if has:
        return ctx.ok(T("msModelSlim checkpoint without --quantization: vllm-ascend {version} detects "
                        "quant_model_description.json and sets --quantization ascend itself", version=dist.version),
                      evidence)
    return None


@check("SERVE211", "serve-quant-description-coverage", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "python", "npu_smi", "vllm_files"])
def quant_description_coverage(ctx):
    """The msModelSlim description names every layer of the weights beside it

    What it checks: the tensor entries of `quant_model_description.json` against the checkpoint's `.weight` tensors
    (its `*.safetensors.index.json`, or each shard's safetensors header), after the renames vllm-ascend applies.
    msModelSlim writes every saved tensor to both, so a gap means the description was written for other weights or
    by another tool. What a gap does depends on the layer and the installed release (the `serve/release-features`
    rows, read at the tags): a shard of a fused layer (q/k/v_proj, gate/up_proj, an expert) is looked up with `[]`
    in every release (fail); another layer of a decoder block too up to v0.27.1rc1 (fail), while from v0.28.0rc1 it
    is built unquantized (warn: int8 weights then load into a BF16 layer); the embedding and lm_head in
    v0.9.1rc2-v0.22.1rc1 and v0.24.0rc1-v0.27.1rc1 (fail), not on 310P from v0.15.0rc1; the MTP layers only with an
    MTP `--speculative-config`. Norms are never looked up. A MoE layer the description names only by its experts'
    shards (`….experts.0.gate_proj.weight`) is looked up as `<layer>.experts.weight` unless the release maps the
    model type's experts (its `packed_modules_model_mapping`, 0.11.0rc0-0.27.1rc1: the `quant_fused_experts` names
    of `serve/names-vllm-ascend`, read from each sdist); 0.28.0rc1 on find the shards in the description.

    Why it matters: vllm-ascend stops loading with `KeyError: 'model.layers.0.self_attn.q_proj.weight'` from
    `self.quant_description[...]` (vllm-ascend#3520, a GLM-4.6 INT8 checkpoint — the maintainer: "maybe it's an issue
    with the weights"; #876 Qwen2.5-7B W8A8; #5564 DeepSeek-R1-Distill-Llama-70B int8); msModelSlim leaves the MTP
    layer out of the description (vllm-ascend's own note in its quantization config), which stops MTP serving the
    same way (#5794: GLM-4.7 W8A8, `KeyError: 'model.layers.92.self_attn.q_proj.weight'`, its MTP layer). A model
    type the release does not map stops on its first MoE layer: `KeyError: 'model.layers.1.mlp.experts.weight'`
    (#3785, Kimi-K2, fixed by adding `kimi_k2` to the mapping; DeepSeek-V3.2-Exp, #4797).

    How to fix: serve the weights with the description msModelSlim wrote for them in the same run; quantize a
    checkpoint made by another tool again with msModelSlim (or serve it in its own format); add the MTP layer's
    weights to the description as "FLOAT", or serve without MTP; install a release that maps the model type's
    experts.
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    if not m.quant_description_files:
        return ctx.skip(T("{path} has no quant_model_description.json: not an msModelSlim checkpoint", path=m.path))
    flag = cmd.get("quantization")
    if flag not in (None, "ascend"):
        return ctx.skip(T("--quantization {flag}: the msModelSlim description is not read (SERVE204 judges the "
                          "flag)", flag=flag))
    cov, mtp = m.quant_coverage, _mtp_method(cmd)
    verdicts = _gap_verdicts(ctx, cov, mtp) if cov is not None else {}
    experts = _experts_verdict(ctx, m)
    if experts:
        verdicts["experts"] = experts
    why_not = m.quant_coverage_why_not or T("not read")
    evidence = [ev(f"dir: {m.path}", _coverage_text(cov) if cov is not None else why_not)]
    if mtp:
        evidence.append(ev(T("command line"), cmd.source("speculative_config")))
    worst = max((v[0] for v in verdicts.values()), default="pass", key=_RANK.get)
    described = T("{file} names {described} tensors; the checkpoint has {weights} weights ({files})",
                  file=cov.description, described=cov.described, weights=cov.weights,
                  files=", ".join(cov.weights_from)) if cov is not None else T(
        "whether {file} names every weight of the checkpoint is not known: {why}", file=m.quant_description_files[0],
        why=why_not)
    notes = [v[1] for v in verdicts.values() if v[0] == "pass" and v[1]]
    if cov is None and worst != "fail":
        return ctx.unknown(described + "".join(f"; {v[1]}" for v in verdicts.values() if v[1]), evidence,
                           cause=why_not)
    if worst == "pass":
        return ctx.ok(described + (T("; without an entry: {notes}", notes="; ".join(notes)) if notes else ""),
                      evidence)
    said = "; ".join(v[1] for v in verdicts.values() if v[0] == worst)
    first = next(v[2] for v in verdicts.values() if v[0] == worst)
    msg = T("{described}. {said}", described=described, said=said)
    fix = _coverage_fix(ctx, verdicts, worst)
    if worst == "fail":
        return ctx.fail(msg + T(": loading stops with a KeyError (e.g. KeyError: '{name}')", name=first), evidence,
                        remediation=fix)
    return ctx.warn(msg, evidence, remediation=fix)


_RANK = {"pass": 0, "warn": 1, "fail": 2}


def _mtp_method(cmd) -> Optional[str]:
    """The MTP method of --speculative-config when its layers come from the served checkpoint, else None."""
    spec, _ = cmd.json_value("speculative_config")
    method = spec.get("method") if isinstance(spec, dict) else None
    draft = spec.get("model") if isinstance(spec, dict) else None
    if isinstance(method, str) and method.endswith("mtp") and draft in (None, "", cmd.model):
        return method
    return None


def _feature(ctx, fid: str) -> Optional[bool]:
    dist = ctx.fact("python").dist("vllm-ascend")
    return ctx.knowledge.release_features.has(fid, dist.version) if dist is not None else None


def _ranges(ctx, fid: str) -> str:
    """The releases a `serve/release-features` row holds for, as the row gives them."""
    return " or ".join(ctx.knowledge.release_features.row(fid).vllm_ascend)


def _release(ctx) -> str:
    dist = ctx.fact("python").dist("vllm-ascend")
    return T("vllm-ascend {version}", version=dist.version) if dist is not None else T("the vllm-ascend release")


def _gap_verdicts(ctx, cov, mtp: Optional[str]) -> dict:
    """kind -> (pass | warn | fail, the sentence saying what the release does with the gap, the first name)."""
    out = {}
    rel = _release(ctx)
    for kind, names in cov.missing.items():
        n, shown = cov.counts.get(kind, len(names)), ", ".join(names) + (", …" if cov.counts.get(kind, 0) > len(names)
                                                                           else "")
        if kind in ("mtp_shard", "mtp_layer") and not mtp:
            out[kind] = ("pass", T("{n} weights of the MTP layers ({names}), which are loaded only with an MTP "
                                   "--speculative-config", n=n, names=shown), names[0])
            continue
        out[kind] = (*_gap(ctx, kind.replace("mtp_", ""), rel, n, shown), names[0])
    return out


def _experts_verdict(ctx, m) -> Optional[tuple]:
    """(verdict, sentence, the key looked up) for a description that names a MoE layer only by its experts' shards,
    judged by the release's `quant_fused_experts` list (serve/names-vllm-ascend, or the installed files); None when
    the description names no such layer or the model type is not known."""
    layer = m.quant_per_expert
    cfg = m.config if isinstance(m.config, dict) else {}
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else {}
    top, inner = cfg.get("model_type"), text.get("model_type")
    if not layer or not isinstance(top, str):
        return None
    names = stack_names(ctx)
    listed = names.listed("vllm-ascend", "quant_fused_experts")
    # most releases read hf_config.model_type, 0.13.0rc2-0.13.0 hf_text_config's: either one mapped is enough
    name = inner if listed is not None and listed.names and inner in listed.names else top
    v = names.judge("quant_fused_experts", name, ("vllm-ascend",))
    if v.known is not False:
        return None
    said = rejected_name(v, "config.json", "model_type", "quant_fused_experts")
    if any(x.how in ("nearest older", "paired") for x in v.lists):
        return "warn", said + T(" (judged against the nearest recorded release)"), layer + ".weight"
    return "fail", said + T("; it looks {key} up in the description, which names each expert's shards "
                            "({layer}.0.…)", key=layer + ".weight", layer=layer), layer + ".weight"


def _gap(ctx, base: str, rel: str, n: int, shown: str) -> tuple[str, str]:
    if base == "shard":
        return "fail", T("{n} shards of fused layers have no entry ({names}); every vllm-ascend release looks each "
                         "shard up with []", n=n, names=shown)
    if base == "layer":
        unq = _feature(ctx, "modelslim-absent-layer-unquantized")
        if unq is False:
            return "fail", T("{n} layer weights have no entry ({names}); {release} looks each one up with []",
                             n=n, names=shown, release=rel)
        return "warn", T("{n} layer weights have no entry ({names}); {release} {does}", n=n, names=shown, release=rel,
                         does=T("builds such a layer unquantized, so int8 weights fail to load or answer wrongly")
                         if unq else T("builds such a layer unquantized in vllm-ascend {ranges} and looks it up "
                                       "with [] before (a KeyError)",
                                       ranges=_ranges(ctx, "modelslim-absent-layer-unquantized")))
    if base == "embedding":
        fams = families(ctx.try_fact("npu_smi"))
        looked = _feature(ctx, "modelslim-embedding-lookup")
        if looked and fams and set(fams) == {"310P"} and _feature(ctx, "modelslim-310p-embedding-unquantized"):
            looked = False
        if looked is None:
            return "warn", T("{n} embedding weights have no entry ({names}); whether {release} looks them up is not "
                             "known (vllm-ascend {ranges} do, with [])", n=n, names=shown, release=rel,
                             ranges=_ranges(ctx, "modelslim-embedding-lookup"))
        if looked:
            return "fail", T("{n} embedding weights have no entry ({names}); {release} looks them up with []", n=n,
                             names=shown, release=rel)
        return "pass", T("{n} embedding weights ({names}), which {release} builds unquantized", n=n, names=shown,
                         release=rel)
    return "warn", T("{n} weights outside the model's layers have no entry ({names}); vllm-ascend looks each "
                     "linear layer's weight up", n=n, names=shown)


def _coverage_text(cov) -> str:
    kinds = ", ".join(f"{k}: {v}" for k, v in sorted(cov.counts.items()))
    return (f"{cov.description}: {cov.described} tensor entries\n"
            f"weights ({', '.join(cov.weights_from)}): {cov.weights} .weight tensors\n"
            f"without an entry: {kinds or 'none'}")


def _coverage_fix(ctx, verdicts: dict, worst: str) -> str:
    kinds = {k for k, v in verdicts.items() if v[0] == worst}
    fixes = []
    if "experts" in kinds:
        ends = ctx.knowledge.release_names["vllm-ascend"].list_ends("quant_fused_experts")
        fixes.append(T("install a vllm-ascend release that maps the model type's experts (the finding names the "
                       "first)") + (T(", or {version} or later, which finds the experts' shards in the description "
                                      "itself", version=ends) if ends else ""))
        kinds.discard("experts")
    if kinds & {"mtp_shard", "mtp_layer"}:
        fixes.append(T("add the MTP layers' weights to quant_model_description.json with the value \"FLOAT\" "
                       "(msModelSlim leaves them out), or serve without the MTP --speculative-config"))
    if kinds - {"mtp_shard", "mtp_layer"}:
        fixes.append(T("serve the weights with the quant_model_description.json msModelSlim wrote for them in the "
                       "same run; a checkpoint quantized by another tool is not an msModelSlim checkpoint: quantize "
                       "the BF16 weights with msModelSlim, or serve it in its own format without --quantization "
                       "ascend"))
    text = "; ".join(fixes)
    return text[:1].upper() + text[1:] + "."
