"""`--format prometheus` (#27): node-exporter textfile output, parsed with the official client's parser — every finding
a series, the readiness and the stack as metrics, hostile label values escaped."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone

from prometheus_client.parser import text_string_to_metric_families

from ascend_doctor.render.prometheus import render_prometheus
from ascend_doctor.report import Finding, HostSummary, Severity, Status, build_report
from tests.helpers import REPO


def families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def doctor(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)


def test_every_finding_is_a_series_and_the_readiness_is_the_exit_code(tmp_path):
    r = doctor("check", "--replay", "examples/broken-host.snapshot.json", "--json", str(tmp_path / "r.json"),
               "-o", str(tmp_path / "node.prom"))  # the .prom extension picks the format
    assert r.returncode == 1, r.stderr
    import json

    report = json.loads((tmp_path / "r.json").read_text())
    fam = families((tmp_path / "node.prom").read_text())
    ready = fam["ascend_doctor_ready"].samples[0]
    assert ready.value == 0 and ready.labels == {"host": "a2-node-11", "command": "check"}
    checks = {s.labels["code"]: s.labels for s in fam["ascend_doctor_check"].samples}
    assert set(checks) == {f["code"] for f in report["findings"]}
    for f in report["findings"]:
        assert checks[f["code"]]["status"] == f["status"] and checks[f["code"]]["severity"] == f["severity"]
    assert checks["HOST102"]["gating"] == "true" and checks["CANN101"]["gating"] == "false"
    counts = {s.labels["status"]: s.value for s in fam["ascend_doctor_findings"].samples}
    assert sum(counts.values()) == len(report["findings"]) and counts["fail"] == report["counts"]["fail"]
    stack = fam["ascend_doctor_stack_info"].samples[0].labels
    assert stack["cann"] == report["host"]["stack"]["cann"] and stack["npu_count"] == "8"
    verdict = fam["ascend_doctor_verdict"].samples[0]
    assert verdict.labels["verdict"] == report["verdict"] == "not_ready"
    assert fam["ascend_doctor_run_duration_seconds"].samples[0].value >= 0


def test_the_run_timestamp_is_exact():
    """#40 item 15: `{:g}` printed 1.79641e+09 (six significant digits, up to 5,000 s off)."""
    started = datetime(2026, 12, 4, 22, 59, 58, 250000, tzinfo=timezone.utc)
    report = build_report(tool_version="t", host=HostSummary(hostname="h"), started_at=started, duration_s=12.5,
                          fail_on=Severity.ERROR, findings=[], command="check")
    text = render_prometheus(report)
    assert "ascend_doctor_last_run_timestamp_seconds{host=\"h\",command=\"check\"} 1796425198.25" in text
    fam = families(text)
    assert fam["ascend_doctor_last_run_timestamp_seconds"].samples[0].value == started.timestamp()
    assert fam["ascend_doctor_run_duration_seconds"].samples[0].value == 12.5


def test_label_values_are_escaped_so_the_file_always_parses():
    f = Finding(code="HOST102", slug="s", title="t", family="HOST", status=Status.FAIL, severity=Severity.ERROR,
                message="m")
    hostile = 'node"1\\\n} evil 1'
    report = build_report(tool_version="t", host=HostSummary(hostname=hostile), started_at=datetime.now(timezone.utc),
                          duration_s=0.1, fail_on=Severity.ERROR, findings=[f], command="check")
    fam = families(render_prometheus(report))
    assert fam["ascend_doctor_ready"].samples[0].labels["host"] == hostile
    assert len(fam["ascend_doctor_check"].samples) == 1


def test_a_healthy_host_is_ready():
    r = doctor("check", "--replay", "examples/healthy-a2.snapshot.json", "--format", "prometheus")
    assert r.returncode == 0, r.stderr
    fam = families(r.stdout)
    assert fam["ascend_doctor_ready"].samples[0].value == 1
    assert fam["ascend_doctor_exit_code"].samples[0].value == 0


def test_a_check_found_twice_is_one_series_the_worse():
    """#40 item 9: a report holding a check twice (an edited or merged one) wrote two series with one label set;
    node-exporter drops such a textfile whole, the ready signal with it."""
    def f(status, node=None):
        return Finding(code="HOST102", slug="s", title="t", family="HOST", status=status, severity=Severity.ERROR,
                       message="m", node=node)
    report = build_report(tool_version="t", host=HostSummary(hostname="h"), started_at=datetime.now(timezone.utc),
                          duration_s=0.1, fail_on=Severity.ERROR, command="check",
                          findings=[f(Status.PASS), f(Status.FAIL), f(Status.PASS), f(Status.PASS, "n2")])
    samples = families(render_prometheus(report))["ascend_doctor_check"].samples
    keys = [tuple(sorted((k, v) for k, v in s.labels.items() if k != "status")) for s in samples]
    assert len(keys) == len(set(keys)) == 2
    assert {s.labels.get("node"): s.labels["status"] for s in samples} == {None: "fail", "n2": "pass"}
