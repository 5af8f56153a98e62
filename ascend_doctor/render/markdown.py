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
        body = "\n\n".join(f"{e.source}\n{e.excerpt}" if e.excerpt else e.source for e in f.evidence[:4])
        out += [f"{indent}<details><summary>Evidence</summary>", "", _fence(body), "", f"{indent}</details>"]
    return out


def render_markdown(report: Report) -> str:
    by_code = {f.code: f for f in report.findings}
    lines: list[str] = []
    t = report.triage
    if t is not None:
        lines.append(f"**ascend-doctor triage** of {_code(t.source)} ({t.lines} lines; "
                     + ", ".join(f"{s.kind.replace('_', ' ')} at lines {s.lines}" for s in t.sections[:8])
                     + ")")
        lines.append("")
        if t.root_cause and t.root_cause in by_code:
            lines.append("### Most likely cause")
            lines.append("")
            lines += _finding(by_code[t.root_cause], heading=True)
            if t.root_cause_why:
                lines += ["", f"_Why this one:_ {t.root_cause_why}"]
            lines.append("")
        others = [by_code[c] for c in t.others if c in by_code]
        warns = [f for f in report.findings if f.status.value == "warn" and f.code != t.root_cause
                 and f.code != "TRIAGE103"]
        if others or warns:
            lines += ["### Other problems", ""]
            for f in others + warns:
                lines += _finding(f)
            lines.append("")
        if t.missing:
            lines += ["### To decide the rest, please paste", ""]
            lines += [f"- {m}" for m in t.missing]
            lines.append("")
        if t.seen:
            lines += ["<details><summary>What the paste says</summary>", "", "| component | value (where) |",
                      "|---|---|"]
            lines += [f"| {k} | {v.replace('|', '/')} |" for k, v in t.seen.items()]
            lines += ["", "</details>", ""]
        unknown = [f for f in report.findings if f.status.value == "unknown"]
        if unknown or t.not_judged:
            lines += ["<details><summary>Not decided from this paste</summary>", ""]
            lines += [f"- **{f.code}** {f.title}: {f.message}" for f in unknown]
            lines += [f"- {n}" for n in t.not_judged]
            lines += ["", "</details>", ""]
    else:
        c = report.counts
        lines.append(f"**ascend-doctor {report.command}** on {_code(report.host.hostname)}: "
                     f"**{report.verdict.replace('_', ' ').upper()}** — {c.fail} failed, {c.warn} warnings, "
                     f"{c.unknown} unknown, {c.pass_} passed (exit {report.exit_code})")
        lines.append("")
        for f in report.findings:
            if f.status.value in ("fail", "error", "warn", "unknown"):
                lines += _finding(f)
        lines.append("")
    lines.append(f"<sub>ascend-doctor {report.tool_version} · `ascend-doctor explain CODE` for any code</sub>")
    return "\n".join(lines).rstrip() + "\n"
