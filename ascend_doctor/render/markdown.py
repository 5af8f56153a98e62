"""Markdown: a report as a GitHub comment. For `triage` it is the reply a maintainer would write — the most likely
cause first, then the other problems, then what to paste next, the evidence folded in `<details>` — and for any
other report a summary with the problems. Commands, versions and quoted output stay in code spans/blocks verbatim.
"""

from __future__ import annotations

from ascend_doctor.i18n import localize, tr
from ascend_doctor.report import Finding, Report

_MARK = {"fail": "❌", "warn": "⚠️", "unknown": "❔", "error": "💥", "pass": "✅", "skip": "⏭️"}


def _code(text: str) -> str:
    """Inline code that survives backticks inside it."""
    tick = "``" if "`" in text else "`"
    pad = " " if tick == "``" else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def _fence(text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def _finding(f: Finding, heading: bool = False) -> list[str]:
    message = localize(f.message, f.message_template, f.message_fields)
    head = f"{_MARK.get(f.status.value, '')} **{f.code}** {tr(f.title)} — {message}"
    out = [f"#### {head}" if heading else f"- {head}"]
    indent = "" if heading else "  "
    if f.remediation:
        out.append(f"{indent}**{tr('Fix:')}** "
                   + localize(f.remediation, f.remediation_template, f.remediation_fields))
    if f.evidence:
        body = "\n\n".join(f"{tr(e.source)}\n{e.shown_excerpt()}" if e.excerpt else tr(e.source)
                             for e in f.evidence[:4])
        out += [f"{indent}<details><summary>{tr('Evidence')}</summary>", "", _fence(body), "", f"{indent}</details>"]
    return out


def render_markdown(report: Report) -> str:
    by_code = {f.code: f for f in report.findings}
    lines: list[str] = []
    t = report.triage
    if t is not None:
        lines.append(tr("**ascend-doctor triage** of {source} ({lines} lines; {sections})", source=_code(t.source),
                        lines=t.lines, sections=tr(", ").join(tr("{kind} at lines {lines}",
                                                                 kind=s.kind.replace("_", " "),
                                                                 lines=s.lines) for s in t.sections[:8])))
        lines.append("")
        if t.root_cause and t.root_cause in by_code:
            lines.append("### " + tr("Most likely cause"))
            lines.append("")
            lines += _finding(by_code[t.root_cause], heading=True)
            if t.root_cause_why:
                lines += ["", tr("_Why this one:_ {why}", why=t.text("root_cause_why"))]
            lines.append("")
        others = [by_code[c] for c in t.others if c in by_code]
        warns = [f for f in report.findings if f.status.value == "warn" and f.code != t.root_cause
                 and f.code != "TRIAGE103"]
        if others or warns:
            lines += ["### " + tr("Other problems"), ""]
            for f in others + warns:
                lines += _finding(f)
            lines.append("")
        if t.leads:
            lines += ["### " + tr("Leads (where to look, no verdict)"), ""]
            lines += [f"- {m}" for m in t.text("leads")]
            lines.append("")
        if t.missing:
            lines += ["### " + tr("To decide the rest, please paste"), ""]
            lines += [f"- {m}" for m in t.text("missing")]
            lines.append("")
        if t.seen:
            lines += [f"<details><summary>{tr('What the paste says')}</summary>", "",
                      f"| {tr('component')} | {tr('value (where)')} |", "|---|---|"]
            lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in t.seen.items()]
            lines += ["", "</details>", ""]
        unknown = [f for f in report.findings if f.status.value == "unknown"]
        if unknown or t.not_judged:
            lines += [f"<details><summary>{tr('Not decided from this paste')}</summary>", ""]
            lines += [f"- **{f.code}** {tr(f.title)}: {localize(f.message, f.message_template, f.message_fields)}"
                      for f in unknown]
            lines += [f"- {n}" for n in t.text("not_judged")]
            lines += ["", "</details>", ""]
    else:
        c = report.counts
        verdict = {"ok": tr("OK"), "not_ready": tr("NOT READY"), "incomplete": tr("INCOMPLETE")}.get(
            report.verdict, report.verdict.replace("_", " ").upper())
        lines.append(tr("**ascend-doctor {command}** on {host}: **{verdict}** — {failed} failed, {warnings} warnings, "
                        "{unknown} unknown, {passed} passed (exit {code})", command=report.command,
                        host=_code(report.host.hostname), verdict=verdict, failed=c.fail, warnings=c.warn,
                        unknown=c.unknown, passed=c.pass_, code=report.exit_code))
        lines.append("")
        for f in report.findings:
            if f.status.value in ("fail", "error", "warn", "unknown"):
                lines += _finding(f)
        lines.append("")
    lines.append("<sub>" + tr("ascend-doctor {version} · `ascend-doctor explain CODE` for any code",
                              version=report.tool_version) + "</sub>")
    return "\n".join(lines).rstrip() + "\n"
