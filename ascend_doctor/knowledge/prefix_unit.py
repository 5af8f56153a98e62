"""The unit in which a vllm-ascend server reuses a cached prefix (SERVE326), worked out from the release's rules.

vLLM's prefix cache records and finds prefixes in whole blocks of the scheduler's block size; a request reuses
nothing of a prefix shorter than one block, and with EAGLE-style speculative decoding (eagle, eagle3, mtp, dflash,
dspark: `SpeculativeConfig.use_eagle`) the last matched block is dropped and recomputed
(vllm/v1/core/single_type_kv_cache_manager.py `drop_eagle_block`, vLLM 0.27.1), so reuse needs two. The block is
not what `--block-size` says on every deployment:

- **the server's block.** vllm-ascend replaces `--block-size` when prefix caching is on: 128 for a standard model
  (release rules REL-B13-001…003), for DeepSeek-V4 128 on 0.20.2rc1 and 32, 64 or 128 from 0.21.0rc1 (REL-B13-011,
  012; no `--block-size`: 128, `refresh_block_size` sets 128 before it looks at the model), and for a Gated DeltaNet
  hybrid the attention block that makes its pages equal (the `deploy/hybrid-pages` rule, ascend_doctor.deploy.hybrid:
  1024-2048 tokens for Qwen3.5), whose prefixes vllm-ascend caches from 0.17.0rc1 (PR #7103, `--mamba-cache-mode
  align`; its note: "if we run Qwen3.5-35B-A3B with -tp 2, the block_size is adjusted to 2048, which means that any
  prefix shorter than 2048 will never be cached").
- **compression.** DeepSeek-V4's compressed-attention layers keep one entry per `compress_ratio` tokens, and their
  KV-cache group's block covers block × ratio tokens of the sequence (vllm_ascend/models/layer/attention/layer.py:
  `block_size=storage_block_size * self.compress_ratio`; 0.21.0rc1-0.25.1rc1 `CompressAttentionManager`: hits in
  `num_tokens // (block_size * compress_ratio)` blocks). The scheduler's block is the least common multiple of the
  groups' blocks (vllm-ascend's `_ascend_resolve_kv_cache_block_sizes`), so the 1:128 layers set it: 16,384 tokens
  at block 128 — the maintainer's answer in vllm-ascend#10710 ("a minimum prefix cache hit length of 16k. This
  deteriorates to 32k when speculative decoding is enabled ... we recommend using a block size of 32"), 4,096 at
  block 32 (vllm-ascend#16270).
- **context parallelism.** The same function multiplies the block by the decode and prefill context-parallel sizes
  (`lcm(group_block_sizes) * dcp * pcp`; vLLM's own scales attention groups by DCP): a DCP of 8 makes 128 into 1,024.
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.core.model import Model
from ascend_doctor.i18n import Localized, T
from ascend_doctor.knowledge.release_rules import rules_for
from ascend_doctor.text.versions import parse_version, try_parse_version

# vLLM SpeculativeConfig.use_eagle (0.27.1): the methods whose prefix-cache hits drop their last block; the MTP
# methods of each model family (deepseek_mtp, qwen3_5_mtp, ...) are normalised to "mtp" by vLLM.
EAGLE_STYLE = frozenset({"eagle", "eagle3", "mtp", "dflash", "dspark"})

# From this unit on, the minimum a request must share is longer than the shared part of most chat traffic (a system
# prompt and tool schemas), and the prefix cache is likely to sit idle: the reports that saw no hit at all had 16,384
# and 32,768 (vllm-ascend#10710) and 4,096 (vllm-ascend#16270, prompts under 4,096 tokens).
LARGE_SHARE = 8192

# vllm-ascend caches the prefixes of a Gated DeltaNet hybrid from this release (PR #7103, first tag v0.17.0rc1).
HYBRID_PREFIX_FROM = "0.17.0rc1"

# The release rules that say which block the server uses (ascend_doctor/knowledge/release_rules.py conditions).
_STANDARD_128 = ("prefix_cache_block_size", "default_prefix_cache_block_size", "cache_block_size")
_V4_SIZES = (32, 64, 128)


def eagle_style(method: object) -> bool:
    m = str(method or "").strip().lower()
    return m in EAGLE_STYLE or m.endswith("_mtp")


def _rows(rules, version: str, when: tuple) -> list:
    return [r for r in rules_for(rules, version) if r.when in when]


def v4_block(rules, version: str, given: Optional[int]) -> tuple[Optional[int], Localized]:
    """(the block DeepSeek-V4 runs with on `version`, why), or (None, why) on a release that does not serve it."""
    forced = _rows(rules, version, ("dsv4_block_size_128",))
    if forced:
        return 128, T("vllm-ascend {version} runs DeepSeek-V4 with block size 128 whatever --block-size says ({id})",
                      version=version, id=forced[0].id)
    chosen = _rows(rules, version, ("dsv4_block_size",))
    if not chosen:
        return None, T("vllm-ascend {version} has no DeepSeek-V4 block-size rule (the model is served from 0.20.2rc1)",
                       version=version)
    if given is None:
        return 128, T("no --block-size: vllm-ascend {version} uses 128", version=version)
    if given in _V4_SIZES:
        return given, T("--block-size {given}", given=given)
    return 32, T("--block-size {given} is replaced by 32 for DeepSeek-V4 ({id})", given=given, id=chosen[0].id)


def standard_block(rules, version: str, given: Optional[int], model_type: str) -> tuple[int, Localized]:
    """(the block a model without compression or linear attention runs with when prefix caching is on, why)."""
    rows = [r for r in _rows(rules, version, _STANDARD_128) if model_type not in r.exempt_model_types]
    if rows:
        if given == 128:
            return 128, T("--block-size 128")
        return 128, T("vllm-ascend {version} uses block size 128 with prefix caching ({id})", version=version,
                      id=rows[0].id)
    if given:
        return given, T("--block-size {given}", given=given)
    return 128, T("no --block-size: the Ascend platform's default of 128")


def hybrid_release_ok(version: str) -> bool:
    v = try_parse_version(version)
    return v is not None and v >= parse_version(HYBRID_PREFIX_FROM)


class PrefixUnit(Model):
    """The scheduler's block when prefix caching is on, what makes it, and what a request must share to reuse."""

    unit: int
    factors: list[Localized]  # messages, kept as such so a zh report renders them in Chinese
    block_why: Localized
    eagle: bool = False
    context_parallel: bool = False

    @property
    def least_shared(self) -> int:
        """Tokens a request must share with a cached one before any is reused (one unit; two with EAGLE/MTP)."""
        return self.unit * (2 if self.eagle else 1)


def prefix_unit(block: int, why: Localized, ratio: int = 1, dcp: int = 1, pcp: int = 1,
                eagle: bool = False) -> PrefixUnit:
    """block × the largest compression × DCP × PCP, each factor named where it is not 1."""
    factors = [T("block {block}", block=block)]
    if ratio > 1:
        factors.append(T("{ratio} (1:{ratio} compressed attention)", ratio=ratio))
    if dcp > 1:
        factors.append(T("{dcp} (decode context parallel)", dcp=dcp))
    if pcp > 1:
        factors.append(T("{pcp} (prefill context parallel)", pcp=pcp))
    unit = block * max(1, ratio) * max(1, dcp) * max(1, pcp)
    return PrefixUnit(unit=unit, factors=factors, block_why=why, eagle=eagle,
                      context_parallel=dcp > 1 or pcp > 1)


def largest_ratio(cfg: dict) -> int:
    """The largest entry of DeepSeek-V4's `compress_ratios` (1 when it names none)."""
    ratios = cfg.get("compress_ratios")
    if not isinstance(ratios, list):
        return 1
    nums = [r for r in ratios if isinstance(r, int) and not isinstance(r, bool) and r > 1]
    return max(nums) if nums else 1


def smaller_v4_unit(unit: PrefixUnit, block: int) -> Optional[int]:
    """The unit DeepSeek-V4 would have at --block-size 32, when that is smaller."""
    return unit.unit // block * 32 if block > 32 else None


def v4_takes_32(rules, version: str) -> bool:
    """The release keeps a DeepSeek-V4 --block-size of 32 (REL-B13-011), rather than running 128 whatever it says."""
    return bool(_rows(rules, version, ("dsv4_block_size",))) and not _rows(rules, version, ("dsv4_block_size_128",))
