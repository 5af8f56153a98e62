"""Triage runs every check of the static, serve and triage stages through the one evaluator (no list kept by hand):
a check that finds its facts in the paste answers, one that lacks them is `skip` "not in the paste" — including a
check written after triage, which triage never names."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ascend_doctor.core.registry import load_registry
from ascend_doctor.triage.run import triage_text
from tests.helpers import DATA, REPO, corpus_params, read_corpus

REG = load_registry(entry_points=False)
TRIAGE = DATA / "triage"

PLUGIN = '''
from ascend_doctor.plugin import check, ev


@check("PASTE101", "torch-npu-seen", severity="error", needs=["python"])
def torch_npu_seen(ctx):
    """torch_npu is not the one build this site forbids

    Why it matters: a test of triage.

    How to fix: nothing.
    """
    py = ctx.fact("python")
    d = py.dist("torch-npu")
    if d is not None and d.version == "2.9.0":
        return ctx.fail("torch_npu " + d.version + " is the forbidden build", [ev("python", d.version)])
    return ctx.ok("fine")


@check("PASTE102", "soabi", severity="error", needs=["python"])
def soabi(ctx):
    """The interpreter's SOABI is cpython

    Why it matters: a test of triage.

    How to fix: nothing.
    """
    py = ctx.fact("python")
    if not (py.soabi or "").startswith("cpython"):  # empty would be a false failure on a paste
        return ctx.fail("SOABI " + repr(py.soabi))
    return ctx.ok(py.soabi)


@check("PASTE103", "selinux-again", severity="error", needs=["selinux"])
def selinux_again(ctx):
    """SELinux, read again

    Why it matters: a test of triage.

    How to fix: nothing.
    """
    ctx.fact("selinux")
    return ctx.ok("read")
'''


def test_a_check_written_after_triage_runs_on_a_paste(tmp_path):
    d = tmp_path / "site-checks"
    d.mkdir()
    (d / "site.py").write_text(PLUGIN)
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "triage", str(TRIAGE / "set-random-seed-issue.md"),
                        "--checks-dir", str(d), "--format", "json"], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    by = {f["code"]: f for f in json.loads(r.stdout)["findings"]}
    assert by["PASTE101"]["status"] == "fail" and "torch_npu 2.9.0" in by["PASTE101"]["message"]
    # A part of a fact the paste does not show: not judged, with what was missing, never a fail on an empty value.
    assert by["PASTE102"]["status"] == "skip" and "python.soabi" in by["PASTE102"]["message"]
    assert by["PASTE102"]["details"]["not_in_paste"] == ["python.soabi"]
    # A fact no paste can give.
    assert by["PASTE103"]["status"] == "skip" and "not in the paste" in by["PASTE103"]["message"]
    assert "selinux" in by["PASTE103"]["message"]


def test_checks_outside_the_old_list_now_answer_on_a_paste():
    """vllm-ascend#14289/#6800 (the issue): SERVE311/405 and HW107 never ran on a paste. They run now, and a check
    that needs the machine is listed as not judged with why."""
    report = triage_text((TRIAGE / "set-random-seed-issue.md").read_text(), "p.md", REG)
    by = {f.code: f for f in report.findings}
    assert by["SERVE405"].status.value == "pass" and by["HW107"].status.value == "pass"
    # /models/Qwen3-8B is a catalogue model: the release rules are judged on its published config, and say so
    assert by["SERVE311"].status.value == "pass"
    assert "published config.json of Qwen/Qwen3-8B" in by["SERVE311"].evidence[0].excerpt
    assert by["HOST102"].status.value == "skip"
    assert any("HOST102" in n and "selinux" in n for n in report.triage.not_judged)
    # the root cause this paste was written for is still found
    assert by["VLLM103"].status.value == "fail" and "ADV-2026-001" in by["VLLM103"].message


def test_an_unprinted_variable_is_not_an_unset_one():
    """collect_env prints only some variables (vllm-ascend: TORCH*, PYTORCH*, ASCEND_*, ATB_* and vLLM's own): an
    HCCL timeout it does not print may well be set, so HCCL105 is not judged; PYTORCH_NPU_ALLOC_CONF it would print,
    so ENV101 is."""
    report = triage_text((TRIAGE / "set-random-seed-issue.md").read_text(), "p.md", REG)
    by = {f.code: f for f in report.findings}
    assert by["HCCL105"].status.value == "skip" and "does not print HCCL_CONNECT_TIMEOUT" in by["HCCL105"].message
    assert by["ENV101"].status.value == "warn"


def _pastes():
    return ([pytest.param(p, id=p.name) for p in sorted(TRIAGE.iterdir())]
            + corpus_params("collect_env") + corpus_params("error_logs"))


@pytest.mark.parametrize("path", _pastes())
def test_no_check_errors_on_a_real_paste(path):
    """Every check on every paste: none crashes on a fact built from a paste (a partial view, a listing)."""
    text = path.read_text(errors="replace") if path.parent == TRIAGE else read_corpus(path)[1]
    report = triage_text(text, path.name, REG)
    assert [f.code for f in report.findings if f.status.value == "error"] == []
    assert {f.code for f in report.findings} >= {c.code for c in REG.select(stage=("static", "serve", "triage"))}
