"""Runs one fleet scenario on a real local Ray cluster and prints a JSON result (for tests/fleet/test_ray_fleet.py and
bench/fleet_scale.py).

Run it inside a network namespace with only loopback, so that Ray binds 127.0.0.1 (ray-notes):

    unshare -n sh -c 'ip link set lo up && exec python tests/fleet/ray_helper.py SCENARIO WORKDIR'

It starts a `ray.cluster_utils.Cluster` (fast health checks, a custom resource per node), writes the nodes' replayed
snapshots to WORKDIR, runs the real CLI (`python -m ascend_doctor fleet --ray-address … --format json -o …`) with
the test hook ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS mapping each node's resource to its snapshot, and always tears the
cluster down (then kills, by pid, any process it started that is still alive). Every wait is bounded.

Scenarios:
  four     4 nodes: node_a healthy, node_b another CANN, node_c a clone of node_a's RoCE IPs, node_d killed
           (remove_node, allow_graceful=False) while its collect task runs.
  timeout  2 nodes: node_b answers only after the per-node timeout.
  frozen   2 nodes: node_b's raylet is stopped (SIGSTOP) while its task runs; Ray declares it dead, the CLI moves on.
  scale N  N nodes, all healthy replayed snapshots (the benchmark); `real` as 3rd arg: real collect, no replay.
  compute  2 nodes, `fleet --compute --compute-ranks 2 --python PY` (PY: 3rd arg): the static checks from replayed
           snapshots, the compute smoke for real on each node (CPU/gloo path, the vllm tier's torch): one all-reduce
           across the 4 ranks of both nodes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import nodes  # noqa: E402

MB = 1024 * 1024
HEALTH = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500, "health_check_timeout_ms": 500,
          "health_check_failure_threshold": 3}
CLI_TIMEOUT_S = 120.0


def _descendants() -> list[int]:
    import psutil

    try:
        return [p.pid for p in psutil.Process(os.getpid()).children(recursive=True)]
    except psutil.Error:
        return []


def _kill_leftovers(pids: set[int]) -> list[int]:
    """SIGKILL the processes we started (by pid) that outlived the cluster's shutdown."""
    import psutil

    killed = []
    for pid in sorted(pids):
        try:
            p = psutil.Process(pid)
            if p.status() != psutil.STATUS_ZOMBIE:
                p.kill()
                killed.append(pid)
        except psutil.Error:
            pass
    return killed


def run_cli(address: str, fake: dict, out: Path, node_timeout: float, extra: list[str] = ()) -> subprocess.Popen:
    env = dict(os.environ)
    if fake:
        env["ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS"] = json.dumps(fake)
    if not fake:  # a real collect on the nodes (benchmark): LocalHost must be allowed there
        env.pop("ASCEND_DOCTOR_FORBID_LOCALHOST", None)
    argv = [sys.executable, "-m", "ascend_doctor", "fleet", "--ray-address", address, "--format", "json", "-o",
            str(out), "--node-timeout", str(node_timeout), *extra]
    return subprocess.Popen(argv, env=env, cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main(argv: list[str]) -> int:
    scenario, work = argv[0], Path(argv[1])
    work.mkdir(parents=True, exist_ok=True)
    from ray.cluster_utils import Cluster

    result: dict = {"scenario": scenario}
    t_start = time.monotonic()
    cluster = None
    started: set[int] = set()
    try:
        labels = {"four": ["node_a", "node_b", "node_c", "node_d"], "timeout": ["node_a", "node_b"],
                  "frozen": ["node_a", "node_b"], "compute": ["node_a", "node_b"]}.get(scenario)
        if scenario == "compute":  # the nodes' compute tasks run on this machine for real (LocalHost)
            os.environ.pop("ASCEND_DOCTOR_FORBID_LOCALHOST", None)
        if scenario == "scale":
            labels = [f"node_{i}" for i in range(int(argv[2]))]
        # Ray's NPU resource as `ray start --resources='{"NPU": 8}'` declares it — except on node_b of "four",
        # whose raylet advertises none (FLEET107: vllm-ascend#3114).
        def npus(label: str) -> dict:
            return {} if (scenario == "four" and label == "node_b") else {"NPU": 8}

        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "resources": {labels[0]: 1, **npus(labels[0])}, "object_store_memory": 80 * MB,
            "include_dashboard": False, "_system_config": HEALTH})
        handles = {labels[0]: cluster.head_node}
        for label in labels[1:]:
            handles[label] = cluster.add_node(num_cpus=1, resources={label: 1, **npus(label)},
                                              object_store_memory=80 * MB)
        cluster.wait_for_nodes(timeout=60)
        started.update(_descendants())
        result["cluster_up_s"] = round(time.monotonic() - t_start, 3)
        result["node_ids"] = {k: h.node_id for k, h in handles.items()}

        fake: dict = {}
        node_timeout = 60.0
        if scenario == "four":
            fake = {
                "node_a": str(nodes.write(nodes.node("fleet-a", 11), work / "a.json")),
                "node_b": str(nodes.write(nodes.other_cann(nodes.node("fleet-b", 12)), work / "b.json")),
                "node_c": str(nodes.write(nodes.node("fleet-c", 13, ips_from=11), work / "c.json")),
                "node_d": {"snapshot": str(nodes.write(nodes.node("fleet-d", 14), work / "d.json")),
                           "delay_s": 60, "touch": str(work / "d.started")},
            }
        elif scenario == "timeout":
            node_timeout = 4.0
            fake = {"node_a": str(nodes.write(nodes.node("fleet-a", 11), work / "a.json")),
                    "node_b": {"snapshot": str(nodes.write(nodes.node("fleet-b", 12), work / "b.json")),
                               "delay_s": 60, "clock_offset_s": 0.0}}
        elif scenario == "frozen":
            fake = {"node_a": str(nodes.write(nodes.node("fleet-a", 11), work / "a.json")),
                    "node_b": {"snapshot": str(nodes.write(nodes.node("fleet-b", 12), work / "b.json")),
                               "delay_s": 60, "touch": str(work / "b.started")}}
        elif scenario == "compute":
            fake = {"node_a": str(nodes.write(nodes.node("fleet-a", 11), work / "a.json")),
                    "node_b": str(nodes.write(nodes.node("fleet-b", 12), work / "b.json"))}
        elif scenario == "scale" and not (len(argv) > 3 and argv[3] == "real"):
            fake = {label: str(nodes.write(nodes.node(f"fleet-{i}", 11 + i), work / f"{label}.json"))
                    for i, label in enumerate(labels)}

        if scenario == "scale":  # the benchmark: the same cluster, the CLI run several times
            runs = int(argv[4]) if len(argv) > 4 else 3
            result["cli_runs_s"], result["returncodes"] = [], []
            for _ in range(runs):
                t0 = time.monotonic()
                proc = run_cli(cluster.address, fake, work / "report.json", node_timeout)
                started.add(proc.pid)
                proc.communicate(timeout=CLI_TIMEOUT_S)
                result["cli_runs_s"].append(round(time.monotonic() - t0, 3))
                result["returncodes"].append(proc.returncode)
            rep = json.loads((work / "report.json").read_text())
            result["nodes_answered"] = sum(1 for f in rep["findings"] if f["code"] == "FLEET101"
                                           and f["status"] == "pass")
            result["report_duration_s"] = rep["duration_s"]
            result["notes"] = rep["notes"]
            return _finish(result, cluster, started, t_start)
        t0 = time.monotonic()
        # "four": the serve command needs TP 8 × PP 4 = 32 NPU bundles; the cluster advertises 24 (FLEET108).
        serve = ["--", "vllm", "serve", "/models/q", "--distributed-executor-backend", "ray", "-tp", "8",
                 "--pipeline-parallel-size", "4"] if scenario == "four" else []
        if scenario == "compute":
            serve = ["--compute", "--compute-ranks", "2", "--python", argv[2], "--select", "NPU2,FLEET101"]
        proc = run_cli(cluster.address, fake, work / "report.json", node_timeout, extra=serve)
        started.add(proc.pid)
        if scenario == "four":
            marker = work / "d.started"
            deadline = time.monotonic() + 60
            while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            result["d_started"] = marker.exists()
            result["killed_after_s"] = round(time.monotonic() - t0, 3)
            cluster.remove_node(handles["node_d"], allow_graceful=False)
        frozen_pid = None
        if scenario == "frozen":  # stop node_b's raylet (SIGSTOP) while its task runs: it never fails that task
            marker = work / "b.started"
            deadline = time.monotonic() + 60
            while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            result["b_started"] = marker.exists()
            frozen_pid = handles["node_b"].all_processes["raylet"][0].process.pid
            os.kill(frozen_pid, signal.SIGSTOP)
            result["frozen_after_s"] = round(time.monotonic() - t0, 3)
        try:
            stdout, stderr = proc.communicate(timeout=CLI_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate(timeout=10)
            result["cli_timed_out"] = True
        result["cli_s"] = round(time.monotonic() - t0, 3)
        if frozen_pid is not None:
            os.kill(frozen_pid, signal.SIGCONT)  # let teardown stop it normally
        result["returncode"] = proc.returncode
        result["stderr_tail"] = stderr[-3000:]
        result["report"] = json.loads((work / "report.json").read_text()) if (work / "report.json").exists() else None
    except Exception as exc:  # reported to the test, which fails with it
        import traceback

        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
    return _finish(result, cluster, started, t_start)


def _finish(result: dict, cluster, started: set[int], t_start: float) -> int:
    """Tear the cluster down, kill by pid whatever we started that outlived it, print the result, exit hard."""
    started.update(_descendants())
    if cluster is not None:
        t = time.monotonic()
        try:
            cluster.shutdown()
        except Exception as exc:
            result["shutdown_error"] = f"{type(exc).__name__}: {exc}"
        result["shutdown_s"] = round(time.monotonic() - t, 3)
    result["killed_leftovers"] = _kill_leftovers(started)
    result["total_s"] = round(time.monotonic() - t_start, 3)
    print("FLEET_HELPER_RESULT " + json.dumps(result))
    sys.stdout.flush()
    os._exit(0)  # ray's atexit hooks must not block the test


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
