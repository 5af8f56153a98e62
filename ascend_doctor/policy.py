"""Host policy: thresholds the host and HCCL checks compare against, as data (matrices/host-policy.toml, or a copy
given with `--policy FILE`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.model import Model
from ascend_doctor.paths import builtin_matrices_dir
from ascend_doctor.tomlread import load_model

POLICY_FILE = "host-policy.toml"


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


@lru_cache(maxsize=4)
def load_policy(path: Optional[str] = None) -> HostPolicy:
    return load_model(path or str(builtin_matrices_dir() / POLICY_FILE), HostPolicy, T("host policy"))
