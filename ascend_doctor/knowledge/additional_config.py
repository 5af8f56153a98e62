"""Which `--additional-config` keys each vllm-ascend release reads (the `serve/additional-config` table, extracted
from each release tag by ascend_doctor.sync.ascend_config), what that means for one key of a command, and the checks
vllm-ascend itself makes on a command at start (the `serve/start-checks` table)."""

from __future__ import annotations

from datetime import date
from functools import cached_property
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.text.versions import parse_version, release_row, try_parse_version


class ReleaseKeys(Model, extra="forbid", frozen=True):
    """The keys one release accepts: top-level names, and `sub.key` for the keys of a sub-config it validates."""

    version: str
    source: str
    keys: frozenset[str]
    strict: bool = False  # an unknown key stops vLLM at start (AscendConfig is pydantic, extra="forbid")
    lenient_with: Optional[str] = None  # a distribution whose presence turns an unknown top-level key into a warning

    @cached_property
    def top_keys(self) -> frozenset[str]:
        return frozenset(k for k in self.keys if "." not in k)

    def sub_keys(self, key: str) -> frozenset[str]:
        """The `key.sub` names recorded for one top-level key (empty when the release does not validate its dict)."""
        return frozenset(k for k in self.keys if k.startswith(key + "."))


class AdditionalConfigTable(Model, extra="forbid"):
    schema_version: int
    updated: date
    release: list[ReleaseKeys] = Field(min_length=1)

    @cached_property
    def releases(self) -> tuple[ReleaseKeys, ...]:
        """Every recorded release, oldest first."""
        return tuple(sorted(self.release, key=lambda r: parse_version(r.version)))

    def row_for(self, version: str, paired: Optional[str] = None) -> tuple[Optional[ReleaseKeys], Any]:
        """(row, how): the release's own row ("exact"), for a development build the row of the release that pairs
        its vLLM ("paired"), the nearest older recorded one ("nearest older"), or (None, why)."""
        row, how = release_row(self.releases, version, paired=paired)
        if row is not None:
            return row, how
        if try_parse_version(version) is None:
            return None, T("vllm-ascend {version} is not a version the doctor can order", version=version)
        return None, T("no release at or before vllm-ascend {version} is recorded", version=version)

    def history(self, key: str, before: str) -> tuple[Optional[str], Optional[str]]:
        """(last release before `before` that read `key`, first release after it that no longer did)."""
        last = dropped = None
        b = parse_version(before)
        for r in self.releases:
            if parse_version(r.version) > b:
                break
            if key in r.keys:
                last, dropped = r.version, None
            elif last is not None and dropped is None:
                dropped = r.version
        return last, dropped

    def ever_read(self, key: str) -> bool:
        return any(key in r.keys for r in self.releases)


class StartCheck(Model, extra="forbid"):
    id: str
    says: str
    vllm_ascend: str
    source: list[str] = Field(min_length=1)


class StartChecks(Model, extra="forbid"):
    schema_version: int
    updated: date
    start_check: list[StartCheck] = Field(min_length=1)

    def range_of(self, check_id: str) -> tuple[str, str]:
        """(vllm-ascend specifier, first source) of a check vllm-ascend makes at start."""
        row = next(r for r in self.start_check if r.id == check_id)
        return row.vllm_ascend, row.source[0]
