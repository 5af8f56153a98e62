"""The example hosts replay to exactly the findings their descriptions promise."""

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO

EXAMPLES = REPO / "examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text())


def test_examples_are_what_the_builder_builds():
    r = subprocess.run([sys.executable, str(EXAMPLES / "build_examples.py"), "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_example_is_documented():
    assert sorted(p.name.replace(".snapshot.json", "") for p in EXAMPLES.glob("*.snapshot.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_replays_to_its_documented_findings(name):
    path = EXAMPLES / f"{name}.snapshot.json"
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay", str(path), "--format", "json"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    report = json.loads(r.stdout)
    got = {f["code"]: f["status"] for f in report["findings"] if f["status"] not in ("pass", "skip")}
    assert got == EXPECTED[name]
    assert not [f for f in report["findings"] if f["status"] == "error"]
    assert r.returncode == report["exit_code"] == (0 if not any(s == "fail" for s in got.values()) else 1)
    # The description names the same findings, for people reading the file.
    desc = json.loads(path.read_text())["description"]
    for code, status in EXPECTED[name].items():
        assert f"{code}: {status}" in desc
