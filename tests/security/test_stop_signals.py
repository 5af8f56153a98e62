"""#40 item 10: a doctor told to stop ends what it started, at once. A hung vendor tool (and the `sleep &` it left in
its group) must not outlive a Ctrl-C or a SIGTERM of `check`, nor hold the doctor until its deadline. Touches the real
machine (marked localhost); the compute smoke's SIGKILL case is in tests/compute/test_cpu_path.py (it needs torch).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.security.procs import sleeping

pytestmark = pytest.mark.localhost

HUNG = "317.25"  # unique sleep lengths: the test finds its own processes by command line
CHILD = "318.25"


def _ours() -> list[int]:
    return sleeping(HUNG, CHILD)


@pytest.fixture()
def hung_npu_smi(tmp_path: Path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "npu-smi"
    tool.write_text(f"#!/bin/sh\nsleep {CHILD} &\nexec sleep {HUNG}\n")  # hangs, with a child in its group
    tool.chmod(0o755)
    yield tmp_path
    for pid in _ours():
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_check_leaves_no_probe_running(hung_npu_smi: Path, sig):
    env = {**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{hung_npu_smi / 'bin'}:{os.environ['PATH']}",
           "ASCEND_DOCTOR_LANG": "en"}
    env.pop("ASCEND_DOCTOR_FORBID_LOCALHOST", None)
    proc = subprocess.Popen([sys.executable, "-m", "ascend_doctor", "check", "--no-import-probe", "--probe-timeout",
                             "200", "--format", "json", "-o", "r.json"], cwd=hung_npu_smi, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        while len(_ours()) < 2 and time.monotonic() - t0 < 60:  # the hung tool and its child are running
            time.sleep(0.1)
        assert len(_ours()) == 2, "the fake npu-smi never started"
        proc.send_signal(sig)
        t1 = time.monotonic()
        _, err = proc.communicate(timeout=30)
        waited = time.monotonic() - t1
    finally:
        if proc.poll() is None:
            proc.kill()
    assert waited < 10, f"the doctor took {waited:.1f} s to stop (its probe deadline was 200 s)"
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM), (proc.returncode, err[-2000:])
    time.sleep(0.3)
    assert _ours() == [], "a probe the doctor started outlived it"
