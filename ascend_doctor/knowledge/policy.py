"""Host policy: the thresholds the host and HCCL checks compare against (the `host-policy` table; `--policy FILE` or
a `--matrix` layer with `table = "host-policy"` changes some or all of them)."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.core.model import Model


class Threshold(Model, extra="forbid"):
    minimum: float
    maximum: Optional[float] = None
    recommended: Optional[float] = None
    source: str
    note: str = ""


class HostPolicy(Model, extra="forbid"):
    schema_version: int
    nofile_soft: Threshold
    nofile_hard: Threshold
    shm_gib: Threshold
    mem_available_gib: Threshold
    disk_free_gib: Threshold
    python_bits: Threshold
    hccl_connect_timeout_s: Threshold
    hccl_exec_timeout_s: Threshold

