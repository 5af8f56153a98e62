"""SERVE204: the quantization of the served checkpoint against `--quantization` and what the installed vllm-ascend
detects by itself (the `serve/release-features` table)."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev

from ._serve import config_unknown, model_config, model_or_outcome


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
