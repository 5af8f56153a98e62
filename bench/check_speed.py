"""Benchmark: wall time of `ascend-doctor check --replay <example> --format json` against two references.

    python bench/check_speed.py [--snapshot examples/healthy-a2.snapshot.json] [--runs 7]
                                [--torch-python /path/to/python-with-torch]

References, run side by side in the same session:
  - `python -m torch.utils.collect_env` (what users run today to describe an environment; needs a Python with torch:
    `pip install torch==2.13.0` into a venv and pass --torch-python, default: ~/.cache/ascend-doctor/torch-venv);
  - the floor `python -c "import click, rich, pydantic"` (our dependencies' import cost; nothing can be faster).
Targets (issue #2): >= 10x faster than collect_env; <= 2.5x the floor. Prints medians and the ratios.
The doctor runs with a fresh on-disk cache (filled by one untimed run, as after any first use) and once more with the
cache off, so both figures are visible.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def median_wall(argv: list[str], runs: int, env: dict) -> tuple[float, int]:
    times = []
    rc = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
        times.append(time.perf_counter() - t0)
        rc = r.returncode
    return statistics.median(times), rc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", default=str(REPO / "examples" / "healthy-a2.snapshot.json"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--torch-python", default=str(Path.home() / ".cache/ascend-doctor/torch-venv/bin/python"))
    args = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="ascend-doctor-bench-cache-")
    env = {**os.environ, "NO_COLOR": "1", "ASCEND_DOCTOR_CACHE_DIR": cache}
    rows = []
    doctor = [sys.executable, "-m", "ascend_doctor", "check", "--replay", args.snapshot, "--format", "json"]
    subprocess.run(doctor, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO)  # fills the cache
    t_doc, rc = median_wall(doctor, args.runs, env)
    rows.append(("ascend-doctor check --replay --format json", t_doc, rc))
    # Without the on-disk cache (first run after an install or a matrix change, or a read-only home).
    t_cold, rc_cold = median_wall(doctor, args.runs, {**env, "ASCEND_DOCTOR_CACHE_DIR": "off"})
    rows.append(("  the same, cache off (ASCEND_DOCTOR_CACHE_DIR=off)", t_cold, rc_cold))
    shutil.rmtree(cache, ignore_errors=True)
    t_floor, _ = median_wall([sys.executable, "-c", "import click, rich, pydantic"], args.runs, env)
    rows.append(("python -c 'import click, rich, pydantic' (floor)", t_floor, 0))
    t_torch = None
    if Path(args.torch_python).exists():
        t_torch, trc = median_wall([args.torch_python, "-m", "torch.utils.collect_env"], max(3, args.runs // 2), env)
        rows.append(("python -m torch.utils.collect_env", t_torch, trc))
    else:
        print(f"(no torch interpreter at {args.torch_python}: skipping collect_env; see --torch-python)")
    print(f"{'command':<52} {'median s':>9}  exit")
    for name, t, code in rows:
        print(f"{name:<52} {t:>9.3f}  {code}")
    print(f"\ndoctor / floor      = {t_doc / t_floor:5.2f}x   (target <= 2.5x; cache off: {t_cold / t_floor:.2f}x)")
    if t_torch:
        print(f"collect_env / doctor = {t_torch / t_doc:5.1f}x   (target >= 10x; cache off: {t_torch / t_cold:.1f}x)")


if __name__ == "__main__":
    main()
