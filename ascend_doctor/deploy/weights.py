"""How many bytes of weights a model has, and how many land on one rank of a parallel layout.

Sources, best first: the checkpoint's `model.safetensors.index.json` `metadata.total_size` (bytes, as written by
`save_pretrained`), the safetensors headers (the tensors' byte ranges), else a parameter count from config.json times
the bytes per parameter of the chosen weight format. The count follows the modules vLLM builds (embedding, attention
projections — MLA's low-rank ones included —, gated MLP, routed and shared experts, router, norms); it agrees with the
published sizes (Qwen3-8B 8.19 B, Qwen3-30B-A3B 30.5 B, DeepSeek-V3 671 B; tests/deploy/test_weights.py).

Per rank (vLLM's sharding): everything but the experts is split by TP (the vocabulary too: VocabParallelEmbedding)
but the projections vLLM builds unsharded (MLA's q_a / kv_a, the DSA indexer: whole on every rank);
routed experts are split over TP, or over TP×DP with `--enable-expert-parallel`; PP gives each stage its layers, and
the first and last stage the embedding and the LM head (a tied LM head is a copy of its own on the last stage). A
vision tower is loaded whole on every rank (vllm-ascend#4074: Qwen3-VL-8B at TP2 loads 8.50 GiB per rank, the
language model's half plus the whole tower).
"""

from __future__ import annotations

import math
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.i18n import Localized, T

# Bytes per parameter of (linear layers, routed experts, embedding/LM head/norms) for the weight formats plan knows.
# w8a8 / w4a8 are msModelSlim's (vllm-ascend `--quantization ascend`): int8 (int4) linear weights, float embeddings.
FORMATS = {
    "bf16": (2.0, 2.0, 2.0),
    "fp16": (2.0, 2.0, 2.0),
    "fp32": (4.0, 4.0, 4.0),
    "w8a8": (1.0, 1.0, 2.0),
    "w8a16": (1.0, 1.0, 2.0),
    "w4a8": (1.0, 0.5, 2.0),
    "w4a16": (0.5, 0.5, 2.0),
    "fp8": (1.0, 1.0, 2.0),
    "mxfp4": (2.0, 4.25 / 8, 2.0),  # gpt-oss: MoE experts in MXFP4 (4 bits + one scale byte per 32), the rest bf16
}


class ParamCount(Model):
    """Parameters by module kind, for the whole model (all layers, all experts)."""

    embedding: int = 0
    lm_head: int = 0
    attention: int = 0
    linear_attention: int = 0
    dense_mlp: int = 0
    experts: int = 0
    shared: int = 0
    router: int = 0
    norms: int = 0
    vision: int = 0
    replicated: int = Field(0, description="of `attention`, the projections vLLM builds unsharded (whole on every "
                                           "TP rank): MLA's q_a / kv_a and the DSA indexer's")
    mtp_proj: int = Field(0, description="the input projections of the MTP layers run (2 × hidden → hidden each)")

    @property
    def total(self) -> int:
        return (self.embedding + self.lm_head + self.attention + self.linear_attention + self.dense_mlp
                + self.experts + self.shared + self.router + self.norms + self.vision + self.mtp_proj)


class WeightSize(Model):
    """The checkpoint's bytes, split the way ranks shard them."""

    total_bytes: int
    expert_bytes: int = Field(0, description="routed experts (sharded over the EP group with expert parallelism)")
    vocab_bytes: int = Field(0, description="embedding + LM head (first / last pipeline stage)")
    vision_bytes: int = Field(0, description="the vision tower, whole on every rank")
    replicated_bytes: int = Field(0, description="layers' projections built unsharded, whole on every TP rank")
    source: Localized = Field(description="index total_size, safetensors headers, or 'estimated: …'")
    params: Optional[int] = None
    estimated: bool = Field(False, description="computed from the config, not read from the checkpoint")


def _replicated_params(a: Architecture) -> int:
    """Per attention layer, what vLLM builds with ReplicatedLinear or `disable_tp` (vllm deepseek_v2.py 0.13.0):
    MLA's down-projections (q_a 7168 × 1536 and kv_a 7168 × 576 on DeepSeek-V3, with their norms) and the DSA
    indexer ("no tensor parallel, just replicated": wq_b, wk, k_norm, weights_proj)."""
    if a.attention != "mla":
        return 0
    h, rope = a.hidden, a.qk_rope_head_dim or 0
    down = (h * a.q_lora_rank + a.q_lora_rank if a.q_lora_rank else 0) + h * (a.kv_lora_rank + rope) + a.kv_lora_rank
    indexer = _indexer_linear_params(a) + 2 * a.index_head_dim if a.index_head_dim else 0  # + k_norm
    return down + indexer


def _indexer_linear_params(a: Architecture) -> int:
    """Per attention layer, the DSA indexer's linear layers: wq_b, wk, weights_proj (0 without an indexer)."""
    if not a.index_head_dim:
        return 0
    h = a.hidden
    return (a.q_lora_rank or h) * a.index_heads * a.index_head_dim + h * a.index_head_dim + h * a.index_heads


# Linear layers a quantized checkpoint may keep in floating point, as msModelSlim's recipes leave them (per
# checkpoint: the catalogue's `float_layers`, or a model directory's quant_model_description.json "FLOAT" tags).
# `kv_b_proj`: MLA's up-projection of the latent (every DeepSeek W8A8/W4A8 recipe excludes it: Ascend/msmodelslim
# example/DeepSeek/quant_deepseek_w8a8.py `disable_names … self_attn.kv_b_proj`, lab_practice/deepseek_v3/*.yaml
# `exclude: "*kv_b_proj"`); `indexer`: the DSA indexer's wq_b, wk and weights_proj (lab_practice/deepseek_v3_2/
# deepseek_w8a8_quarot.yaml at 3de0a3c: `exclude: "*kv_b_proj", "*wq_b", "*wk", "*weights_proj"`).
FLOAT_LAYERS = ("kv_b_proj", "indexer")


def float_layers_of(quant_description: Optional[dict]) -> tuple[str, ...]:
    """The FLOAT_LAYERS msModelSlim's description tags "FLOAT" (`model.layers.0.self_attn.kv_b_proj.weight`,
    `….self_attn.indexer.wq_b.weight`)."""
    out = set()
    for k, v in (quant_description or {}).items():
        if not (isinstance(k, str) and str(v).upper() == "FLOAT" and k.endswith(".weight")):
            continue
        if k.endswith(".kv_b_proj.weight"):
            out.add("kv_b_proj")
        elif ".indexer." in k:
            out.add("indexer")
    return tuple(x for x in FLOAT_LAYERS if x in out)


def _float_params(a: Architecture, layers) -> tuple[int, int]:
    """(sharded, replicated) parameters of the attention layers' FLOAT_LAYERS `layers` (MLA models only)."""
    if a.attention != "mla":
        return 0, 0
    n = a.full_layers + a.sliding_layers
    nope = a.qk_nope_head_dim or 0
    sharded = n * a.kv_lora_rank * a.heads * (nope + (a.v_head_dim or nope)) if "kv_b_proj" in layers else 0
    replicated = n * _indexer_linear_params(a) if "indexer" in layers else 0
    return sharded, replicated


def _attention_params(a: Architecture) -> int:
    h = a.hidden
    if a.attention == "mla":
        rope, nope = a.qk_rope_head_dim or 0, a.qk_nope_head_dim or 0
        v = a.v_head_dim or nope
        qk = a.heads * (nope + rope)
        q = (a.q_lora_rank * qk) if a.q_lora_rank else h * qk
        kv = a.kv_lora_rank * a.heads * (nope + v)
        return _replicated_params(a) + q + kv + a.heads * v * h
    qkv = h * (a.heads + 2 * a.kv_heads) * a.head_dim
    bias = (a.heads + 2 * a.kv_heads) * a.head_dim if a.attention_bias else 0
    return qkv + bias + a.heads * a.head_dim * h


def _linear_params(a: Architecture) -> int:
    """A Gated DeltaNet layer (Qwen3-Next): q/k/v/z and b/a input projections, the causal conv, the output
    projection (vllm qwen3_next.py `Qwen3NextGatedDeltaNet`)."""
    k, v = a.linear_key_dim, a.linear_value_dim
    return (a.hidden * (2 * k + 2 * v) + a.hidden * 2 * a.linear_value_heads + (2 * k + v) * a.linear_conv_kernel
            + v * a.hidden)


# MTP modules whose input projection (embedding ‖ hidden → hidden) is a TP-sharded ColumnParallelLinear built with the
# checkpoint's quantization (vllm 0.30.0 qwen3_next_mtp.py / qwen3_5_mtp.py `fc`); every other MTP module vLLM has
# builds it as `nn.Linear` or `ReplicatedLinear` — whole on every rank, in the model's dtype whatever the checkpoint's
# format (deepseek_mtp.py, glm4_moe_mtp.py, glm4_moe_lite_mtp.py `eh_proj`). The MTP layer's own embedding and head
# are not counted: vllm-ascend's proposer shares the target's when they are equal (eagle_proposer.py at 2dd68652bc).
_SHARDED_MTP_PROJ = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"})


def _mtp_sharded(a: Architecture) -> bool:
    return a.model_type in _SHARDED_MTP_PROJ or bool(a.linear_layers)


def count_params(a: Architecture) -> ParamCount:
    """The parameters of the layers vLLM loads (MTP / next-n layers are not loaded without speculative decoding)."""
    attn_layers = a.full_layers + a.sliding_layers
    dense_layers = a.layers - a.moe_layers
    return ParamCount(
        embedding=a.vocab * a.hidden,
        lm_head=0 if a.tie_embeddings else a.vocab * a.hidden,
        attention=attn_layers * _attention_params(a),
        linear_attention=a.linear_layers * _linear_params(a),
        dense_mlp=dense_layers * 3 * a.hidden * a.intermediate,
        experts=a.moe_layers * a.experts * 3 * a.hidden * a.expert_intermediate,
        shared=a.moe_layers * 3 * a.hidden * a.shared_intermediate,
        router=a.moe_layers * a.hidden * a.experts,
        norms=a.layers * 2 * a.hidden + a.hidden + (attn_layers * 2 * a.head_dim if a.qk_norm else 0),
        vision=a.vision_params,
        replicated=attn_layers * _replicated_params(a),
        mtp_proj=a.mtp_run * 2 * a.hidden * a.hidden,
    )


def format_of(a: Architecture, quant_description: Optional[dict] = None) -> Optional[str]:
    """The weight format of a checkpoint: msModelSlim's description, the config's quantization_config, its dtype."""
    if quant_description:
        kinds = {str(v).upper() for k, v in quant_description.items() if k.endswith(".weight")}
        if any(k.startswith("W4A8") for k in kinds):
            return "w4a8"
        if any(k.startswith("W8A8") for k in kinds):
            return "w8a8"
    if a.quant_method in ("mxfp4", "fp8"):
        return a.quant_method
    return {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32"}.get((a.dtype or "").lower())


def estimate(a: Architecture, fmt: str, float_layers=()) -> WeightSize:
    """Bytes from the parameter count: linear layers, experts and embeddings at the format's bytes per parameter;
    the linear layers a quantized checkpoint keeps in floating point (`float_layers`, of FLOAT_LAYERS) at the
    float size."""
    p = count_params(a)
    linear_b, expert_b, float_b = FORMATS[fmt]
    kept, kept_replicated = _float_params(a, float_layers) if linear_b != float_b else (0, 0)
    vocab = (p.embedding + p.lm_head) * float_b
    experts = p.experts * expert_b
    vision = p.vision * float_b  # quantizers leave the vision tower in floating point
    sharded_mtp = _mtp_sharded(a)
    mtp = p.mtp_proj * (linear_b if sharded_mtp else float_b)
    kept_b = (kept + kept_replicated) * (float_b - linear_b)
    total = (vocab + experts + (p.attention + p.linear_attention + p.dense_mlp + p.shared) * linear_b
             + (p.router + p.norms) * float_b + vision + mtp + kept_b)
    replicated = p.replicated * linear_b + kept_replicated * (float_b - linear_b) + (0 if sharded_mtp else mtp)
    if a.vision and not p.vision:
        source = T("estimated: {params} B parameters from config.json in {fmt} (the vision encoder not counted)",
                   params=f"{p.total / 1e9:.2f}", fmt=fmt)
    elif a.vision and not a.vision_projector_counted:
        source = T("estimated: {params} B parameters from config.json in {fmt}, of which the vision encoder {vision} "
                   "B (whole on every rank; its projector into the language model not counted)",
                   params=f"{p.total / 1e9:.2f}", fmt=fmt, vision=f"{p.vision / 1e9:.2f}")
    elif a.vision:
        source = T("estimated: {params} B parameters from config.json in {fmt}, of which the vision encoder {vision} "
                   "B (whole on every rank)", params=f"{p.total / 1e9:.2f}", fmt=fmt, vision=f"{p.vision / 1e9:.2f}")
    else:
        source = T("estimated: {params} B parameters from config.json in {fmt}", params=f"{p.total / 1e9:.2f}", fmt=fmt)
    if a.audio:
        source = T("{source}; the audio encoder not counted", source=source)
    if kept_b:
        source = T("{source}; kept in floating point: {layers}", source=source,
                   layers=", ".join(x for x in FLOAT_LAYERS if x in float_layers))
    return WeightSize(total_bytes=int(total), expert_bytes=int(experts), vocab_bytes=int(vocab),
                      vision_bytes=int(vision), replicated_bytes=int(replicated), params=p.total,
                      source=source, estimated=True)


def measured(a: Architecture, total_bytes: int, source: str, fmt: Optional[str], float_layers=()) -> WeightSize:
    """The checkpoint's real size, split into experts / vocabulary in the proportions of the parameter count."""
    est = estimate(a, fmt or "bf16", float_layers)
    scale = total_bytes / est.total_bytes if est.total_bytes else 0.0
    return WeightSize(total_bytes=total_bytes, expert_bytes=int(est.expert_bytes * scale),
                      vocab_bytes=int(est.vocab_bytes * scale), vision_bytes=int(est.vision_bytes * scale),
                      replicated_bytes=int(est.replicated_bytes * scale),
                      params=est.params, source=source)


def per_rank(ws: WeightSize, a: Architecture, tp: int, pp: int = 1, ep: int = 1) -> int:
    """Weight bytes on the fullest rank: experts over `ep` (TP×DP with expert parallelism, else TP), the rest over TP,
    the layers over PP (rounded up), the embedding and the LM head on the first / last stage (both at PP 1; a tied
    head is the last stage's own copy), the vision tower whole (on the first stage), the unsharded projections whole
    (MLA's down-projections, the DSA indexer)."""
    expert_shard = ws.expert_bytes / (ep if ep > 1 else tp)
    layers = ws.total_bytes - ws.expert_bytes - ws.vocab_bytes - ws.vision_bytes - ws.replicated_bytes
    stage = math.ceil(a.layers / pp) / a.layers if a.layers else 1.0
    vocab = ws.vocab_bytes if pp == 1 or a.tie_embeddings else ws.vocab_bytes / 2
    return int((layers / tp + expert_shard + ws.replicated_bytes) * stage + vocab / tp + ws.vision_bytes)


def converted(ws: WeightSize, a: Architecture, source_fmt: str, loaded_fmt: str, source: str) -> WeightSize:
    """The weights as a release holds them after converting the checkpoint at load (vllm-ascend 0.27.1rc1 on A2/A3:
    block-wise FP8 resolved to BF16, REL-B27-008): the checkpoint's bytes times the ratio of the two formats'
    estimates (what the conversion leaves alone, the BF16 embeddings, scales by one)."""
    ratio = estimate(a, loaded_fmt).total_bytes / max(estimate(a, source_fmt).total_bytes, 1)
    return measured(a, int(ws.total_bytes * ratio), source, loaded_fmt)


def as_loaded(ws: WeightSize, a: Architecture, rules, release: Optional[str], family: str, config: Optional[dict],
              cmd=None, env: Optional[dict] = None, quantization: Optional[str] = None
              ) -> tuple[WeightSize, Optional[Localized]]:
    """(the weights as the installed release holds them on `family`, what to say of it): converted where a release
    rule converts the checkpoint at load, else as they are — one place for SERVE305 (`cmd`, `env`: the serve command)
    and `plan` (`quantization`: what its command gives)."""
    from ascend_doctor.deploy.plan import gib
    from ascend_doctor.knowledge.release_rules import converting_rule

    rule = converting_rule(rules, release, family, cmd, env or {}, config, quantization)
    if rule is None:
        return ws, None
    loaded = converted(ws, a, "fp8", "bf16", T("{source}, converted to BF16 at load", source=ws.source))
    return loaded, T("vllm-ascend {release} converts the block-wise FP8 weights to BF16 on {family} ({rule}): {before} "
                     "in the checkpoint, {after} loaded", release=release, family=family, rule=rule.id,
                     before=gib(ws.total_bytes), after=gib(loaded.total_bytes))

