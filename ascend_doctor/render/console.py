"""Rich console renderer: the verdict first, then what needs attention, then one line per family for the rest.

Layout (a broken host fits one screen at 100 columns):

    ascend-doctor 0.1.0 — check on node-7 (aarch64, Ubuntu 22.04), on the host · replay:host.json
    stack: driver 25.5.0 · firmware 7.8.0.2.212 · CANN 8.5.0 · Python 3.11.10 · torch_npu 2.8.0.post2 · …

    NOT READY — 5 failed, 34 passed, 4 skipped in 0.40s (fail-on: error, exit 1)

      ✘ fail    HOST102 SELinux is not enforcing
                SELinux is enforcing
                seen: file: /sys/fs/selinux/enforce
                  1
                fix:  `setenforce 0` now, …
      ? unknown 3 checks could not run: npu-smi not found … — NPU101, NPU102, NPU103

    passed: CANN 6 · DRV 3 · HOST 5 · …   skipped: CTR101-CTR104 (not in a container)   (-v lists them)

Problems are fail, warn, error and unknown findings; unknowns that share one root cause (the same missing fact) are
one entry. `-q` prints only the problems and the verdict; `-v` every finding with all its evidence. Failing
evidence items come first; the rest is counted ("… and 7 more items, -v shows all").

Colour follows rich's rules: off when NO_COLOR is set or the stream is not a terminal. The width is the terminal's,
else $COLUMNS, else 100; nothing is cut, long lines wrap under their own indent, only between words: a word longer than
the line (a path, a URL, an option) overflows it whole, so a copied command runs.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections import OrderedDict
from functools import partial
from typing import Optional, TextIO

from rich.cells import cell_len
from rich.console import Console, RenderHook
from rich.markup import escape
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Span, Text

from ascend_doctor.i18n import current, field_text, localize, tr, trn
from ascend_doctor.render.wrap import has_wide, wrap
from ascend_doctor.report import Finding, Report, Status, gating
from ascend_doctor.text.textsafe import printable, raw_stream, unprintable

STATUS_ICON = {
    Status.PASS: ("✔", "green"),
    Status.WARN: ("▲", "yellow"),
    Status.FAIL: ("✘", "red"),
    Status.SKIP: ("-", "dim"),
    Status.UNKNOWN: ("?", "magenta"),
    Status.ERROR: ("!", "bold red"),
}
PROBLEMS = (Status.FAIL, Status.ERROR, Status.WARN, Status.UNKNOWN)
_ORDER = {Status.FAIL: 0, Status.ERROR: 1, Status.WARN: 2, Status.UNKNOWN: 3}


def problems_first(report: Report) -> list[Finding]:
    """The problems in the order a reader needs them: a finding that explains the others (`root_cause`, e.g. NPU100:
    no NPU at all) first, then unwaived before waived, fails before errors, warnings, unknowns, gating first."""
    return sorted((f for f in report.findings if f.status in PROBLEMS),
                  key=lambda f: (not (f.root_cause and f.waived is None), f.waived is not None,
                                 _ORDER[f.status], not gating(f, report.fail_on)))
DEFAULT_WIDTH = 100  # piped output without $COLUMNS: wrapped here, never cut
EVIDENCE_ITEMS = 4  # evidence items shown per finding without -v
EVIDENCE_LINES = 8  # lines shown per evidence item without -v
INDENT = " " * 12  # under the title, after "  ✘ fail    "


class _Inert:
    """`inner` rendered with every text segment made printable (`textsafe.printable`) and hyperlinks dropped: what
    reaches the terminal from a rich console can show hostile text, never obey it (#40 item 7). Rich passes ESC
    through a Text untouched, and its own markup can open an OSC-8 link; neither survives this."""

    def __init__(self, inner):
        self.inner = inner

    def __rich_console__(self, console, options):
        for seg in console.render(self.inner, options):
            if seg.control:  # rich's own cursor moves (a live progress bar), never text from input
                yield seg
                continue
            style = seg.style
            if style is not None and style.link:
                style = style.update_link(None)
            yield Segment(printable(seg.text), style)

    def __rich_measure__(self, console, options):
        return Measurement.get(console, options, self.inner)


def _printable_text(text: Text) -> Text:
    """A Text with its control characters escaped before layout, so lines are wrapped at their shown width; the
    styles keep their characters."""
    plain = text.plain
    if not unprintable(plain):
        return text
    where = [0]  # where each old offset lands in the new text
    out = []
    for ch in plain:
        shown = printable(ch)
        out.append(shown)
        where.append(where[-1] + len(shown))
    return Text("".join(out), style=text.style, justify=text.justify, overflow=text.overflow, no_wrap=text.no_wrap,
                end=text.end, tab_size=text.tab_size,
                spans=[Span(where[sp.start], where[min(sp.end, len(plain))], sp.style) for sp in text.spans])


class _MakePrintable(RenderHook):
    def process_renderables(self, renderables):
        return [_Inert(_printable_text(r) if isinstance(r, Text) else r) for r in renderables]


def console_width(file: Optional[TextIO] = None) -> Optional[int]:
    """None for a terminal (rich asks it), else $COLUMNS, else DEFAULT_WIDTH."""
    f = file or sys.stdout
    if hasattr(f, "isatty") and f.isatty():
        return None
    try:
        cols = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        cols = 0
    return cols if cols >= 40 else DEFAULT_WIDTH


def make_console(file: Optional[TextIO] = None) -> Console:
    """The one way the doctor makes a rich console: its text made printable (see `_Inert`), its colour codes written
    to the stream under the CLI's `TerminalStream` (which would escape them)."""
    f = raw_stream(file or sys.stdout)
    console = Console(file=f, highlight=False, soft_wrap=False, width=console_width(f))
    console.push_render_hook(_MakePrintable())
    return console


def _para(console: Console, first: str, text: str, style: str = "", rest: Optional[str] = None) -> None:
    """Print `text` wrapped to the console width, the first line after `first`, the others indented to match."""
    indent = rest if rest is not None else " " * cell_len(first)
    width = max(console.width, 40)
    for i, paragraph in enumerate(text.splitlines() or [""]):
        lines = wrap(paragraph, width=width, initial_indent=first if i == 0 else indent,
                     subsequent_indent=indent) or [indent]
        for line in lines:
            console.print(Text(line, style=style), soft_wrap=True)


def paragraph(console: Console, first: str, text: str, rest: str) -> None:
    """`text` wrapped to the console, after `first` on its first line and `rest` on the others (no markup)."""
    _para(console, first, text, rest=rest)


def print_wrapped_markup(console: Console, markup: str, indent: str = "") -> None:
    """A line of rich markup (the verdict line, a fleet finding) wrapped at word boundaries to the console width,
    styles kept, the wrapped lines indented by `indent`: never broken mid-word by the terminal ("(fai|l-on", #22),
    and measured in cells (Chinese is two per character)."""
    text = Text.from_markup(markup)
    width = max(console.width, 40) - cell_len(indent)
    try:  # rich's own line breaker, told not to fold: a word longer than the line overflows it whole (#40 item 13)
        from rich._wrap import divide_line

        lines = list(text.divide(divide_line(text.plain, width, fold=False)))
    except ImportError:  # a rich without it: its public wrap, which folds such a word
        lines = list(text.wrap(console, width))
    for i, line in enumerate(lines):
        line.rstrip()
        console.print(Text(indent) + line if i and indent else line, soft_wrap=True)


def pad_cells(text: str, width: int) -> str:
    """`text` padded with spaces to `width` terminal cells (a CJK character takes two)."""
    return text + " " * max(width - cell_len(text), 0)


def status_label(status: Status) -> str:
    """The status word of a finding's head line (the JSON's status value in English)."""
    return {Status.FAIL: tr("fail"), Status.WARN: tr("warn"), Status.UNKNOWN: tr("unknown"), Status.PASS: tr("pass"),
            Status.SKIP: tr("skip"), Status.ERROR: tr("error")}.get(status, status.value)


def _head(console: Console, status: Status, title: str, waived: bool = False, gates: bool = True) -> None:
    """`  ✘ fail    CODE title` with the title wrapping under itself; a fail or warning that does not decide the exit
    code (`gates=False`: its severity is below --fail-on) is drawn in yellow, not red (#22)."""
    icon, style = STATUS_ICON[status]
    if not gates and status == Status.FAIL:
        style = "yellow"
    lead = f"  {icon} {pad_cells(status_label(status), 7)} "
    width = max(console.width, 40)
    lines = wrap(title + (" " + tr("(waived)") if waived else ""), width=width - cell_len(lead)) or [""]
    first = Text(lead, style=style)
    first.append(lines[0], style="bold" if not waived else "dim")
    console.print(first, soft_wrap=True)
    for line in lines[1:]:
        console.print(Text(" " * cell_len(lead) + line, style="bold" if not waived else "dim"), soft_wrap=True)


def _evidence(console: Console, f: Finding, verbose: bool) -> None:
    items = list(f.evidence)
    if verbose:
        shown = items
    else:
        # Faulty items first; items marked fine are only counted when a faulty one is there to show (a PCIe finding
        # about one x8 device shows that device, not four healthy ones).
        items.sort(key=lambda e: {False: 0, None: 1, True: 2}[e.ok])
        faulty = any(e.ok is False for e in items)
        shown = [e for e in items if not (faulty and e.ok)][:EVIDENCE_ITEMS]
    for e in shown:
        excerpt = e.shown_excerpt().strip()
        lines = excerpt.splitlines()
        one = f"{INDENT}{tr('seen:')} {tr(e.source)} → "
        if len(lines) == 1 and cell_len(one) + cell_len(lines[0]) <= max(console.width, 40):
            line = Text(one, style="cyan")
            line.append(lines[0], style="dim")
            console.print(line, soft_wrap=True)
            continue
        # The doctor's own labels ("container signals", "CANN paths searched") are messages: shown in the run's
        # language; a path or a command (`file: /proc/self/limits`) is looked up, finds no entry and stays as it is.
        _para(console, f"{INDENT}{tr('seen:')} ", tr(e.source), style="cyan", rest=INDENT + "      ")
        limit = len(lines) if verbose else EVIDENCE_LINES
        width = max(console.width, 40)
        for line in lines[:limit]:
            # What a tool printed, wrapped (never cut) under its own indent; continuation lines indent further.
            # A line with wide characters (DSML's fullwidth `｜`, Chinese) is wrapped by cells, not characters.
            wrapper = wrap if has_wide(line) else partial(textwrap.wrap, drop_whitespace=False,
                                                          replace_whitespace=False, break_long_words=False,
                                                          break_on_hyphens=False)
            for part in wrapper(line, width=width, initial_indent=INDENT + "  ",
                                subsequent_indent=INDENT + "    ") or [INDENT]:
                console.print(Text(part.rstrip(), style="dim"), soft_wrap=True)
        if len(lines) > limit:
            more = trn("{n} more line", "{n} more lines", len(lines) - limit)
            console.print(Text(f"{INDENT}  … {more}", style="dim"))
    if len(items) > len(shown):
        rest = [e for e in items if e not in shown]
        healthy = sum(1 for e in rest if e.ok)
        n = len(rest)
        if healthy == n:
            more = trn(
                "… and {n} more item (all fine); -v shows all", "… and {n} more items (all fine); -v shows all", n
            )
        elif healthy:
            more = trn(
                "… and {n} more item ({healthy} of them fine); -v shows all",
                "… and {n} more items ({healthy} of them fine); -v shows all",
                n,
                healthy=healthy,
            )
        else:
            more = trn("… and {n} more item; -v shows all", "… and {n} more items; -v shows all", n)
        console.print(Text(f"{INDENT}{more}", style="dim"))


def _finding(console: Console, f: Finding, verbose: bool, fail_on=None, failing: frozenset = frozenset()) -> None:
    node = f"[{f.node}] " if f.node else ""
    quiet = (fail_on is not None and f.waived is None and f.status in (Status.FAIL, Status.WARN)
             and not gating(f, fail_on))
    title = f"{f.code} {node}{tr(f.title)}" + (" " + tr("(severity {severity}: below --fail-on {fail_on}, does not "
                                                          "fail the run)", severity=f.severity.value,
                                                          fail_on=fail_on.value) if quiet else "")
    _head(console, f.status, title, waived=f.waived is not None, gates=not quiet)
    _para(
        console,
        INDENT,
        localize(f.message, f.message_template, f.message_fields),
        style="dim" if f.status in (Status.PASS, Status.SKIP) else "",
    )
    if f.status in PROBLEMS or verbose:
        _evidence(console, f, verbose)
        if f.remediation and f.status in (Status.FAIL, Status.WARN):
            fix = localize(f.remediation.strip(), f.remediation_template, f.remediation_fields)
            _para(console, INDENT + tr("fix:") + "  ", fix.strip(), style="green")
        named = [c for c in f.see if c in failing and c != f.code]
        if named and f.status in (Status.FAIL, Status.WARN):  # e.g. aclInit 507033 with the device nodes missing
            _para(console, INDENT + tr("first:") + " ", tr("this can follow from {codes}, failing in this run: fix "
                                                           "that first", codes=", ".join(named)), style="green")
        if f.waived:
            _para(
                console,
                INDENT + tr("waived:") + " ",
                f.waived.reason + (f" (until {f.waived.expires})" if f.waived.expires else ""),
                style="dim",
            )
        if f.status == Status.ERROR and f.traceback:
            if verbose:
                console.print(Text(f.traceback, style="dim"))
            else:
                console.print(Text(INDENT + tr("(-v shows the traceback)"), style="dim"))


def _root_cause_groups(problems: list[Finding]) -> tuple[list[Finding], list[tuple[str, list[Finding]]]]:
    """(findings shown one by one, [(cause, findings)] for unknowns that share one root cause)."""
    by_cause: "OrderedDict[str, list[Finding]]" = OrderedDict()
    for f in problems:
        cause = f.cause if f.status == Status.UNKNOWN and f.waived is None else None
        if isinstance(cause, str) and cause:
            by_cause.setdefault(cause, []).append(f)
    grouped = {id(f) for fs in by_cause.values() if len(fs) > 1 for f in fs}
    return [f for f in problems if id(f) not in grouped], [(c, fs) for c, fs in by_cause.items() if len(fs) > 1]


def _cause_text(cause: str, items: list[Finding]) -> str:
    """The shared cause in the current language: a catalogue text, or the translation a grouped finding's message
    keeps for the same value (`{cause}` filled from a probe's reason, see i18n.T)."""
    lang = current()
    if lang != "en":
        for f in items:
            found = _field_for(f.message_fields, cause, lang)
            if found is not None:
                return found
    return tr(cause)


def _field_for(fields: dict, value: str, lang: str, depth: int = 0) -> Optional[str]:
    """The field of a message (or of a message inside one) whose English text is `value`, rendered in `lang`."""
    from ascend_doctor.text.jsonread import loads

    for k, v in fields.items():
        nested = fields.get(f"{k}@msg") if isinstance(k, str) and not k.endswith("@msg") else None
        if nested is None:
            continue
        if v == value:
            return field_text(fields, k, lang)
        if depth < 4:
            try:
                _, sub = loads(nested)
            except (ValueError, TypeError):
                continue
            if isinstance(sub, dict):
                found = _field_for(sub, value, lang, depth + 1)
                if found is not None:
                    return found
    return None


def _group(console: Console, report: Report, cause: str, items: list[Finding]) -> None:
    codes = ", ".join(f.code + (f"@{f.node}" if f.node else "") for f in items)
    head = trn("{n} check could not run: {cause}", "{n} checks could not run: {cause}", len(items),
               cause=_cause_text(cause, items))
    _head(console, Status.UNKNOWN, head)
    _para(console, INDENT, codes, style="dim")
    see = []
    for f in items:
        for code in f.see:
            if code not in see:
                see.append(code)
    failing = {f.code for f in report.findings if f.status in (Status.FAIL, Status.WARN, Status.ERROR)}
    named = [c for c in see if c in failing]
    if named:
        _para(
            console,
            INDENT + tr("fix:") + "  ",
            tr("the cause is what {codes} reports above; fix that first", codes=", ".join(named)),
            style="green",
        )


def where_line(report: Report) -> str:
    h = report.host
    if h.where == "container":
        where = tr("in a {runtime}container", runtime=h.runtime + " " if h.runtime else "") + (
            f" ({h.image})" if h.image else ""
        )
    elif h.where == "host":
        where = tr("on the host")
    else:
        where = ""
    return where


def stack_line(report: Report) -> Optional[str]:
    s = report.host.stack
    if s is None:
        return None
    parts = []
    for label, value in (
        ("driver", s.driver),
        ("firmware", s.firmware),
        ("CANN", s.cann),
        ("Python", s.python),
        ("torch", s.torch),
        ("torch_npu", s.torch_npu),
        ("vLLM", s.vllm),
        ("vllm-ascend", s.vllm_ascend),
        ("transformers", s.transformers),
        ("triton-ascend", s.triton_ascend),
    ):
        if value:
            parts.append(f"{label} {value}")
    if s.npu_model:
        parts.append(
            f"NPU {s.npu_count}x {s.npu_model}" if s.npu_count and "x " not in s.npu_model else f"NPU {s.npu_model}"
        )
    return " · ".join(parts) if parts else tr("nothing of the Ascend stack was found")


def _header(console: Console, report: Report) -> None:
    h = report.host
    where = where_line(report)
    machine = ", ".join(x for x in (h.machine, h.os) if x)
    head = (
        f"ascend-doctor {report.tool_version} — "
        + tr("{command} on {hostname}", command=report.command, hostname=h.hostname)
        + (f" ({machine})" if machine else "")
        + (f", {where}" if where else "")
        + f" · {h.source}"
    )
    _para(console, "", head, style="bold")
    stack = stack_line(report)
    if stack:
        _para(console, tr("stack:") + " ", stack, style="dim")
    if h.python:
        how = tr(h.python_how) + (f": {h.python_detail}" if h.python_detail else "") if h.python_how else ""
        _para(console, tr("serving python:") + " ", h.python + (f" ({how})" if how else ""), style="dim")


def _rest(console: Console, report: Report) -> None:
    """One line for the passes (per family) and one for the skips (with their reason when they share one)."""
    passed: "OrderedDict[str, int]" = OrderedDict()
    skipped: list[Finding] = []
    for f in report.findings:
        if f.status == Status.PASS and f.waived is None:
            passed[f.family] = passed.get(f.family, 0) + 1
        elif f.status == Status.SKIP:
            skipped.append(f)
    if passed:
        _para(
            console,
            tr("passed:") + "  ",
            " · ".join(f"{fam} {n}" for fam, n in passed.items()) + "   " + tr("(-v lists them)"),
            style="green",
        )
    if skipped:
        reasons = OrderedDict()
        for f in skipped:
            reasons.setdefault(localize(f.message, f.message_template, f.message_fields), []).append(f.code)
        if len(reasons) <= 3:
            text = "; ".join(f"{', '.join(codes)} ({why})" for why, codes in reasons.items())
        else:
            text = ", ".join(f.code for f in skipped) + " " + tr("(-v for the reasons)")
        _para(console, tr("skipped:") + " ", text, style="dim")


def render_console(
    report: Report,
    file: Optional[TextIO] = None,
    verbose: bool = False,
    quiet: bool = False,
    only_problems: bool = False,
) -> None:
    console = make_console(file)
    quiet = quiet or only_problems
    _header(console, report)
    console.print()
    print_wrapped_markup(console, summary_line(report))
    why = incomplete_line(report)
    if why:
        _para(console, "", why, style="yellow")
    for note in report.note_texts():
        _para(console, tr("note:") + " ", note, style="yellow")
    problems = problems_first(report)
    if verbose:
        shown, groups = problems, []
    else:
        shown, groups = _root_cause_groups(problems)
    if shown or groups:
        console.print()
    failing = frozenset(f.code for f in report.findings if f.status in (Status.FAIL, Status.ERROR))
    for f in shown:
        _finding(console, f, verbose, report.fail_on, failing)
    for cause, items in groups:
        _group(console, report, cause, items)
    if quiet:
        return
    if verbose:
        rest = [f for f in report.findings if f.status not in PROBLEMS]
        if rest:
            console.print()
        for f in rest:
            _finding(console, f, verbose)
        return
    console.print()
    _rest(console, report)


def verdict_word(report: Report) -> str:
    """OK, NOT READY or INCOMPLETE in the run's language: the one word every output that says a verdict uses."""
    if report.verdict == "incomplete":
        return tr("INCOMPLETE")
    if report.verdict == "ok" and report.exit_code == 0:
        return tr("OK")
    return tr("NOT READY")


def summary_line(report: Report, scope: str = "") -> str:
    """`NOT READY — 5 failed, 34 passed … (fail-on: error, exit 1)` (rich markup), from the report's own counts."""
    c = report.counts
    parts = [
        (c.fail, lambda n: trn("{n} failed", "{n} failed", n)),
        (c.error, lambda n: trn("{n} error", "{n} errors", n)),
        (c.warn, lambda n: trn("{n} warning", "{n} warnings", n)),
        (c.unknown, lambda n: trn("{n} unknown", "{n} unknown", n)),
        (c.pass_, lambda n: trn("{n} passed", "{n} passed", n)),
        (c.skip, lambda n: trn("{n} skipped", "{n} skipped", n)),
        (c.waived, lambda n: trn("{n} waived", "{n} waived", n)),
    ]
    counts = tr(", ").join(say(n) for n, say in parts if n) or tr("no checks ran")
    word = verdict_word(report)
    if report.verdict == "incomplete":
        verdict = f"[yellow]{word}[/yellow]" if report.exit_code == 0 else f"[red]{word}[/red]"
    elif report.verdict == "ok" and report.exit_code == 0:
        verdict = f"[green]{word}[/green]"
    else:
        verdict = f"[red]{word}[/red]"
    gate = report.fail_on.value + (", fail-on-unknown" if report.fail_on_unknown else "")
    return f"{verdict} — {scope}" + escape(
        tr(
            "{counts} in {seconds}s (fail-on: {gate}, exit {code})",
            counts=counts,
            seconds=f"{report.duration_s:.2f}",
            gate=gate,
            code=report.exit_code,
        )
    )


def incomplete_line(report: Report) -> Optional[str]:
    """Why the verdict is INCOMPLETE (plain text), or None."""
    if report.verdict != "incomplete":
        return None
    n = len(report.incomplete)
    return trn(
        "{n} check of severity error or critical could not run: {codes}",
        "{n} checks of severity error or critical could not run: {codes}",
        n,
        codes=", ".join(report.incomplete[:8]) + (" …" if n > 8 else ""),
    ) + ("" if report.fail_on_unknown else " " + tr("(--fail-on-unknown makes this exit 1)"))
