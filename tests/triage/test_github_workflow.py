"""examples/github/triage-new-issues.yml (#39 item 5): the workflow's own steps run here on a recorded `issues`
event payload (tests/data/github/issue-opened.json, written for this test), never against GitHub — the body step
(with jq when the machine has it), the triage step as written, and the comment step is only read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import DATA, REPO

yaml = pytest.importorskip("yaml")  # PyYAML arrives with the test extra (Ray requires it)

WORKFLOW = REPO / "examples" / "github" / "triage-new-issues.yml"
EVENT = DATA / "github" / "issue-opened.json"


def steps() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    return {s["id"]: s for s in doc["jobs"]["triage"]["steps"] if "id" in s}


def test_no_run_line_interpolates_text_of_the_issue():
    """`${{ github.event.issue.body }}` (or title) inside `run:` is a script injection: an issue could run commands."""
    doc = yaml.safe_load(WORKFLOW.read_text())
    for step in doc["jobs"]["triage"]["steps"]:
        assert "github.event.issue" not in step.get("run", ""), step
    assert doc["permissions"] == {"contents": "read", "issues": "write"}
    assert doc[True]["issues"]["types"] == ["opened"]  # YAML 1.1 reads the key `on` as True


def test_the_workflow_turns_a_recorded_issue_into_a_triage_comment(tmp_path: Path):
    s = steps()
    shutil.copy(EVENT, tmp_path / "event.json")
    env = {**os.environ, "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "PYTHONPATH": str(REPO)}
    if shutil.which("jq"):
        subprocess.run(["bash", "-e", "-c", s["body"]["run"]], cwd=tmp_path, env=env, check=True, timeout=60)
    else:  # what the jq filter does: the body, or "" for an issue without one
        (tmp_path / "issue.md").write_text(json.loads(EVENT.read_text())["issue"]["body"] or "")
    assert "collect_env" in (tmp_path / "issue.md").read_text()
    exe = shutil.which("ascend-doctor", path=env["PATH"])
    if exe is None:
        pytest.skip("the ascend-doctor console script is not installed in this interpreter's environment")
    r = subprocess.run(["bash", "-e", "-c", s["triage"]["run"]], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr  # problems found are the answer, not a failed job
    comment = (tmp_path / "comment.md").read_text()
    assert "TRIAGE105" in comment and "not an Ascend environment" in comment
    assert "<details>" in comment and not (tmp_path / "owned").exists() and not Path("/tmp/owned").exists()
    assert '--body-file comment.md' in s["comment"]["run"] and '"$NUMBER"' in s["comment"]["run"]
    assert s["comment"]["env"]["NUMBER"] == "${{ github.event.issue.number }}"
