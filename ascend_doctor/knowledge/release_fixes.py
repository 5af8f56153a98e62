"""vllm-ascend's bug fixes and the releases that carry them (the `signatures/release-fixes` table, read from its git
history by `matrix sync --vllm-ascend-git DIR`, ascend_doctor.sync.fixes).

`after` is the one question triage asks: which fixes that changed this function does the installed release lack,
and which release has them; SERVE320 asks which fixes for the served model and its features it lacks. Both count only
a fix whose corrected code the release has (`since`, from git blame): a regression that came and went after it is no
bug of that release. A release outside the history read (newer than its newest tag) is not judged: the
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
    since: str = Field("", description="the lowest release with the code the fix removed or changed (git blame; "
                                       "`first` for a fix that only adds lines); '' when git blame named nothing, "
                                       "'main' when no release tag has that code")
    branch: str = Field("", description="the release branch the fix was made on, never on main ('': main)")
    unknown_from: str = Field("", description="a release branch's fix: the first main-line release after the "
                                              "branch's fork; whether it or a later release carries the fix is not "
                                              "known")

    def present_in(self, version: str) -> bool:
        """Whether release `version` has the code this fix corrects: a release below `since` never had it (a
        regression fixed before it reached that release line is no bug of an older release). A version that is no
        version, or a fix without `since` (git blame named nothing), counts as having it."""
        if not self.since:
            return True
        if self.since == "main":
            return False
        v, since = try_parse_version(version), try_parse_version(self.since)
        return v is None or since is None or v >= since

    def lacked_by(self, version: str, newest: str) -> bool:
        """The release has the code this fix corrects and not the fix."""
        return self.carried_by(version, newest) is False and self.present_in(version)

    def carried_by(self, version: str, newest: str) -> Optional[bool]:
        """Whether release `version` has this fix; None when `version` is newer than the history read (`newest`)
        and the fix is on main only, when a release branch's fix meets a main-line release at or after
        `unknown_from`, or when `version` is no version."""
        v, top = try_parse_version(version), try_parse_version(newest)
        if v is None or top is None:
            return None
        after = try_parse_version(self.unknown_from) if self.unknown_from else None
        if after is not None and v >= after:
            return None  # the main line after a release branch's fork: it may have fixed the code otherwise
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
        """The fixes that changed `path:function` and release `version` lacks while it has the code they corrected
        (`since`), the earliest release first (main-only
        last); None when `version` cannot be judged against this history: newer than it, or a development or local
        build (`0.19.1rc2.dev720+g4431251`: which fixes of main it has depends on its commit, not its number)."""
        v, top = try_parse_version(version), try_parse_version(self.newest)
        if v is None or top is None or v > top or v.is_devrelease() or v.local:
            return None
        key = f"{path}:{function}"
        found = [f for f in self.fix if key in f.functions and f.lacked_by(version, self.newest)]
        return sorted(found, key=lambda f: (not f.first, try_parse_version(f.first) if f.first else top, f.sha))
