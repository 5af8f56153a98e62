"""The pod's termination message (`--termination-log FILE`; in a Kubernetes pod, /dev/termination-log by default)
(#27): the verdict and the finding that explains it on one line, so `kubectl describe pod` says why the init container
or the `exec` gate stopped the pod. Kubernetes keeps at most 4096 bytes of it; the line is cut to fit, on a character.
In the run's language, with the console's verdict words (OK, NOT READY, INCOMPLETE) — one reader, one vocabulary
(#40 item 14). An input error (exit 2) writes one too (`error_message`): a pod stopped by a bad option says so.
"""

from __future__ import annotations

import re
from typing import Optional

from ascend_doctor.i18n import localize, tr
from ascend_doctor.render.console import problems_first, verdict_word
from ascend_doctor.report import Report

LIMIT = 4096  # bytes: the kubelet truncates terminationMessagePath content beyond this


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _fit(head: str) -> str:
    data = head.encode("utf-8")
    if len(data) <= LIMIT:
        return head + "\n"
    return data[:LIMIT - 4].decode("utf-8", errors="ignore") + "…\n"


def termination_message(report: Report) -> str:
    c = report.counts
    head = tr("ascend-doctor {command}: {verdict} (exit {code}; {fail} failed, {error} errors, {warn} warnings, "
              "{unknown} unknown)", command=report.command, verdict=verdict_word(report), code=report.exit_code,
              fail=c.fail, error=c.error, warn=c.warn, unknown=c.unknown)
    lead = next(iter(problems_first(report)), None)
    if lead is not None and (report.exit_code != 0 or lead.status.value in ("fail", "error")):
        head += f" — {lead.code} {_one_line(localize(lead.message, lead.message_template, lead.message_fields))}"
        if lead.remediation:
            fix = localize(lead.remediation, lead.remediation_template, lead.remediation_fields)
            head += " — " + tr("fix: {fix}", fix=_one_line(re.sub(r"`", "", fix)))
    return _fit(head)


def error_message(command: Optional[str], message: str) -> str:
    """The line for a run that ended with an input or usage error (exit 2): nothing was judged."""
    return _fit(tr("ascend-doctor {command}: input error (exit 2) — {message}", command=command or "-",
                   message=_one_line(message)))
