"""The compute smoke on the CPU/gloo path, through the doctor's CLI exactly as on an NPU host: the same launcher and
rank code, on the real torch of the vllm tier's interpreter. Faults are injected into one rank by a wrapper
interpreter (faults/sitecustomize.py) through torch's public functions; the doctor's code is not touched. After every
run, no launcher or rank process may be left."""

from __future__ import annotations

import time

import pytest

from tests.compute.cpu_tier import SKIP, fault_python, finding, leftovers, run_compute, torch_python

pytestmark = [pytest.mark.slow, pytest.mark.localhost, pytest.mark.skipif(torch_python() is None, reason=SKIP)]

CPU_BUDGET = 60.0  # matrices/compute/compute-smoke.toml [cpu] budget_s


def test_eight_ranks_pass_within_the_budget_with_per_rank_figures():
    t0 = time.time()
    rc, report, seconds = run_compute(torch_python())
    assert rc == 0, report
    assert {f["code"]: f["status"] for f in report["findings"]} == {f"NPU20{i}": "pass" for i in range(1, 7)}
    run = finding(report, "NPU201")
    assert "8 rank(s) finished every step" in run["message"] and "CPU path (gloo): no NPU was tested" in run["message"]
    # #40 item 6: said beside the verdict, not only in a finding -v shows
    assert "the compute smoke ran on the CPU path (gloo): no NPU was tested" in report["notes"]
    assert report["duration_s"] < CPU_BUDGET and seconds < CPU_BUDGET + 10
    speed = finding(report, "NPU204")["evidence"]
    assert len(speed) == 16 and all("TFLOP/s" in e["excerpt"] for e in speed)  # 8 ranks x bf16, fp16
    assert len(finding(report, "NPU206")["evidence"]) == 8
    assert all("busbw" in e["excerpt"] for e in finding(report, "NPU206")["evidence"])
    assert leftovers(t0) == []


def test_one_node_listens_on_no_network_interface(tmp_path, monkeypatch):
    """#40 item 10: torch's TCPStore server binds every interface whatever `master_addr` says (rank 0 listened on
    0.0.0.0 / ::); one node now meets through a file store and gloo binds loopback."""
    log = tmp_path / "listen.log"
    monkeypatch.setenv("ASCEND_DOCTOR_TEST_LISTEN_LOG", str(log))
    rc, report, _ = run_compute(fault_python(tmp_path, torch_python(), "listen:*"), "--compute-ranks", "2")
    assert rc == 0 and finding(report, "NPU201")["status"] == "pass", report
    seen = log.read_text().split("\n") if log.exists() else []
    loopback = ("0100007F:", "00000000000000000000000001000000:")  # 127.0.0.1, ::1 as /proc/net writes them
    outside = [s for s in seen if s and not s.split(" ", 1)[1].startswith(loopback)]
    assert outside == [], f"listening beyond loopback: {outside}"


def test_a_slow_rank_is_named(tmp_path):
    t0 = time.time()
    rc, report, _ = run_compute(fault_python(tmp_path, torch_python(), "slow:3"), "--compute-ranks", "4")
    speed = finding(report, "NPU204")
    assert rc == 0 and speed["status"] == "warn"
    assert "rank 3 bfloat16" in speed["message"] and "below the median" in speed["message"]
    assert "rank 0 " not in speed["message"] and "rank 1 " not in speed["message"]
    assert finding(report, "NPU201")["status"] == "pass"
    assert leftovers(t0) == []


def test_a_rank_that_computes_wrong_fails_matmul_correct(tmp_path):
    t0 = time.time()
    rc, report, _ = run_compute(fault_python(tmp_path, torch_python(), "wrong:1"), "--compute-ranks", "2")
    mm = finding(report, "NPU203")
    assert rc == 1 and mm["status"] == "fail"
    assert "rank(s) 1 bfloat16: max relative error" in mm["message"] and "rank(s) 0" not in mm["message"]
    assert finding(report, "NPU201")["status"] == "pass"  # it computed wrong without failing: only NPU203 says so
    assert leftovers(t0) == []


def test_a_hang_in_the_collective_is_bounded_and_named(tmp_path):
    t0 = time.time()
    rc, report, seconds = run_compute(fault_python(tmp_path, torch_python(), "hang:2"), "--compute-ranks", "4")
    run = finding(report, "NPU201")
    assert rc == 1 and run["status"] == "fail"
    assert "rank(s) 2 hung in allreduce" in run["message"]
    assert "rank(s) 0-1, 3 were waiting for them" in run["message"]
    assert finding(report, "NPU206")["status"] == "fail"
    assert finding(report, "NPU203")["status"] == "pass"  # the local steps of every rank were kept
    assert seconds < CPU_BUDGET + 10
    assert leftovers(t0) == []


def test_a_crash_in_the_collective_is_a_finding_with_nothing_left_running(tmp_path):
    t0 = time.time()
    rc, report, _ = run_compute(fault_python(tmp_path, torch_python(), "crash:1"), "--compute-ranks", "4")
    run = finding(report, "NPU201")
    assert rc == 1 and "rank(s) 1 killed by SIGSEGV in allreduce" in run["message"]
    rank1 = next(e for e in run["evidence"] if e["source"].startswith("rank 1 "))
    assert "Segmentation fault" in rank1["excerpt"]  # faulthandler's report, from the rank's stderr
    assert finding(report, "NPU206")["status"] == "fail"
    assert leftovers(t0) == []


def test_a_missing_rank_stops_the_others_instead_of_waiting(tmp_path):
    t0 = time.time()
    rc, report, seconds = run_compute(fault_python(tmp_path, torch_python(), "missing:0"), "--compute-ranks", "4")
    run = finding(report, "NPU201")
    assert rc == 1 and "rank(s) 0 never reported a step" in run["message"]
    assert "rank(s) 1-3 were waiting for them in rendezvous" in run["message"]
    ar = finding(report, "NPU206")
    assert ar["status"] == "unknown" and "rank(s) 0 ended before the collective" in ar["message"]
    assert seconds < 30  # stopped after the grace period, not after the 20 s collective timeout
    assert leftovers(t0) == []


def test_the_budget_stops_everything(tmp_path):
    """A budget too short for the imports: every rank is stopped at it, the report still comes."""
    t0 = time.time()
    rc, report, seconds = run_compute(torch_python(), "--compute-ranks", "2", "--compute-timeout", "1")
    run = finding(report, "NPU201")
    assert rc == 1 and "at the 1 s budget" in run["message"]
    assert seconds < 20
    assert leftovers(t0) == []


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_a_doctor_killed_mid_smoke_leaves_no_launcher_or_rank(tmp_path, sig):
    """#40 item 10: the launcher and ranks ran on ~55 s after the doctor was killed. Now the launcher and every
    rank hold a parent-death signal (SIGKILL: the doctor can stop nothing itself) and a SIGTERM/SIGINT doctor kills
    the groups it started before it exits."""
    import os
    import signal
    import subprocess
    import sys

    from ascend_doctor.seam.localhost import FORBID_ENV

    env = {k: v for k, v in os.environ.items() if k != FORBID_ENV}
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "ascend_doctor", "smoke", "--compute", "--python",
                             fault_python(tmp_path, torch_python(), "hang:1"), "--compute-ranks", "2",
                             "--format", "json"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(leftovers(t0)) < 3 and time.monotonic() < deadline:  # the launcher and both ranks
            time.sleep(0.2)
        assert len(leftovers(t0)) >= 3, leftovers(t0)
        proc.send_signal(getattr(signal, sig))
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 5
    while leftovers(t0) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers(t0) == []
