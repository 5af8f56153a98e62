"""GitHub Actions annotations: one `::error`/`::warning`/`::notice` workflow command per finding that needs it."""

from __future__ import annotations

from ascend_doctor.report import Report, Status


def _esc(s: str) -> str:
    # Workflow-command escaping (actions/toolkit: core/src/command.ts escapeData / escapeProperty).
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _esc(s).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    lines = []
    for f in report.findings:
        if f.status == Status.PASS or f.status == Status.SKIP:
            continue
        gating = f.level is not None and f.level.rank >= report.fail_on.rank and not f.waived
        kind = "error" if gating else ("warning" if f.status in (Status.FAIL, Status.WARN, Status.ERROR) else "notice")
        node = f" [{f.node}]" if f.node else ""
        body = f.message + (f"\nfix: {f.remediation}" if f.remediation else "")
        lines.append(f"::{kind} title={_prop(f'{f.code} {f.title}{node}')}::{_esc(body)}")
    c = report.counts
    lines.append(f"ascend-doctor: {c.pass_} passed, {c.fail} failed, {c.warn} warnings, {c.unknown} unknown "
                 f"(exit {report.exit_code})")
    return "\n".join(lines) + "\n"
