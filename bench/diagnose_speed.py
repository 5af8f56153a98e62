"""Benchmark: `ascend_doctor.knowledge.signatures.diagnose` on a large synthetic vLLM serve log.

    python bench/diagnose_speed.py [--mb 10] [--runs 3] [--naive] [--log FILE]

The synthetic log is ordinary vLLM/vllm-ascend INFO/WARNING chatter (timestamps, Ray prefixes, a Python traceback
now and then) with a handful of real error lines spread through it, so the prefilter sees both the common case
(nothing to match) and candidate lines. --naive also times the obvious approach (every compiled pattern searched over
the whole text), which is what the prefilter replaces. Prints the median wall time per run and the matches found.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascend_doctor.knowledge.door import Knowledge  # noqa: E402
from ascend_doctor.knowledge.signatures import KINDS, diagnose  # noqa: E402

CHATTER = [
    "INFO {ts} [core.py:{n}] Loading weights took {f:.2f} seconds",
    "(EngineCore_DP0 pid={pid}) INFO {ts} [gpu_model_runner.py:{n}] Model loading took {f:.4f} GiB and {n} seconds",
    "(APIServer pid={pid}) INFO:     127.0.0.1:{n} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "(APIServer pid={pid}) INFO {ts} [loggers.py:{n}] Engine 000: Avg prompt throughput: {f:.1f} tokens/s, "
    "Avg generation throughput: {f:.1f} tokens/s, Running: {n} reqs, Waiting: 0 reqs, GPU KV cache usage: {f:.1f}%",
    "(RayWorkerWrapper pid={pid}) WARNING {ts} utils.py:549] Overwriting environment variable "
    "ASCEND_RT_VISIBLE_DEVICES from '4' to '0,1,2,3,4,5,6,7'",
    "DEBUG {ts} [scheduler.py:{n}] retrying request {pid}-{n}: returned {n} tokens, retcode ok",
    "  File \"/usr/local/python3.10/lib/python3.10/site-packages/vllm/engine/llm_engine.py\", line {n}, in step",
    "    return self._run_engine(use_tqdm=use_tqdm)",
    "[rank{n}]:[W1126 09:{n}:00.000000000 ProcessGroupHCCL.cpp:{n}] Warning: HCCL_EXEC_TIMEOUT is set to 1800",
]
ERRORS = [
    "RuntimeError: Initialize:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:226 NPU function error: "
    "c10_npu::SetDevice(device_id_), error code is 107001",
    "EE1001: [PID: 120292] 2025-02-26-15:54:03.062.588 The argument is invalid.Reason: Set visible device failed, "
    "invalid device=3, input visible devices:3",
    "[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote Rank did "
    "not send the data in time.",
    "ImportError: libatb.so: cannot open shared object file: No such file or directory",
]


def synthetic_log(mb: float, seed: int = 7) -> str:
    rnd = random.Random(seed)
    out, size, target = [], 0, int(mb * 1024 * 1024)
    while size < target:
        line = rnd.choice(CHATTER).format(ts=f"11-26 09:{rnd.randrange(60):02d}:{rnd.randrange(60):02d}",
                                          n=rnd.randrange(1, 9999), f=rnd.random() * 100, pid=rnd.randrange(10**6))
        if rnd.random() < 0.00005:
            line = rnd.choice(ERRORS)
        out.append(line)
        size += len(line) + 1
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--naive", action="store_true", help="also time searching every pattern over the whole text")
    ap.add_argument("--log", help="benchmark this file instead of a synthetic log")
    args = ap.parse_args()

    text = Path(args.log).read_text(encoding="utf-8", errors="replace") if args.log else synthetic_log(args.mb)
    catalogue = Knowledge().signatures
    print(f"log: {len(text) / 1e6:.1f} MB, {text.count(chr(10))} lines; catalogue: {len(catalogue.signature)} "
          "signatures")
    diagnose("warm-up (compiles the catalogue)", catalogue)
    times, matches = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        matches = diagnose(text, catalogue, kinds=KINDS)
        times.append(time.perf_counter() - t0)
    print(f"diagnose (prefiltered): median {statistics.median(times):.3f} s over {args.runs} runs")
    for m in matches:
        print(f"  line {m.line:>8}  {m.signature.kind:<8} {m.signature.id}")
    if args.naive:
        pats = [re.compile(s.pattern, re.MULTILINE) for s in catalogue.signature]
        t0 = time.perf_counter()
        hits = sum(1 for p in pats if p.search(text))
        print(f"naive (every pattern over the whole text): {time.perf_counter() - t0:.3f} s, {hits} patterns hit")


if __name__ == "__main__":
    main()
