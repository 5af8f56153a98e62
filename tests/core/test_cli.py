"""The CLI contract: exit codes, one-line errors without tracebacks, -o always written, pure JSON on stdout."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from ascend_doctor.seam.snapshot import CommandEntry, DiskEntry, FileEntry, Snapshot
from tests.helpers import REPO

GIB = 1024 ** 3


def run(*args, cwd=None, env=None):
    e = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd or REPO, env=e,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture()
def snap(tmp_path):
    s = Snapshot.model_validate(dict(
        system={"hostname": "node-7", "os": "Ubuntu 22.04", "kernel": "5.15", "machine": "aarch64"},
        env={"HOME": "/root", "OPENAI_API_KEY": "sk-should-never-appear-123456"},
        files={"/proc/self/limits": FileEntry(content="Max open files            1024                 1024                 files\n"),
               "/proc/meminfo": FileEntry(content="MemTotal: 1583989660 kB\nMemAvailable: 1502233100 kB\n")},
        disk={"/dev/shm": DiskEntry(total_bytes=32 * GIB, free_bytes=32 * GIB),
              "/root": DiskEntry(total_bytes=1000 * GIB, free_bytes=800 * GIB)},
        commands=[CommandEntry(argv=["chronyc", "tracking"], stdout="Leap status     : Normal\n")],
    ))
    p = tmp_path / "host.snapshot.json"
    p.write_text(s.dump())
    return p


def test_replay_json_stdout_is_pure_json_and_exit_code_follows_findings(snap):
    r = run("check", "--replay", str(snap), "--select", "HOST", "--format", "json")
    rep = json.loads(r.stdout)
    assert r.returncode == rep["exit_code"] == 1  # ulimit 1024 fails HOST103 (error)
    assert rep["schema_version"] and rep["host"]["hostname"] == "node-7"
    assert rep["host"]["source"].startswith("replay:")
    by = {f["code"]: f for f in rep["findings"]}
    assert by["HOST103"]["status"] == "fail" and by["HOST107"]["status"] == "pass"
    assert "sk-should-never-appear" not in r.stdout


def test_fail_on_controls_exit(snap):
    r = run("check", "--replay", str(snap), "--select", "HOST104,HOST107", "--format", "json")
    assert r.returncode == 0, r.stderr
    r = run("check", "--replay", str(snap), "--select", "HOST103", "--fail-on", "critical", "--format", "json")
    assert r.returncode == 0


def test_output_file_and_console(snap, tmp_path):
    out = tmp_path / "sub" / "report.json"
    r = run("check", "--replay", str(snap), "--format", "json", "-o", str(out))
    assert r.returncode == 1
    assert json.loads(out.read_text())["findings"]
    assert "NOT READY" in r.stdout and "\x1b[" not in r.stdout  # console view, no colour (NO_COLOR, non-TTY)


def test_junit_one_testcase_per_finding(snap, tmp_path):
    out = tmp_path / "r.xml"
    run("check", "--replay", str(snap), "--select", "HOST", "--format", "junit", "-o", str(out))
    suite = ET.parse(out).getroot()
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) >= 10
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert any(n.startswith("HOST103") for n in failed)


def test_github_annotations(snap):
    r = run("check", "--replay", str(snap), "--select", "HOST103", "--format", "github")
    assert r.stdout.startswith("::error title=HOST103 ")


@pytest.mark.parametrize("args, needle", [
    (["check", "--replay", "/nonexistent.json"], "does not exist"),
    (["check", "--select", "NOPE1"], "unknown check code or prefix"),
    (["check", "--fail-on", "sometimes"], "Invalid value for '--fail-on'"),
    (["explain", "ZZZ999"], "unknown check"),
    (["check", "--checks-dir", "/nonexistent-dir"], "does not exist"),
])
def test_input_errors_exit_2_one_line_no_traceback(args, needle):
    r = run(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert needle in r.stderr and "Traceback" not in r.stderr


def test_invalid_config_names_file_and_key(snap, tmp_path):
    (tmp_path / "ascend-doctor.toml").write_text('[options]\nprobe_timeout = "soon"\n')
    r = run("check", "--replay", str(snap), cwd=tmp_path)
    assert r.returncode == 2 and "ascend-doctor.toml: options.probe_timeout" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_snapshot_still_one_line(tmp_path):
    p = tmp_path / "trunc.json"
    p.write_text('{"format": "ascend-doctor-snapshot", "version": 1, "commands": [')
    r = run("check", "--replay", str(p), "-o", str(tmp_path / "r.json"))
    assert r.returncode == 2 and "not valid JSON" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_crashing_plugin_check_is_an_error_finding_and_report_is_written(snap, tmp_path):
    d = tmp_path / "plug"
    d.mkdir()
    (d / "boom.py").write_text(
        "from ascend_doctor.core.registry import check\n"
        "@check('BOOM101', 'boom', severity='warning')\n"
        "def boom(ctx):\n"
        "    '''Boom\n\n    Why it matters: x.\n\n    How to fix: y.\n    '''\n"
        "    raise RuntimeError('kaput')\n")
    out = tmp_path / "r.json"
    r = run("check", "--replay", str(snap), "--checks-dir", str(d), "--select", "BOOM", "--format", "json", "-o",
            str(out))
    rep = json.loads(out.read_text())
    f = rep["findings"][0]
    assert f["status"] == "error" and "kaput" in f["message"] and "Traceback" in f["traceback"]
    assert r.returncode == 0  # a warning-severity check erroring does not reach fail-on=error


def test_schema_list_explain():
    r = run("schema")
    schema = json.loads(r.stdout)
    assert "findings" in schema["properties"] and "schema_version" in schema["properties"]
    r = run("list", "--format", "json")
    rows = json.loads(r.stdout)
    assert {"code": "HOST102", "slug": "selinux-mode"}.items() <= next(x for x in rows if x["code"] == "HOST102").items()
    r = run("explain", "HOST102")
    assert "Why it matters" in r.stdout and "How to fix" in r.stdout and r.returncode == 0
    r = run("schema", "--snapshot")
    assert json.loads(r.stdout)["title"] == "Snapshot"


def test_help_documents_exit_codes():
    r = run("check", "--help")
    assert "Exit codes" in r.stdout and "3    internal error" in r.stdout and "130  interrupted" in r.stdout


@pytest.mark.localhost
def test_check_on_this_machine_completes_and_collect_replays(tmp_path):
    out = tmp_path / "local.json"
    r = run("check", "--format", "json", "-o", str(out), "--no-import-probe")
    rep = json.loads(out.read_text())
    assert r.returncode in (0, 1) and rep["exit_code"] == r.returncode
    assert {f["code"] for f in rep["findings"]} >= {"HOST101", "HOST102", "HOST103"}
    snap = tmp_path / "h.snapshot.json"
    r = run("collect", "-o", str(snap), "--no-import-probe")
    assert r.returncode == 0, r.stderr
    r2 = run("check", "--replay", str(snap), "--format", "json")
    replayed = {f["code"]: f["status"] for f in json.loads(r2.stdout)["findings"]}
    live = {f["code"]: f["status"] for f in rep["findings"]}
    # The same machine, live and replayed, reaches the same verdicts (memory/disk may move by a few bytes only).
    assert {k: v for k, v in replayed.items() if k.startswith("HOST")} == \
           {k: v for k, v in live.items() if k.startswith("HOST")}


def test_internal_error_exits_3_and_still_writes_the_report(snap, tmp_path, monkeypatch):
    from click.testing import CliRunner

    import ascend_doctor.core.engine as engine
    from ascend_doctor.cli import cli

    def broken(*a, **k):
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(engine, "run_static", broken)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["check", "--replay", str(snap), "--format", "json", "-o", str(out)])
    assert res.exit_code == 3
    rep = json.loads(out.read_text())
    assert rep["exit_code"] == 3 and rep["findings"][0]["status"] == "error"
    assert "engine exploded" in rep["findings"][0]["message"]


@pytest.mark.parametrize("args", [
    ["collect", "--probe-timeout", "-5", "-o", "x.json"], ["collect", "--probe-timeout", "nan", "-o", "x.json"],
    ["collect", "--probe-timeout", "inf", "-o", "x.json"], ["check", "--probe-timeout", "0"],
    ["exec", "--health-timeout", "nan", "--", "vllm", "serve", "m"], ["smoke", "--base-url", "http://[::1"],
    ["smoke", "--base-url", "http://h:port/v1"],
    # #40 item 9: click's FloatRange and plain float options let `nan` through (plan exited 3)
    ["plan", "--model", "Qwen3-32B", "--chip", "910B3", "--npus", "8", "--gpu-memory-utilization", "nan"],
    ["smoke", "--base-url", "http://127.0.0.1:9/v1", "--load", "2", "--load-deadline", "nan"],
    ["fleet", "--snapshots", "x*.json", "--node-timeout", "nan"], ["fleet", "--snapshots", "x*.json",
                                                                   "--connect-timeout", "inf"],
])
def test_bad_seconds_and_urls_are_usage_errors(args, tmp_path):
    """#23 item 10: these exited 3 with pydantic's or urllib's text (and `inf` overflowed time_t); each is a one-line
    input error now, exit 2, before anything runs."""
    r = run(*args, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_selection_that_runs_nothing_is_a_usage_error():
    """#22 item 4: `check --select SERVE` ran no check and said OK, exit 0 — a mistyped CI filter gated nothing. It is
    an input error (exit 2) that says where the selected checks do run; a selection with static checks still runs."""
    r = run("check", "--replay", str(REPO / "examples" / "healthy-a2.snapshot.json"), "--select", "SERVE",
            "--fail-on-unknown")
    assert r.returncode == 2 and "runs nothing here" in r.stderr and "ascend-doctor exec" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run("check", "--replay", str(REPO / "examples" / "healthy-a2.snapshot.json"), "--select", "SERVE,HOST101")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bare_command_prints_the_help(lang):
    """#22 item 6: bare `ascend-doctor` printed the whole help squashed into one error line, exit 2. It prints the help
    as `--help` does, exit 0, in either language."""
    r = run(env={"ASCEND_DOCTOR_LANG": lang})
    assert r.returncode == 0 and r.stderr == ""
    first = r.stdout.splitlines()[0]
    assert first.startswith(("Usage:", "用法")) and "ascend-doctor [OPTIONS] COMMAND" in first
    assert len(r.stdout.splitlines()) > 10


def test_typos_of_commands_and_check_codes_name_the_closest(tmp_path):
    """#22 item 11: options had a did-you-mean; commands and check codes had none."""
    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    r = CliRunner().invoke(cli, ["chek"])
    assert r.exit_code == 2 and "did you mean check" in r.output
    r = CliRunner().invoke(cli, ["check", "--replay", str(REPO / "examples" / "healthy-a2.snapshot.json"),
                                 "--select", "HOST1O2"])
    assert r.exit_code == 2 and "did you mean HOST102" in r.output


def test_the_same_machine_format_asked_twice_for_stdout_is_written_once():
    """#22 item 11: `--format json --json -` said "json and json cannot both go to stdout"."""
    import json as _json

    from click.testing import CliRunner

    from ascend_doctor.cli import cli

    r = CliRunner().invoke(cli, ["check", "--replay", str(REPO / "examples" / "healthy-a2.snapshot.json"),
                                 "--format", "json", "--json", "-"])
    assert r.exit_code == 0, r.output
    assert _json.loads(r.output)["command"] == "check"


def test_an_unknown_language_in_the_environment_is_refused_like_the_option(tmp_path):
    """#22 item 8: `--lang fr` exits 2, `ASCEND_DOCTOR_LANG=fr` was silently ignored."""
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "list"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "ASCEND_DOCTOR_LANG": "fr", "PYTHONPATH": str(REPO)})
    assert r.returncode == 2 and "ASCEND_DOCTOR_LANG='fr' is not one of zh, en" in r.stderr and not r.stdout
