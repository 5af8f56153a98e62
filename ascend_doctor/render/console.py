"""Rich console renderer: findings grouped by family, details for what needs attention, one summary line.

Colour follows rich's rules: off when NO_COLOR is set or stdout is not a terminal.
"""

from __future__ import annotations

import sys
import textwrap
from collections import OrderedDict
from typing import Optional, TextIO

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ascend_doctor.report import Finding, Report, Status
from ascend_doctor.textsafe import escape_text

_ICON = {
    Status.PASS: ("✔", "green"),
    Status.WARN: ("▲", "yellow"),
    Status.FAIL: ("✘", "red"),
    Status.SKIP: ("-", "dim"),
    Status.UNKNOWN: ("?", "magenta"),
    Status.ERROR: ("!", "bold red"),
}


class _EscapingStream:
    """A text stream that writes undecodable bytes (lone surrogates) as `\\xNN` instead of raising on encode."""

    def __init__(self, inner: TextIO):
        self._inner = inner

    def write(self, text: str) -> int:
        return self._inner.write(escape_text(text))

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


def make_console(file: Optional[TextIO] = None) -> Console:
    f = file or sys.stdout
    is_tty = hasattr(f, "isatty") and f.isatty()
    return Console(file=_EscapingStream(f), highlight=False, soft_wrap=False, width=None if is_tty else 110)


def _para(console: Console, first: str, text: str, style: str = "", rest: Optional[str] = None) -> None:
    """Print `text` wrapped to the console width, the first line after `first`, the others indented to match."""
    indent = rest if rest is not None else " " * len(first)
    width = max(console.width, 40)
    for i, paragraph in enumerate(text.splitlines() or [""]):
        lines = textwrap.wrap(paragraph, width=width, initial_indent=first if i == 0 else indent,
                              subsequent_indent=indent, break_on_hyphens=False, break_long_words=False) or [indent]
        for line in lines:
            console.print(Text(line, style=style), soft_wrap=True)


def _finding(console: Console, f: Finding, verbose: bool) -> None:
    icon, style = _ICON[f.status]
    node = f"[{escape(f.node)}] " if f.node else ""
    waived = " [dim](waived)[/dim]" if f.waived else ""
    console.print(f"  [{style}]{icon} {f.status.value:<7}[/{style}] [bold]{f.code}[/bold] {node}{escape(f.title)}"
                  f"{waived}")
    _para(console, "      ", f.message, style="dim" if f.status == Status.PASS else "")
    attention = f.status in (Status.FAIL, Status.WARN, Status.ERROR, Status.UNKNOWN)
    if attention or verbose:
        for e in f.evidence[:4]:
            excerpt = e.excerpt.strip()
            if len(excerpt) > 600 and not verbose:
                excerpt = excerpt[:600] + " …"
            console.print(Text(f"      seen: {e.source}", style="cyan"))
            for line in excerpt.splitlines()[: (40 if verbose else 8)]:
                console.print(Text("        " + line, style="dim"), soft_wrap=True)
        if f.remediation and f.status in (Status.FAIL, Status.WARN):
            _para(console, "      fix:  ", f.remediation.strip(), style="green")
        if f.waived:
            _para(console, "      waived: ", f.waived.reason + (f" (until {f.waived.expires})" if f.waived.expires
                                                               else ""), style="dim")
        if f.status == Status.ERROR and verbose and f.details.get("traceback"):
            console.print(Text(str(f.details["traceback"]), style="dim"))


def render_console(report: Report, file: Optional[TextIO] = None, verbose: bool = False,
                   only_problems: bool = False) -> None:
    console = make_console(file)
    h = report.host
    console.print(f"[bold]ascend-doctor {report.tool_version}[/bold] — {escape(report.command)} on "
                  f"{escape(h.hostname)} ({escape(h.machine or '?')}, {escape(h.os or '?')}) [dim]{escape(h.source)}"
                  f"[/dim]")
    groups: "OrderedDict[str, list[Finding]]" = OrderedDict()
    for f in report.findings:
        groups.setdefault(f.family, []).append(f)
    for family, items in groups.items():
        shown = [f for f in items if not only_problems or f.status != Status.PASS]
        if not shown:
            continue
        console.print(f"\n[bold underline]{family}[/bold underline]")
        # Skips say "does not apply here" (no container, one NPU, no serve command): one line per family unless -v.
        skipped = [f for f in shown if f.status == Status.SKIP and not verbose]
        for f in shown:
            if f not in skipped:
                _finding(console, f, verbose)
        if skipped:
            reasons = {f.message for f in skipped}
            why = f": {skipped[0].message}" if len(reasons) == 1 else " (-v for the reasons)"
            _para(console, "  - skip    ", f"{', '.join(f.code for f in skipped)}{why}", style="dim")
    for note in report.notes:
        console.print(Text(f"\nnote: {note}", style="yellow"))
    console.print("\n" + summary_line(report))


def summary_line(report: Report, scope: str = "") -> str:
    """`OK — 12 passed, … in 0.4s (fail-on: error, exit 0)` (rich markup), from the report's own counts."""
    c = report.counts
    parts = [f"{c.pass_} passed", f"{c.warn} warnings", f"{c.fail} failed", f"{c.unknown} unknown",
             f"{c.error} errors", f"{c.skip} skipped"]
    if c.waived:
        parts.append(f"{c.waived} waived")
    verdict = "[green]OK[/green]" if report.exit_code == 0 else "[red]NOT READY[/red]"
    return (f"{verdict} — {scope}{', '.join(parts)} in {report.duration_s:.2f}s "
            f"(fail-on: {report.fail_on.value}, exit {report.exit_code})")
