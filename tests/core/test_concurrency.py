"""Per-device questions a few at a time under one deadline (ascend_doctor.core.concurrency), and replay with the
recorded latencies (--replay-timing) that shows how a run behaves on a slow host."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from ascend_doctor.core.concurrency import bounded_map
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.seam.host import TIMEOUT
from ascend_doctor.seam.snapshot import CommandEntry, ReplayHost, Snapshot, load_snapshot
from tests.helpers import REPO

A3 = REPO / "examples" / "a3-busy.snapshot.json"


def test_bounded_map_keeps_order_caps_in_flight_and_reports_what_it_did_not_start():
    active, peak, lock = [0], [0], threading.Lock()

    def work(item, deadline):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return item * 10

    out = bounded_map(work, list(range(12)), limit=4, deadline=time.monotonic() + 10)
    assert [o.result for o in out] == [i * 10 for i in range(12)]
    assert 1 < peak[0] <= 4
    # 0.6 s for two workers to start (0.2 s was missed on a loaded 2-core host), each busy for longer than that
    out = bounded_map(lambda i, d: time.sleep(2.0) or i, list(range(6)), limit=2, deadline=time.monotonic() + 0.6)
    assert [o.started for o in out] == [True, True, False, False, False, False]
    assert all(o.result is None for o in out)  # still running at the deadline: not answered, never a result


def test_bounded_map_keeps_an_exception_for_the_caller():
    def boom(i, d):
        raise KeyError(i)

    out = bounded_map(boom, [1], 1, time.monotonic() + 5)
    assert isinstance(out[0].error, KeyError)


def test_replay_timing_waits_the_recorded_duration_and_times_out_past_the_timeout():
    snap = Snapshot(commands=[CommandEntry(argv=["npu-smi", "info"], stdout="x", duration_s=0.3)])
    t0 = time.monotonic()
    assert ReplayHost(snap).run(["npu-smi", "info"]).stdout == "x" and time.monotonic() - t0 < 0.2
    timed = ReplayHost(snap, timing=True)
    t0 = time.monotonic()
    assert timed.run(["npu-smi", "info"], timeout=5).stdout == "x" and time.monotonic() - t0 >= 0.3
    r = timed.run(["npu-smi", "info"], timeout=0.1)
    assert r.error == TIMEOUT and "timed out after 0.1s" in r.why_not()


def test_a3_health_and_ports_are_asked_concurrently_and_all_answered(tmp_path: Path):
    data = json.loads(A3.read_text())
    for c in data["commands"]:
        c["duration_s"] = 0.4 if c["argv"][0] == "npu-smi" or c["argv"][0].endswith("hccn_tool") else 0.0
    p = tmp_path / "a3.json"
    p.write_text(json.dumps(data))
    store = FactStore(ReplayHost(load_snapshot(p), timing=True), RunOptions(probe_timeout=10))
    store.start_all(["npu_smi", "npu_health", "hccn"])
    health, hccn = store.fact("npu_health"), store.fact("hccn")
    assert health.not_read() == [] and len(health.results) == 8
    assert hccn.skipped == [] and sorted(hccn.devices) == list(range(16)) and hccn.device_id_source == "/dev/davinciN"
    # One after another this is 0.4 + 8 x 0.4 s for health and 48 x 0.4 s for the ports; asked 8 at a time, each
    # probe's own wall stays within a few rounds (a loose bound: timing belongs to bench/probe_latency.py).
    assert store.durations["npu_health"] < 0.4 + 4 * 0.4
    assert store.durations["hccn"] < 10 * 0.4
