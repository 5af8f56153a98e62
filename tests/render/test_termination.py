"""`--termination-log` (#27): in a pod, the verdict and the root cause on one line where `kubectl describe pod` shows
it; at most the 4096 bytes the kubelet keeps."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone

from ascend_doctor.cli import output
from ascend_doctor.render.termination import LIMIT, termination_message
from ascend_doctor.report import Finding, HostSummary, Severity, Status, build_report
from tests.helpers import REPO


def doctor(*args: str, env: dict = None) -> subprocess.CompletedProcess:
    e = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, env=e,
                          cwd=REPO, timeout=120)


def test_a_pod_missing_its_devices_says_why_on_one_line(tmp_path):
    log = tmp_path / "termination-log"
    r = doctor("check", "--replay", "examples/container-missing-devices.snapshot.json", "--termination-log", str(log),
               "-q")
    assert r.returncode == 1, r.stderr
    text = log.read_text()
    assert text.count("\n") == 1 and text.startswith("ascend-doctor check: NOT READY (exit 1;")
    assert "CTR101 device node(s) missing in the container: /dev/davinci_manager" in text
    assert "fix: add to docker run: --device /dev/davinci_manager" in text and "huawei.com/Ascend910" in text


def test_a_ready_host_says_ok_as_the_console_does(tmp_path):
    """#40 item 14: the console's verdict word (it said READY where the console says OK), in the run's language."""
    log = tmp_path / "t"
    r = doctor("check", "--replay", "examples/healthy-a2.snapshot.json", "--termination-log", str(log), "-q")
    assert r.returncode == 0
    assert log.read_text().startswith("ascend-doctor check: OK (exit 0; 0 failed")
    r = doctor("--lang", "zh", "check", "--replay", "examples/container-missing-devices.snapshot.json",
               "--termination-log", str(log), "-q")
    assert r.returncode == 1
    text = log.read_text()
    assert text.startswith("ascend-doctor check：未就绪（退出码 1；") and "CTR101" in text and "修复：" in text
    assert "failed" not in text and "fix:" not in text


def test_an_input_error_in_a_pod_is_said_there_too(tmp_path):
    """#40 item 15: exit 2 wrote no termination log; a pod stopped by a bad option showed nothing."""
    log = tmp_path / "t"
    r = doctor("check", "--replay", str(tmp_path / "missing.json"), "--termination-log", str(log))
    assert r.returncode == 2
    text = log.read_text()
    assert text.startswith("ascend-doctor check: input error (exit 2) — ") and "missing.json" in text
    assert text.count("\n") == 1
    r = doctor("exec", f"--termination-log={log}", "--no-such-option", "--", "vllm", "serve", "m")
    assert r.returncode == 2
    assert log.read_text().startswith("ascend-doctor exec: input error (exit 2) — No such option")


def test_in_a_pod_the_kubelet_file_is_the_default(tmp_path, monkeypatch):
    pod_file = tmp_path / "termination-log"
    pod_file.write_text("")
    monkeypatch.setattr(output, "POD_TERMINATION_LOG", str(pod_file))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert output.termination_log(None) is None  # not in a pod
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    assert output.termination_log(None) == str(pod_file)
    assert output.termination_log("") is None and output.termination_log("/x") == "/x"


def test_the_message_fits_what_the_kubelet_keeps():
    f = Finding(code="CTR101", slug="s", title="t", family="CTR", status=Status.FAIL, severity=Severity.ERROR,
                level=Severity.ERROR, message="设备缺失 " * 2000, remediation="`docker run --device /dev/davinci0`")
    report = build_report(tool_version="t", host=HostSummary(hostname="h"), started_at=datetime.now(timezone.utc),
                          duration_s=0.1, fail_on=Severity.ERROR, findings=[f], command="exec")
    text = termination_message(report)
    assert len(text.encode("utf-8")) <= LIMIT and text.endswith("…\n") and text.count("\n") == 1
    assert text.startswith("ascend-doctor exec: NOT READY (exit 1; 1 failed") and "CTR101" in text
