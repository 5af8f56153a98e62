"""Benchmark: how long `ascend-doctor check` makes people wait, from a bare host to a slow A3.

    python bench/check_speed.py [--runs 7] [--torch-python /path/to/python-with-torch]

Rows (median wall of the real CLI, bytecode compiled as after an install):
  - a bare host: a replayed machine with no Ascend stack at all (the doctor's own start-up and its "not installed"
    verdicts) — the bar is under a second;
  - the healthy 8x910B A2 example (every check has something to judge);
  - the A3 example with real-host latencies replayed (`--replay-timing`: 1.0 s per npu-smi call, 0.3 s per hccn_tool
    call; bench/probe_latency.py has the details) — what a user on a loaded A3 waits, against its 2.0 s chain;
  - `python -m torch.utils.collect_env` when an interpreter with torch is given (what users run today to describe an
    environment; it imports torch).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_latency import slow_snapshot  # noqa: E402


def median_wall(argv: list[str], runs: int, env: dict) -> tuple[float, int]:
    times = []
    rc = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
        times.append(time.perf_counter() - t0)
        rc = r.returncode
    return statistics.median(times), rc


def bare_host(dest: Path) -> Path:
    """A machine with nothing of the Ascend stack: its system, environment and serving interpreter only."""
    healthy = json.loads((REPO / "examples" / "healthy-a2.snapshot.json").read_text())
    keep = {"format", "version", "tool_version", "system", "python_envs"}
    data = {k: v for k, v in healthy.items() if k in keep}
    data["env"] = {"HOME": "/root", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    for env in data["python_envs"].values():
        env["distributions"] = [d for d in env["distributions"] if d["name"].lower() in ("pip", "setuptools")]
    dest.write_text(json.dumps(data))
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--torch-python", default=str(Path.home() / ".cache/ascend-doctor/torch-venv/bin/python"))
    args = ap.parse_args()
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "ascend_doctor"), str(REPO / "checks")],
                   stdout=subprocess.DEVNULL, env={k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"})
    doctor = [sys.executable, "-m", "ascend_doctor", "check", "--format", "json", "--replay"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        bare = bare_host(Path(tmp) / "bare.json")
        a3 = slow_snapshot(1.0, 0.3, Path(tmp) / "a3.json")
        t_bare, rc = median_wall(doctor + [str(bare)], args.runs, env)
        rows.append(("check, a bare host (no Ascend stack)", t_bare, rc, "< 1 s"))
        t, rc = median_wall(doctor + [str(REPO / "examples" / "healthy-a2.snapshot.json")], args.runs, env)
        rows.append(("check, the healthy 8x910B A2 example", t, rc, ""))
        t, rc = median_wall(doctor + [str(a3), "--replay-timing"], max(3, args.runs // 2), env)
        rows.append(("check, A3 with npu-smi 1.0 s / hccn_tool 0.3 s per call", t, rc, "<= 2.6 s (chain 2.0 s)"))
    if Path(args.torch_python).exists():
        t, rc = median_wall([args.torch_python, "-m", "torch.utils.collect_env"], max(3, args.runs // 2), env)
        rows.append(("python -m torch.utils.collect_env", t, rc, ""))
    else:
        print(f"(no torch interpreter at {args.torch_python}: skipping collect_env; see --torch-python)")
    print(f"{'what':<58} {'median s':>9}  exit  bar")
    for name, t, code, bar in rows:
        print(f"{name:<58} {t:>9.3f}  {code:>4}  {bar}")


if __name__ == "__main__":
    main()
