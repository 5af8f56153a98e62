"""A real OpenAI-compatible server as a test's child process: started in its own session on 127.0.0.1, ready when
`GET /v1/models` answers 200, its output in a log file, and always stopped by process group (its workers with it).

The llama.cpp tier (llama_server.py) and the vLLM tier (vllm_server.py) only say which command to run.
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """`with Sub(...) as srv: srv.base_url`; subclasses set `name`, `ready_timeout`, and `argv()`/`env()`."""

    name = "server"
    ready_timeout = 180.0
    stop_grace = 10.0

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: Optional[subprocess.Popen] = None
        self.log = tempfile.NamedTemporaryFile(prefix=f"{self.name}-", suffix=".log", delete=False)
        self.ready_s: Optional[float] = None

    def argv(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> Optional[dict[str, str]]:
        return None  # inherit

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self):
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.argv(), stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=self.env(), start_new_session=True)
        deadline = t0 + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(self.base_url + "/models", timeout=2.0, trust_env=False).status_code == 200:
                    self.ready_s = time.monotonic() - t0
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"{self.name} not ready within {self.ready_timeout:g}s:\n{self.log_tail()}")

    def log_tail(self, n: int = 6000) -> str:
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
                self.proc.wait(timeout=self.stop_grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            except ProcessLookupError:
                pass
        try:  # workers the server started in the same group
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass
