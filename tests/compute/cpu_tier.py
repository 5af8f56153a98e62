"""Where the compute smoke's CPU/gloo path runs for the tests: the vllm tier's interpreter (a real torch 2.13 CPU build,
`.ci/vllm-setup.sh`), and a wrapper interpreter that injects one fault into one rank (faults/sitecustomize.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from ascend_doctor.seam.localhost import FORBID_ENV

FAULTS = Path(__file__).resolve().parent / "faults"
MARK = "ascend-doctor-script: compute"


def torch_python() -> Optional[str]:
    """The vllm tier's interpreter (it has torch), or None."""
    py = os.environ.get("ASCEND_DOCTOR_VLLM_PYTHON")
    return py if py and Path(py).exists() and not os.environ.get("ASCEND_DOCTOR_VLLM_UNAVAILABLE") else None


SKIP = ("compute CPU tier: set ASCEND_DOCTOR_VLLM_PYTHON to the interpreter `.ci/vllm-setup.sh` prints (a real "
        "torch is needed; the doctor never imports it itself)")


def fault_python(tmp_path: Path, real: str, fault: str) -> str:
    """An executable that starts `real` with rank `fault` (`kind:rank`) injected: what `--python` is given."""
    wrapper = tmp_path / f"python-{fault.replace(':', '-')}"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={FAULTS} ASCEND_DOCTOR_TEST_FAULT={fault} exec {real} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def leftovers(since: float) -> list[str]:
    """Processes of the compute smoke (launcher or rank) still alive that started after `since`."""
    import psutil

    found = []
    for p in psutil.process_iter(["pid", "cmdline", "create_time"]):
        try:
            if p.info["create_time"] >= since - 1 and MARK in " ".join(p.info["cmdline"] or []):
                found.append(f"{p.info['pid']}: {' '.join(p.info['cmdline'])[:80]}")
        except (psutil.Error, TypeError):
            continue
    return found


def run_compute(python: str, *args: str, timeout: float = 240) -> tuple[int, dict, float]:
    """`ascend-doctor smoke --compute --python PYTHON ARGS --format json` in a child: (exit code, report, seconds)."""
    env = {k: v for k, v in os.environ.items() if k != FORBID_ENV}
    env["ASCEND_DOCTOR_LANG"] = "en"
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "ascend_doctor", "smoke", "--compute", "--python", python,
                          "--format", "json", *args], capture_output=True, text=True, timeout=timeout, env=env)
    seconds = time.monotonic() - t0
    try:
        report = json.loads(res.stdout)
    except ValueError:
        raise AssertionError(f"no JSON report (exit {res.returncode}): {res.stdout[-2000:]} {res.stderr[-2000:]}")
    return res.returncode, report, seconds


def finding(report: dict, code: str) -> dict:
    return next(f for f in report["findings"] if f["code"] == code)
