"""Every vllm-ascend release note's "Known issues", as rows (the `serve/known-issues` table): the bullet verbatim, its
links and quoted error text as `matrix sync` reads them (ascend_doctor.sync.release_notes), and — written by a
maintainer from the bullet's own words — when it bites: the releases, the models, the features of the command
(ascend_doctor.knowledge.serve_features), the stack (CANN, driver, packages), the CPU and the chip.

`applies` is the one place that matches a row against a deployment; SERVE315 words it, triage uses the quoted text.
A condition the deployment does not show (no command, an unreadable model, an unknown driver) leaves the row
unjudged, never matched and never cleared.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import try_parse_version, version_in


class IssueConditions(Model):
    """When a release's bug bites, written by a maintainer from its source's own words: the releases, the models,
    the features of the command (ascend_doctor.knowledge.serve_features), the stack (CANN, driver, packages), the CPU
    and the chip; and what to say of it. Shared by every table of bugs a release carries (release notes' known
    issues, the release checklists' open bugs), so `applies` judges them one way."""

    vllm_ascend: Optional[str] = None  # releases it applies to
    models: list[str] = []
    features: list[str] = []
    stack: dict[str, str] = {}
    machine: list[str] = []
    chips: list[str] = []
    says: Optional[str] = None
    fix: Optional[str] = None

    @property
    def releases(self) -> str:
        return self.vllm_ascend or ""

    @property
    def conditioned(self) -> bool:
        return bool(self.models or self.features or self.stack or self.machine or self.chips)

    def for_release(self, version: str) -> bool:
        v = try_parse_version(version)
        return v is not None and bool(self.releases) and version_in(v, self.releases)


class KnownIssue(IssueConditions, extra="forbid"):
    id: str = Field(pattern=r"^KI-[0-9][0-9a-z.]*-[0-9a-f]{6}$")
    release: str  # the release whose notes list it
    text: str
    links: list[str] = []
    quoted: list[str] = []  # `…` spans of the bullet: log lines and errors a paste can carry
    source: str
    # vllm_ascend: default ==release; empty conditions: the notes state none a deployment shows (kept, not judged)

    @property
    def releases(self) -> str:
        return self.vllm_ascend or f"=={self.release}"


class KnownIssues(Model, extra="forbid"):
    schema_version: int
    updated: date
    known_issue: list[KnownIssue] = []


def applies(issue: IssueConditions, *, versions: dict, families: Optional[set], cmd, env: dict, model: Any,
            model_seen: bool) -> tuple[Optional[bool], list[str]]:
    """(True, what matched) when every condition holds, (False, []) when one does not, (None, what was not seen)
    when none fails but one could not be looked at."""
    from ascend_doctor.knowledge.serve_features import used
    from ascend_doctor.knowledge.support_matrix import is_model, model_keys, norm_folder

    seen, unseen = [], []
    for name, spec in issue.stack.items():
        v = try_parse_version(versions.get(name))
        if v is None:
            unseen.append(name)
        elif not version_in(v, spec):
            return False, []
        else:
            seen.append(f"{name} {versions[name]}")
    if issue.machine:
        m = versions.get("machine")
        if m is None:
            unseen.append("machine")
        elif m not in issue.machine:
            return False, []
        else:
            seen.append(m)
    if issue.chips:
        if families is None:
            unseen.append("chip")
        elif not (families & set(issue.chips)):
            return False, []
        else:
            seen.append("/".join(sorted(families & set(issue.chips))))
    if issue.models:
        keys, folder = model_keys(model) if model is not None else (set(), "")
        if not folder and cmd is not None and getattr(cmd, "model", None):
            folder = norm_folder(cmd.model)
        hit = next((n for n in issue.models if is_model(n, keys, folder)), None)
        if hit is not None:  # the folder's name alone can say which model it is
            seen.append(hit)
        elif not model_seen:
            unseen.append("model")
        else:
            return False, []
    for feature in issue.features:
        if cmd is None:
            unseen.append(feature)
            continue
        known, words = used(feature, cmd, env, model)
        if not known:
            unseen.append(feature)
        elif not words:
            return False, []
        else:
            seen.append(words)
    return (None, unseen) if unseen else (True, seen)
