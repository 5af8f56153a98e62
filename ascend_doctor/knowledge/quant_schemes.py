"""The `serve/quant-schemes` table: the msModelSlim quantization types each vllm-ascend release builds a method for,
per layer kind (SERVE322). `ascend_doctor.sync.quant_schemes` reads it from each sdist; `matrix sync --vllm-ascend
SDIST` proposes the rows.

A description (quant_model_description.json) names a type per weight. vllm-ascend looks the type up for the
layer's kind — `linear` for a projection, `moe` for a FusedMoE layer's experts, `attention` for a KV-cache scheme —
and stops at start when it has none. Types come and go: `W8A8` is linear-only from 0.13.0rc1 (the static MoE method
was dropped), and `W4A8_DYNAMIC` linear layers, first built in 0.9.1rc2 (not in 0.9.2rc1), are gone from 0.27.1rc1
(only its MoE method is registered).

Beside the types, the facts that decide whether a W4A8_DYNAMIC linear layer's int4 weights are cast to FRACTAL_NZ,
where CANN's WeightQuantBatchMatmul accepts only the group sizes `nz_int4_group_sizes` names (64 and 128: a
hand-written field of the table, vllm-ascend#10834, #8770, #5603).
"""

from __future__ import annotations

from typing import Dict, List, Literal, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.knowledge.release_rows import ReleaseRowsTable
from ascend_doctor.text.versions import parse_version


class QuantSchemesRow(Model, extra="forbid"):
    id: str = Field(pattern=r"^QS-[0-9a-f]{10}$")
    schemes: Dict[str, List[str]] = Field(description="quant type -> the layer kinds the release builds a method for")
    how: Literal["registry", "method map", "quantizer classes"] = Field(description="where the release lists them")
    mindie_turbo: bool = Field(False, description="quantizer.py hands every layer to mindie_turbo's quantizer when "
                                                  "that package is installed (its types are then not these)")
    w4a8_linear_nz: bool = Field(False, description="the W4A8_DYNAMIC linear method casts its weights to FRACTAL_NZ "
                                                    "after loading (maybe_trans_nz)")
    w4a8_group_default: Optional[int] = Field(None, description="the group size that method assumes when the "
                                                                "description has no `group_size`")
    nz_default: Optional[int] = Field(None, description="VLLM_ASCEND_ENABLE_NZ's default in vllm_ascend/envs.py "
                                                        "(none: the release does not read the variable)")
    releases: List[str] = Field(min_length=1)
    source: List[str] = Field(min_length=1)


class QuantSchemes(ReleaseRowsTable, extra="forbid"):
    nz_int4_group_sizes: List[int] = Field(min_length=1, description="the group sizes CANN's WeightQuantBatchMatmul "
                                                                     "accepts for int4 weights in FRACTAL_NZ")
    nz_int4_source: List[str] = Field(min_length=1)
    release: List[QuantSchemesRow] = Field(min_length=1)

    def accepting(self, quant_type: str, kind: str) -> str:
        """The recorded releases that build a `quant_type` method for `kind` layers, as runs of consecutive recorded
        releases ("0.9.1rc2-0.9.1, 0.10.0rc1-0.26.0rc1"); "" when none does."""
        every = sorted((v for r in self.release for v in r.releases), key=parse_version)
        yes = {v for r in self.release if kind in r.schemes.get(quant_type, []) for v in r.releases}
        runs: List[List[str]] = []
        for i, v in enumerate(every):
            if v not in yes:
                continue
            if runs and i > 0 and every[i - 1] in yes:
                runs[-1][1] = v
            else:
                runs.append([v, v])
        return ", ".join(a if a == b else f"{a}-{b}" for a, b in runs)
