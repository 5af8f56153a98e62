"""The cache of a DeepSeek-sparse-attention layer (DeepSeek-V3.2, GLM-5), as each vllm-ascend release lays it out.

A DSA layer caches the MLA latent (`kv_lora_rank + qk_rope_head_dim` values) and the indexer's key (`index_head_dim`
values). Until 0.14.0rc1 vllm-ascend declared the layer a FullAttentionSpec of the latent, which allocates K and V —
twice the latent — and kept the indexer's key in part of it; PR #6610 (first tag 0.15.0rc1) declared exactly the
latent and the key: 1408 B per token and layer against 2304 B for DeepSeek-V3.2 in bf16 (its description: 15,872 →
25,984 tokens on one A3). The `deploy/dsa-pages` rows (read through the knowledge door) say which release does which.
"""

from __future__ import annotations

from datetime import date
from typing import Literal, Optional, Sequence

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.hybrid import ReleaseRange, release_range
from ascend_doctor.i18n import Localized, T
from ascend_doctor.text.versions import parse_version


class DsaRange(ReleaseRange):
    """One row of the `deploy/dsa-pages` table: the releases that cache a DSA layer one way."""

    rule: Literal["latent-twice", "latent-and-index"]


class DsaRules(Model, extra="forbid"):
    schema_version: int
    updated: date
    range: list[DsaRange]


def dsa_values(rank: int, rope: int, index: int, vllm_ascend: Optional[str],
               ranges: Sequence[DsaRange]) -> tuple[Optional[int], Localized]:
    """(values cached per token and layer, the formula and where it is read); (None, why) for a release before every
    range. Without rows (a caller that loads none) or for an unknown release: the newest rule, said so."""
    row, found = release_range(ranges, vllm_ascend)
    if found == "outside":
        return None, T("vllm-ascend {version} predates DeepSeek sparse attention ({first} on)", version=vllm_ascend,
                       first=min(ranges, key=lambda r: parse_version(r.first)).first)
    rule = row.rule if row is not None else "latent-and-index"
    how = (T("vllm-ascend {version}: {source}", version=vllm_ascend, source=row.source) if found == "in"
           else T("the newest vllm-ascend layout assumed"))
    if rule == "latent-twice":
        return 2 * (rank + rope), T("MLA with a DSA indexer, cached as K and V of the latent: 2 × (kv_lora_rank "
                                    "{rank} + qk_rope_head_dim {rope}) ({how})", rank=rank, rope=rope, how=how)
    return rank + rope + index, T("MLA with a DSA indexer: kv_lora_rank {rank} + qk_rope_head_dim {rope} + "
                                  "index_head_dim {index} ({how})", rank=rank, rope=rope, index=index, how=how)
