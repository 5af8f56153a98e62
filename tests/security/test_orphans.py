"""No process the probes start outlives the run (#23 item 8, #40 item 10): a vendor tool that detaches a daemon with
setsid() escapes the process-group kill, so each command is tagged in its environment, the doctor is the child
subreaper of its probes (a daemon that also clears its environment comes back to it), and the run sweeps, kills what
it finds and says so in the report's notes. Touches the real machine (marked localhost)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.security.procs import sleeping

pytestmark = pytest.mark.localhost

# Unique sleep lengths: the test finds its own daemons by command line, whatever else runs on the machine.
DETACHED = "313.25"
DOUBLE_FORKED = "314.25"
ENV_CLEARED = "315.25"  # a daemon that also clears its environment: no tag to find it by (#40 item 10)


def _fake_tools(bin_dir: Path) -> None:
    bin_dir.mkdir()
    npu_smi = bin_dir / "npu-smi"
    npu_smi.write_text(
        "#!/bin/sh\n"
        f"setsid sleep {DETACHED} >/dev/null 2>&1 </dev/null &\n"  # a new session: outside the group
        f"{sys.executable} -c 'import os, sys\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): sys.exit(0)\n"
        f"os.execvp(\"sleep\", [\"sleep\", \"{DOUBLE_FORKED}\"])' >/dev/null 2>&1 </dev/null\n"
        f"env -i setsid sh -c 'sleep {ENV_CLEARED} & exit 0' >/dev/null 2>&1 </dev/null &\n"
        "echo 'dcmi module initialize failed. ret is -8005' >&2\nexit 3\n")
    npu_smi.chmod(0o755)


def _ours() -> list[int]:
    return sleeping(DETACHED, DOUBLE_FORKED, ENV_CLEARED)


def _run(args, tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
           "ASCEND_DOCTOR_LANG": "en"}
    env.pop("ASCEND_DOCTOR_FORBID_LOCALHOST", None)
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture()
def fakes(tmp_path: Path):
    _fake_tools(tmp_path / "bin")
    yield tmp_path
    for pid in _ours():  # never leave them behind, whatever the outcome
        os.kill(pid, 9)


def test_check_kills_detached_daemons_and_says_so(fakes: Path):
    r = _run(["check", "--no-import-probe", "--probe-timeout", "5", "--format", "json", "-o", "r.json"], fakes)
    assert r.returncode in (0, 1), r.stderr
    time.sleep(0.2)
    assert _ours() == [], "a daemon of the probes outlived the run"
    notes = " ".join(json.loads((fakes / "r.json").read_text())["notes"])
    assert "left running by `npu-smi" in notes and "setsid" in notes, notes
    assert "sleep pid" in notes


def test_collect_kills_them_too_and_notes_it_in_the_snapshot(fakes: Path):
    r = _run(["collect", "--no-import-probe", "--probe-timeout", "5", "-o", "s.json"], fakes)
    assert r.returncode == 0, r.stderr
    time.sleep(0.2)
    assert _ours() == []
    notes = " ".join(json.loads((fakes / "s.json").read_text())["notes"])
    assert "left running by `npu-smi" in notes, notes
