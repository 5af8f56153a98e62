"""The bugs vllm-ascend's release managers tracked as open when a release shipped (the `serve/open-bugs` table).

From v0.14.0rc1 on, each "[Release]: Release checklist for vX" issue has a "Bug need Solve" list; an item still
unticked there is the maintainers' statement that the release carries the bug. The release notes rarely repeat them
(their "Known issues" are the `serve/known-issues` table), yet other users file the same bug again and again — the
held-out draws of #38 pick those reports up (docs/research/release-checklists.md).

A row is one such bug: its issue's title verbatim, the checklists that list it open, the releases a source shows it
on (`seen`: the report's own release, the checklist's, a later report that says it is still there) and the range
they span (`vllm_ascend`, never wider than those sources: a checklist says a bug was open, not which release fixed
it), and — written from the bug's own thread — when it bites, in the vocabulary of the known-issue rows
(ascend_doctor.knowledge.known_issues.IssueConditions; `applies` judges both). SERVE315 warns of a row that
applies: a bug tracked open is a warning, never a failure.
"""

from __future__ import annotations

from datetime import date

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.knowledge.known_issues import IssueConditions


class OpenBug(IssueConditions, extra="forbid"):
    id: str = Field(pattern=r"^OB-[0-9]+$")  # OB-<the bug's vllm-ascend issue number>
    title: str  # the bug issue's title, verbatim
    issue: str = Field(pattern=r"^https://github\.com/vllm-project/vllm-ascend/issues/[0-9]+$")
    checklists: list[str] = Field(min_length=1)  # "vX <checklist URL>": the checklists listing it unticked
    vllm_ascend: str  # the releases `seen` spans (required: a checklist states no fix)
    seen: list[str] = Field(min_length=1)  # "<release> (<which source shows it there>)"
    state: str = Field(pattern=r"^(open|closed)$")  # the bug issue's state in the stored tracker
    says: str
    source: list[str] = Field(min_length=1)

    @property
    def number(self) -> str:
        return self.id.removeprefix("OB-")


class OpenBugs(Model, extra="forbid"):
    schema_version: int
    updated: date
    open_bug: list[OpenBug] = []
