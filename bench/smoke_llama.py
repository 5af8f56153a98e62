"""Wall time of the whole smoke suite against llama-cpp-python's OpenAI server (CPU, gemma3-270m).

    ASCEND_DOCTOR_LLAMA_PYTHON=$(bash .ci/llama-setup.sh) python bench/smoke_llama.py [--runs 2]

Starts the server (127.0.0.1, free port), then times `ascend_doctor.smoke.stage.gather` + evaluation (every
scenario, no load), per scenario and in total. Server start-up is reported separately. Target: < 60 s per suite.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=180.0)
    args = ap.parse_args()

    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.smoke.stage import evaluate_smoke, gather
    from tests.smoke.llama_server import LlamaServer, llama_python

    py = llama_python()
    if py is None:
        sys.exit("set ASCEND_DOCTOR_LLAMA_PYTHON (see .ci/llama-setup.sh)")
    reg = load_registry(entry_points=False)
    t0 = time.monotonic()
    with LlamaServer(py) as srv:
        print(f"server ready in {time.monotonic() - t0:.1f}s at {srv.base_url}")
        for run in range(1, args.runs + 1):
            marks: list[tuple[str, float]] = []
            t = time.monotonic()
            facts = gather(srv.base_url, timeout=args.timeout, progress=lambda n: marks.append((n, time.monotonic())))
            findings = evaluate_smoke(reg, facts, RunOptions())
            total = time.monotonic() - t
            ends = [m[1] for m in marks[1:]] + [t + total]
            per = ", ".join(f"{n} {e - s:.1f}s" for (n, s), e in zip(marks, ends))
            counts: dict[str, int] = {}
            for f in findings:
                counts[f.status.value] = counts.get(f.status.value, 0) + 1
            print(f"run {run}: smoke suite {total:.1f}s ({len(facts.exchanges)} requests; {counts}) "
                  f"target <60s: {'met' if total < 60 else 'NOT met'}")
            print(f"  per scenario: {per}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (other jobs share this machine)")


if __name__ == "__main__":
    main()
