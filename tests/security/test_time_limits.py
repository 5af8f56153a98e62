"""The probes' time limits are documented and can be lowered (#23 item 10: `--probe-timeout 3` with a hanging
serving python took 123 s, because the import and platform probes have their own 90/120 s limits).
Touches the real machine: a fake serving interpreter (marked localhost)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.localhost


def _hanging_python(tmp_path: Path) -> Path:
    """An interpreter that answers the metadata dump (with torch, torch_npu and vLLM installed) but hangs on the
    import and platform probes, as a wedged NPU driver makes `import torch_npu` hang."""
    site = tmp_path / "site"
    for name, version in (("torch", "2.5.1"), ("torch_npu", "2.5.1"), ("vllm", "0.9.1"), ("vllm_ascend", "0.9.1")):
        d = site / f"{name}-{version}.dist-info"
        d.mkdir(parents=True)
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    py = tmp_path / "python3"
    py.write_text("#!/bin/sh\ncase \"$*\" in\n  *ASCEND_DOCTOR_IMPORT*|*platform-probe*) exec sleep 600 ;;\nesac\n"
                  f"PYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    py.chmod(0o755)
    return py


def test_import_timeout_lowers_the_import_and_platform_probes(tmp_path: Path):
    py = _hanging_python(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO), "ASCEND_DOCTOR_LANG": "en"}
    env.pop("ASCEND_DOCTOR_FORBID_LOCALHOST", None)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--python", str(py), "--probe-timeout", "3",
                        "--import-timeout", "3", "--select", "TORCH104,VLLM105", "--format", "json"],
                       capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    took = time.monotonic() - t0
    assert took < 20, f"{took:.0f}s with --import-timeout 3"
    found = {f["code"]: f for f in json.loads(r.stdout)["findings"]}
    # A limit lowered below the 90 s a cold import may need proves nothing: unknown, saying so — not "hung".
    assert found["TORCH104"]["status"] == "unknown" and "within 3 s" in found["TORCH104"]["message"]
    assert found["VLLM105"]["status"] == "unknown"
