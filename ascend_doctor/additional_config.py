"""Which `--additional-config` keys each vllm-ascend release reads (matrices/serve/additional-config.toml, extracted
from each release tag by ascend_doctor.sync.ascend_config), and what that means for one key of a command."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

from ascend_doctor.i18n import T
from ascend_doctor.paths import builtin_matrices_dir
from ascend_doctor.tomlread import read_toml
from ascend_doctor.versions import parse_version, try_parse_version


@dataclass(frozen=True)
class ReleaseKeys:
    version: str
    source: str
    keys: frozenset


@lru_cache(maxsize=1)
def releases() -> tuple[ReleaseKeys, ...]:
    """Every recorded release, oldest first."""
    data = read_toml(builtin_matrices_dir() / "serve" / "additional-config.toml", "matrix")
    rows = [ReleaseKeys(r["version"], r["source"], frozenset(r["keys"])) for r in data.get("release", [])]
    return tuple(sorted(rows, key=lambda r: parse_version(r.version)))


def row_for(version: str) -> tuple[Optional[ReleaseKeys], Any]:
    """(row, how): the release's own row ("exact"), the nearest older recorded one ("nearest older"), or (None, why)."""
    v = try_parse_version(version)
    if v is None:
        return None, T("vllm-ascend {version} is not a version the doctor can order", version=version)
    rows = releases()
    for r in rows:
        if parse_version(r.version).main_key == v.main_key:
            return r, "exact"
    older = [r for r in rows if parse_version(r.version) < v]
    if not older:
        return None, T("no release at or before vllm-ascend {version} is recorded", version=version)
    return older[-1], "nearest older"


def history(key: str, before: str) -> tuple[Optional[str], Optional[str]]:
    """(last release before `before` that read `key`, first release after it that no longer did)."""
    last = dropped = None
    b = parse_version(before)
    for r in releases():
        if parse_version(r.version) > b:
            break
        if key in r.keys:
            last, dropped = r.version, None
        elif last is not None and dropped is None:
            dropped = r.version
    return last, dropped


def ever_read(key: str) -> bool:
    return any(key in r.keys for r in releases())


@lru_cache(maxsize=None)
def start_check_range(check_id: str) -> tuple[str, str]:
    """(vllm-ascend specifier, first source) of a check vllm-ascend makes at start
    (matrices/serve/start-checks.toml)."""
    data = read_toml(builtin_matrices_dir() / "serve" / "start-checks.toml", "matrix")
    row = next(r for r in data.get("start_check", []) if r["id"] == check_id)
    return row["vllm_ascend"], row["source"][0]
