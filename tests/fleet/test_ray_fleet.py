"""`fleet --ray-address` on a real local Ray cluster (ray.cluster_utils.Cluster, 4 raylets on this machine).

Each test runs tests/fleet/ray_helper.py in a network namespace with only loopback (`unshare -n`, then `ip link set
lo up`), so Ray binds 127.0.0.1, and reads its JSON result. Skips, with the reason, when Ray is not importable or
unshare is not permitted. Every wait is bounded; the helper always tears the cluster down.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HELPER = Path(__file__).resolve().parent / "ray_helper.py"
HELPER_TIMEOUT_S = 300

pytestmark = pytest.mark.slow


@functools.lru_cache(maxsize=None)
def _skip_reason() -> str:
    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install 'ascend-doctor[fleet]')"
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "unshare/ip not available: cannot isolate Ray on loopback"
    try:
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare -n failed: {exc}"
    if r.returncode != 0:
        return f"unshare -n not permitted here: {r.stderr.decode(errors='replace').strip()[:200]}"
    return ""


def run_helper(*args: str) -> dict:
    """Run one scenario in a loopback-only namespace; its result dict (the fleet report under 'report')."""
    if _skip_reason():
        pytest.skip(_skip_reason())
    work = tempfile.mkdtemp(prefix="fleet-")
    tmp = tempfile.mkdtemp(prefix="rd", dir="/tmp")  # RAY_TMPDIR must be short (socket paths <= 107 bytes)
    env = dict(os.environ, RAY_TMPDIR=tmp, RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0")
    cmd = f"ip link set lo up && exec {sys.executable} {HELPER} {' '.join(args[:1])} {work} {' '.join(args[1:])}"
    proc = subprocess.Popen(["unshare", "-n", "sh", "-c", cmd], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=HELPER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the group we started
        proc.communicate(timeout=30)
        pytest.fail(f"ray helper did not finish within {HELPER_TIMEOUT_S}s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    lines = [ln for ln in out.splitlines() if ln.startswith("FLEET_HELPER_RESULT ")]
    assert lines, f"no result from the helper (exit {proc.returncode}):\n{err[-3000:]}"
    result = json.loads(lines[-1].split(" ", 1)[1])
    assert "error" not in result, result.get("traceback")
    assert result.get("report"), f"no report; CLI exit {result.get('returncode')}: {result.get('stderr_tail')}"
    return result


def findings(report: dict, code: str) -> dict:
    return {f["node"]: f for f in report["findings"] if f["code"] == code}


def test_four_nodes_odd_cann_duplicate_ip_and_a_node_killed_mid_run():
    r = run_helper("four")
    rep = r["report"]
    assert r["d_started"], "node_d's collect task never started"
    assert r.get("cli_timed_out") is not True
    assert rep["command"] == "fleet"
    assert r["returncode"] == rep["exit_code"] == 1
    assert all(f["node"] for f in rep["findings"])

    reach = findings(rep, "FLEET101")
    assert len(reach) == 4
    dead = [f for f in reach.values() if f["status"] == "fail"]
    assert len(dead) == 1
    assert dead[0]["details"]["ray_node_id"] == r["node_ids"]["node_d"]
    assert dead[0]["details"]["kind"] == "dead"
    assert {n for n, f in reach.items() if f["status"] == "pass"} == {"fleet-a", "fleet-b", "fleet-c"}

    versions = findings(rep, "FLEET102")
    assert versions["fleet-b"]["status"] == "fail"
    assert "CANN 8.3.RC1 on fleet-b, but 8.5.0 on 2 other node(s) (fleet-a, fleet-c)" in versions["fleet-b"]["message"]
    assert versions["fleet-a"]["status"] == versions["fleet-c"]["status"] == "pass"

    ips = findings(rep, "FLEET104")
    assert ips["fleet-b"]["status"] == "pass"
    for odd, other in (("fleet-a", "fleet-c"), ("fleet-c", "fleet-a")):
        assert ips[odd]["status"] == "fail"
        assert f"8 device IPs (192.168.100.11 … 192.168.107.11, devices 0, 1, 2, 3, 4, 5, 6, 7) are also used by " \
               f"{other}" in ips[odd]["message"]

    skew = findings(rep, "FLEET105")
    for n in ("fleet-a", "fleet-b", "fleet-c"):
        assert skew[n]["status"] == "pass", skew[n]["message"]
        assert skew[n]["details"]["uncertainty_s"] < 1.0
    assert any("test/demo hook" in n for n in rep["notes"])
    npus = findings(rep, "FLEET107")  # node_b's raylet was started without the NPU resource
    assert npus["fleet-b"]["status"] == "fail"
    assert "Ray on fleet-b advertises no NPU resource" in npus["fleet-b"]["message"]
    assert "ray start --address=HEAD:6379 --resources='{\"NPU\": 8}'" in npus["fleet-b"]["remediation"]
    assert npus["fleet-a"]["status"] == npus["fleet-c"]["status"] == "pass"
    place = findings(rep, "FLEET108")  # judged once, on the head (node_a): 32 bundles asked, 24 NPUs advertised
    assert place["fleet-a"]["status"] == "fail", place["fleet-a"]
    assert "needs 32 NPU(s) from Ray (TP 8 × PP 4), but the cluster advertises 24: fleet-a 8, fleet-b 0, fleet-c 8" \
        in place["fleet-a"]["message"]
    assert {place[n]["status"] for n in ("fleet-b", "fleet-c")} == {"skip"}
    # Bounded: the dead node is dropped long before its 60 s fake delay or the 60 s node timeout.
    assert r["cli_s"] < 45, r


def test_a_node_that_never_answers_times_out_as_a_finding():
    r = run_helper("timeout")
    rep = r["report"]
    reach = findings(rep, "FLEET101")
    assert reach["fleet-a"]["status"] == "pass"
    silent = [f for f in reach.values() if f["status"] == "fail"]
    assert len(silent) == 1 and silent[0]["details"]["kind"] == "timeout"
    assert "no answer within the per-node timeout of 4s" in silent[0]["message"]
    assert r["returncode"] == rep["exit_code"] == 1
    assert r["cli_s"] < 45, r  # the 60 s task is abandoned, not waited for (and ray.shutdown is skipped)


def test_a_frozen_node_is_dropped_when_ray_declares_it_dead_and_the_cli_exits():
    r = run_helper("frozen")
    rep = r["report"]
    assert r["b_started"]
    reach = findings(rep, "FLEET101")
    assert reach["fleet-a"]["status"] == "pass"
    frozen = [f for f in reach.values() if f["status"] == "fail"]
    assert len(frozen) == 1 and frozen[0]["details"]["ray_node_id"] == r["node_ids"]["node_b"]
    assert frozen[0]["details"]["kind"] == "dead"
    assert r["returncode"] == rep["exit_code"] == 1
    # dropped after the GCS health checks (fast here), not after the 60 s node timeout; no hang in ray.shutdown()
    assert r["cli_s"] < 45, r


@pytest.mark.parametrize("address, text", [
    ("auto", "cannot connect to the Ray cluster at 'auto'"),
    ("127.0.0.1:6399", "no Ray cluster answered at '127.0.0.1:6399' within 3s"),
])
def test_no_cluster_at_the_address_is_an_input_error(address, text):
    if _skip_reason():
        pytest.skip(_skip_reason())
    tmp = tempfile.mkdtemp(prefix="rd", dir="/tmp")
    cmd = (f"ip link set lo up && exec {sys.executable} -m ascend_doctor fleet --ray-address {address} "
           "--connect-timeout 3")
    try:
        r = subprocess.run(["unshare", "-n", "sh", "-c", cmd], env=dict(os.environ, RAY_TMPDIR=tmp),
                           capture_output=True, text=True, timeout=120, cwd=str(HELPER.parents[2]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert r.returncode == 2, r.stderr[-2000:]
    assert text in r.stderr


def _compute_python(tmp_path=None, fault: str = "") -> str:
    from tests.compute.cpu_tier import SKIP, fault_python, torch_python

    py = torch_python()
    if py is None:
        pytest.skip(SKIP)
    return fault_python(tmp_path, py, fault) if fault else py


@pytest.mark.localhost
def test_compute_all_reduces_across_the_nodes():
    """#26: `fleet --compute` — each node's ranks are numbered after the previous node's and meet at the first node:
    one all-reduce of 4 ranks across 2 nodes (CPU/gloo here; HCCL on NPUs), each node's figures in its findings."""
    rep = run_helper("compute", _compute_python())["report"]
    ar = findings(rep, "NPU206")
    assert set(ar) == {"fleet-a", "fleet-b"}
    for node, f in ar.items():
        assert f["status"] == "pass", f
        assert "4 rank(s) all-reduced the right sum" in f["message"]
    ranks = {node: sorted(e["source"].split()[1] for e in f["evidence"]) for node, f in ar.items()}
    assert ranks == {"fleet-a": ["0", "1"], "fleet-b": ["2", "3"]}
    for node, f in findings(rep, "NPU201").items():
        assert f["status"] == "pass", (node, f["message"], f["evidence"])
    assert any("compute: 4 rank(s) on 2 node(s)" in n for n in rep["notes"])


@pytest.mark.localhost
def test_compute_a_crash_on_one_node_is_that_nodes_finding(tmp_path):
    rep = run_helper("compute", _compute_python(tmp_path, "crash:3"))["report"]
    run = findings(rep, "NPU201")
    assert "rank(s) 3 killed by SIGSEGV in allreduce" in run["fleet-b"]["message"]
    assert run["fleet-a"]["status"] == "fail"  # its ranks lost their peer in the collective
