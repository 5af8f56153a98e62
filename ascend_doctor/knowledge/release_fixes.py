"""vllm-ascend's bug fixes and the releases that carry them (the `signatures/release-fixes` table, read from its git
history by `matrix sync --vllm-ascend-git DIR`, ascend_doctor.sync.fixes).

`after` is the one question triage asks: which fixes that changed this function does the installed release lack,
and which release has them. A release outside the history read (newer than its newest tag) is not judged: the
table cannot say what it carries.
"""

from __future__ import annotations

from datetime import date
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import try_parse_version


class ReleaseFix(Model, extra="forbid"):
    sha: str = Field(pattern=r"^[0-9a-f]{7,40}$")
    pr: int = Field(0, description="the pull request the fix was merged as (0: none named)")
    subject: str
    issues: list[int] = Field(default_factory=list, description="issues its message says it fixes")
    functions: list[str] = Field(min_length=1, description="`vllm_ascend/path.py:function` it changed")
    first: str = Field("", description="the lowest release that carries it ('': none yet, on main only)")
    missing: list[str] = Field(default_factory=list, description="releases above `first` that do not carry it")

    def carried_by(self, version: str, newest: str) -> Optional[bool]:
        """Whether release `version` has this fix; None when `version` is newer than the history read (`newest`)
        and the fix is on main only, or when `version` is no version."""
        v, top = try_parse_version(version), try_parse_version(newest)
        if v is None or top is None:
            return None
        if not self.first:
            return False if v <= top else None
        first = try_parse_version(self.first)
        return v >= first and not any(try_parse_version(m) == v for m in self.missing)


class ReleaseFixes(Model, extra="forbid"):
    schema_version: int
    updated: date
    source: str = Field(description="the history read: repository and its newest commit")
    newest: str = Field(description="the newest release tag of that history")
    fix: list[ReleaseFix] = Field(default_factory=list)

    def after(self, version: str, path: str, function: str) -> Optional[list[ReleaseFix]]:
        """The fixes that changed `path:function` and release `version` lacks, the earliest release first (main-only
        last); None when `version` cannot be judged against this history: newer than it, or a development or local
        build (`0.19.1rc2.dev720+g4431251`: which fixes of main it has depends on its commit, not its number)."""
        v, top = try_parse_version(version), try_parse_version(self.newest)
        if v is None or top is None or v > top or v.is_devrelease() or v.local:
            return None
        key = f"{path}:{function}"
        found = [f for f in self.fix if key in f.functions and f.carried_by(version, self.newest) is False]
        return sorted(found, key=lambda f: (not f.first, try_parse_version(f.first) if f.first else top, f.sha))
