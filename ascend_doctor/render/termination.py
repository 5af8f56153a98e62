"""The pod's termination message (`--termination-log FILE`; in a Kubernetes pod, /dev/termination-log by default)
(#27): the verdict and the finding that explains it on one line, so `kubectl describe pod` says why the init container
or the `exec` gate stopped the pod. Kubernetes keeps at most 4096 bytes of it; the line is cut to fit, on a character.
English, like the JSON report: it is read by operators and by tools."""

from __future__ import annotations

import re

from ascend_doctor.render.console import problems_first
from ascend_doctor.report import Report

LIMIT = 4096  # bytes: the kubelet truncates terminationMessagePath content beyond this
_VERDICT = {"ok": "READY", "incomplete": "INCOMPLETE", "not_ready": "NOT READY"}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def termination_message(report: Report) -> str:
    c = report.counts
    head = (f"ascend-doctor {report.command}: {_VERDICT.get(report.verdict, report.verdict.upper())} "
            f"(exit {report.exit_code}; {c.fail} failed, {c.error} errors, {c.warn} warnings, {c.unknown} unknown)")
    lead = next(iter(problems_first(report)), None)
    if lead is not None and (report.exit_code != 0 or lead.status.value in ("fail", "error")):
        head += f" — {lead.code} {_one_line(lead.message)}"
        if lead.remediation:
            head += f" — fix: {_one_line(re.sub(r'`', '', lead.remediation))}"
    data = head.encode("utf-8")
    if len(data) <= LIMIT:
        return head + "\n"
    return data[:LIMIT - 4].decode("utf-8", errors="ignore") + "…\n"
