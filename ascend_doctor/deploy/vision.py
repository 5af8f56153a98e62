"""Vision towers, counted from `vision_config` as vLLM builds them: their weights sit whole on every rank (vLLM does
not shard most encoders by TP; vllm-ascend#4074 loads 8.50 GiB per rank for Qwen3-VL-8B at TP2), so a plan that leaves
them out is optimistic by the tower on every rank. A tower of a shape not read here counts 0, and the weights say
"the vision encoder not counted"."""

from __future__ import annotations

from ascend_doctor.deploy.configread import first_int as _int
from ascend_doctor.i18n import T

# vision_config model_type values whose encoder is a CLIP-style ViT: pre-norm blocks of fused-width qkv and output
# projections with biases, a two-matrix MLP with biases, two LayerNorms; a patch convolution and a learnable
# position table (transformers' CLIPVisionTransformer, SiglipVisionTransformer, InternVisionModel). With a class
# token: CLIP and InternViT.
CLIP_STYLE = {"clip_vision_model": True, "siglip_vision_model": False, "siglip2_vision_model": False,
              "intern_vit_6b": True}


# vLLM's profile run for a multimodal model (gpu_model_runner.py `profile_run`, "Profile with multimodal encoder &
# encoder cache"): a dummy batch of the largest inputs the processor accepts runs through the encoder, and the outputs
# stay cached while the language model's dummy batch runs. Its size follows preprocessor_config.json (the largest
# image) and the encoder's attention kernel, which the catalogue does not carry: said, not guessed.
ENCODER_PROFILE_NOTE = T(
    "not in this budget: the multimodal encoder's profile run (vLLM runs a dummy batch of the largest inputs the "
    "processor accepts, images or audio, through the encoder and keeps its outputs while profiling), so the KV "
    "cache vllm-ascend allocates is smaller by that peak (vllm-ascend#4074, Qwen3-VL-8B at TP2: 0.6 GiB per rank "
    "beyond the terms counted here)")


def clip_style_params(v: dict) -> int:
    """A CLIP-style tower: `num_hidden_layers` × (4h² + 4h + 2h·I + I + h + 4h), the patch convolution C·p²·h + h,
    the positions ((image_size / patch_size)² (+1 with a class token)) × h, the class token and a final LayerNorm.
    SigLIP2 gives its position table as `num_patches`. 0 when a size is missing."""
    h, inter = _int(v, "hidden_size"), _int(v, "intermediate_size")
    depth, patch = _int(v, "num_hidden_layers"), _int(v, "patch_size")
    if not (0 < depth <= 1024 and 0 < h <= 1 << 15 and 0 < inter <= 1 << 17 and 0 < patch <= 1024):
        return 0
    cls = CLIP_STYLE.get(str(v.get("model_type")), False)
    image, channels = _int(v, "image_size"), _int(v, "num_channels", default=3)
    positions = _int(v, "num_patches") or (image // patch) ** 2
    if not (0 < positions <= 1 << 20 and 0 < channels <= 16):  # a hand-edited config: not counted
        return 0
    block = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h
    embed = channels * patch * patch * h + h + (positions + cls) * h + cls * h
    return depth * block + embed + 2 * h


def vision_params(v: dict, text_hidden: int = 0) -> tuple[int, bool]:
    """Parameters of the vision tower `vision_config` describes: MoonViT (Kimi-K2.5, `vt_*` keys), a CLIP/SigLIP/
    InternViT-style encoder or Mistral3's Pixtral (by its `model_type`; the projector into the language model not
    counted — `partial`), or a Qwen-VL-style ViT; (0, False) when its shape is not one of these."""
    if "vt_hidden_size" in v:
        return moonvit_params(v, text_hidden), False
    if v.get("model_type") in CLIP_STYLE:
        return clip_style_params(v), True
    if v.get("model_type") == "pixtral":
        return pixtral_params(v), True
    return qwen_vit_params(v), False


def pixtral_params(v: dict) -> int:
    """Mistral3's Pixtral tower (transformers' PixtralVisionModel, vLLM's PixtralHFVisionModel): the patch
    convolution without bias (C·p²·h) and a pre-norm, then `num_hidden_layers` blocks of two RMSNorms, q/k/v/o without
    bias (heads × head_dim wide) and a gated MLP without bias (3·h·I). Rotary positions: no table. 0 when a size is
    missing."""
    h, inter = _int(v, "hidden_size"), _int(v, "intermediate_size")
    depth, patch = _int(v, "num_hidden_layers"), _int(v, "patch_size")
    width = _int(v, "num_attention_heads") * _int(v, "head_dim") or h
    if not (0 < depth <= 1024 and 0 < h <= 1 << 15 and 0 < inter <= 1 << 17 and 0 < patch <= 1024
            and 0 < width <= 1 << 17):
        return 0
    block = 2 * h + 4 * h * width + 3 * h * inter
    return depth * block + _int(v, "num_channels", default=3) * patch * patch * h + h


def moonvit_params(v: dict, text_hidden: int) -> int:
    """Kimi-K2.5's MoonViT after vLLM 0.34.0 `kimi_k25_vit.py`: the patch convolution (with bias) and the learnable
    `init_pos_emb_height × init_pos_emb_width` position table, `vt_num_hidden_layers` blocks (two LayerNorms, fused
    qkv and output projections with biases, a two-matrix MLP with biases), a final LayerNorm, and the patch-merger
    projector (LayerNorm, (h·m)² and h·m × the language model's hidden, with biases; m = the merge kernel's area).
    0 when a size is missing."""
    h, depth, inter = _int(v, "vt_hidden_size"), _int(v, "vt_num_hidden_layers"), _int(v, "vt_intermediate_size")
    out = _int(v, "text_hidden_size", default=text_hidden)
    kernel = v.get("merge_kernel_size")
    merge = kernel[0] * kernel[1] if (isinstance(kernel, list) and len(kernel) == 2
                                      and all(isinstance(k, int) and 0 < k <= 16 for k in kernel)) else 0
    height, width, patch_size = (_int(v, "init_pos_emb_height"), _int(v, "init_pos_emb_width"),
                                 _int(v, "patch_size"))
    if not (0 < depth <= 1024 and 0 < h <= 1 << 15 and 0 < inter <= 1 << 17 and 0 < out <= 1 << 17 and merge
            and 0 <= height <= 4096 and 0 <= width <= 4096 and 0 < patch_size <= 1024):
        return 0
    patch = 3 * patch_size ** 2 * h + h
    positions = height * width * h
    block = 4 * h + (3 * h * h + 3 * h) + (h * h + h) + (h * inter + inter + inter * h + h)
    merged = h * merge
    projector = 2 * h + merged * merged + merged + merged * out + out
    return patch + positions + depth * block + 2 * h + projector


def qwen_vit_params(v: dict) -> int:
    """Parameters of a Qwen-VL-style vision tower (Qwen2-VL, Qwen2.5-VL, Qwen3-VL and the ViTs shaped like them):
    `depth` blocks of attention (qkv + proj, with biases) and an MLP (gated for silu, else two matrices), the patch
    and position embeddings, and the patch mergers (one, plus one per deepstack index: (h·m²)² + h·m²·out each).
    0 when vision_config does not give depth, hidden_size and intermediate_size."""
    depth, h, inter = (_int(v, "depth"), _int(v, "hidden_size", "embed_dim"), _int(v, "intermediate_size"))
    out = _int(v, "out_hidden_size", default=h)
    ratio = v.get("mlp_ratio")
    if "embed_dim" in v and isinstance(ratio, (int, float)) and not isinstance(ratio, bool) and 0 < ratio <= 64:
        # Qwen2-VL: the blocks are `embed_dim` wide with an MLP of mlp_ratio × that; hidden_size is the merger's output
        h, out = _int(v, "embed_dim"), _int(v, "hidden_size")
        inter = int(h * ratio)
    if not (0 < depth <= 1024 and 0 < h <= 1 << 15 and 0 < inter <= 1 << 17 and 0 < out <= 1 << 17):
        return 0
    mlp = (3 if v.get("hidden_act") == "silu" else 2) * h * inter + inter + h
    block = 4 * h * h + 4 * h + mlp + 4 * h
    patch = _int(v, "in_channels", default=3) * _int(v, "temporal_patch_size", default=1) * _int(v, "patch_size") ** 2
    merged = h * _int(v, "spatial_merge_size", default=1) ** 2
    deepstack = v.get("deepstack_visual_indexes")
    mergers = 1 + (len(deepstack) if isinstance(deepstack, list) else 0)
    return (depth * block + patch * h + _int(v, "num_position_embeddings") * h
            + mergers * (merged * merged + merged * out + 2 * merged))
