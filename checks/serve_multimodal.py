"""SERVE208: a multimodal model's serving needs — the audio libraries an audio model's inputs go through, and
multimodal options on a text-only model."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev

from ._serve import config_unknown, model_or_outcome

AUDIO_KEYS = ("audio_config", "audio_encoder_config", "speech_config", "whisper_config")
VISION_KEYS = ("vision_config", "visual", "vision_tower", "vit_config", "image_encoder_config")
# vLLM's audio inputs are decoded and resampled with librosa (vllm/multimodal/audio.py; the `vllm[audio]` extra).
AUDIO_LIBS = ("librosa", "soundfile")


def _modalities(cfg: dict) -> list[str]:
    found = []
    if any(isinstance(cfg.get(k), dict) for k in VISION_KEYS):
        found.append("image")
    if any(isinstance(cfg.get(k), dict) for k in AUDIO_KEYS) or "audio" in str(cfg.get("model_type") or ""):
        found.append("audio")
    return found


@check("SERVE208", "serve-multimodal", severity="warning", stage="serve", needs=["serve_cmd", "serve_model", "python"])
def multimodal(ctx):
    """An audio model has its audio libraries; multimodal options go to a multimodal model

    What it checks: from config.json, whether the model takes images (`vision_config`, …) or audio (`audio_config`,
    …); for audio, that `librosa` and `soundfile` are installed in the serving Python; for a text-only model, that
    `--limit-mm-per-prompt` is not given.

    Why it matters: audio requests stop with `ImportError: Please install vllm[audio] for audio support` (vllm#13912,
    #23232; vllm-ascend FAQ 16 for Qwen-Omni). `--limit-mm-per-prompt` on a text-only model is refused
    (`limit_mm_per_prompt is only supported for multimodal models`, zai-org/GLM-V#15) or silently does nothing, and
    an image sent to it fails (vllm-ascend#10426).

    How to fix: `pip install 'vllm[audio]'` (librosa, soundfile) or, for Qwen-Omni, `pip install qwen-omni-utils`;
    drop `--limit-mm-per-prompt` for a text-only model (or serve the VL variant).
    """
    cmd, m, out = model_or_outcome(ctx)
    if out:
        return out
    if m.config is None:
        return config_unknown(ctx, m)
    kinds = _modalities(m.config)
    evidence = [ev(f"file: {m.path}/config.json", T("inputs besides text: {kinds}", kinds=", ".join(kinds) or "-"))]
    if not kinds:
        if cmd.has("limit_mm_per_prompt"):
            evidence.append(ev(T("command line"), cmd.source("limit_mm_per_prompt")))
            return ctx.warn(T("--limit-mm-per-prompt is given for {path}, whose config.json names no image or audio "
                              "encoder: vLLM refuses it for a text-only model (`limit_mm_per_prompt is only supported "
                              "for multimodal models`) or ignores it", path=m.path), evidence,
                            remediation=T("Drop --limit-mm-per-prompt, or serve the model's multimodal (VL) variant."))
        return ctx.skip(T("a text-only model: no multimodal inputs to prepare for"), evidence)
    if "audio" in kinds:
        py = ctx.try_fact("python")
        if py is None or not py.ok:
            return ctx.unknown(T("an audio model, but the serving Python's packages are not known"), evidence)
        missing = [lib for lib in AUDIO_LIBS if py.dist(lib) is None]
        evidence.append(ev("python: audio libraries", ", ".join(f"{lib} {'missing' if lib in missing else 'found'}"
                                                                for lib in AUDIO_LIBS)))
        if missing:
            return ctx.warn(T("{path} takes audio, but the serving Python has no {missing}: audio requests stop with "
                              "`ImportError: Please install vllm[audio] for audio support`", path=m.path,
                              missing=", ".join(missing)), evidence,
                            remediation=T("`pip install 'vllm[audio]'` in the serving environment (librosa, "
                                          "soundfile); for Qwen-Omni `pip install qwen-omni-utils`."))
    return ctx.ok(T("a model taking {kinds}: its libraries are installed", kinds=", ".join(kinds)), evidence)
