"""How each vllm-ascend release sizes the HCCL buffer of a process group (the `deploy/hccl-groups` table).

Before 0.11.0rc1 every communicator takes HCCL_BUFFSIZE (CANN: "each communicator occupies 2 x HCCL_BUFFSIZE").
From it vllm-ascend's `GroupCoordinatorPatch` (patch/worker/patch_distributed.py) creates each group vLLM makes with
its own `hccl_buffer_size` (utils.py get_hccl_config_for_pg_options: 200 MB, the DP group its small buffer) and leaves
only the MC2 group, which gets no option, to HCCL_BUFFSIZE. The budget's HCCL term (deploy/budget.py `hccl`) reads
the row of the planned release through `group_mb`."""

from __future__ import annotations

from datetime import date
from typing import Literal, Optional, Sequence

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.hybrid import ReleaseRange, release_range


class HcclRange(ReleaseRange):
    """One row: `buffsize` — every group takes HCCL_BUFFSIZE; `group-option` — each group vLLM creates takes
    `group_mb` whatever HCCL_BUFFSIZE says, the MC2 group HCCL_BUFFSIZE."""

    rule: Literal["buffsize", "group-option"]
    group_mb: int = Field(0, ge=0, description="group-option: the MB each group gets")


class HcclRules(Model, extra="forbid"):
    schema_version: int
    updated: date
    range: list[HcclRange]


def group_mb(release: Optional[str], ranges: Sequence[HcclRange]) -> Optional[int]:
    """The MB vllm-ascend gives each non-MC2 group in `release`; None when every group takes HCCL_BUFFSIZE (a
    `buffsize` row, or no row for the release). A release that is not a version takes the newest row."""
    row, _how = release_range(ranges, release)
    return row.group_mb if row is not None and row.rule == "group-option" else None
