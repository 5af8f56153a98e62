"""The signatures/release-fixes table: vllm-ascend's bug fixes read from its git history (ascend_doctor.sync.fixes)
— on a small repository built here with real git (main, tags, a release branch with a cherry-pick), and, where a
mirror of github.com/vllm-project/vllm-ascend is stored, the shipped table against what sync reads from it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ascend_doctor.knowledge.release_fixes import ReleaseFix, ReleaseFixes
from ascend_doctor.sync.fixes import fix_proposals, git_runner, read_fixes
from tests.helpers import shipped

REPO = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("ASCEND_DOCTOR_VLLM_ASCEND_GIT",
                             REPO.parent / ".mirror" / "vllm-project+vllm-ascend" / "repo"))

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MLA = '''class AscendMLAImpl:
    def forward(self, q):
        return q


def helper():
    return 1
'''


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _commit(repo: Path, text: str, subject: str, body: str = "") -> None:
    path = repo / "vllm_ascend" / "attention" / "mla_v1.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", subject, *(["-m", body] if body else []))


@pytest.fixture()
def history(tmp_path):
    """main: v0.9.1rc1, a fix of forward (#12, fixes #7), v0.9.2rc1, a fix of helper (#14) on main only; branch
    releases/v0.9.1 (from v0.9.1rc1) gets a cherry-pick of #12 and tags v0.9.1; a docs fix and a CI fix are no fixes."""
    repo = tmp_path / "va"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, MLA, "[Feature] MLA (#10)")
    _git(repo, "tag", "v0.9.1rc1")
    fixed = MLA.replace("return q", "return q * 1")
    _commit(repo, fixed, "[BugFix] Fix MLA decode with torchair (#12)", "Fixes #7")
    _commit(repo, fixed + "# typo\n", "[Doc] fix typo (#13)")
    _git(repo, "tag", "v0.9.2rc1")
    _commit(repo, fixed.replace("return 1", "return 2") + "# typo\n", "fix helper on main (#14)")
    _git(repo, "checkout", "-q", "-b", "releases/v0.9.1", "v0.9.1rc1")
    _commit(repo, fixed, "[BugFix] Fix MLA decode with torchair (#12) (#15)")
    _git(repo, "tag", "v0.9.1")
    _git(repo, "checkout", "-q", "main")
    return repo


def test_fixes_their_functions_and_the_releases_that_carry_them(history):
    rows = {r["pr"]: r for r in read_fixes(git_runner(str(history / ".git")))}
    assert set(rows) == {12, 14}  # the docs "fix" is not one; the feature is not one
    mla = rows[12]
    assert mla["functions"] == ["vllm_ascend/attention/mla_v1.py:forward"] and mla["issues"] == [7]
    # v0.9.1 (a release branch) carries it by the cherry-pick naming #12; v0.9.1rc1 does not
    assert mla["first"] == "0.9.1" and mla["missing"] == []
    assert rows[14]["functions"] == ["vllm_ascend/attention/mla_v1.py:helper"] and rows[14]["first"] == ""


def test_after_names_the_fixes_a_release_lacks(history):
    rows = read_fixes(git_runner(str(history / ".git")))
    table = ReleaseFixes(schema_version=1, updated="2026-12-06", source="test", newest="0.9.2rc1",
                         fix=[ReleaseFix(**{k: v for k, v in r.items() if v not in ("", [], 0)}) for r in rows])
    path = "vllm_ascend/attention/mla_v1.py"
    assert [f.pr for f in table.after("0.9.1rc1", path, "forward")] == [12]
    assert table.after("0.9.1", path, "forward") == [] and table.after("0.9.2rc1", path, "forward") == []
    assert [f.pr for f in table.after("0.9.2rc1", path, "helper")] == [14]  # on main only: no release has it
    assert table.after("0.10.0", path, "forward") is None  # newer than the history read: not judged
    assert table.after("weird", path, "forward") is None
    assert table.after("0.9.1rc2.dev720+g4431251", path, "forward") is None  # which fixes: its commit says


def test_since_is_the_first_release_with_the_code_a_fix_changed(history):
    """git blame of the lines a fix removed: a regression fixed before any release had it is no bug of older ones."""
    repo = history
    text = (repo / "vllm_ascend" / "attention" / "mla_v1.py").read_text()
    _commit(repo, text + "\n\ndef decode(x):\n    return x + 1\n", "[Feature] decode (#16)")
    _git(repo, "tag", "v0.9.3rc1")
    _commit(repo, text + "\n\ndef decode(x):\n    return x + 2\n", "[BugFix] fix decode of negative offsets (#17)")
    _commit(repo, text + "\n\ndef decode(x):\n    x = abs(x)\n    return x + 2\n", "[BugFix] fix decode sign (#18)")
    _commit(repo, text + "\n\ndef decode(x):\n    x = abs(x)\n    return x + 3\n", "[BugFix] fix decode again (#19)")
    rows = {r["pr"]: r for r in read_fixes(git_runner(str(repo / ".git")))}
    assert rows[12]["since"] == "0.9.1rc1"  # forward's `return q` came with #10, in v0.9.1rc1
    assert rows[17]["since"] == "0.9.3rc1"  # decode came with #16
    assert rows[18]["since"] == "main"  # it only inserts a line: no release before the fix is claimed (none has it)
    assert rows[19]["since"] == "main"  # `return x + 2` (#17) reached no release tag
    table = ReleaseFixes(schema_version=1, updated="2026-12-06", source="test", newest="0.9.3rc1",
                         fix=[ReleaseFix(**{k: v for k, v in r.items() if v not in ("", [], 0)})
                              for r in rows.values()])
    path = "vllm_ascend/attention/mla_v1.py"
    assert sorted(f.pr for f in table.after("0.9.3rc1", path, "decode")) == [17]
    # a cherry-pick opened as a new PR with the same words is the same change
    _git(repo, "checkout", "-q", "-b", "releases/v0.9.3", "v0.9.3rc1")
    _commit(repo, text + "\n\ndef decode(x):\n    return x + 2\n", "[v0.9.3][BugFix] Fix decode of negative offsets (#20)")
    _git(repo, "tag", "v0.9.3")
    _git(repo, "checkout", "-q", "main")
    again = {r["pr"]: r for r in read_fixes(git_runner(str(repo / ".git")))}
    assert again[17]["first"] == "0.9.3" and rows[17]["first"] == ""
    # a fix that edits old code and code no release has is judged by all of it (strict: a release with only part of
    # the code it changed may not have the bug): forward's `return q * 1` is in v0.9.1, decode's line in no release
    now = (repo / "vllm_ascend" / "attention" / "mla_v1.py").read_text()
    both = now.replace("return q * 1", "return q * 2").replace("return x + 3", "return x + 4")
    _commit(repo, both, "[BugFix] fix forward and decode scaling together (#21)")
    assert {r["pr"]: r for r in read_fixes(git_runner(str(repo / ".git")))}[21]["since"] == "main"
    assert table.after("0.9.2rc1", path, "decode") == []  # 0.9.2rc1 had no decode to fix


def test_a_fix_made_only_on_a_release_branch_is_read_with_what_is_not_known(history):
    """A fix on releases/v0.9.1 that main never took (vllm-ascend#3557 on v0.11.0-dev): v0.9.1.post1 carries it, the
    branch's base v0.9.1rc1 and its v0.9.1 lack it, and whether main's v0.9.2rc1 (past the fork) has it is not
    known — main may have fixed the code otherwise. A cherry-pick of a main fix stays the main row's."""
    _git(history, "checkout", "-q", "releases/v0.9.1")
    _commit(history, MLA.replace("return q", "return q * 1").replace("return 1", "return 3"),
            "[BugFix] Fix the MLA helper on 0.9.1 (#20)", "Fixes #19")
    _git(history, "tag", "v0.9.1.post1")
    _git(history, "checkout", "-q", "main")
    rows = {r["pr"]: r for r in read_fixes(git_runner(str(history / ".git")))}
    branch = rows[20]
    assert (branch["branch"], branch["first"], branch["unknown_from"]) == ("releases/v0.9.1", "0.9.1.post1", "0.9.2rc1")
    assert branch["issues"] == [19] and 15 not in rows  # #15 is #12's cherry-pick
    fix = ReleaseFix(**{k: v for k, v in branch.items() if v not in ("", [], 0)})
    assert fix.carried_by("0.9.1", "0.9.2rc1") is False and fix.carried_by("0.9.1.post1", "0.9.2rc1") is True
    assert fix.carried_by("0.9.2rc1", "0.9.2rc1") is None and not fix.lacked_by("0.9.2rc1", "0.9.2rc1")


def test_sync_proposes_what_the_table_lacks(history):
    rows = read_fixes(git_runner(str(history / ".git")))
    assert {p.id for p in fix_proposals(None, rows)} == {r["sha"] for r in rows}
    table = ReleaseFixes(schema_version=1, updated="2026-12-06", source="test", newest="0.9.2rc1",
                         fix=[ReleaseFix(**{k: v for k, v in r.items() if v not in ("", [], 0)}) for r in rows])
    assert fix_proposals(table, rows) == []


def test_the_shipped_table_is_what_sync_reads_from_the_repository():
    """A stored mirror of github.com/vllm-project/vllm-ascend (skipped on a plain clone)."""
    if not (MIRROR / "HEAD").is_file():
        pytest.skip(f"{MIRROR} not stored here")
    git = git_runner(str(MIRROR))
    table = shipped().release_fixes
    if git(["rev-parse", "--short=10", "main"]).strip() not in table.source:
        pytest.skip(f"{MIRROR} is at another commit than the table's source ({table.source})")
    assert fix_proposals(table, read_fixes(git)) == []
