"""The `serve/flashcomm-vl` table: what each vllm-ascend release says and does about FlashComm1 on a VL model
(SERVE321). `ascend_doctor.sync.flashcomm_vl` reads it from each sdist; `matrix sync --vllm-ascend SDIST` proposes
the rows.

FlashComm1 splits the hidden states across TP ranks with custom ops built for text models; a VL model's vision path
adds full-sequence tensors to them (Qwen3-VL's deepstack embeddings), so it breaks unless the release adapted that
model (the guide: "it is difficult to support VL-class models", vllm-ascend#5712). A row holds, for the releases that
say and do the same:

* `guide` / `guide_quantized`: the sequence-parallelism guide's support-matrix cells, feature (`flashcomm1`, `sp`)
  -> model class (`vl_dense`, `vl_moe`, `dense`, `moe`) -> `x` or the modes it runs in; empty when the release has
  no guide (before 0.15.0rc1, and from 0.27.1rc1, whose guide no longer has the table);
* `refuses`: platform.py stops at start (that refusal is release rule REL-B16's and SERVE318's to judge);
* `adapted`: the VL models its code adapts FlashComm1 to — `qwen3_vl` (Qwen3-VL / Qwen3-VL-MoE), `mla` (a VL
  model whose text model uses MLA, such as Kimi-K2.5);
* `tutorials`: the models its own tutorials serve with FlashComm1 on (by directory name). 0.18.0-0.20.2rc1 serve
  Qwen3.5-397B-A17B (a VL MoE model) so, though their guide marks VL + MoE `x`: SERVE321 does not pick between them.
"""

from __future__ import annotations

from typing import Dict, List, Literal, Optional, Tuple

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.knowledge.release_rows import ReleaseRowsTable
from ascend_doctor.text.versions import parse_version

Cells = Dict[str, Dict[str, str]]
QWEN3_VL_TYPES = frozenset({"qwen3_vl", "qwen3_vl_moe"})


class FlashcommVlRow(Model, extra="forbid"):
    id: str = Field(pattern=r"^FCVL-[0-9a-f]{10}$")
    guide: Cells = Field(default_factory=dict, description="feature -> model class -> cell, unquantized")
    guide_quantized: Cells = Field(default_factory=dict, description="the same, with quantization")
    refuses: bool = Field(description="platform.py stops at start when FlashComm1 is on for a VL model")
    adapted: List[Literal["qwen3_vl", "mla"]] = Field(default_factory=list)
    tutorials: List[str] = Field(default_factory=list, description="the models (directory names) the release's own "
                                                                  "tutorials serve with FlashComm1 on")
    releases: List[str] = Field(min_length=1)
    source: List[str] = Field(min_length=1)


class FlashcommVl(ReleaseRowsTable, extra="forbid"):
    release: List[FlashcommVlRow] = Field(min_length=1)

    def guide_for(self, version: str) -> Tuple[Optional[FlashcommVlRow], Optional[str]]:
        """(the row whose guide speaks for `version`, the release it was read from): its own, else the first later
        release's that has one (a release before the first guide is judged by it, and says so); (None, None) when
        no guide at or after it."""
        v = parse_version(version)
        later = sorted(((parse_version(x), x, r) for r in self.release if r.guide for x in r.releases
                        if parse_version(x) >= v), key=lambda t: t[0])
        return (later[0][2], later[0][1]) if later else (None, None)


def model_class(vl: bool, moe: bool) -> str:
    """The guide's column: vl_dense, vl_moe, dense, moe."""
    return ("vl_" if vl else "") + ("moe" if moe else "dense")


def adapted_for(row: FlashcommVlRow, model_type: str, mla: bool) -> Optional[str]:
    """Which of the release's adaptations covers the model ('qwen3_vl', 'mla'), None when none does."""
    if "qwen3_vl" in row.adapted and model_type in QWEN3_VL_TYPES:
        return "qwen3_vl"
    if "mla" in row.adapted and mla:
        return "mla"
    return None
