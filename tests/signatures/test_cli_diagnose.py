"""`ascend-doctor diagnose` through click's CliRunner, on a group built here (the root group loads it lazily)."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from ascend_doctor.cli import DoctorGroup
from ascend_doctor.cli.diagnose import diagnose
from ascend_doctor.core.errors import InputError
from tests.helpers import DATA

HAND = DATA / "signatures"


@pytest.fixture
def run():
    group = DoctorGroup(name="ascend-doctor")
    group.add_command(diagnose)

    def _run(*args, input=None):
        return CliRunner().invoke(group, ["diagnose", *args], input=input)

    return _run


def test_command_object():
    assert isinstance(diagnose, click.Command) and diagnose.name == "diagnose"


def test_error_log_exits_1_and_prints_code_meaning_fix_source_excerpt(run):
    r = run(str(HAND / "npu-smi-dcmi-8005.log"))
    assert r.exit_code == 1, r.output
    out = r.output
    assert "-8005" in out and "dcmi-8005" in out
    assert "line 3: dcmi module initialize failed. ret is -8005" in out
    assert "meaning:" in out and "fix:" in out and "/usr/local/dcmi" in out
    assert "source:" in out and "return_codes.md" in out
    assert "1 error, 1 warning" in out


def test_clean_log_exits_0(run):
    r = run(str(HAND / "clean-serve.log"))
    assert r.exit_code == 0, r.output
    assert "No known error or warning signature" in r.output


def test_warning_only_exits_0(run):
    r = run("-", input="DrvMngGetConsoleLogLevel failed.\n")
    assert r.exit_code == 0, r.output
    assert "npusmi-drvmng-loglevel" in r.output


def test_all_shows_info_and_positive_without_failing(run):
    r = run(str(HAND / "clean-serve.log"), "--all", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert [(m["id"], m["kind"]) for m in doc["matches"]] == [
        ("vllm-platform-ascend-activated", "positive"), ("vllm-no-module-vllm-C", "info")]


def test_json_format(run):
    r = run(str(HAND / "hccl-notify-wait-timeout.log"), "--format", "json")
    assert r.exit_code == 1
    doc = json.loads(r.output)
    assert doc["schema_version"] == 1 and doc["exit_code"] == 1
    assert doc["log"].endswith("hccl-notify-wait-timeout.log")
    assert [m["id"] for m in doc["matches"]] == ["pta-watchdog-timeout", "hccl-EI0002", "pta-ERR02200"]
    ei = doc["matches"][1]
    assert ei["code"] == "EI0002" and ei["line"] == 4 and ei["excerpt"].startswith("[rank3]: EI0002:")
    assert "HCCL_EXEC_TIMEOUT" in ei["fix"] and ei["source"] and ei["confidence"]
    assert set(ei) >= {"id", "kind", "priority", "family", "component", "code", "name", "line", "excerpt",
                       "meaning", "fix", "source", "confidence"}


def test_stdin_and_undecodable_bytes(run):
    data = b"\xff\xfe garbage\nImportError: libatb.so: cannot open shared object file: No such file or directory\n"
    r = CliRunner().invoke(diagnose, ["-", "--format", "json"], input=data)
    assert r.exit_code == 1, r.output
    doc = json.loads(r.output)
    assert doc["log"] == "stdin" and [m["id"] for m in doc["matches"]] == ["pta-libatb-missing"]


def test_unreadable_file_exits_2_with_one_line(run, tmp_path):
    missing = tmp_path / "nope.log"
    r = run(str(missing))
    assert r.exit_code == 2
    assert f"ascend-doctor: error: cannot read {missing}" in r.output
    assert "Traceback" not in r.output


def test_directory_exits_2(run, tmp_path):
    r = run(str(tmp_path))
    assert r.exit_code == 2 and "cannot read" in r.output


def test_without_the_doctor_group_the_error_is_an_input_error(tmp_path):
    r = CliRunner().invoke(diagnose, [str(tmp_path / "nope.log")])
    assert isinstance(r.exception, InputError) and r.exception.exit_code == 2


def test_invalid_custom_catalogue_exits_2(run, tmp_path):
    bad = tmp_path / "sigs.toml"
    bad.write_text('schema_version = 1\nupdated = "x"\n[[signature]]\nid = "a"\n', encoding="utf-8")
    r = run(str(HAND / "clean-serve.log"), "--signatures", str(bad))
    assert r.exit_code == 2 and "signature[0] (a)" in r.output


def test_bad_format_is_a_usage_error(run):
    r = run(str(HAND / "clean-serve.log"), "--format", "junit")
    assert r.exit_code == 2


def test_a_generic_code_seen_beside_a_specific_one_is_printed_after_it(run):
    """It says "(generic; also seen beside the specific match above)": printed first, it pointed at nothing."""
    log = ("EZ9999: Inner Error!\nEZ9999: 2025-04-02-00:54:30.240.432  Parse dynamic kernel config fail.\n"
           "        TraceBack (most recent call last):\n        AclOpKernelInit failed opType\n")
    out = run("-", input=log).output
    assert out.index("aclnn-parse-dynamic-kernel-config") < out.index("cann-inner-error-9xxx")
