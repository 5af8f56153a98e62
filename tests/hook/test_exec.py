"""`ascend-doctor exec`: becomes the command (same PID, stdio, signals, exit code), refuses without running it,
the ASCEND_DOCTOR_SKIP bypass, --report, and --smoke against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from typing import Optional

import pytest

from ascend_doctor.cli.supervise import exit_code_of, skip_requested
from ascend_doctor.core.options import RunOptions
from ascend_doctor.probes.serve import serve_entry_probe
from tests.helpers import DATA, REPO
from tests.hook.dirhost import DirHost
from tests.hook.shared import _env, serving_python

QWEN = str(DATA / "serve" / "models" / "Qwen3-8B")  # a model directory that exists here (SERVE207)

# exec starts the command only on the machine it judged (#22 item 2), so these run live (marked), judging a serving
# interpreter with the healthy example's distributions (tests/hook/shared.serving_python) for the SERVE checks.
pytestmark = pytest.mark.localhost
HEALTHY = str(REPO / "examples" / "healthy-a2.snapshot.json")
BASE = [sys.executable, "-m", "ascend_doctor", "exec", "--python", serving_python()]


CHILD = textwrap.dedent("""
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(42))
    print(os.getpid(), flush=True)
    line = sys.stdin.readline()
    print("echo " + line.strip(), flush=True)
    while True:
        time.sleep(0.05)
""")


def test_exec_keeps_pid_stdio_and_signals(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen(BASE + ["--select", "SERVE", "--", sys.executable, str(script)], cwd=REPO, env=_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline().strip()
        assert first == str(proc.pid), f"not the same process: {first!r} vs {proc.pid}; stderr: {proc.stderr.read()}"
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "echo hello"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 42
    finally:
        _stop(proc)
    err = proc.stderr.read()
    assert "checks passed" in err and "exec:" in err


def test_exec_passes_exit_code_and_keeps_stdout_clean(tmp_path):
    child = [sys.executable, "-c", "print('only me'); raise SystemExit(7)"]
    r = subprocess.run(BASE + ["--select", "SERVE", "--"] + child, cwd=REPO, env=_env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 7
    assert r.stdout == "only me\n"  # the report went to stderr


def test_command_not_found_is_127(tmp_path):
    r = subprocess.run(BASE + ["--select", "SERVE", "--", str(tmp_path / "no-such-binary")], cwd=REPO, env=_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 127 and "command not found" in r.stderr


def test_refusal_does_not_run_the_command(tmp_path, fake_vllm):
    marker = tmp_path / "started"
    report = tmp_path / "out" / "report.json"
    argv = [str(fake_vllm), "serve", QWEN, "--tool-call-parser", "hermes",
            "--api-key", "sk-s3cr3t0123456"]
    r = subprocess.run(BASE + ["--select", "SERVE", "--report", str(report), "--"] + argv, cwd=REPO,
                       env=_env(FAKE_VLLM_MARKER=marker), capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert not marker.exists()
    assert r.stdout == ""
    assert "SERVE104" in r.stderr and "NOT starting the command" in r.stderr
    data = json.loads(report.read_text())
    assert data["command"] == "exec" and data["exit_code"] == 1
    assert data["linted_command"][-1] == "<redacted>" and "sk-s3cr3t0123456" not in report.read_text()
    assert data["linted_command"][:3] == [str(fake_vllm), "serve", QWEN]


def test_passing_lint_execs_and_report_is_written_first(tmp_path, fake_vllm):
    marker = tmp_path / "started"
    report = tmp_path / "report.json"
    argv = [str(fake_vllm), "serve", QWEN, "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    r = subprocess.run(BASE + ["--select", "SERVE", "--report", str(report), "--"] + argv, cwd=REPO,
                       env=_env(FAKE_VLLM_MARKER=marker, FAKE_VLLM_REPORT=report, FAKE_VLLM_EXIT=3),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 3
    assert marker.read_text().endswith("--tool-call-parser hermes")
    assert r.stdout == "report-exists\n"
    data = json.loads(report.read_text())
    assert data["exit_code"] == 0 and data["linted_command"] == argv
    assert {f["code"]: f["status"] for f in data["findings"]}["SERVE104"] == "pass"


def test_skip_env_bypasses_loudly_and_report_says_so(tmp_path, fake_vllm):
    marker = tmp_path / "started"
    report = tmp_path / "report.json"
    argv = [str(fake_vllm), "serve", QWEN, "--tool-call-parser", "hermes"]
    r = subprocess.run(BASE + ["--select", "SERVE", "--report", str(report), "--"] + argv, cwd=REPO,
                       env=_env(FAKE_VLLM_MARKER=marker, ASCEND_DOCTOR_SKIP="1"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and marker.exists()
    assert "ASCEND_DOCTOR_SKIP=1" in r.stderr and "SKIPPED" in r.stderr
    data = json.loads(report.read_text())
    assert data["findings"] == [] and any("ASCEND_DOCTOR_SKIP=1" in n for n in data["notes"])
    assert data["linted_command"] == argv


def test_fail_on_warning_refuses_on_a_warning(tmp_path, fake_vllm):
    marker = tmp_path / "started"
    argv = ["env", "VLLM_USE_V1=1", str(fake_vllm), "serve", QWEN]  # a leftover: ENV102 warns
    ok = subprocess.run(BASE + ["--select", "ENV102", "--"] + argv, cwd=REPO, env=_env(FAKE_VLLM_MARKER=marker),
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and marker.exists()  # a warning is below the default --fail-on error
    marker.unlink()
    r = subprocess.run(BASE + ["--select", "ENV102", "--fail-on", "warning", "--format", "json", "--"] + argv,
                       cwd=REPO, env=_env(FAKE_VLLM_MARKER=marker), capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and not marker.exists()
    finding = json.loads(r.stderr[:r.stderr.rindex("}") + 1])["findings"][0]
    assert finding["code"] == "ENV102" and finding["status"] == "warn"


# --smoke ----------------------------------------------------------------------------------------------------------
def test_a_smoke_whose_checks_are_all_deselected_is_refused_before_anything_starts(tmp_path, fake_vllm):
    """#40 item 4: `exec --select SERVE --smoke --strict` printed "smoke passed" with every smoke check deselected
    (against a server that leaked tool-call markup) and left it serving."""
    marker = tmp_path / "started"
    argv = [str(fake_vllm), "serve", QWEN, "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    r = subprocess.run(BASE + ["--select", "SERVE", "--smoke", "--strict", "--"] + argv, cwd=REPO,
                       env=_env(FAKE_VLLM_MARKER=marker, FAKE_VLLM_MODE="serve"), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and not marker.exists()
    assert "leave none of its checks (SRV, TOOL) to run" in r.stderr and "smoke passed" not in r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _smoke(tmp_path, fake_vllm, fault, *extra, health_timeout=60, **env):
    marker = tmp_path / "signal"
    report = tmp_path / "smoke.json"
    port = _free_port()
    argv = [str(fake_vllm), "serve", QWEN, "--host", "0.0.0.0", "--port", str(port),
            "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    proc = subprocess.Popen(BASE + ["--select", "SERVE,SRV,TOOL", "--smoke", "--health-timeout", str(health_timeout),
                                    "--smoke-timeout", "20", "--report", str(report), *extra, "--"] + argv,
                            cwd=REPO, env=_env(FAKE_VLLM_MODE="serve", FAKE_VLLM_FAULT=fault or "",
                                               FAKE_VLLM_MARKER=marker, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, marker, report


def _stop(proc) -> None:
    """Kill exec and the server it supervises. The server runs in its own session (supervise.py starts it so), so
    killing exec alone left the fake `vllm serve` running after a failed or timed-out test; its pid is read first."""
    import psutil

    if proc.poll() is not None:
        return
    try:
        family = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        family = []
    proc.kill()
    proc.wait()
    for child in family:
        try:
            child.kill()
        except psutil.Error:
            pass


def _wait_for(proc, text: str, deadline_s: float = 300.0) -> str:
    """stderr up to the line holding `text`; AssertionError (with what was seen) when the process ends or the
    deadline passes first — a supervised server keeps running, so a missing line must not hang the suite. A thread
    reads the lines (a line buffered in the pipe's reader is never missed, as it could be with select on the fd)."""
    import queue
    import threading

    lines: "queue.Queue[Optional[str]]" = getattr(proc, "_lines", None) or queue.Queue()
    if not hasattr(proc, "_lines"):
        proc._lines = lines
        threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stderr] + [lines.put(None)],
                         daemon=True).start()
    seen, end = [], time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            line = lines.get(timeout=max(0.01, end - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"{text!r} not seen:\n" + "".join(seen))


def _rest(proc, deadline_s: float = 60.0) -> str:
    """What stderr printed after the last `_wait_for`, up to its end (the reader thread owns the pipe)."""
    import queue

    out, end = [], time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            line = proc._lines.get(timeout=max(0.01, end - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        out.append(line)
    return "".join(out)


def test_smoke_passes_then_keeps_serving_and_forwards_sigterm(tmp_path, fake_vllm):
    proc, marker, report = _smoke(tmp_path, fake_vllm, None)
    try:
        _wait_for(proc, "smoke passed")
        data = json.loads(report.read_text())
        codes = {f["code"] for f in data["findings"]}
        assert "TOOL101" in codes and "SERVE104" in codes and data["exit_code"] == 0
        assert proc.poll() is None  # still serving
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # the child's exit code
        assert marker.read_text() == "sigterm"  # the child got the forwarded SIGTERM
        assert "fake vllm serving" in proc.stdout.read()
    finally:
        _stop(proc)


def test_smoke_failure_strict_stops_the_server(tmp_path, fake_vllm):
    proc, marker, report = _smoke(tmp_path, fake_vllm, "dsml_leak", "--strict")
    try:
        assert proc.wait(timeout=120) == 1
        assert marker.read_text() == "sigterm"
        data = json.loads(report.read_text())
        assert data["exit_code"] == 1
        assert any(f["code"].startswith("TOOL") and f["status"] == "fail" for f in data["findings"])
        assert "stopping the server" in proc.stderr.read()
    finally:
        _stop(proc)


def test_smoke_failure_without_strict_keeps_serving(tmp_path, fake_vllm):
    proc, marker, report = _smoke(tmp_path, fake_vllm, "dsml_leak")
    try:
        _wait_for(proc, "keeps running")
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        _stop(proc)


def test_health_wait_and_smoke_never_go_through_an_http_proxy(tmp_path, fake_vllm):
    # A proxy that answers nothing (a closed port): before, urllib sent every health probe to it and the wait ran its
    # whole --health-timeout; the child is ours, on loopback, and is asked directly.
    dead_proxy = f"http://127.0.0.1:{_free_port()}"
    proc, marker, report = _smoke(tmp_path, fake_vllm, None, health_timeout=30, http_proxy=dead_proxy,
                                  HTTP_PROXY=dead_proxy, https_proxy=dead_proxy, all_proxy=dead_proxy, no_proxy="")
    try:
        seen = _wait_for(proc, "smoke passed")
        assert "answered 200" in seen
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        finally:
            _stop(proc)


def test_sigterm_during_the_smoke_stops_it_and_exits_with_the_servers_code(tmp_path, fake_vllm):
    # `slow` delays the named scenario by 3 s: SIGTERM arrives while the smoke is in flight. Even with --strict the
    # smoke must not go on testing a server that is shutting down, and the exit code is the server's (here 7).
    proc, marker, report = _smoke(tmp_path, fake_vllm, "slow", "--strict", FAKE_VLLM_TERM_EXIT="7")
    try:
        _wait_for(proc, "answered 200")
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 7
        err = _rest(proc)
        assert "SIGTERM received: smoke stopped" in err and "smoke FAILED" not in err
        assert marker.read_text() == "sigterm"
        data = json.loads(report.read_text())
        assert any("SIGTERM arrived during the smoke" in n for n in data["notes"])
        assert not any(f["code"].startswith(("TOOL", "SRV")) and f["status"] == "fail" for f in data["findings"])
    finally:
        _stop(proc)


def test_smoke_child_exiting_early_passes_its_code(tmp_path, fake_vllm):
    port = _free_port()
    r = subprocess.run(BASE + ["--select", "SERVE,SRV,TOOL", "--smoke", "--health-timeout", "60", "--",
                               str(fake_vllm), "serve", QWEN, "--port", str(port)],
                       cwd=REPO, env=_env(FAKE_VLLM_MODE="marker", FAKE_VLLM_EXIT=5), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 5 and "exited with status 5 before it became healthy" in r.stderr


def test_smoke_never_judges_a_server_that_held_the_port_before_the_command(tmp_path, fake_vllm):
    """#23 item 10: the command died with "address already in use", and the health poll found the other server on
    that port, smoke-tested it and said "the server keeps running"."""
    import http.server
    import threading

    class Healthy(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    squatter = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    port = squatter.server_address[1]
    threading.Thread(target=squatter.serve_forever, daemon=True).start()
    try:
        r = subprocess.run(BASE + ["--select", "SERVE,SRV,TOOL", "--smoke", "--health-timeout", "30", "--",
                                   str(fake_vllm), "serve", QWEN, "--port", str(port)],
                           cwd=REPO, env=_env(FAKE_VLLM_MODE="serve"), capture_output=True, text=True, timeout=120)
    finally:
        squatter.shutdown()
        squatter.server_close()
    assert f"127.0.0.1:{port} is already held by pid {os.getpid()}" in r.stderr, r.stderr
    assert "smoke will not run" in r.stderr and "smoke passed" not in r.stderr and "keeps running" not in r.stderr
    assert r.returncode != 0, "the command's own failure to bind is the exit code"


# units ----------------------------------------------------------------------------------------------------------
def test_exit_code_of_and_skip_requested():
    assert exit_code_of(-15) == 143 and exit_code_of(3) == 3
    assert skip_requested({"ASCEND_DOCTOR_SKIP": "1"}) and not skip_requested({"ASCEND_DOCTOR_SKIP": "0"})
    assert not skip_requested({})


def test_infer_python_from_shebang_and_module_form(tmp_path):
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "vllm").write_text("#!/opt/vllm/bin/python3.11\nfrom vllm.entrypoints.cli.main import main\n")
    host = DirHost(env={"PATH": f"/nonexistent:{bindir}"})

    def entry(argv, on=host):
        class Ctx:
            options = RunOptions(serve_argv=argv)

        return serve_entry_probe(on, Ctx())

    shebang = entry(["vllm", "serve", "m"])
    assert shebang.interpreter == "/opt/vllm/bin/python3.11" and shebang.how == f"the #! line of {bindir}/vllm"
    argv = ["env", "A=1", "/opt/py/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"]
    module = entry(argv)
    assert module.interpreter == "/opt/py/bin/python" and module.launch.env == {"A": "1"}
    assert entry(["bash"]).interpreter is None and "not a vllm serve" in entry(["bash"]).why_not
    nowhere = entry(["vllm", "serve", "m"], on=DirHost(env={"PATH": "/nonexistent"}))
    assert nowhere.interpreter is None and nowhere.why_not == "vllm is not on PATH"


def test_exec_replay_lints_and_never_starts_the_command(tmp_path, fake_vllm):
    """#22 item 2: `exec --replay SNAP -- …` judged the recorded host, then started the command on this machine (or
    exited 127 without a `vllm` here)."""
    marker = tmp_path / "started"
    replay = [sys.executable, "-m", "ascend_doctor", "exec", "--replay", HEALTHY, "--select", "SERVE"]
    good = [str(fake_vllm), "serve", QWEN, "--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    r = subprocess.run(replay + ["--"] + good, cwd=REPO, env=_env(FAKE_VLLM_MARKER=marker), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and not marker.exists(), r.stderr
    assert "linted, not started" in r.stderr and HEALTHY in r.stderr
    bad = [str(fake_vllm), "serve", QWEN, "--tool-call-parser", "hermes"]
    r = subprocess.run(replay + ["--"] + bad, cwd=REPO, env=_env(FAKE_VLLM_MARKER=marker), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and not marker.exists() and "NOT READY" in r.stderr
    r = subprocess.run(replay + ["--", "vllm", "serve", "/m"], cwd=REPO, capture_output=True, text=True, timeout=120,
                       env=_env(PATH="/nonexistent"))
    assert r.returncode in (0, 1), "never 127: nothing is started"
    r = subprocess.run(replay + ["--smoke", "--"] + good, cwd=REPO, env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "--smoke needs the machine" in r.stderr
    r = subprocess.run(replay + ["--"] + good, cwd=REPO, env=_env(FAKE_VLLM_MARKER=marker, ASCEND_DOCTOR_SKIP="1"),
                       capture_output=True, text=True, timeout=120)
    assert not marker.exists(), "the bypass does not start a replayed command either"
