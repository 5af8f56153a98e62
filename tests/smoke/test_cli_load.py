"""`ascend-doctor smoke` end to end (exit codes, formats, input errors) and the load generator."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.smoke.load import run_load, run_load_async
from tests.smoke.fault_server import ScriptedServer


def invoke(*args, env=None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_smoke_json_report_on_a_good_server():
    with ScriptedServer() as srv:
        url = srv.base_url
        r = invoke("smoke", "--base-url", url, "--format", "json", "--timeout", "10")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["command"] == "smoke"
    assert rep["host"]["hostname"] == "127.0.0.1" and rep["host"]["source"] == "smoke:" + url
    assert rep["counts"]["fail"] == 0 and rep["counts"]["pass"] >= 16
    assert {f["family"] for f in rep["findings"]} == {"SRV", "TOOL"}


def test_smoke_exit_1_on_a_fault_and_junit_file(tmp_path):
    out = tmp_path / "smoke.xml"
    with ScriptedServer("dsml_leak") as srv:
        r = invoke("smoke", "--base-url", srv.base_url, "--format", "junit", "-o", str(out))
    assert r.exit_code == 1
    xml = out.read_text()
    assert "TOOL113" in xml and "<failure" in xml


def test_fail_on_warning_turns_a_warning_into_exit_1():
    ov = {"irrelevant": {"status": 200, "json": {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "x", "type": "function", "function": {"name": "get_time",
                                                                    "arguments": "{\"timezone\": \"UTC\"}"}}]}}]}}}
    with ScriptedServer(overrides=ov) as srv:
        lenient = invoke("smoke", "--base-url", srv.base_url, "--format", "json")
        strict = invoke("smoke", "--base-url", srv.base_url, "--format", "json", "--fail-on", "warning")
    assert lenient.exit_code == 0 and strict.exit_code == 1


def test_load_option_reports_percentiles():
    with ScriptedServer() as srv:
        r = invoke("smoke", "--base-url", srv.base_url, "--format", "json", "--load", "12", "--concurrency", "4",
                   "--select", "SRV104")
    assert r.exit_code == 0, r.output
    f = json.loads(r.output)["findings"][0]
    assert f["code"] == "SRV104" and f["status"] == "pass"
    d = f["details"]
    assert d["succeeded"] == 12 and d["streamed"] == 6 and d["concurrency"] == 4
    assert d["p50_ms"] <= d["p95_ms"] <= d["p99_ms"] and d["ttft_p50_ms"] is not None


@pytest.mark.parametrize("args,needle", [
    (["--base-url", "localhost:8000"], "--base-url"),
    (["--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "ASCEND_DOCTOR_SURELY_UNSET_VAR"],
     "ASCEND_DOCTOR_SURELY_UNSET_VAR"),
    (["--base-url", "http://127.0.0.1:9/v1", "--select", "NOPE999"], "NOPE999"),
    (["--base-url", "http://127.0.0.1:9/v1", "--load", "0"], "--load"),
    (["--base-url", "http://127.0.0.1:9/v1", "--timeout", "0"], "--timeout"),
    (["--base-url", "http://127.0.0.1:9/v1", "--load", "5", "--load-deadline", "-1"], "--load-deadline"),
    (["--base-url", "http://127.0.0.1:9/v1", "--matrix", "/nonexistent/m.toml"], "/nonexistent/m.toml"),
])
def test_input_errors_exit_2_with_one_line(args, needle):
    r = CliRunner().invoke(cli, ["smoke", *args])
    assert r.exit_code == 2
    assert needle in r.output and "Traceback" not in r.output


def test_unreachable_server_exit_1_not_a_crash():
    r = invoke("smoke", "--base-url", "http://127.0.0.1:9/v1", "--timeout", "2", "--format", "json")
    assert r.exit_code == 1
    rep = json.loads(r.output)
    status = {f["code"]: f["status"] for f in rep["findings"]}
    assert status["SRV101"] == "fail" and status["TOOL113"] == "skip"


def test_load_counts_failures_and_keeps_the_first_errors():
    ov = {"named_stream": {"status": 503, "json": {"error": {"message": "overloaded"}}}}
    with ScriptedServer(overrides=ov) as srv:
        res = run_load(srv.base_url, "scripted-model", total=10, concurrency=3, timeout=5.0, show_progress=False)
    assert res.completed == 10 and res.succeeded == 5 and res.error_count == 5
    assert 0 < len(res.errors) <= 5 and "HTTP 503" in res.errors[0] and "(stream)" in res.errors[0]


def test_load_is_bounded_by_timeout_and_deadline():
    ov = {"named": {"delay_s": 2.0, "status": 200, "json": {}}, "named_stream": {"delay_s": 2.0, "status": 200,
                                                                                  "sse": ["[DONE]"]}}
    with ScriptedServer(overrides=ov) as srv:
        res = asyncio.run(run_load_async(srv.base_url, "scripted-model", total=6, concurrency=2, timeout=0.3,
                                         deadline=30.0))
        assert res.succeeded == 0 and res.error_count == 6 and "timeout" in res.errors[0]
        cut = asyncio.run(run_load_async(srv.base_url, "scripted-model", total=50, concurrency=2, timeout=5.0,
                                         deadline=0.5))
    assert cut.stopped_early and cut.completed < 50


def test_load_deadline_option_stops_the_load_early():
    ov = {"named": {"delay_s": 0.4, "status": 200, "json": {}}, "named_stream": {"delay_s": 0.4, "status": 200,
                                                                                  "sse": ["[DONE]"]}}
    with ScriptedServer(overrides=ov) as srv:
        r = invoke("smoke", "--base-url", srv.base_url, "--format", "json", "--select", "SRV104", "--load", "40",
                   "--concurrency", "2", "--load-deadline", "0.5")
    f = json.loads(r.output)["findings"][0]
    assert r.exit_code == 1 and f["status"] == "fail"
    assert f["details"]["stopped_early"] and f["details"]["completed"] < 40
    assert any(e["source"] == "load: stopped early" for e in f["evidence"])


def test_load_rejects_answers_without_a_tool_call():
    ov = {"named": {"status": 200, "json": {"choices": [{"index": 0, "message": {"role": "assistant",
                                                                                   "content": "sunny"}}]}}}
    with ScriptedServer(overrides=ov) as srv:
        res = run_load(srv.base_url, "scripted-model", total=4, concurrency=2, timeout=5.0, show_progress=False)
    assert res.error_count == 2 and "no tool call" in res.errors[0]


def test_check_with_smoke_url_appends_the_smoke_findings():
    from tests.helpers import REPO

    snap = REPO / "examples" / "healthy-a2.snapshot.json"
    if not snap.is_file():
        pytest.skip("examples/healthy-a2.snapshot.json not present")
    with ScriptedServer("dsml_leak") as srv:
        r = CliRunner().invoke(cli, ["check", "--replay", str(snap), "--smoke-url", srv.base_url, "--format", "json",
                                     "--smoke-timeout", "10"])
    assert r.exit_code in (0, 1), r.output
    rep = json.loads(r.stdout if hasattr(r, "stdout") else r.output)
    smoke = {f["code"]: f["status"] for f in rep["findings"] if f["family"] in ("SRV", "TOOL")}
    assert smoke["TOOL113"] == "fail" and smoke["SRV101"] == "pass"
    assert r.exit_code == 1  # the leak is an error-level failure
    assert any(f["family"] not in ("SRV", "TOOL") for f in rep["findings"])  # the static checks ran too


def test_ctrl_c_during_the_load_is_one_line_and_exit_130():
    """#22 item 11: Ctrl-C during `smoke --load` exited 130 but printed an asyncio traceback."""
    import json as _json
    import os as _os
    import signal as _signal
    import subprocess as _subprocess
    import sys as _sys
    import time as _time

    from tests.helpers import REPO
    from tests.smoke.fault_server import GOOD, ScriptedServer

    slow = {"status": 200, "delay_s": 0.5, "json": _json.loads((GOOD / "named.json").read_text())["json"]}
    with ScriptedServer(overrides={"named": slow}) as srv:
        p = _subprocess.Popen([_sys.executable, "-m", "ascend_doctor", "smoke", "--base-url", srv.base_url,
                               "--load", "50", "--concurrency", "4"], stdout=_subprocess.PIPE,
                              stderr=_subprocess.PIPE, text=True, env={**_os.environ, "PYTHONPATH": str(REPO)})
        _time.sleep(4)
        p.send_signal(_signal.SIGINT)
        _out, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "Traceback" not in err and "never retrieved" not in err, err[-2000:]
