"""Helpers shared by the exec-hook tests (the `fake_vllm` fixture lives in conftest.py)."""

import os

from tests.helpers import REPO


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("ASCEND_DOCTOR_SKIP", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: str(v) for k, v in extra.items()})
    return env
