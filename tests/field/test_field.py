"""The field test set (tests/field/cases): every case is caught by the check its class names, and its control — the
same healthy host and command without the thread's fault — gets no `fail` from that check."""

from __future__ import annotations

import pytest

from tests.field.runner import Case, cases, finding, run

CASES = cases()


def _show(report) -> str:
    return "; ".join(f"{f.code} {f.status.value}: {f.message[:120]}" for f in report.findings
                     if f.status.value in ("fail", "warn", "unknown"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_case_is_caught_by_its_check(case: Case):
    report = run(case.data)
    f = finding(report, case.expect["code"])
    assert f is not None, f"{case.expect['code']} did not run; findings: {_show(report)}"
    assert f.status.value in case.statuses, f"{f.code} {f.status.value}: {f.message}"
    assert case.expect.get("message", "") in f.message, f.message
    assert case.expect.get("remediation", "") in str(f.remediation or ""), f.remediation


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_control_host_is_not_failed_by_that_check(case: Case):
    f = finding(run(case.data, with_fault=False), case.expect["code"])
    assert f is None or f.status.value not in ("fail", "warn"), f"control: {f.code} {f.status.value}: {f.message}"


def test_every_case_names_its_thread_and_quote():
    for case in CASES:
        assert case.data["thread"].startswith("https://"), case.id
        assert case.data["quote"].strip(), case.id
        assert case.id.startswith(case.cls + "-"), case.id


def test_no_control_host_gets_a_fail_from_any_check():
    """The issue's bar: a healthy host with the thread's model and a sound command is not failed by anything."""
    failed = {}
    for case in CASES:
        bad = [f"{f.code}: {f.message[:100]}" for f in run(case.data, with_fault=False).findings
               if f.status.value == "fail"]
        if bad:
            failed[case.id] = bad
    assert failed == {}
