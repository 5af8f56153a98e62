"""The compute smoke's numbers as data (the `compute/compute-smoke` table): sizes, time limits, tolerances, the
slow-rank rule and the fused operators tested, each with its source. Code decides nothing here that the file can
say."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from ascend_doctor.core.model import Model


class PathSizes(Model, extra="forbid"):
    """What one path (npu or cpu) allocates, multiplies and sends, and how long it may take."""

    hbm_share: Optional[float] = Field(None, gt=0, le=0.9, description="NPU: share of each NPU's total HBM touched")
    memory_bytes: Optional[int] = Field(None, gt=0, description="CPU path: bytes each rank allocates and touches")
    default_ranks: Optional[int] = Field(None, gt=0, description="CPU path: ranks when --compute-ranks is not given")
    check_n: int = Field(gt=0, description="square matrix size of the correctness product")
    bench_n: int = Field(gt=0, description="square matrix size of the timed product")
    bench_seconds: float = Field(gt=0, description="time the timed products must fill (more iterations: steadier)")
    bench_max_iters: int = Field(gt=0)
    allreduce_bytes: int = Field(gt=0)
    allreduce_iters: int = Field(gt=0)
    collective_timeout_s: float = Field(gt=0, description="a rank may wait this long in the rendezvous or the "
                                                          "all-reduce before it is stopped")
    budget_s: float = Field(gt=0, description="the whole run, every rank (--compute-timeout)")
    source: str


class SlowRule(Model, extra="forbid"):
    slower_than_median: float = Field(gt=0, lt=1, description="a rank whose TFLOP/s is below the median by more "
                                                              "than this share is named")
    cpu_path: float = Field(gt=0, lt=1, description="the same share on the CPU path, whose ranks share the host's "
                                                    "cores: a rank's speed there says which core it ran on")
    cpu_path_source: str
    source: str

    def limit(self, cpu_path: bool) -> float:
        """The share below the median that names a rank, on this path."""
        return self.cpu_path if cpu_path else self.slower_than_median


class Tolerances(Model, extra="forbid"):
    """max |out - ref| <= tolerance x max |ref|, per dtype (ref: float64 on the CPU)."""

    bfloat16: float = Field(gt=0)
    float16: float = Field(gt=0)
    float32: float = Field(gt=0)
    source: str

    def of(self, dtype: str) -> float:
        return float(getattr(self, dtype))


class FusedOp(Model, extra="forbid"):
    name: Literal["rms_norm", "reshape_and_cache"] = Field(description="the case in the rank script")
    library: str = Field(description="aclnn | atb: which operator library serves it on an NPU")
    families: list[str] = Field(default_factory=list, description="chip families it runs on (empty: every one); "
                                                                  "the CPU path runs every op")
    exact: bool = Field(False, description="a copy, not arithmetic: the result must equal the reference exactly")
    npu_call: str
    cpu_call: str = Field(description="the torch kernel the CPU path runs in its place")
    source: str


class ComputePolicy(Model, extra="forbid"):
    schema_version: int
    grace_s: float = Field(gt=0, description="how long survivors may go on once the collective cannot form")
    npu: PathSizes
    cpu: PathSizes
    slow: SlowRule
    tolerance: Tolerances
    op: list[FusedOp] = Field(min_length=1)

