"""The KV cache of a Gated DeltaNet hybrid (Qwen3-Next, Qwen3.5, Qwen3.6): full-attention layers keep K and V per
token, linear-attention layers keep a fixed state per request — a conv state and a recurrent ("SSM") state. vLLM
stores both kinds in pages of one size, so the block size and the page are decided by the state, not by 128 tokens.

The state of one linear layer on one TP rank (vllm/model_executor/layers/mamba/mamba_utils.py
`gated_delta_net_state_shape`):

    conv  = (2 × key heads × key head dim + value heads × value head dim) / TP × (conv kernel − 1 + speculative
            tokens) × state dtype
    ssm   = value heads / TP × value head dim × key head dim × ssm dtype

The ssm dtype is the model's, or config.json's `mamba_ssm_dtype` (Qwen3.5 ships float32; vLLM's
`Qwen3_5ForConditionalGenerationConfig` reads it). How pages are made equal depends on the vllm-ascend release —
the `deploy/hybrid-pages` table says which release uses which rule (read in each release's
`vllm_ascend/patch/platform/patch_mamba_config.py`):

- `pad-state` (0.11.0rc1–0.15.0rc1: vLLM's rule with a 128-token alignment; 0.30.0rc1 on: vLLM's
  `Platform._align_hybrid_block_size` with the Ascend kernel block of 128): block = 128 × ⌈(conv + ssm) /
  (128 × attention bytes per token)⌉, the page = block × attention bytes per token, the state padded up to it.
- `ssm-aligned` (0.16.0rc1–0.29.0rc1: "because of the limit of Ascend Hardware, we need to keep all cache tensors
  contiguous"): block = 128 × ⌈ssm / (128 × K bytes per token)⌉, which must be exact ("Cannot align ssm_page_size and
  attn_page_size" otherwise); the page = block × (K + V) bytes per token + conv, every layer padded to it.

vLLM then groups the layers by kind into groups of the smaller kind's count (`_get_kv_cache_groups_uniform_page_size`:
12 full + 36 linear layers → 4 groups of 12), allocates `budget // (page × group size)` blocks shared by all groups,
and logs `KV cache size: blocks // groups × block` tokens (`_report_kv_cache_config`).
"""

from __future__ import annotations

import math
from datetime import date
from typing import Literal, Optional, Sequence, Union

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.i18n import Localized, T
from ascend_doctor.text.versions import parse_version, try_parse_version

# model_type values whose linear-attention layers are Gated DeltaNet (vLLM's qwen3_next.py and qwen3_5.py)
GDN_MODEL_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"})
KERNEL_BLOCK = 128  # vllm-ascend's attention kernel block (AscendAttentionBackend.get_supported_kernel_block_sizes)

# A request holds one state page per linear group (MambaSpec.max_memory_usage_bytes without prefix caching: the
# concurrency vllm-ascend#5020 logs, 210.07 = 2941 blocks / (11 + 3)); mamba_cache_mode "align" holds 2.
STATE_PAGES_PER_REQUEST = 1


class ReleaseRange(Model, extra="forbid"):
    """A row of a table that says how a range of vllm-ascend releases does one thing (deploy/hybrid-pages,
    deploy/dsa-pages): from `first` up to, not including, `before`, read at `source`."""

    first: str = Field(description="the first vllm-ascend release of the range")
    before: str = Field("", description="the first release after it; empty: open")
    source: str


class PageRange(ReleaseRange):
    """One row of the `deploy/hybrid-pages` table: the releases that page a hybrid by one rule."""

    rule: Literal["pad-state", "ssm-aligned"]


class PageRules(Model, extra="forbid"):
    schema_version: int
    updated: date
    range: list[PageRange]


def release_range(ranges: Sequence[ReleaseRange], vllm_ascend: Optional[str]):
    """(row, how) of a release-range table for a vllm-ascend release: (the row covering it, "in"); (the newest row,
    "unknown") when the release is not a version; (None, "outside") when no row covers it; (None, "empty")."""
    rows = sorted(ranges, key=lambda r: parse_version(r.first))
    if not rows:
        return None, "empty"
    v = try_parse_version(vllm_ascend)
    if v is None:
        return rows[-1], "unknown"
    row = next((r for r in rows if v >= parse_version(r.first) and (not r.before or v < parse_version(r.before))),
               None)
    return (row, "in") if row is not None else (None, "outside")


def rule_for(ranges: Sequence[PageRange], vllm_ascend: Optional[str]) -> tuple[Optional[str], Localized]:
    """(the page rule of that release, how it was chosen); (None, why) for a release before every range. An
    unknown release is planned with the newest range's rule, and the words say so."""
    row, how = release_range(ranges, vllm_ascend)
    if how == "empty":
        return None, T("no hybrid page rules are loaded (the deploy/hybrid-pages table)")
    if how == "unknown":
        return row.rule, T("vllm-ascend release not known: the rule of {first} and later assumed", first=row.first)
    if how == "in":
        return row.rule, T("vllm-ascend {version}: {source}", version=vllm_ascend, source=row.source)
    return None, T("vllm-ascend {version} predates the hybrid page rules read ({first} on)", version=vllm_ascend,
                   first=min(ranges, key=lambda r: parse_version(r.first)).first)


class HybridPages(Model):
    """One rank's pages for a GDN hybrid: what capacity() needs and what the plan shows."""

    rule: str
    block: int = Field(description="tokens per block of a full-attention layer")
    page_bytes: int = Field(description="bytes of one block of any layer, after padding")
    group_size: int
    full_groups: int
    linear_groups: int
    conv_bytes: int
    ssm_bytes: int
    how: Localized = Field("", description="the release whose rule this is, and where it is read")

    @property
    def groups(self) -> int:
        return self.full_groups + self.linear_groups


def state_bytes(a, tp: int, dtype_bytes: int, spec_tokens: int = 0) -> tuple[int, int]:
    """(conv, ssm) bytes of one linear layer's state for one request on one TP rank; speculative tokens (MTP) widen
    the conv state (`num_spec`)."""
    conv_dim = 2 * a.linear_key_heads * a.linear_key_head_dim + a.linear_value_heads * a.linear_value_head_dim
    conv = conv_dim // tp * (a.linear_conv_kernel - 1 + spec_tokens) * dtype_bytes
    ssm_dtype = a.ssm_dtype_bytes or dtype_bytes
    ssm = a.linear_value_heads // tp * a.linear_value_head_dim * a.linear_key_head_dim * ssm_dtype
    return conv, ssm


def _groups(full: int, linear: int) -> tuple[int, int, int]:
    """(group size, full groups, linear groups) after vLLM's `_get_kv_cache_groups_uniform_page_size`."""
    size = min(full, linear)
    if max(full, linear) < size * 1.25:
        size = max(full, linear)
    return size, math.ceil(full / size), math.ceil(linear / size)


def gdn_pages(a, tp: int, full: int, linear: int, kv_bytes: int, state_dtype_bytes: int,
              release: Optional[str], spec_tokens: int = 0,
              ranges: Sequence[PageRange] = ()) -> Union[HybridPages, Localized]:
    """The pages of one rank holding `full` attention and `linear` GDN layers, or why vLLM/vllm-ascend would not
    start (a TP size that does not divide the heads, an ssm page the release cannot align)."""
    if a.linear_value_heads % tp or a.linear_key_heads % tp:
        return T("{kh} key / {vh} value linear-attention heads are not divisible by tensor parallel size {tp}",
                 kh=a.linear_key_heads, vh=a.linear_value_heads, tp=tp)
    rule, how = rule_for(ranges, release)
    if rule is None:
        return how
    conv, ssm = state_bytes(a, tp, state_dtype_bytes, spec_tokens)
    k_token = max(1, a.kv_heads // tp) * a.head_dim * kv_bytes  # K of one token of one attention layer
    if rule == "ssm-aligned":
        big, small = max(conv, ssm), min(conv, ssm)
        block = KERNEL_BLOCK * math.ceil(big / (KERNEL_BLOCK * k_token))
        if block * k_token != big:
            return T("vllm-ascend {release} stops at start-up: the linear-attention state ({ssm} B) is not a whole "
                     "number of attention tokens ({k} B): \"Cannot align ssm_page_size and attn_page_size.\"",
                     release=release, ssm=big, k=k_token)
        page = block * 2 * k_token + small
    else:
        block = KERNEL_BLOCK * math.ceil((conv + ssm) / (KERNEL_BLOCK * 2 * k_token))
        page = block * 2 * k_token
    size, fg, lg = _groups(full, linear)
    return HybridPages(rule=rule, block=block, page_bytes=page, group_size=size, full_groups=fg, linear_groups=lg,
                       conv_bytes=conv, ssm_bytes=ssm, how=how)


def describe(p: HybridPages, tp: int) -> Localized:
    """The formula line of the plan's table, with every value used."""
    return T("Gated DeltaNet hybrid ({rule} pages): state per linear layer conv {conv} B + ssm {ssm} B at TP {tp}; "
             "block {block} tokens, page {page} B per layer; {groups} groups of {size} layers ({fg} full, {lg} "
             "linear), {pages} state page(s) per request per linear group ({how})", rule=p.rule, how=p.how,
             conv=p.conv_bytes, ssm=p.ssm_bytes, tp=tp, block=p.block, page=p.page_bytes, groups=p.groups,
             size=p.group_size, fg=p.full_groups, lg=p.linear_groups, pages=STATE_PAGES_PER_REQUEST)
