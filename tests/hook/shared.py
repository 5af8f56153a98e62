"""Helpers shared by the exec-hook tests (the `fake_vllm` fixture lives in conftest.py)."""

import os

from tests.helpers import REPO


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("ASCEND_DOCTOR_SKIP", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: str(v) for k, v in extra.items()})
    return env


_SERVING: dict = {}


def serving_python() -> str:
    """A serving interpreter for live `exec` tests: this Python with the distributions of the healthy example host
    (vllm 0.13.0+empty, vllm-ascend 0.13.0, torch, torch_npu …) as dist-info metadata on its path — what the doctor
    reads of a serving environment, without installing any of it. Made once per test session."""
    if "path" not in _SERVING:
        import json
        import sys
        import tempfile
        from pathlib import Path

        root = Path(tempfile.mkdtemp(prefix="ascend-doctor-serving-"))
        site = root / "site"
        snap = json.loads((REPO / "examples" / "healthy-a2.snapshot.json").read_text(encoding="utf-8"))
        for d in snap["python_envs"]["default"]["distributions"]:
            info = site / f"{d['name'].replace('-', '_')}-{d['version']}.dist-info"
            info.mkdir(parents=True)
            meta = ["Metadata-Version: 2.1", f"Name: {d['name']}", f"Version: {d['version']}"]
            meta += [f"Requires-Dist: {r}" for r in d.get("requires") or []]
            (info / "METADATA").write_text("\n".join(meta) + "\n", encoding="utf-8")
        py = root / "bin" / "python3"
        py.parent.mkdir()
        py.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
        py.chmod(0o755)
        _SERVING["path"] = str(py)
    return _SERVING["path"]
