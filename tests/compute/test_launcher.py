"""The launcher on any machine, no torch needed: the doctor's own interpreter has no torch, so every rank fails at
`import torch` — a real run of the unmodified launcher and rank script, read back through the probe's parser and
judged by NPU201."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from ascend_doctor.compute.facts import parse_record
from ascend_doctor.compute.launcher import LAUNCHER_SCRIPT, MARKER
from ascend_doctor.probes.compute import run_launcher
from ascend_doctor.seam.localhost import LocalHost
from ascend_doctor.testing import run_check
from tests.compute.cpu_tier import leftovers

pytestmark = pytest.mark.localhost


def orders(world: int = 2, budget: float = 30.0) -> dict:
    return {"world": world, "device": "cpu", "backend": "gloo", "master_addr": "127.0.0.1", "budget": budget,
            "grace": 1, "collective_timeout": 5, "hbm_share": None, "cpu_bytes": 1 << 20, "dtypes": ["float32"],
            "tolerance": {"float32": 1e-5}, "check_n": 8, "bench_n": 8, "bench_seconds": 0.01, "bench_max_iters": 2,
            "allreduce_bytes": 1024, "allreduce_iters": 1, "ops": []}


def test_ranks_that_cannot_import_torch_are_named_with_the_error():
    try:
        import torch  # noqa: F401
        pytest.skip("this interpreter has torch: the ranks would not fail at import")
    except ImportError:
        pass
    t0 = time.time()
    fact = run_launcher(LocalHost(), sys.executable, orders())
    assert fact.launcher_error is None and [r.rank for r in fact.ranks] == [0, 1]
    assert all(r.stage == "import" and r.returncode == 1 for r in fact.ranks)
    f = run_check("NPU201", {"npu_compute": fact})
    assert f.status.value == "fail"
    assert "rank(s) 0-1 failed in import (exit 1): ModuleNotFoundError: No module named 'torch'" in f.message
    assert leftovers(t0) == []


# The launcher under a poll() that hides every other exit: the loop must read each rank's exit code whichever of its
# polls sees it. Before, a rank whose exit the loop's settle missed and its liveness test saw was reported with exit
# code None ("exited (code None) in done before finishing": a false NPU201 fail on a run that passed, CI 2026-12-06).
_HIDING_POLL = r"""
import subprocess, sys
real_poll = subprocess.Popen.poll
def poll(self):
    rc = real_poll(self)
    if rc is None:
        return None
    self.seen = getattr(self, "seen", 0) + 1
    return None if self.seen % 2 else rc
subprocess.Popen.poll = poll
exec(sys.argv.pop(1))
"""


def test_every_rank_exit_code_is_read_whichever_poll_sees_it():
    out = subprocess.run([sys.executable, "-c", _HIDING_POLL, LAUNCHER_SCRIPT, json.dumps(orders())],
                         capture_output=True, text=True, timeout=60).stdout
    line = next(x for x in out.splitlines() if x.startswith(MARKER + " "))
    ranks = parse_record(json.loads(line.split(" ", 1)[1]))
    assert [r.rank for r in ranks] == [0, 1]
    assert all(r.returncode is not None for r in ranks), [(r.rank, r.stage, r.returncode) for r in ranks]
