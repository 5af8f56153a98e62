"""vllm-ascend's bug fixes, read from its git history: which functions each fix changed and which release tags
carry it (the `triage/release-fixes` table, `matrix sync --vllm-ascend-git DIR`).

Why: most deployment failures users paste are a bug of the installed vllm-ascend release that a later release fixed
(16 of 21 development threads in docs/research/triage-2026-12/). The traceback names the function that raised;
the history names the fixes that changed that function after the user's release — the thread's fix, often, and at
worst a short list of what to read and the release to try.

Read from a clone or mirror of github.com/vllm-project/vllm-ascend (`git` is the only tool run; no network):
- a fix is a commit on main's first-parent line (PRs are squash-merged) whose subject says it fixes something
  (`[BugFix]`, `fix …`), not a CI, test or docs change, touching `vllm_ascend/**/*.py`;
- its functions are the enclosing `def` / `class` git's python diff driver names in each hunk header;
- a release tag carries it when the tag reaches the commit, or a commit whose subject names the same PR (a
  cherry-pick onto a release branch keeps the original PR number) or says the same words without its `[…]` tags and
  numbers (a cherry-pick opened as a new PR, `same_change`): `first` is the lowest such release and
  `missing` the releases above `first` that do not carry it (a release branch cut before the fix);
- `since` is the lowest release that has the code the fix removed or changed: `git blame` of those lines in the
  fix's parent names the commits that wrote them, and `since` is the first release with every one of them (the
  same carrier rule), never above `first`. A release below `since` never had what the fix corrects — a regression
  of 0.18.0 fixed in 0.19.1rc1 is no bug of 0.13.0. A fix that only adds lines has `since` = `first`: it says
  nothing of when its bug came, so no earlier release is claimed. Empty when git blame names nothing (a new file);
  `main` when no release tag has that code.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Callable, Dict, List, Optional

from ascend_doctor.text.versions import try_parse_version

Git = Callable[[List[str]], str]

_FIX = re.compile(r"\bbug\s?-?fix|\bfix(?:e[sd]|ing)?\b|\bhotfix\b", re.I)
_NOT_RUNTIME = re.compile(r"^\s*(?:\[[^\]]*\]\s*)*\[(?:CI|Test|Tests|Doc|Docs|Misc|Lint|UT|E2E|Build)\]"
                          r"|\bfix(?:e[sd])?\s+(?:typos?|lint|ci|ut|tests?|docs?|the doc)\b", re.I)
_PR = re.compile(r"\(#(\d+)\)")
_ISSUE = re.compile(r"(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s*(?:https://github\.com/vllm-project/"
                    r"vllm-ascend/issues/|#)(\d+)", re.I)
_HUNK_FUNC = re.compile(r"^@@ [^@]* @@\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")
_HUNK_OLD = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+")
_BLAMED = re.compile(r"^([0-9a-f]{40}) \d+ \d+")
_TAG = re.compile(r"^v(\d+\.\d+\.\d+(?:rc\d+|\.post\d+)?)$")
MAX_FUNCTIONS = 24  # a fix that changes more is a refactor: too broad to point at one raising function
SEP, END = "\x1f", "\x1e"
ATTRIBUTES = Path(__file__).with_name("python.gitattributes")  # `*.py diff=python`, shipped beside this module
GIT_TIMEOUT_S = 120.0  # the whole history of a local mirror: 3-6 s here


def git_runner(git_dir: str, timeout: float = GIT_TIMEOUT_S) -> Git:
    """`git --git-dir DIR ARGS` with git's python diff driver on (hunk headers name the enclosing def); a git that
    does not answer within `timeout` seconds raises subprocess.TimeoutExpired."""
    def run(args: List[str]) -> str:
        return subprocess.run(["git", "-c", f"core.attributesFile={ATTRIBUTES}", "--git-dir", git_dir, *args],
                              capture_output=True, text=True, check=True, errors="replace", timeout=timeout).stdout
    return run


def _releases(git: Git) -> List[tuple]:
    """[(version, tag)] of the release tags, oldest first."""
    out = []
    for tag in git(["tag", "--list", "v*"]).split():
        m = _TAG.match(tag)
        if m and try_parse_version(m.group(1)) is not None:
            out.append((m.group(1), tag))
    return sorted(out, key=lambda vt: try_parse_version(vt[0]))


def same_change(subject: str) -> str:
    """A subject as a cherry-pick onto a release branch rewrites it, reduced to what stays: without `[…]` tags
    (`[v0.11.0]`, `[main]`, `[BugFix]`), PR and issue numbers, case and punctuation; '' when under 20 characters
    remain (too generic to say two commits are one change)."""
    words = re.sub(r"[^a-z0-9]+", " ", re.sub(r"\[[^\[\]]*\]|\(?#\d+\)?", " ", subject.lower())).strip()
    return words if len(words) >= 20 else ""


def _carriers(git: Git, releases: List[tuple]) -> tuple[Dict[str, set], Dict[str, set]]:
    """({commit: releases that reach it}, {PR number or same_change subject: releases with a commit naming it}) —
    a cherry-pick keeps the original PR number in its subject, or is opened as a new PR with the same words."""
    by_commit: Dict[str, set] = {}
    by_pr: Dict[str, set] = {}
    for version, tag in releases:
        for line in git(["log", "--format=%H" + SEP + "%s", tag]).splitlines():
            sha, _, subject = line.partition(SEP)
            by_commit.setdefault(sha, set()).add(version)
            for key in re.findall(r"#(\d+)", subject) + [same_change(subject)]:
                if key:
                    by_pr.setdefault(key, set()).add(version)
    return by_commit, by_pr


def _carried_by(sha: str, subject: str, by_commit: Dict[str, set], by_pr: Dict[str, set]) -> set:
    """The releases that carry a commit: by reaching it, or by a commit naming its PR or saying the same."""
    out = set(by_commit.get(sha, ()))
    for key in _PR.findall(subject) + [same_change(subject)]:
        if key:
            out |= by_pr.get(key, set())
    return out


def _functions(patch: str) -> List[str]:
    """`vllm_ascend/path.py:function` for each hunk of a `git log -p -U0` patch, in order, once each."""
    out, path = [], None
    for line in patch.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and path and path.startswith("vllm_ascend/") and path.endswith(".py"):
            m = _HUNK_FUNC.match(line)
            if m:
                out.append(f"{path}:{m.group(1)}")
    return list(dict.fromkeys(out))


def _removed(patch: str) -> Dict[str, List[tuple]]:
    """{vllm_ascend/path.py: [(first line, count)]} of the lines each hunk of a `-U0` patch removes or changes, as
    numbered in the parent (a hunk that only inserts lines removes none)."""
    out: Dict[str, List[tuple]] = {}
    path = None
    for line in patch.splitlines():
        if line.startswith("--- "):
            path = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("@@") and path and path.startswith("vllm_ascend/") and path.endswith(".py"):
            m = _HUNK_OLD.match(line)
            count = (int(m.group(2)) if m.group(2) is not None else 1) if m else 0
            if count:
                out.setdefault(path, []).append((int(m.group(1)), count))
    return out


def _authors(git: Git, sha: str, removed: Dict[str, List[tuple]]) -> List[Dict[str, str]]:
    """For each hunk of the fix, {commit: its subject} of the commits `git blame` gives for its lines in the fix's
    parent (one blame per file; each porcelain header names the line it blames)."""
    hunks: List[Dict[str, str]] = []
    for path, ranges in removed.items():
        args = ["blame", "--porcelain"] + [a for start, n in ranges for a in ("-L", f"{start},+{n}")]
        try:
            out = git(args + [sha + "^", "--", path])
        except subprocess.CalledProcessError:  # a root commit, or a path git cannot follow
            continue
        mine: List[Dict[str, str]] = [{} for _ in ranges]
        subjects: Dict[str, str] = {}
        last = None
        for line in out.splitlines():
            m = _BLAMED.match(line)
            if m:
                last, at = m.group(1), int(line.split()[2])
                hit = next((i for i, (start, n) in enumerate(ranges) if start <= at < start + n), None)
                if hit is not None:
                    mine[hit][last] = ""
            elif line.startswith("summary ") and last:
                subjects[last] = line[8:]
        hunks += [{c: subjects.get(c, "") for c in hunk} for hunk in mine if hunk]
    return hunks


def _since(hunks: List[Dict[str, str]], by_commit: Dict[str, set], by_pr: Dict[str, set], order: List[str]) -> str:
    """The first release with all the code the fix changed: every commit that wrote its lines reached it (by the
    tag, or a cherry-pick naming its PR or saying the same). "main" when some of that code reached no release; ""
    when git blame named nothing. Strict on purpose: a release that has only part of the code a fix changed may
    not have the bug (holdout judgements of 2026-12-06: the lowest hunk's release let in fixes of code the release
    never had)."""
    since = -1
    for commit, subject in {c: s for hunk in hunks for c, s in hunk.items()}.items():
        index = min((order.index(v) for v in _carried_by(commit, subject, by_commit, by_pr)), default=None)
        if index is None:
            return "main"
        since = max(since, index)
    return order[since] if since >= 0 else ""


def read_fixes(git: Git, branch: str = "main", release_branches: bool = True) -> List[dict]:
    """Every fix of `branch`, newest first: sha, pr, subject, issues, functions, first, missing, since — then, with
    `release_branches`, the fixes made only on a release branch (`_branch_fixes`)."""
    releases = _releases(git)
    order = [v for v, _ in releases]
    by_commit, by_pr = _carriers(git, releases)
    rows = _fix_rows(git, ["--first-parent", branch], order, by_commit, by_pr)
    if release_branches:
        rows += _branch_fixes(git, branch, releases, by_commit, by_pr, rows)
    return rows


def _fix_rows(git: Git, revs: List[str], order: List[str], by_commit: Dict[str, set], by_pr: Dict[str, set],
              below: str = "") -> List[dict]:
    """The fix rows of the commits `git log REVS` lists; `below`: the release from which on whether a release
    carries a fix is not known (a release branch's fix: the main line after the branch's fork), so `missing` stops
    there."""
    log = git(["log", *revs, "-p", "-U0", "--no-color",
               "--format=" + END + "%H" + SEP + "%s" + SEP + "%b" + SEP, "--", "vllm_ascend"])
    stop = order.index(below) if below in order else len(order)
    rows = []
    for record in log.split(END)[1:]:
        sha, subject, body, patch = (record.split(SEP, 3) + ["", "", ""])[:4]
        if not _FIX.search(subject) or _NOT_RUNTIME.search(subject):
            continue
        functions = _functions(patch)
        if not functions or len(functions) > MAX_FUNCTIONS:
            continue
        pr = (_PR.findall(subject) or [""])[-1]
        carriers = _carried_by(sha, subject, by_commit, by_pr)
        first = next((v for v in order[:stop] if v in carriers), "")
        missing = [v for v in order[order.index(first) + 1:stop] if v not in carriers] if first else []
        removed = _removed(patch)
        # a fix that only adds lines says nothing of when its bug came (the line beside it may be older or newer
        # than the code it guards: h38f judged one such date wrong): no release before the fix is claimed
        since = _since(_authors(git, sha, removed), by_commit, by_pr, order) if removed else (first or "main")
        if first and (since == "main" or (since and order.index(since) > order.index(first))):
            since = first  # the release that took the fix had the code it fixes (came by other words than main's)
        rows.append({"sha": sha[:10], "pr": int(pr) if pr else 0, "subject": subject.strip()[:160],
                     "issues": sorted({int(n) for n in _ISSUE.findall(subject + "\n" + body)} - {int(pr or 0)}),
                     "functions": functions, "first": first, "missing": missing, "since": since})
    return rows


# The maintained release lines: `releases/v0.13.0`, `releases/v0.20.2rc`, and the older `v0.9.1-dev`
_RELEASE_BRANCH = re.compile(r"^(?:releases/v\d+\.\d+\.\d+\S*|v\d+\.\d+\.\d+-dev)$")


def _branch_fixes(git: Git, main: str, releases: List[tuple], by_commit: Dict[str, set], by_pr: Dict[str, set],
                  main_rows: List[dict]) -> List[dict]:
    """The fixes made on a release branch and never on `main` (vllm-ascend#3557 on v0.11.0-dev, #9957 on
    releases/v0.20.2rc: the releases users run take them, main had them otherwise or not at all). A cherry-pick of a
    main fix (its PR number or its words) is the main row's. Each row names its `branch` and `unknown_from`: the
    first main-line release after the branch's fork — whether that release or a later one carries the fix is not
    known (main may have fixed the code otherwise, or never had it)."""
    order = [v for v, _ in releases]
    seen = {str(r["pr"]) for r in main_rows if r["pr"]} | {same_change(r["subject"]) for r in main_rows} - {""}
    on_main = [v for v, tag in releases if _is_ancestor(git, tag, main)]
    out: List[dict] = []
    for name in sorted(git(["for-each-ref", "--format=%(refname:short)", "refs/heads"]).split()):
        if not _RELEASE_BRANCH.match(name):
            continue
        fork = git(["merge-base", main, name]).strip()
        tags = dict(releases)  # the first main-line release past the fork (a tag at the fork is the branch's base)
        after = next((v for v in on_main if _is_ancestor(git, fork, tags[v])
                      and git(["rev-parse", tags[v] + "^{commit}"]).strip() != fork), "")
        for row in _fix_rows(git, ["--first-parent", name, "^" + main], order, by_commit, by_pr, below=after):
            keys = set(re.findall(r"#(\d+)", row["subject"])) | {same_change(row["subject"])}
            if keys & seen:
                continue
            seen |= keys - {""}
            out.append({**row, "branch": name, "unknown_from": after})
    return out


def _is_ancestor(git: Git, a: str, b: str) -> bool:
    try:
        git(["merge-base", "--is-ancestor", a, b])
        return True
    except subprocess.CalledProcessError:
        return False


def newest_release(git: Git) -> Optional[str]:
    releases = _releases(git)
    return releases[-1][0] if releases else None


def head_of(git: Git, branch: str = "main") -> str:
    """`main @ 182b75ea84 (2026-08-22)`: the commit the history was read at."""
    sha, day = git(["log", "-1", "--format=%H %cs", branch]).split()
    return f"{branch} @ {sha[:10]} ({day})"


def fix_proposals(table, rows: List[dict]) -> list:
    """A proposal per fix the shipped table lacks or holds differently (ascend_doctor.sync.diff.Proposal)."""
    from ascend_doctor.sync.diff import Proposal

    shipped = {f.sha: f.model_dump(exclude_defaults=True) for f in (table.fix if table is not None else [])}
    out = []
    for row in rows:
        row = {k: v for k, v in row.items() if v not in ("", [], 0)}
        have = shipped.get(row["sha"])
        if have == row:
            continue
        diffs = [] if have is None else [f"{k}: {have.get(k)!r} -> {row.get(k)!r}" for k in row.keys() | have.keys()
                                         if have.get(k) != row.get(k)]
        out.append(Proposal(table="release_fixes", id=row["sha"], change="new" if have is None else "changed",
                            differences=sorted(diffs), row=row))
    return out
