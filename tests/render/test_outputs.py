"""Outputs a pipeline can use in one run: several formats at once, -o by extension, `-` for stdout and stdin, JUnit
that agrees with the console, SARIF that validates against the published 2.1.0 schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers import DATA, REPO

BROKEN = REPO / "examples" / "broken-host.snapshot.json"
HEALTHY = REPO / "examples" / "healthy-a2.snapshot.json"


def run(*args, cwd=None, stdin=None, env=None):
    e = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd or REPO, env=e, input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_one_run_writes_every_format_beside_the_console(tmp_path: Path):
    r = run("check", "--replay", str(BROKEN), "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml"),
            "--sarif", str(tmp_path / "r.sarif"), "--github", "-o", str(tmp_path / "r.txt"))
    assert r.returncode == 1
    assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "not_ready"
    ET.parse(tmp_path / "r.xml")
    assert json.loads((tmp_path / "r.sarif").read_text())["version"] == "2.1.0"
    assert "NOT READY" in (tmp_path / "r.txt").read_text()
    assert "NOT READY" in r.stdout and "::error title=HOST102" in r.stdout  # console and annotations on stdout


@pytest.mark.parametrize("name, check", [
    ("report.json", lambda t: json.loads(t)["schema_version"]),
    ("report.xml", lambda t: ET.fromstring(t).tag == "testsuite"),
    ("report.sarif", lambda t: json.loads(t)["version"] == "2.1.0"),
    ("report.txt", lambda t: "NOT READY" in t),
])
def test_o_picks_the_format_from_the_extension(tmp_path: Path, name, check):
    out = tmp_path / name
    r = run("check", "--replay", str(BROKEN), "-o", str(out))
    assert r.returncode == 1 and check(out.read_text())


def test_dash_is_stdout_and_replay_dash_is_stdin():
    r = run("check", "--replay", "-", "--json", "-", stdin=BROKEN.read_text())
    rep = json.loads(r.stdout)  # stdout holds only the JSON: the console view stays out of its way
    assert rep["exit_code"] == 1 == r.returncode and rep["host"]["source"] == "replay:<stdin>"
    r = run("check", "--replay", str(BROKEN), "--json", "-", "--sarif", "-")
    assert r.returncode == 2 and "cannot both go to stdout" in r.stderr


def test_quiet_shows_only_problems_and_the_verdict():
    r = run("check", "--replay", str(BROKEN), "-q")
    assert "NOT READY" in r.stdout and "HOST102" in r.stdout
    assert "passed:" not in r.stdout and "✔" not in r.stdout


def test_verbose_lists_passes_and_every_evidence_item():
    r = run("check", "--replay", str(BROKEN), "-v", "--select", "HOST")
    assert "✔ pass    HOST101" in r.stdout and r.stdout.count("seen: sysfs:") == 8


def test_junit_agrees_with_the_console(tmp_path: Path):
    out = tmp_path / "r.xml"
    # --fail-on critical: HOST102 (error) fails but does not gate; it is still a <failure>, marked gating=false.
    r = run("check", "--replay", str(BROKEN), "--fail-on", "critical", "--junit", str(out))
    assert r.returncode == 0
    suite = ET.parse(out).getroot()
    cases = {c.get("name").split()[0]: c for c in suite.findall("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["HOST102"].find("properties")}
    assert cases["HOST102"].find("failure").get("type") == "fail:error"
    assert props == {"status": "fail", "severity": "error", "gating": "false"}
    assert cases["CTR101"].find("skipped").get("message").startswith("skip: ")
    assert int(suite.get("failures")) == 5


def test_junit_tells_unknown_from_skip(tmp_path: Path):
    data = json.loads(HEALTHY.read_text())
    for c in data["commands"]:
        if c["argv"][:1] == ["npu-smi"]:
            c.update(stdout="", returncode=None, error="timeout", error_message="killed after 10s", duration_s=10.0)
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps(data))
    r = run("check", "--replay", str(snap), "--format", "junit")
    cases = {c.get("name").split()[0]: c for c in ET.fromstring(r.stdout).findall("testcase")}
    assert cases["NPU101"].find("skipped").get("message").startswith("unknown: ")
    assert cases["CTR101"].find("skipped").get("message").startswith("skip: ")


def test_sarif_validates_against_the_published_schema(tmp_path: Path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text())
    for snap in (BROKEN, HEALTHY):
        out = tmp_path / "r.sarif"
        run("check", "--replay", str(snap), "--sarif", str(out), "-q")
        doc = json.loads(out.read_text())
        jsonschema.Draft4Validator(schema).validate(doc)
        run_ = doc["runs"][0]
        rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
        assert "SELinux" in rules["HOST102"]["shortDescription"]["text"]
        assert "setenforce 0" in rules["HOST102"]["help"]["text"]
        for res in run_["results"]:
            assert run_["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
            assert (res["kind"] == "fail") == (res["level"] != "none")
    failed = {r["ruleId"]: r for r in json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]}
    assert failed["HOST101"]["kind"] == "pass"


def test_sarif_levels_follow_severity_and_waivers_are_suppressions(tmp_path: Path):
    cfg = tmp_path / "ascend-doctor.toml"
    cfg.write_text('[[waive]]\ncode = "HOST102"\nreason = "site policy OPS-1"\n')
    out = tmp_path / "r.sarif"
    run("check", "--replay", str(BROKEN), "--sarif", str(out), "--config", str(cfg))
    results = {r["ruleId"]: r for r in json.loads(out.read_text())["runs"][0]["results"]}
    assert results["HOST103"]["level"] == "error" and results["HOST107"]["level"] == "warning"
    assert results["HOST102"]["suppressions"][0]["justification"] == "site policy OPS-1"


def test_list_and_parse_list_emit_json():
    rows = json.loads(run("list", "--format", "json").stdout)
    assert {"code", "slug", "severity"} <= set(rows[0])
    kinds = json.loads(run("parse", "--list", "--format", "json").stdout)
    assert any(k["kind"] == "npu-smi-info" for k in kinds)


def test_a_broken_host_fits_one_screen_at_100_columns_with_the_verdict_on_top():
    r = run("check", "--replay", str(BROKEN), env={"COLUMNS": "100"})
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    verdict = next(i for i, line in enumerate(lines) if line.startswith("NOT READY"))
    assert verdict <= 7 and len(lines) <= 60  # header: machine, stack, serving python
    assert lines.index(next(line for line in lines if "HOST102" in line)) > verdict  # problems under the verdict


@pytest.mark.parametrize("columns", ["80", "100"])
def test_list_and_matrix_fit_the_terminal(columns):
    for args in (["list"], ["matrix", "show"], ["matrix", "show", "--vllm-ascend", "0.13.0"], ["explain", "HOST102"]):
        r = run(*args, env={"COLUMNS": columns})
        assert r.returncode == 0, r.stderr
        assert max(len(line) for line in r.stdout.splitlines()) <= int(columns), args


def test_piped_output_is_wrapped_not_cut():
    r = run("check", "--replay", str(BROKEN), "--select", "HOST102", env={"COLUMNS": "60"})
    text = " ".join(line.strip() for line in r.stdout.splitlines())
    assert "waive this check in ascend-doctor.toml with the reason" in text  # the whole fix, wrapped


def test_usage_errors_are_one_line_and_ctrl_c_is_130(tmp_path: Path):
    r = run("check", "--no-such-option")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "No such option" in r.stderr and "--no-such-option" in r.stderr
    import signal
    import time

    from tests.smoke.fault_server import ScriptedServer

    with ScriptedServer("slow") as srv:  # the named scenario takes 3 s: time to press Ctrl-C
        p = subprocess.Popen([sys.executable, "-m", "ascend_doctor", "smoke", "--base-url", srv.base_url],
                             cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err.strip().count("\n") == 0 and "interrupted" in err


def test_sarif_describes_a_checks_dir_rule_from_its_doc(tmp_path: Path):
    """The SARIF rule of a `--checks-dir` check carries that check's doc: the renderer gets the run's checks from the
    command (it used to reload the built-in registry itself and fell back to the finding's title for plugins)."""
    d = tmp_path / "site"
    d.mkdir()
    (d / "site_checks.py").write_text(
        "from ascend_doctor.core.registry import check\n\n"
        "@check('SITE101', 'site-rule', severity='warning')\n"
        "def site_rule(ctx):\n"
        "    '''The site rule holds\n\n    Why it matters: the site runbook says so.\n\n"
        "    How to fix: follow the runbook, step 3.\n    '''\n"
        "    return ctx.warn('site rule broken')\n")
    out = tmp_path / "r.sarif"
    r = run("check", "--replay", str(HEALTHY), "--checks-dir", str(d), "--select", "SITE", "--sarif", str(out))
    assert r.returncode == 0, r.stderr
    (rule,) = json.loads(out.read_text())["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "SITE101" and "the site runbook says so" in rule["fullDescription"]["text"]
    assert rule["help"]["text"].startswith("follow the runbook, step 3.")


def test_the_first_screen_leads_with_the_missing_npu_and_marks_what_does_not_gate(tmp_path):
    """#22 item 5: without an NPU the first screen led with CANN101 and container mounts, the decisive fact only in
    a skip reason under -v; a warning-level fail looked like one that fails the run."""
    import json as _json

    data = _json.loads(BROKEN.read_text())
    data["files"] = {k: v for k, v in data["files"].items() if not k.startswith("/sys/bus/pci/devices/")}
    data["dirs"]["/sys/bus/pci/devices"] = {"entries": ["0000:00:00.0"]}
    data["dirs"]["/dev"] = {"entries": ["null", "zero", "tty"]}
    snap = tmp_path / "no-npu.snapshot.json"
    snap.write_text(_json.dumps(data))
    r = run("check", "--replay", str(snap), env={"COLUMNS": "100"})
    problems = [line for line in r.stdout.splitlines() if line.startswith("  ✘ ") or line.startswith("  ⚠ ")]
    assert problems[0].startswith("  ✘ fail    NPU100"), problems[:3]
    assert "no Ascend NPU here" in r.stdout
    r = run("check", "--replay", str(BROKEN), env={"COLUMNS": "200"})
    line = next(x for x in r.stdout.splitlines() if "HOST107" in x)
    assert "below --fail-on error, does not fail the run" in line
    assert "does not fail the run" not in next(x for x in r.stdout.splitlines() if "HOST102" in x)
