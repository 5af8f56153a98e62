"""A model's architecture as the deployment model needs it, read from its config.json.

What is read and why: the attention kind decides the KV-cache formula (GQA/MHA: K and V per KV head; MLA: one latent
of `kv_lora_rank + qk_rope_head_dim`, after vllm `get_head_size()`), the heads decide which tensor-parallel sizes
vLLM accepts (`Total number of attention heads (N) must be divisible by tensor parallel size (T)`), the MoE fields
decide what expert parallelism shards, sliding windows bound a layer's KV per request, Gated DeltaNet layers keep a
state per request (deploy/hybrid.py). A config this model cannot size (other linear-attention/Mamba states, an
undeclared window pattern, MLA without its ranks) is said in `cannot_size` — never sized as if it were plain
attention (kvfit's rule: refuse rather than guess).
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.configread import first_int as _int
from ascend_doctor.deploy.configread import opt_int as _opt_int
from ascend_doctor.deploy.hybrid import GDN_MODEL_TYPES
from ascend_doctor.deploy.vision import vision_params
from ascend_doctor.i18n import Localized, T

# The language model's model_type values vLLM treats as DeepSeek-style MLA when `kv_lora_rank` is set — it asks the
# text config (`hf_text_config.model_type`), so Kimi-K2.5's `kimi_k25` wrapper around a `kimi_k2` model is MLA
# (vllm/transformers_utils/model_arch_config_convertor.py `is_deepseek_mla`: 0.13.0, and the additions of 0.34.0
# except the compressed DeepSeek-V4 types, which `_UNSIZED_LAYOUT` refuses; deploy-facts.md §4b).
MLA_MODEL_TYPES = frozenset({"deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_mtp", "kimi_k2", "kimi_linear",
                             "glm_moe_dsa", "glm4_moe_lite", "longcat_flash", "pangu_ultra_moe",
                             "axk1", "dots3_note", "k3_dspark", "glm5_next", "glm5_next_text", "glm4_moe_lite_mtp",
                             "mistral_large_4", "pangu_ultra_moe_mtp", "hy_v4", "hy_v4_mtp"})
# Families that alternate sliding and full layers by a rule the config does not spell out as `layer_types`: model_type
# -> (the config key of the period, its default). Layer i is full attention when (i + 1) % period == 0, else sliding —
# what transformers' config classes derive when `layer_types` is absent (5.19.0: gemma2/configuration_gemma2.py
# period 2, gemma3/configuration_gemma3.py `sliding_window_pattern` 6, cohere2/configuration_cohere2.py
# `sliding_window_pattern` 4) and what vLLM's older model files computed themselves (gemma2.py `not layer_idx % 2`).
_IMPLICIT_WINDOW_PATTERN = {"gemma2": ("", 2), "gemma3": ("sliding_window_pattern", 6),
                            "gemma3_text": ("sliding_window_pattern", 6), "cohere2": ("sliding_window_pattern", 4)}
# Families whose config class ties the LM head to the embedding when config.json leaves `tie_word_embeddings` out
# (transformers 5.19.0 configuration_gemma*.py, configuration_cohere*.py: `tie_word_embeddings: bool = True`; vLLM's
# Gemma2/Gemma3 models have no LM head of their own).
_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "cohere", "cohere2"})
DTYPE_BYTES = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2, "half": 2, "fp8": 1, "float8_e4m3fn": 1}


class Architecture(Model):
    """What sizing needs from config.json; every count is per model (not per rank)."""

    model_type: str = ""
    architectures: list[str] = Field(default_factory=list)
    layers: int = 0
    hidden: int = 0
    vocab: int = 0
    tie_embeddings: bool = False
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    attention: str = Field("gqa", description="gqa (incl. MHA/MQA), mla, or unknown")
    attention_bias: bool = False
    qk_norm: bool = Field(False, description="per-head RMSNorm on q and k (Qwen3): 2 × head_dim weights a layer")
    # MLA (DeepSeek-V2/V3, Kimi-K2 …)
    q_lora_rank: Optional[int] = None
    kv_lora_rank: Optional[int] = None
    qk_rope_head_dim: Optional[int] = None
    qk_nope_head_dim: Optional[int] = None
    v_head_dim: Optional[int] = None
    index_head_dim: int = Field(0, description="DSA (DeepSeek-V3.2, GLM-5): the indexer's key per token and layer, "
                                               "cached beside the latent")
    index_heads: int = Field(0, description="DSA: the indexer's query heads (index_n_heads)")
    # Feed-forward: dense layers and MoE layers
    intermediate: int = 0
    experts: int = 0
    experts_per_token: int = 0
    expert_intermediate: int = 0
    shared_intermediate: int = 0
    moe_layers: int = 0
    # Attention layer kinds: full, sliding (with its window), linear (a state per request: Gated DeltaNet is sized)
    full_layers: int = 0
    sliding_layers: int = 0
    sliding_window: Optional[int] = None
    linear_layers: int = 0
    linear_key_dim: int = Field(0, description="Gated DeltaNet: key heads × key head dim (Qwen3-Next)")
    linear_value_dim: int = Field(0, description="Gated DeltaNet: value heads × value head dim")
    linear_value_heads: int = 0
    linear_key_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = 0
    ssm_dtype: Optional[str] = Field(None, description="config.json mamba_ssm_dtype: the recurrent state's dtype "
                                                       "(Qwen3.5: float32); None: the model's")
    vision: bool = Field(False, description="a vision encoder (vision_config)")
    vision_params: int = Field(0, description="its parameters where vision_config sizes a ViT (0: not counted)")
    audio: bool = Field(False, description="an audio encoder (audio_config), not counted in the weights")
    vision_projector_counted: bool = Field(True, description="False: the tower is counted, the projector into the "
                                                             "language model is not (CLIP-style towers)")
    nextn_layers: int = 0
    mtp_run: int = Field(0, description="of `layers`, the MTP layers an MTP --speculative-config runs beside the "
                                        "model (with_mtp): each also has its input projection (deploy/weights.py)")
    max_len: Optional[int] = None
    dtype: Optional[str] = None
    quant_method: Optional[str] = None
    cannot_size: list[Localized] = Field(default_factory=list, description="why the KV cache cannot be sized")

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def dtype_bytes(self) -> Optional[int]:
        return DTYPE_BYTES.get((self.dtype or "").lower())

    @property
    def ssm_dtype_bytes(self) -> Optional[int]:
        return DTYPE_BYTES.get((self.ssm_dtype or "").lower())


# Where composite models nest their language model's config, in the order their `get_text_config` looks: the
# generic `text_config` (Qwen-VL, Llama-4, Gemma-3), Qwen2.5/3-Omni's `thinker_config` (itself holding a
# `text_config`), DeepSeek-VL2/OCR's `language_config`, InternVL's `llm_config`.
NESTED_TEXT = ("text_config", "thinker_config", "language_config", "llm_config")


# What a composite model's config class fills into its nested language-model config when config.json leaves a key
# out (the config class of the nested `model_type`, transformers 5.19.0: gemma3/configuration_gemma3.py
# Gemma3TextConfig, qwen2/configuration_qwen2.py Qwen2Config, which Qwen2-Audio's text_config is built as). Published
# configs rely on them: google/gemma-3-4b-it's text_config gives no heads, Qwen2-Audio-7B's no layers or heads. Only
# the sizing keys; applied to nested configs only (a top-level config.json is read as written).
NESTED_DEFAULTS = {
    "gemma3_text": {"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "max_position_embeddings": 131072, "sliding_window": 4096},
    "qwen2": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 32768},
}


def text_config(cfg: dict, depth: int = 0) -> dict:
    """The language model's config (vLLM's hf_text_config): the first nested config of NESTED_TEXT, unwrapped again
    (a thinker's own text_config), with its config class's defaults (NESTED_DEFAULTS) under what it gives; the config
    itself for a text-only model."""
    for key in NESTED_TEXT:
        t = cfg.get(key)
        if isinstance(t, dict):
            inner = text_config(t, depth + 1) if depth < 3 else t
            defaults = NESTED_DEFAULTS.get(str(inner.get("model_type"))) if inner is t else None
            return {**defaults, **inner} if defaults else inner
    return cfg


LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
             "max_sequence_length", "max_seq_length", "seq_len")


def derived_max_len(cfg: dict) -> tuple[Optional[int], str, list[str]]:
    """(longest context vLLM derives from the config, the key it came from, rope fields used) — after
    vllm/config/model.py `_get_and_verify_max_len` (0.13.0): the smallest length key, times the rope `factor` (yarn:
    applied to `original_max_position_embeddings`), except for su/longrope/llama3 scaling and Gemma 3, whose length
    is already scaled (`"gemma3" not in hf_config.model_type`, there since vLLM's Gemma 3 support)."""
    present = [(cfg[k], k) for k in LEN_KEYS if isinstance(cfg.get(k), (int, float)) and not isinstance(cfg[k], bool)
               and 0 < cfg[k] < 1e12]  # a hand-edited Infinity or 1e400 is no length
    if not present:
        return None, "", []
    base, key = min(present)
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    fields: list[str] = []
    derived = float(base)
    if isinstance(rope, dict) and "gemma3" not in str(cfg.get("model_type") or ""):
        rtype = rope.get("rope_type") or rope.get("type")
        factor = rope.get("factor")
        if rtype not in ("su", "longrope", "llama3") and isinstance(factor, (int, float)) and 0 < factor < 1e6:
            fields.append(f"rope_scaling.rope_type={rtype}")
            if rtype == "yarn" and isinstance(rope.get("original_max_position_embeddings"), (int, float)):
                derived = float(rope["original_max_position_embeddings"])
                fields.append(f"rope_scaling.original_max_position_embeddings={int(derived)}")
            derived *= factor
            fields.append(f"rope_scaling.factor={factor}")
    return int(derived), f"{key}={int(base)}", fields


def mtp_layers(cfg: dict) -> Optional[int]:
    """The checkpoint's MTP layers (`mtp_num_hidden_layers` of Qwen3.5/Next, `num_nextn_predict_layers` of
    DeepSeek/GLM, or its transformers 5 name `num_mtp_layers`), in the text config or the top level; None when
    config.json names none."""
    tc = text_config(cfg)
    for key in ("mtp_num_hidden_layers", "num_nextn_predict_layers", "num_mtp_layers"):
        for source in (tc, cfg):
            if isinstance(source.get(key), int):
                return source[key]
    return None


def with_mtp(a: Architecture, n: int) -> Architecture:
    """The model as the engine runs it with `n` MTP layers drafting (an MTP --speculative-config without a draft
    model): each is a decoder layer of the model's kind beside it — it caches K and V like one (vllm-ascend#6847:
    GLM-5's 78 layers + 1 MTP layer give the logged tokens) and, on a MoE model, has its own experts."""
    return a.model_copy(update={"layers": a.layers + n, "full_layers": a.full_layers + n, "mtp_run": a.mtp_run + n,
                                "moe_layers": a.moe_layers + (n if a.is_moe else 0)})


# The largest value each count of a real checkpoint's config.json takes, with room to spare (the deepest public models
# have ~200 layers, the widest hidden sizes ~25k, the largest vocabularies ~260k tokens, MoE models ≤ 512 experts).
# A config.json beyond them (hand-edited, hostile: `num_hidden_layers` 10**12 made plan loop for ~39 h, #40 item 8)
# is not sized: the field is named in `cannot_size` and read as 0, so no loop runs over it.
LIMITS = {"layers": 4096, "hidden": 1 << 17, "vocab": 1 << 24, "intermediate": 1 << 20, "heads": 4096,
          "kv_heads": 4096, "head_dim": 1 << 14, "experts": 1 << 14, "experts_per_token": 1 << 10,
          "expert_intermediate": 1 << 20, "shared_intermediate": 1 << 20, "moe_layers": 4096, "full_layers": 4096,
          "sliding_layers": 4096, "linear_layers": 4096, "nextn_layers": 64, "kv_lora_rank": 1 << 14,
          "q_lora_rank": 1 << 16, "qk_rope_head_dim": 1 << 14, "qk_nope_head_dim": 1 << 14, "v_head_dim": 1 << 14,
          "linear_key_dim": 1 << 20, "linear_value_dim": 1 << 20, "linear_value_heads": 4096,
          "linear_key_heads": 4096, "linear_key_head_dim": 1 << 14, "linear_value_head_dim": 1 << 14,
          "linear_conv_kernel": 1 << 10, "sliding_window": 1 << 30}


# The config.json key a count is usually read from, to name it as the user sees it.
_KEY = {"layers": "num_hidden_layers", "hidden": "hidden_size", "vocab": "vocab_size",
        "intermediate": "intermediate_size", "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
        "experts": "num_experts", "experts_per_token": "num_experts_per_tok",
        "nextn_layers": "num_nextn_predict_layers"}


def _bounded(a: "Architecture") -> bool:
    """False (and the reason in cannot_size) when a count is negative or beyond any real model's; those read as
    their default (0, or None for an optional size)."""
    ok = True
    for name, limit in LIMITS.items():
        v = getattr(a, name)
        if isinstance(v, int) and (v < 0 or v > limit):
            a.cannot_size.append(T("config.json {field} = {value} is outside what any real model has (0 to {limit}): "
                                   "not sized", field=_KEY.get(name, name), value=v, limit=limit))
            setattr(a, name, type(a).model_fields[name].default)  # 0, or None for the optional sizes
            ok = False
    return ok


def _moe(a: Architecture, cfg: dict) -> None:
    """Experts, their size, shared experts and which layers are MoE (first_k_dense_replace, mlp_only_layers,
    decoder_sparse_step, moe_layer_freq) — the names the DeepSeek, Qwen-MoE, Mixtral, GLM-MoE and gpt-oss configs
    use."""
    a.experts = _int(cfg, "n_routed_experts", "num_experts", "num_local_experts")
    if not a.experts:
        return
    a.experts_per_token = _int(cfg, "num_experts_per_tok", "moe_topk", "top_k")
    a.expert_intermediate = _int(cfg, "moe_intermediate_size") or a.intermediate
    shared = _int(cfg, "shared_expert_intermediate_size")
    if not shared and _int(cfg, "n_shared_experts"):
        shared = _int(cfg, "n_shared_experts") * a.expert_intermediate
    a.shared_intermediate = shared
    first_dense = _int(cfg, "first_k_dense_replace")
    only = {i for i in cfg.get("mlp_only_layers") or [] if isinstance(i, int)}
    step = _int(cfg, "decoder_sparse_step", default=1) or 1  # Qwen-MoE: layer i is MoE when (i + 1) % step == 0
    freq = _int(cfg, "moe_layer_freq", default=1) or 1  # DeepSeek: when i % freq == 0
    a.moe_layers = sum(1 for i in range(a.layers)
                       if i >= first_dense and i not in only and (i + 1) % step == 0 and i % freq == 0)


def _layer_kinds(a: Architecture, cfg: dict) -> None:
    """Full, sliding-window and linear-attention layers, from `layer_types` when the config lists them."""
    window = _opt_int(cfg, "sliding_window")
    if cfg.get("use_sliding_window") is False:
        window = None
    kinds = cfg.get("layer_types")
    if isinstance(kinds, list) and len(kinds) == a.layers and all(isinstance(k, str) for k in kinds):
        a.sliding_layers = sum(1 for k in kinds if k in ("sliding_attention", "chunked_attention"))
        a.linear_layers = sum(1 for k in kinds if k in ("linear_attention", "mamba", "mamba2", "conv"))
        a.full_layers = a.layers - a.sliding_layers - a.linear_layers
        a.sliding_window = window if a.sliding_layers else None
        if a.sliding_layers and window is None:
            a.cannot_size.append(T("layer_types names sliding-window layers but the config gives no sliding_window"))
    elif isinstance(cfg.get("full_attention_interval"), int) and cfg["full_attention_interval"] > 0:
        step = cfg["full_attention_interval"]  # Qwen3-Next: every step-th layer is full attention, the rest linear
        a.full_layers = a.layers // step
        a.linear_layers = a.layers - a.full_layers
    elif window is not None and a.model_type in _IMPLICIT_WINDOW_PATTERN:
        key, default = _IMPLICIT_WINDOW_PATTERN[a.model_type]
        period = _opt_int(cfg, key) if key else None
        period = period if period is not None and period > 0 else default
        a.full_layers = a.layers // period
        a.sliding_layers = a.layers - a.full_layers
        a.sliding_window = window if a.sliding_layers else None
    elif window is not None:
        max_window_layers = _opt_int(cfg, "max_window_layers")
        if max_window_layers is not None and "use_sliding_window" in cfg:  # Qwen2: layers from max_window_layers on
            a.sliding_layers = max(0, a.layers - max_window_layers)
        else:
            a.sliding_layers = a.layers  # Mistral-style: every layer attends within the window
        a.full_layers = a.layers - a.sliding_layers
        a.sliding_window = window if a.sliding_layers else None
    else:
        a.full_layers = a.layers
    a.linear_value_heads = _int(cfg, "linear_num_value_heads")
    a.linear_key_heads = _int(cfg, "linear_num_key_heads")
    a.linear_key_head_dim = _int(cfg, "linear_key_head_dim")
    a.linear_value_head_dim = _int(cfg, "linear_value_head_dim")
    a.linear_key_dim = a.linear_key_heads * a.linear_key_head_dim
    a.linear_value_dim = a.linear_value_heads * a.linear_value_head_dim
    a.linear_conv_kernel = _int(cfg, "linear_conv_kernel_dim")
    ssm = cfg.get("mamba_ssm_dtype")
    a.ssm_dtype = ssm if isinstance(ssm, str) else None
    if a.linear_layers and not is_gdn(a, cfg):
        a.cannot_size.append(T("{n} linear-attention layer(s) keep a recurrent state per request whose size this "
                               "model does not compute (sized: Gated DeltaNet of {types})", n=a.linear_layers,
                               types=", ".join(sorted(GDN_MODEL_TYPES))))


def is_gdn(a: "Architecture", cfg: dict) -> bool:
    """The linear layers are Gated DeltaNet with every size given (deploy/hybrid.py sizes their state)."""
    types = {a.model_type, str(cfg.get("model_type") or "")}
    sizes = (a.linear_key_heads, a.linear_key_head_dim, a.linear_value_heads, a.linear_value_head_dim,
             a.linear_conv_kernel)
    return bool(types & GDN_MODEL_TYPES) and all(sizes) and (a.ssm_dtype is None or a.ssm_dtype_bytes is not None)


def _attention(a: Architecture, cfg: dict) -> None:
    a.heads = _int(cfg, "num_attention_heads", "n_head", "num_heads")
    a.kv_heads = _int(cfg, "num_key_value_heads", "num_kv_heads", "multi_query_group_num", default=a.heads)
    head_dim = _opt_int(cfg, "head_dim")
    a.head_dim = head_dim if head_dim else (a.hidden // a.heads if a.heads else 0)
    a.attention_bias = bool(cfg.get("attention_bias") or cfg.get("qkv_bias") or a.model_type in ("qwen2", "qwen2_moe"))
    a.qk_norm = a.model_type.startswith("qwen3") or str(cfg.get("model_type", "")).startswith("qwen3")
    a.kv_lora_rank = _opt_int(cfg, "kv_lora_rank")
    if a.kv_lora_rank is not None:
        a.q_lora_rank = _opt_int(cfg, "q_lora_rank")
        a.qk_rope_head_dim = _opt_int(cfg, "qk_rope_head_dim")
        a.qk_nope_head_dim = _opt_int(cfg, "qk_nope_head_dim")
        a.v_head_dim = _opt_int(cfg, "v_head_dim")
        if a.model_type not in MLA_MODEL_TYPES and str(cfg.get("model_type") or "") not in MLA_MODEL_TYPES:
            a.attention = "unknown"
            a.cannot_size.append(T("kv_lora_rank is set but model_type {model_type} is not one vLLM sizes as MLA",
                                   model_type=repr(a.model_type)))
        elif a.qk_rope_head_dim is None:
            a.attention = "unknown"
            a.cannot_size.append(T("MLA config without qk_rope_head_dim"))
        else:
            a.attention = "mla"
            _indexer(a, cfg)
    if a.attention == "gqa" and (not a.heads or not a.head_dim or not a.kv_heads):
        a.attention = "unknown"
        a.cannot_size.append(T("config.json gives no attention heads / head size"))


# Keys of configs whose DSA indexer sits on some layers only, or is compressed: the cache of such a model is laid
# out per layer kind (vllm-ascend's has_indexer / compress paths), which this model does not follow.
_PARTIAL_INDEXER = ("indexer_types", "use_index_cache", "compress_ratios", "index_kpool")


def _every_layer_full(cfg: dict, key: str) -> bool:
    """`indexer_types` naming every layer "full": each layer has its own indexer, the layout of a config without the
    key (GLM-5.1: zai-org's config has none, NVIDIA's NVFP4 copy lists 78 × "full")."""
    kinds = cfg.get(key)
    return key == "indexer_types" and isinstance(kinds, list) and bool(kinds) and all(k == "full" for k in kinds)


def _skips_indexers(cfg: dict) -> list[str]:
    """vLLM's IndexCache keys (deepseek_v2.py since 0.26.0): `index_topk_freq` above 1, or an `index_topk_pattern`
    with an "S", build the indexer on some layers only — the others reuse an earlier layer's top-k."""
    freq, pattern = cfg.get("index_topk_freq"), cfg.get("index_topk_pattern")
    keys = ["index_topk_freq"] if isinstance(freq, int) and not isinstance(freq, bool) and freq > 1 else []
    return keys + (["index_topk_pattern"] if isinstance(pattern, (str, list)) and "S" in pattern else [])


def _indexer(a: "Architecture", cfg: dict) -> None:
    """DeepSeek sparse attention (`index_topk`): every layer also caches the indexer's key, `index_head_dim` values
    in the KV dtype, laid out per vllm-ascend release (deploy/dsa.py; vllm-ascend#6847's GLM-5 log checks it to the
    token)."""
    if cfg.get("index_topk") is None:
        return
    partial = [k for k in _PARTIAL_INDEXER if cfg.get(k) is not None and not _every_layer_full(cfg, k)]
    partial += _skips_indexers(cfg)
    head = _opt_int(cfg, "index_head_dim")
    if partial or not head or head < 0 or head > 1 << 14:
        a.attention = "unknown"
        a.cannot_size.append(T("the DSA indexer cache of this config ({keys}) is not sized",
                               keys=", ".join(partial) or f"index_head_dim={cfg.get('index_head_dim')!r}"))
        return
    a.index_head_dim = head
    heads = _opt_int(cfg, "index_n_heads")
    a.index_heads = heads if heads and 0 < heads <= 4096 else 0


def _towers(config: dict) -> dict:
    """Where the encoders' configs sit: the top level, or an Omni model's `thinker_config` (the part vLLM serves)."""
    thinker = config.get("thinker_config")
    return thinker if isinstance(thinker, dict) and not isinstance(config.get("vision_config"), dict) else config


def read_architecture(config: dict, max_len: Optional[int] = None) -> Architecture:
    """The architecture of a config.json (already merged with --hf-overrides by the caller)."""
    cfg = text_config(config)
    archs = config.get("architectures")
    a = Architecture(model_type=str(config.get("model_type") or cfg.get("model_type") or ""),
                     architectures=[x for x in archs if isinstance(x, str)] if isinstance(archs, list) else [])
    a.layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    a.hidden = _int(cfg, "hidden_size", "n_embd", "d_model")
    a.vocab = _int(cfg, "vocab_size", "padded_vocab_size")
    tied_default = (cfg.get("model_type") or a.model_type) in _TIED_BY_DEFAULT
    a.tie_embeddings = bool(cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", tied_default)))
    a.intermediate = _int(cfg, "intermediate_size", "ffn_hidden_size", "n_inner")
    if a.model_type == "molmo":  # its config gives gate + up together: vLLM's molmo.py halves intermediate_size
        a.intermediate //= 2
    a.nextn_layers = _int(cfg, "num_nextn_predict_layers")
    dtype = cfg.get("torch_dtype") or cfg.get("dtype") or config.get("torch_dtype") or config.get("dtype")
    a.dtype = dtype if isinstance(dtype, str) else None
    quant = config.get("quantization_config") or cfg.get("quantization_config")
    if isinstance(quant, dict) and isinstance(quant.get("quant_method"), str):
        a.quant_method = quant["quant_method"]
    a.max_len = max_len
    towers = _towers(config)
    a.vision = isinstance(towers.get("vision_config"), dict)
    if a.vision:
        a.vision_params, partial = vision_params(towers["vision_config"], a.hidden)
        a.vision_projector_counted = not partial
    a.audio = isinstance(towers.get("audio_config"), dict)
    if a.model_type == "molmo":  # a ViT its config does not describe (vLLM's VisionBackboneConfig): not counted
        a.vision = True
    if not _bounded(a):  # before anything loops over a count (the MoE layer scan runs over every layer)
        a.attention = "unknown"
        return a
    _attention(a, cfg)  # the heads, even without the sizes: they alone decide which TP sizes vLLM accepts
    _moe(a, cfg)  # the experts too: whether a model is MoE does not depend on its sizes
    if not _bounded(a):
        a.attention = "unknown"
        return a
    if not a.layers or not a.hidden:
        a.attention = "unknown"
        a.cannot_size.append(T("config.json gives no num_hidden_layers / hidden_size"))
        return a
    _layer_kinds(a, cfg)
    _unsized_layout(a, cfg)
    if not _bounded(a):
        a.attention = "unknown"
    return a


def _ratios(v) -> str:
    """`compress_ratios` as the compressions it names ("1:4, 1:128"), or "" when it compresses nothing."""
    found = sorted({x for x in v if isinstance(x, int) and not isinstance(x, bool) and x > 1}) \
        if isinstance(v, list) else []
    return ", ".join(f"1:{x}" for x in found)


def _mamba_layers(cfg: dict) -> int:
    """Mamba-2 layers of a Nemotron-H-style config (`hybrid_override_pattern` "M", `layers_block_type` "mamba")."""
    pattern, kinds = cfg.get("hybrid_override_pattern"), cfg.get("layers_block_type")
    if isinstance(pattern, str):
        return pattern.count("M")
    return sum(1 for k in kinds if k == "mamba") if isinstance(kinds, list) else 0


def _shape_of_its_own(cfg: dict) -> bool:
    """Gemma-4: full-attention layers with another head size or KV-head count, or keys shared with values."""
    own_dim = _opt_int(cfg, "global_head_dim") not in (None, _opt_int(cfg, "head_dim"))
    own_heads = _opt_int(cfg, "num_global_key_value_heads") not in (None, _opt_int(cfg, "num_key_value_heads"))
    return own_dim or own_heads or cfg.get("attention_k_eq_v") is True


def _sparse(cfg: dict) -> bool:
    sparse = cfg.get("sparse_attention_config")
    return isinstance(sparse, dict) and bool(sparse.get("use_sparse_attention", True))


def _kv_shared(cfg: dict) -> bool:
    n = _opt_int(cfg, "num_kv_shared_layers")
    return bool(n and n > 0)


def _lightning(cfg: dict) -> bool:
    kinds = cfg.get("attn_type_list")
    return isinstance(kinds, list) and any(k == 0 for k in kinds)


def _has(key: str):
    return lambda cfg: cfg.get(key) is not None


# Config keys that lay a model's KV cache (or recurrent state) out in a way this model does not follow — each one was
# sized as plain attention before, silently wrong, in a sweep of 88 public configs of models vLLM runs
# (ai-dynamo/aiconfigurator@095f58a, aic-core/src/aiconfigurator_core/model_configs; docs/research/calibration.md).
# A match makes the model unsizable with its reason (this module's rule: refuse rather than guess).
_UNSIZED_LAYOUT = (
    (("compress_ratios",), lambda cfg: bool(_ratios(cfg.get("compress_ratios"))),
     lambda cfg: T("compressed attention (DeepSeek-V4: a sliding window, KV compressed {ratios} and the indexer's "
                   "keys per layer kind)", ratios=_ratios(cfg.get("compress_ratios")))),
    (("sparse_attention_config",), _sparse,
     lambda cfg: T("block-sparse attention with an index cache of its own (MiniMax-M3)")),
    (("global_head_dim", "num_global_key_value_heads", "attention_k_eq_v"), _shape_of_its_own,
     lambda cfg: T("full-attention layers with a KV shape of their own (Gemma-4)")),
    (("num_kv_shared_layers",), _kv_shared,
     lambda cfg: T("{n} layer(s) reusing an earlier layer's KV", n=cfg.get("num_kv_shared_layers"))),
    (("hybrid_override_pattern", "layers_block_type"), lambda cfg: _mamba_layers(cfg) > 0,
     lambda cfg: T("{n} Mamba-2 layer(s) keeping a recurrent state per request (Nemotron-H)", n=_mamba_layers(cfg))),
    (("linear_attn_config",), _has("linear_attn_config"),
     lambda cfg: T("Kimi Delta Attention layers keeping a recurrent state per request (Kimi Linear)")),
    (("hybrid_layer_pattern", "swa_head_dim", "swa_num_key_value_heads"),
     lambda cfg: any(cfg.get(k) is not None for k in ("swa_head_dim", "swa_num_key_value_heads")),
     lambda cfg: T("sliding-window layers with a KV shape of their own (MiMo-V2)")),
    (("attn_type_list",), _lightning,
     lambda cfg: T("lightning (linear) attention layers keeping a state per request (MiniMax-Text-01)")),
    (("block_configs",), lambda cfg: isinstance(cfg.get("block_configs"), list),
     lambda cfg: T("a shape per layer: attention heads, skipped attention and FFN widths (Nemotron-NAS)")),
    (("attention_chunk_size",), _has("attention_chunk_size"),
     lambda cfg: T("chunked local attention on layers the config does not list (Llama-4)")),
    (("cross_attention_layers",), lambda cfg: isinstance(cfg.get("cross_attention_layers"), list),
     lambda cfg: T("{n} cross-attention layer(s) caching the image's keys and values, not the text's (Mllama)",
                   n=len(cfg.get("cross_attention_layers") or []))),
)


def _unsized_layout(a: Architecture, cfg: dict) -> None:
    """Name each KV layout of `_UNSIZED_LAYOUT` the config declares, with the keys that declare it."""
    for keys, applies, what in _UNSIZED_LAYOUT:
        if applies(cfg):
            present = ", ".join(k for k in keys if k in cfg)
            a.attention = "unknown"
            a.cannot_size.append(T("{what} ({keys} in config.json): how vLLM caches these layers is not modelled "
                                   "here, so the KV cache is not sized", what=what(cfg), keys=present))


def describe(a: Architecture) -> str:
    """One line a user can check against their config.json, in the run's language (plan's `model:` line; #40 item
    14: it was English under --lang zh). The config keys keep their names."""
    from ascend_doctor.i18n import join

    parts = [a.model_type or "?", T("{n} layers", n=a.layers), T("hidden {n}", n=a.hidden)]
    if a.attention == "mla":
        parts.append(T("MLA ({heads} heads, kv_lora_rank {rank} + qk_rope_head_dim {rope})", heads=a.heads,
                       rank=a.kv_lora_rank, rope=a.qk_rope_head_dim))
    else:
        parts.append(T("{heads} heads / {kv} KV heads × head_dim {dim}", heads=a.heads, kv=a.kv_heads,
                       dim=a.head_dim))
    if a.is_moe:
        parts.append(T("MoE {n} experts (top-{k}) in {layers} layers", n=a.experts, k=a.experts_per_token,
                       layers=a.moe_layers))
    if a.sliding_layers:
        parts.append(T("{n} sliding-window layers (window {window})", n=a.sliding_layers, window=a.sliding_window))
    if a.linear_layers:
        parts.append(T("{n} linear-attention layers", n=a.linear_layers))
    return join(", ", parts)
