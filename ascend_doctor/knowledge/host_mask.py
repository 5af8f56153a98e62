"""The [L, L] causal attention mask some vllm-ascend releases pre-build on the host in every worker process, and the
host memory it takes — the `serve/host-attn-mask` table (SERVE323).

L is the server's max_model_len in those releases, so the memory grows with the square of the context length: a
256k context on 8 ranks takes about 1 TB of host memory before a request is served (vllm-ascend#3454). The table
says which releases build it and what each element costs while it is built and once kept; this module does the
arithmetic.
"""

from __future__ import annotations

from datetime import date
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import SpecifierSet, try_parse_version


class MaskCost(Model, extra="forbid"):
    peak_bytes: int = Field(gt=0, description="bytes per mask element while it is built")
    kept_bytes: int = Field(gt=0, description="bytes per element once cast to the serving dtype")
    source: list[str] = Field(min_length=1)


class Prebuilt(Model, extra="forbid"):
    vllm_ascend: str = Field(description="the releases that build the mask from max_model_len (a specifier)")
    unless_cann: Optional[str] = Field(None, description="a CANN (specifier) with which the release builds it from "
                                                         "max_num_batched_tokens instead")
    source: list[str] = Field(min_length=1)


class HostMask(Model, extra="forbid"):
    schema_version: int
    updated: date
    cost: MaskCost
    prebuilt: list[Prebuilt] = Field(min_length=1)

    def row_for(self, version: str) -> Optional[Prebuilt]:
        v = try_parse_version(version)
        return next((r for r in self.prebuilt if v is not None and SpecifierSet(r.vllm_ascend).contains(v)), None)


def mask_bytes(length: int, workers: int, per_element: int) -> int:
    """What `workers` processes take for one [length, length] mask each, at `per_element` bytes an element."""
    return workers * length * length * per_element
