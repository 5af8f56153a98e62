"""Benchmark: wall time of `ascend-doctor fleet --ray-address` on 1 node and on 4 local nodes, and how the driver-side
evaluation grows with the node count.

    python bench/fleet_scale.py [--runs 3] [--nodes 1,4] [--eval-nodes 1,4,16,64]

Part 1 (needs `pip install ray`, root for `unshare -n`): a local `ray.cluster_utils.Cluster` with N raylets on this
machine, in a loopback-only network namespace (tests/fleet/ray_helper.py), and the real CLI run --runs times on it:
  - mode "real":   each node's task really collects this machine (LocalHost probes, as on a real node);
  - mode "replay": each node serves a replayed example-derived snapshot (the test hook): Ray + evaluation only.
  The median CLI wall time per N (cluster start-up excluded) and the 4-vs-1 ratio (target <= 1.5x) are printed.
  All N raylets share this machine's 2 cores here; on a real fleet each node collects on its own CPUs.
Part 2 (no Ray): the driver-side cost per node. Each of N nodes (up to 1,000 distinct replayed A2 hosts) is judged
as its Ray task judges itself (`node_task.evaluate_host`, untimed); then `FleetEvaluator.report` — validating every
node's findings, applying the config, running the FLEET checks across the fleet — is timed. Target (issue #12):
<= 2 ms per node at 1,000 nodes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HELPER = REPO / "tests" / "fleet" / "ray_helper.py"


def ray_scale(n: int, mode: str, runs: int) -> dict:
    work = tempfile.mkdtemp(prefix="fleetbench-")
    tmp = tempfile.mkdtemp(prefix="rd", dir="/tmp")
    env = dict(os.environ, RAY_TMPDIR=tmp, RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0")
    cmd = f"ip link set lo up && exec {sys.executable} {HELPER} scale {work} {n} {mode} {runs}"
    try:
        p = subprocess.run(["unshare", "-n", "sh", "-c", cmd], env=env, capture_output=True, text=True, timeout=900)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("FLEET_HELPER_RESULT ")]
    if not line:
        raise SystemExit(f"helper failed (exit {p.returncode}):\n{p.stderr[-3000:]}")
    res = json.loads(line[-1].split(" ", 1)[1])
    if "error" in res:
        raise SystemExit(res.get("traceback"))
    return res


_EVALUATED: list = []


def node_answers(n: int) -> list[dict]:
    """What n nodes send (computed once for the largest n, untimed): 250 distinct hosts, hostnames unique."""
    sys.path.insert(0, str(REPO))
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.fleet.node_task import evaluate_host
    from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
    from tests.fleet import nodes as N

    while len(_EVALUATED) < n:
        i = len(_EVALUATED)
        if i < 250:
            snap = Snapshot.model_validate(N.node(f"n{i:04d}", 1 + i))
            _EVALUATED.append(evaluate_host(ReplayHost(snap, label=f"n{i:04d}"), RunOptions()))
        else:  # same answers as an earlier node, another name (what the driver sees is the same work)
            _EVALUATED.append({**_EVALUATED[i % 250], "hostname": f"n{i:04d}"})
    return _EVALUATED[:n]


def eval_scale(n: int) -> float:
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.fleet.evaluate import FleetEvaluator
    from ascend_doctor.fleet.model import NodeResult

    reg = load_registry()
    answers = node_answers(n)

    def results():
        return [NodeResult(name=a["hostname"], evaluation={k: a[k] for k in ("findings", "summary", "notes")})
                for a in answers]

    FleetEvaluator(reg, RunOptions()).report(results()[:2])  # warm: validators, matrix, policy
    batch = results()
    t0 = time.perf_counter()
    rep = FleetEvaluator(reg, RunOptions()).report(batch)
    dt = time.perf_counter() - t0
    assert len({f.node for f in rep.findings}) == n
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nodes", default="1,4")
    ap.add_argument("--modes", default="real,replay")
    ap.add_argument("--eval-nodes", default="1,4,16,64,256,1000")
    args = ap.parse_args()
    counts = [int(x) for x in args.nodes.split(",") if x]
    for mode in [m for m in args.modes.split(",") if m]:
        medians = {}
        for n in counts:
            res = ray_scale(n, mode, args.runs)
            medians[n] = statistics.median(res["cli_runs_s"])
            print(f"ray {mode:6s} {n} node(s): fleet CLI median {medians[n]:.2f}s over {args.runs} runs "
                  f"{res['cli_runs_s']} (exit {res['returncodes']}, answered {res['nodes_answered']}, "
                  f"report duration {res['report_duration_s']:.2f}s; cluster up {res['cluster_up_s']:.1f}s, "
                  f"down {res.get('shutdown_s', 0):.1f}s)", flush=True)
            for note in res.get("notes", []):
                if note.startswith("ray:"):
                    print(f"    last run: {note}", flush=True)
        if len(counts) > 1:
            print(f"ray {mode:6s} ratio {counts[-1]} vs {counts[0]} nodes: "
                  f"{medians[counts[-1]] / medians[counts[0]]:.2f}x (target <= 1.5x)", flush=True)
    for n in [int(x) for x in args.eval_nodes.split(",") if x]:
        dt = eval_scale(n)
        print(f"driver-side work for {n:4d} node(s): {dt:.2f}s ({dt / n * 1000:.2f} ms/node, target <= 2)",
              flush=True)


if __name__ == "__main__":
    main()
