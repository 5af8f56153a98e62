"""Console view of a fleet Report: one row per node, one column per check whose verdict is not the same clean pass
everywhere, so the odd node out shows at a glance; then what to do, check by check. Computed from the report's
findings only (status, node, details.value) — nothing is re-evaluated here."""

from __future__ import annotations

from collections import OrderedDict
from typing import Optional, TextIO

from rich.cells import cell_len
from rich.markup import escape
from rich.table import Table

from ascend_doctor.i18n import localize, tr
from ascend_doctor.render.console import (
    STATUS_ICON,
    make_console,
    pad_cells,
    print_wrapped_markup,
    status_label,
    summary_line,
)
from ascend_doctor.report import Finding, Report, Status

_CELL = STATUS_ICON  # one icon set for the per-node cells and the main console
_ATTENTION = (Status.FAIL, Status.WARN, Status.ERROR, Status.UNKNOWN)
CELL_WIDTH = 18
CELL_WIDTH_STATIC = 7


def fleet_matrix(report: Report) -> tuple[list[str], list[str], dict[tuple[str, str], Finding]]:
    """(nodes, codes of the columns, (node, code) -> finding): a column per check that needs attention somewhere."""
    nodes: list[str] = []
    cells: dict[tuple[str, str], Finding] = {}
    by_code: "OrderedDict[str, list[Finding]]" = OrderedDict()
    for f in report.findings:
        node = f.node or "-"
        if node not in nodes:
            nodes.append(node)
        cells[(node, f.code)] = f
        by_code.setdefault(f.code, []).append(f)
    # A column per check that needs attention on some node (a skip next to passes — e.g. on a node that did not
    # answer — is not a difference worth a column).
    columns = [code for code, fs in by_code.items() if any(f.status in _ATTENTION and f.waived is None for f in fs)]
    # FLEET first (they are the cross-node view), then the rest; problems before mere differences.
    columns.sort(key=lambda c: (not c.startswith("FLEET"),
                                not any(cells.get((n, c)) and cells[(n, c)].status in _ATTENTION for n in nodes)))
    return nodes, columns, cells


def _cell(f: Optional[Finding], width: int) -> str:
    if f is None:
        return "[dim]·[/dim]"
    icon, style = _CELL[f.status]
    value = f.shown_value() if f.status in _ATTENTION and width > CELL_WIDTH_STATIC else None
    text = f"{icon} {value}" if value else f"{icon} {status_label(f.status)}"
    if len(text) > width:
        text = text[: width - 1] + "…"
    if f.waived is not None:
        text += " " + tr("(waived)")
    return f"[{style}]{escape(text)}[/{style}]"


def _width(code: str) -> int:
    """FLEET columns show the differing value; the others only the status."""
    return CELL_WIDTH if code.startswith("FLEET") else max(CELL_WIDTH_STATIC, len(code))


def render_fleet(report: Report, file: Optional[TextIO] = None, verbose: bool = False, quiet: bool = False) -> None:
    console = make_console(file)
    host = report.host
    name = host.hostname if host.nodes is None else tr("{n} node(s), {answered} answered", n=host.nodes,
                                                       answered=host.answered if host.answered is not None else "?")
    print_wrapped_markup(console, f"[bold]ascend-doctor {report.tool_version}[/bold] — "
                         + escape(tr("fleet: {name}", name=name)) + f" [dim]{escape(report.host.source)}[/dim]")
    nodes, columns, cells = fleet_matrix(report)
    if columns:
        node_w = max(len(n) for n in nodes) + 2
        room, shown = max(console.width, 60) - node_w, []
        for code in columns:
            if room < _width(code) + 2 and shown:
                break
            shown.append(code)
            room -= _width(code) + 2
        t = Table(box=None, pad_edge=False, header_style="bold")
        t.add_column(tr("node"), style="bold", no_wrap=True)
        for code in shown:
            t.add_column(code, no_wrap=True, min_width=len(code), max_width=_width(code) + 10)
        for n in sorted(nodes):
            t.add_row(escape(n), *(_cell(cells.get((n, c)), _width(c)) for c in shown))
        console.print()
        console.print(t)
        if len(columns) > len(shown):
            console.print(
                "[dim]"
                + escape(
                    tr(
                        "… and {n} more differing check(s): {codes}",
                        n=len(columns) - len(shown),
                        codes=", ".join(columns[len(shown) :]),
                    )
                )
                + "[/dim]"
            )
    else:
        console.print("\n[green]" + escape(tr("every check gives the same verdict on every node")) + "[/green]")

    problems: "OrderedDict[str, list[Finding]]" = OrderedDict()
    for f in report.findings:
        if (f.status in _ATTENTION and f.waived is None) or (verbose and f.status != Status.PASS):
            problems.setdefault(f.code, []).append(f)
    for code, fs in problems.items():
        first = fs[0]
        console.print(f"\n[bold]{code}[/bold] {escape(tr(first.title))}")
        for f in fs:
            icon, style = _CELL[f.status]
            label = pad_cells(status_label(f.status), 7)
            print_wrapped_markup(
                console,
                f"  [{style}]{icon} {label}[/{style}] [bold]{escape(f.node or '-')}[/bold]: "
                f"{escape(localize(f.message, f.message_template, f.message_fields))}",
                indent=" " * (cell_len(label) + 5),
            )
        fixes = list(
            dict.fromkeys(
                localize(f.remediation, f.remediation_template, f.remediation_fields)
                for f in fs
                if f.remediation and f.status in (Status.FAIL, Status.WARN)
            )
        )
        for fix in fixes[:2]:
            print_wrapped_markup(console, f"  [green]{escape(tr('fix:'))}[/green] {escape(fix)}",
                                 indent=" " * (cell_len(tr("fix:")) + 3))
    for note in report.note_texts():
        console.print("\n[yellow]" + escape(tr("note: {note}", note=note)) + "[/yellow]")
    console.print()
    print_wrapped_markup(console, summary_line(report, scope=tr("{n} node(s): ", n=len(nodes))))
