"""KV-cache arithmetic after vLLM V1 (vllm/v1/kv_cache_interface.py, vllm/v1/core/kv_cache_utils.py; the formulas
are quoted in docs/research/deploy-facts.md §4), which vllm-ascend uses unchanged apart from its block size.

- A full-attention layer stores K and V for every token: `2 × kv_heads_per_rank × head_size × dtype_bytes`, with
  `kv_heads_per_rank = max(1, kv_heads // TP)` (KV heads are replicated once TP exceeds them).
- An MLA layer stores one latent: `(kv_lora_rank + qk_rope_head_dim) × dtype_bytes`, the same on every TP rank;
  with DeepSeek sparse attention (V3.2, GLM-5) also the indexer's key, `index_head_dim` more — or, before
  vllm-ascend 0.15.0rc1, twice the latent (deploy/dsa.py).
- A sliding-window layer needs at most `cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block) + 1`
  blocks per request, whatever the context.
- A Gated DeltaNet hybrid (Qwen3-Next, Qwen3.5) pages its full-attention layers and its linear-attention states
  in pages of one size with a block the state decides (deploy/hybrid.py).
- The cache is allocated in blocks of `block_size` tokens (vllm-ascend: 128, `refresh_block_size`; vLLM on GPU and
  CPU: 16), so `num_blocks = kv_budget // (block × bytes per token of all layers)` and vLLM logs
  `KV cache size: num_blocks × block tokens` and `Maximum concurrency for L tokens per request:
  num_blocks / blocks_per_request`.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.deploy.dsa import dsa_values
from ascend_doctor.deploy.hybrid import STATE_PAGES_PER_REQUEST, HybridPages, describe, gdn_pages
from ascend_doctor.i18n import Localized, T, join
from ascend_doctor.text.textsafe import clipped

ASCEND_BLOCK = 128  # vllm_ascend/utils.py refresh_block_size: 128 unless the model needs another

# --kv-cache-dtype -> bytes per element of K and V: vLLM's CacheDType (vllm/config/cache.py: the fp8 variants store one
# byte) and vllm-ascend's `int8`, its C8 KV quantization of attention layers (int8 K and V; the per-channel scales are
# loaded with the weights — vllm_ascend/attention/attention_v1.py at 0.30.0rc2; the W8A8C8 checkpoints of the GLM-5
# and MiniMax-M2.7 tutorials). `auto` follows the model.
KV_CACHE_BYTES = {"bfloat16": 2, "float16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "int8": 1}


def kv_cache_bytes(value: Optional[str], a: Architecture) -> tuple[Optional[int], Optional[Localized]]:
    """(bytes per element, None) for `--kv-cache-dtype value`; (None, None) for auto (the model's dtype); (None, why)
    for a cache this model does not size: an 8-bit MLA cache, which is packed with its scales beside a 16-bit rope
    part (vLLM's `fp8_ds_mla`: 656 B per token and layer for a 576-wide latent; vllm-ascend's SFA C8, sfa_v1.py), and
    the 4-bit and other formats."""
    v = (value or "auto").strip().lower()
    if v == "auto":
        return None, None
    nbytes = KV_CACHE_BYTES.get(v)
    value = clipped(value)  # quoted in the message, whatever a command gave
    if nbytes is None:
        return None, T("--kv-cache-dtype {value} is not sized here (sized: auto, {known})", value=value,
                       known=", ".join(KV_CACHE_BYTES))
    if nbytes < 2 and a.attention == "mla":
        return None, T("--kv-cache-dtype {value} on an MLA model: the 8-bit latent is packed with its scales beside "
                       "the 16-bit rope part, a layout this model does not size", value=value)
    return nbytes, None


class KvSize(Model):
    """KV bytes of one rank, by layer kind; `unknown` says why a model cannot be sized."""

    full_bytes_per_token: int = Field(0, description="all full-attention layers of the rank, per token")
    sliding_bytes_per_token: int = Field(0, description="all sliding-window layers of the rank, per token")
    sliding_window: Optional[int] = None
    hybrid: Optional[HybridPages] = Field(None, description="a GDN hybrid's pages (full_bytes_per_token is then "
                                                            "the page cost of one logged token)")
    formula: Localized = ""
    unknown: Optional[Localized] = None

    @property
    def bytes_per_token(self) -> int:
        return self.full_bytes_per_token + self.sliding_bytes_per_token


def kv_per_token(a: Architecture, tp: int = 1, pp: int = 1, kv_dtype_bytes: Optional[int] = None,
                 release: Optional[str] = None, spec_tokens: int = 0, page_rules: Sequence = (),
                 kv_cache_dtype: Optional[str] = None, dsa_rules: Sequence = ()) -> KvSize:
    """Bytes per token of the fullest pipeline stage's layers on one TP rank; `release` (vllm-ascend) picks a
    hybrid's page rule among `page_rules` (the deploy/hybrid-pages rows), `spec_tokens` (speculative tokens per step)
    widen its conv state; `kv_cache_dtype` (the --kv-cache-dtype given) overrides `kv_dtype_bytes` unless auto;
    `dsa_rules` (the deploy/dsa-pages rows) say how `release` caches a DeepSeek-sparse-attention layer."""
    if a.cannot_size or a.attention == "unknown":
        return KvSize(unknown=join("; ", a.cannot_size) or T("unknown attention kind"))
    quantized, why = kv_cache_bytes(kv_cache_dtype, a)
    if why:
        return KvSize(unknown=why)
    nbytes = quantized or kv_dtype_bytes or a.dtype_bytes
    if nbytes is None or (a.linear_layers and a.dtype_bytes is None):
        return KvSize(unknown=T("the KV dtype is not known (config dtype {dtype})", dtype=repr(a.dtype)))
    share = math.ceil(a.layers / pp) / a.layers
    full = math.ceil(a.full_layers * share)
    sliding = math.ceil(a.sliding_layers * share)
    if a.linear_layers:
        return _hybrid(a, tp, full, math.ceil(a.linear_layers * share), nbytes, release, spec_tokens, page_rules)
    if a.attention == "mla":
        per_layer = (a.kv_lora_rank + a.qk_rope_head_dim) * nbytes
        if a.index_head_dim:
            values, how = dsa_values(a.kv_lora_rank, a.qk_rope_head_dim, a.index_head_dim, release, dsa_rules)
            if values is None:
                return KvSize(unknown=how)
            per_layer = values * nbytes
            formula = T("{how}: {values} × {nbytes} B = {per_layer} B per layer, not split by TP", how=how,
                        values=values, nbytes=nbytes, per_layer=per_layer)
        else:
            formula = T("MLA: (kv_lora_rank {rank} + qk_rope_head_dim {rope}) × {nbytes} B = {per_layer} B per "
                        "layer, not split by TP", rank=a.kv_lora_rank, rope=a.qk_rope_head_dim, nbytes=nbytes,
                        per_layer=per_layer)
    else:
        heads = max(1, a.kv_heads // tp)
        per_layer = 2 * heads * a.head_dim * nbytes
        formula = T("2 (K, V) × {heads} KV head(s) per rank ({kv_heads} / TP {tp}) × head_dim {head_dim} × "
                    "{nbytes} B = {per_layer} B per layer", heads=heads, kv_heads=a.kv_heads, tp=tp,
                    head_dim=a.head_dim, nbytes=nbytes, per_layer=per_layer)
    layers = (T("{full} full-attention layer(s) + {sliding} sliding-window layer(s) on this rank", full=full,
                sliding=sliding) if sliding else T("{full} full-attention layer(s) on this rank", full=full))
    return KvSize(full_bytes_per_token=full * per_layer, sliding_bytes_per_token=sliding * per_layer,
                  sliding_window=a.sliding_window if sliding else None, formula=join("; ", [formula, layers]))


def _hybrid(a: Architecture, tp: int, full: int, linear: int, nbytes: int, release: Optional[str],
            spec_tokens: int = 0, page_rules: Sequence = ()) -> KvSize:
    """A GDN hybrid: the state in the model's dtype (vLLM's mamba_cache_dtype "auto"), K and V at `nbytes`."""
    if not full:
        return KvSize(unknown=T("no full-attention layer on this rank: the state-only page rule is not modelled"))
    pages = gdn_pages(a, tp, full, linear, nbytes, a.dtype_bytes or nbytes, release, spec_tokens, page_rules)
    if not isinstance(pages, HybridPages):
        return KvSize(unknown=pages)
    per_token = math.ceil(pages.page_bytes * pages.group_size * pages.groups / pages.block)
    return KvSize(full_bytes_per_token=per_token, hybrid=pages, formula=describe(pages, tp))


def blocks_per_request(kv: KvSize, max_len: int, block: int, batched_tokens: int) -> float:
    """Blocks (in units of a block of every layer) one request of `max_len` tokens can hold at most."""
    if kv.hybrid is not None:  # vLLM's get_max_concurrency_for_kv_cache_config, counted in shared blocks
        h = kv.hybrid
        return float(h.full_groups * math.ceil(max_len / h.block) + h.linear_groups * STATE_PAGES_PER_REQUEST)
    if not kv.bytes_per_token:
        return 0.0
    full = math.ceil(max_len / block) * kv.full_bytes_per_token
    sliding = 0
    if kv.sliding_bytes_per_token:
        window = min((kv.sliding_window or max_len) - 1 + batched_tokens, max_len)
        sliding = (math.ceil(window / block) + 1) * kv.sliding_bytes_per_token
    return (full + sliding) / kv.bytes_per_token


class Capacity(Model):
    """What a KV budget holds: blocks, tokens and requests at full length (vLLM's own log lines)."""

    budget_bytes: int
    block: int
    num_blocks: int
    tokens: int
    max_len: int
    concurrency: float
    max_len_one_request: int = Field(description="the longest single request the cache can hold")


def capacity(kv: KvSize, budget_bytes: int, max_len: int, block: int, batched_tokens: int = 2048) -> Capacity:
    """vLLM's `get_num_blocks` / `_report_kv_cache_config` for a model whose layers share one page size."""
    if kv.hybrid is not None:
        return _hybrid_capacity(kv, budget_bytes, max_len)
    page = block * kv.bytes_per_token
    num_blocks = max(0, budget_bytes // page) if page else 0
    per_request = blocks_per_request(kv, max_len, block, batched_tokens)
    longest = num_blocks * block if not kv.sliding_bytes_per_token else _longest(kv, num_blocks, block, batched_tokens)
    return Capacity(budget_bytes=budget_bytes, block=block, num_blocks=num_blocks, tokens=num_blocks * block,
                    max_len=max_len, concurrency=num_blocks / per_request if per_request else 0.0,
                    max_len_one_request=longest)


def _hybrid_capacity(kv: KvSize, budget_bytes: int, max_len: int) -> Capacity:
    """Blocks shared by every group (`budget // (page × group size)`); vLLM logs `blocks // groups × block` tokens."""
    h = kv.hybrid
    num_blocks = max(0, budget_bytes // (h.page_bytes * h.group_size))
    per_request = blocks_per_request(kv, max_len, h.block, 0)
    spare = num_blocks - h.linear_groups * STATE_PAGES_PER_REQUEST
    longest = max(0, spare // h.full_groups) * h.block
    return Capacity(budget_bytes=budget_bytes, block=h.block, num_blocks=num_blocks,
                    tokens=num_blocks // h.groups * h.block, max_len=max_len, concurrency=num_blocks / per_request,
                    max_len_one_request=longest)


def _longest(kv: KvSize, num_blocks: int, block: int, batched_tokens: int) -> int:
    """The longest request that fits when sliding layers are bounded by their window (binary search, as vLLM's
    estimated maximum model length)."""
    lo, hi = 0, 1 << 24
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if blocks_per_request(kv, mid, block, batched_tokens) <= num_blocks:
            lo = mid
        else:
            hi = mid - 1
    return lo
