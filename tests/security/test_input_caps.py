"""Every input has a size cap (ascend_doctor/seam/inputs.py, README "Input limits"): an endless or huge input is a
one-line usage error, exit 2, within seconds — not gigabytes of memory and a MemoryError (#23 item 6)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ascend_doctor.core.errors import InputError
from ascend_doctor.seam.inputs import LIMITS, read_bytes
from tests.helpers import REPO

SNAP = str(REPO / "examples" / "healthy-a2.snapshot.json")
CASES = [
    (["check", "--replay", "/dev/zero"], "64 MiB", "a snapshot"),
    (["check", "--replay", "/dev/urandom"], "64 MiB", "a snapshot"),
    (["check", "--config", "/dev/zero", "--replay", SNAP], "4 MiB", "TOML"),
    (["check", "--policy", "/dev/zero", "--replay", SNAP], "4 MiB", "TOML"),
    (["diagnose", "/dev/zero"], "256 MiB", "a log"),
    (["parse", "npu-smi-info", "/dev/zero"], "16 MiB", "a tool's output"),
    (["triage", "/dev/zero"], "16 MiB", "a paste"),
    (["diff", "/dev/zero", SNAP], "64 MiB", "a snapshot"),
    (["check", "--matrix", "/dev/zero", "--replay", SNAP], "not a regular file", "--matrix"),
]


def _run(args, stdin=None):
    env = {**os.environ, "PYTHONPATH": str(REPO), "ASCEND_DOCTOR_LANG": "en"}
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, env=env,
                       stdin=stdin, timeout=120)
    return r, time.monotonic() - t0


@pytest.mark.parametrize("args, limit, what", CASES, ids=[" ".join(c[0][:2]) + " " + c[0][-1] for c in CASES])
def test_an_endless_input_is_a_usage_error_within_seconds(args, limit, what):
    r, took = _run(args)
    assert r.returncode == 2, r.stderr
    assert took < 20, took
    assert limit in r.stderr and what in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_standard_input_has_the_same_cap():
    with open("/dev/zero", "rb") as zero:
        r, took = _run(["check", "--replay", "-"], stdin=zero)
    assert r.returncode == 2 and "<stdin> is larger than 64 MiB" in r.stderr, r.stderr


def test_an_input_at_the_cap_is_read_and_one_byte_more_is_refused(tmp_path, monkeypatch):
    monkeypatch.setitem(LIMITS, "paste", 1000)
    f = tmp_path / "p.txt"
    f.write_bytes(b"x" * 1000)
    assert len(read_bytes(str(f), "paste")) == 1000
    f.write_bytes(b"x" * 1001)
    with pytest.raises(InputError, match="larger than 1000 B"):
        read_bytes(str(f), "paste")
