"""Whether an msModelSlim description (quant_model_description.json) describes the checkpoint beside it (pure: names
in, a `QuantCoverage` out).

msModelSlim writes every tensor it saves twice, to the weights and to the description (its SafetensorsSaver.save
writes `name` to both writers: verylucky01/MindStudio-ModelSlim msmodelslim/pytorch/llm_ptq/llm_ptq_tools/save/saver/
safetensors.py), so a description from the same run names every `.weight` of the weights. vllm-ascend then looks each
linear, MoE and (in some releases) embedding layer's `<prefix>.weight` up in that description
(vllm_ascend/quantization/quant_config.py `is_layer_skipped_ascend`, modelslim_config.py `get_linear_quant_type`): a
description written for other weights, or by another tool, stops the load with `KeyError: '<prefix>.weight'`
(vllm-ascend #3520, #5564, #876; the MTP layer: #5794).

The names are compared after the renames vllm-ascend itself applies to the description (`.shared_head.` dropped,
`weight_packed` read as `weight`) and after removing the wrappers that differ between exports of the same model
(`model.`, `language_model.`; DeepSeek-V4's and Step-3.5's spellings), on both sides, so that a rename the release
maps can never read as a missing entry.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from pydantic import Field

from ascend_doctor.core.model import Model

EXAMPLES = 6

# The shards of the layers vLLM fuses (qkv_proj, gate_up_proj, fused_qkv_a_proj, Qwen3-Next's in_proj, the experts of
# a FusedMoE): vllm-ascend looks each shard up with [] in every release (`packed_modules_model_mapping`), so a shard
# without an entry is a KeyError even where an unfused layer without one is built unquantized (v0.28.0rc1 on).
FUSED_SHARDS = frozenset({"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "q_a_proj", "kv_a_proj_with_mqa",
                          "in_proj_qkvz", "in_proj_ba"})
EMBEDDINGS = frozenset({"embed_tokens", "lm_head", "wte", "word_embeddings", "tok_embeddings", "embed_out"})
_BLOCK = re.compile(r"(?:^|\.)(?:layers|blocks|layer|h)\.(\d+)\.")
_EXPERT = re.compile(r"\.experts\.\d+\.")
_VISION = re.compile(r"(?:^|\.)(?:visual|vision_tower|vision_model|vision|vit|image_encoder)\.")
_MTP = re.compile(r"(?:^|\.)mtp\.")
_WRAPPERS = ("model.", "language_model.")
# DeepSeek-V4's and Step-3.5-MTP's spellings vllm-ascend maps (modelslim_config.py QUANT_MODEL_SUBSTR_MAPPINGS).
_SPELLINGS = ((".attn.", ".self_attn."), (".ffn.", ".mlp."), (".w1.", ".gate_proj."), (".w2.", ".down_proj."),
              (".w3.", ".up_proj."), (".mtp_block.", "."), (".shared_head.", "."))


class QuantCoverage(Model):
    """The description's entries against the checkpoint's `.weight` tensors, by what vllm-ascend does with a gap."""

    description: str = Field(description="the description file compared")
    weights_from: list[str] = Field(default_factory=list, description="the index files or shard headers read")
    weights: int = Field(0, description="`.weight` tensors in the checkpoint")
    described: int = Field(0, description="tensor entries in the description")
    missing: dict[str, list[str]] = Field(
        default_factory=dict, description="kind -> up to 6 `.weight` names without an entry (shard: a fused layer's "
                                          "shard; layer: another layer of a block; mtp_shard, mtp_layer: the same "
                                          "in an MTP layer; embedding; other: outside the blocks)")
    counts: dict[str, int] = Field(default_factory=dict, description="kind -> how many (norm: norms, not looked up)")


def canonical(name: str) -> str:
    """The name with the wrappers and spellings that differ between exports of one model removed."""
    for old, new in _SPELLINGS:
        name = name.replace(old, new)
    changed = True
    while changed:
        changed = False
        for wrapper in _WRAPPERS:
            if name.startswith(wrapper):
                name, changed = name[len(wrapper):], True
    return name


def described_names(description: dict[str, Any]) -> set[str]:
    """The tensor entries of a description (`name.with.dots: TYPE`), with vllm-ascend's own additions
    (`weight_packed` read as `weight`), canonical."""
    out = set()
    for key, value in description.items():
        if isinstance(key, str) and "." in key and isinstance(value, str):
            out.add(canonical(key))
            if "weight_packed" in key:
                out.add(canonical(key.replace("weight_packed", "weight")))
    return out


def kind_of(name: str, num_hidden_layers: Optional[int]) -> str:
    """What vllm-ascend does with the layer of `name` (a `.weight` tensor) when its entry is missing."""
    leaf = name[:-len(".weight")].rsplit(".", 1)[-1]
    if "norm" in leaf or leaf == "ln" or leaf.startswith("ln_"):
        return "norm"
    block = _BLOCK.search(name)
    vision = _VISION.search(name) is not None
    shard = leaf in FUSED_SHARDS or _EXPERT.search(name) is not None
    if _MTP.search(name) or (block and not vision and num_hidden_layers is not None
                             and int(block.group(1)) >= num_hidden_layers):
        return "mtp_shard" if shard else "mtp_layer"
    if block:
        return "shard" if shard else "layer"
    if leaf in EMBEDDINGS:
        return "embedding"
    return "other"


def coverage(description_file: str, description: dict[str, Any], tensors: Iterable[str],
             num_hidden_layers: Optional[int], weights_from: Iterable[str] = ()) -> QuantCoverage:
    """Compare a description with the checkpoint's tensor names (the weights' index or shard headers)."""
    known = described_names(description)
    weights = sorted({t for t in tensors if isinstance(t, str) and t.endswith(".weight")}, key=_natural)
    out = QuantCoverage(description=description_file, weights_from=list(weights_from), weights=len(weights),
                        described=sum(1 for k, v in description.items() if "." in str(k) and isinstance(v, str)))
    for name in weights:
        if canonical(name) in known:
            continue
        kind = kind_of(name, num_hidden_layers)
        out.counts[kind] = out.counts.get(kind, 0) + 1
        examples = out.missing.setdefault(kind, []) if kind != "norm" else []
        if kind != "norm" and len(examples) < EXAMPLES:
            examples.append(name)
    return out


def per_expert_layer(description: dict[str, Any]) -> Optional[str]:
    """The first FusedMoE layer (`model.layers.3.mlp.experts`) the description names only by each expert's shards
    (`….experts.0.gate_proj.weight`), with no `<layer>.weight` entry of its own: the key a release without a fused
    `experts` mapping for the model type looks up. None when it names no expert shards, or names the fused key."""
    layers = {k.rsplit(".", 3)[0] for k in description if isinstance(k, str) and _expert_shard(k)}
    missing = [layer for layer in layers if layer + ".weight" not in description]
    return min(missing, key=_natural) if missing else None


def _expert_shard(key: str) -> bool:
    """`<layer>.experts.<n>.<shard>.weight`."""
    parts = key.rsplit(".", 4)
    return len(parts) == 5 and parts[1] == "experts" and parts[2].isdigit() and parts[4] == "weight"


def _natural(name: str) -> tuple:
    """Sort key, roughly the order vLLM builds the layers in: the blocks by number (layer 2 before layer 10), in a
    block the attention before the MLP."""
    block = _BLOCK.search(name)
    leaf = name.rsplit(".", 2)[-2] if name.count(".") >= 1 else name
    return (int(block.group(1)) if block else -1, "attn" not in name, _BUILT.get(leaf, len(_BUILT)),
            [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in name.split(".")])


_BUILT = {leaf: i for i, leaf in enumerate(("q_proj", "q_a_proj", "kv_a_proj_with_mqa", "q_b_proj", "kv_b_proj",
                                            "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"))}


def layer_types(description: dict[str, Any]) -> dict[str, dict[str, str]]:
    """kind -> quant type -> the first weight (in the file's order) described with it, for the quantized `.weight`
    entries: `moe` for an expert's weight (`….experts.<n>.…`, what a FusedMoE layer asks its method for), `linear`
    for every other but the embeddings and lm_head. FLOAT (left unquantized) and entries that are not `.weight`
    (scales, offsets) need no method."""
    out: dict[str, dict[str, str]] = {}
    for key, value in description.items():
        if not (isinstance(key, str) and key.endswith(".weight") and isinstance(value, str)) or value == "FLOAT":
            continue
        if key.rsplit(".", 2)[-2] in EMBEDDINGS:
            continue  # an embedding or lm_head is not built by the linear methods judged here
        kind = "moe" if _EXPERT.search(key) else "linear"
        out.setdefault(kind, {}).setdefault(value, key)
    return out


def group_size(description: dict[str, Any]) -> Optional[int]:
    """The description's `group_size` (msModelSlim's per-group quantization), None when it gives none."""
    value = description.get("group_size")
    return value if isinstance(value, int) and not isinstance(value, bool) else None
