"""The non-torch memory vllm-ascend charges a rank besides the HCCL buffers, as each release measures it.

Until 0.14.x `NPUWorker.determine_available_memory` charged all the non-torch memory the device showed in use after
the profile run (`total − free − torch's current`): the ACL context and runtime of the whole process, about 1 GiB —
the figure the dense TP1 start-up logs of 0.9.2rc1 … 0.11.0rc3 fit (docs/research/calibration.md). vllm-ascend PR
#6625 (first tag 0.15.0rc1) took vLLM's `memory_profiling`, which charges only the non-torch *increase* since the
start-up snapshot: 0.01-0.03 GiB at TP1 in the logs that print it (`Actual usage: … GiB for non-torch memory`), the
HCCL buffers on top at TP > 1 (the budget's own term). The `deploy/runtime-reserve` rows say which release does
which; read through the knowledge door.
"""

from __future__ import annotations

from datetime import date
from typing import Literal, Optional, Sequence

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.budget import Term, default_reserve
from ascend_doctor.deploy.hybrid import ReleaseRange, release_range
from ascend_doctor.i18n import T
from ascend_doctor.text.versions import parse_version


class ReserveRange(ReleaseRange):
    """One row of the `deploy/runtime-reserve` table: how a range of releases charges non-torch memory."""

    rule: Literal["since-start", "increase"]
    mib: int = Field(gt=0, description="the reserve per rank, besides the HCCL buffers")


class ReserveRules(Model, extra="forbid"):
    schema_version: int
    updated: date
    range: list[ReserveRange]


def reserve_term(release: Optional[str], ranges: Sequence[ReserveRange]) -> Term:
    """The runtime-reserve term of a release's budget; without rows, the 1 GiB estimate; a release the rows do not
    cover takes the nearest range (the oldest before them, the newest for a name that is not a version), said so."""
    row, found = release_range(ranges, release)
    if found == "empty":
        return default_reserve()
    if found == "outside":
        row = min(ranges, key=lambda r: parse_version(r.first))
    what = (T("the process's non-torch memory since it started (ACL context and runtime)") if row.rule == "since-start"
            else T("the non-torch memory added since the start-up snapshot"))
    how = (T("vllm-ascend {release}: {source}", release=release, source=row.source) if found == "in"
           else T("vllm-ascend {release} not covered: the rule of {first} assumed ({source})",
                  release=release or "?", first=row.first, source=row.source))
    return Term(name=T("runtime reserve"), bytes=row.mib << 20, estimate=True,
                inputs=T("{what}: {mib} MiB ({how})", what=what, mib=row.mib, how=how))
