"""`ascend-doctor diagnose LOGFILE|-`: explain a failing log with the error-signature catalogue.

Exit codes follow the CLI contract: 0 nothing of kind `error` matched, 1 something did, 2 unreadable input or an
invalid catalogue (InputError, handled by the command group).
"""

from __future__ import annotations

import sys
from typing import List, Optional

import click

from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.i18n import tr, trn
from ascend_doctor.knowledge import signatures
from ascend_doctor.render.formats import choices
from ascend_doctor.text.redact import redact_text, redact_tree
from ascend_doctor.text.textsafe import dump_json

JSON_SCHEMA_VERSION = 1
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan", "positive": "green"}


def read_log(path: str) -> str:
    """The log text of PATH ('-' for stdin); undecodable bytes are replaced, unreadable files raise InputError."""
    from ascend_doctor.seam.inputs import read_text

    # Logs mix UTF-8 with binary junk (progress bars, truncated writes): never refuse them for that.
    return read_text(path, "log")


def _row(m: signatures.Match) -> dict:
    s = m.signature
    return {"id": s.id, "kind": s.kind, "priority": s.priority, "family": s.family, "component": s.component,
            "code": s.code, "name": s.name, "line": m.line, "excerpt": m.excerpt, "meaning": s.meaning, "fix": s.fix,
            "source": s.source, "confidence": s.confidence, "also_seen": m.also_seen}


def _render_console(matches: List[signatures.Match], label: str, show_all: bool, file=None) -> None:

    from rich.markup import escape
    from rich.text import Text

    from ascend_doctor.render.console import make_console

    con = make_console(file)
    width = max(con.width, 60)

    def para(head: str, body: str, style: str = "") -> None:
        from rich.cells import cell_len

        from ascend_doctor.render.wrap import wrap  # by cells: a Chinese meaning or fix takes two columns a character

        lines = wrap(body, width, initial_indent=head, subsequent_indent=" " * cell_len(head)) or [head]
        for line in lines:
            con.print(Text(line, style=style), soft_wrap=True)

    if not matches:
        text = (tr("No known signature found in {label}.", label=label) if show_all else
                tr("No known error or warning signature found in {label}.", label=label))
        con.print(f"[green]{escape(text)}[/green]")
        return
    from rich.cells import cell_len

    labels = {k: tr(k) for k in ("meaning:", "fix:", "source:")}
    wide = max(cell_len(v) for v in labels.values())

    def _label(key: str) -> str:  # aligned in cells, in any language (含义： is 6 cells, meaning: 8)
        return "  " + labels[key] + " " * (wide - cell_len(labels[key]) + 1)

    for m in sorted(matches, key=lambda m: m.also_seen):  # the specific matches first: the generic ones say "above"
        s = m.signature
        style = _STYLE.get(s.kind, "")
        code = f"{escape(s.code)} " if s.code else ""
        fallback = (" [dim]" + escape(tr("(generic; also seen beside the specific match above)")) + "[/dim]"
                    if m.also_seen else " [dim]" + escape(tr("(generic)")) + "[/dim]" if s.priority == "fallback"
                    else "")
        con.print(f"[{style}]{s.kind.upper():<8}[/{style}] [bold]{code}[/bold]{escape(s.id)}{fallback}"
                  f"  [dim]{escape(s.component)}[/dim]")
        para("  " + tr("line {line}:", line=m.line) + " ", redact_text(m.excerpt), style="cyan")
        para(_label("meaning:"), tr(s.meaning))
        para(_label("fix:"), tr(s.fix))
        para(_label("source:"), f"{s.source} ({s.confidence})", style="dim")
        con.print("")
    counts = {k: sum(1 for m in matches if m.signature.kind == k and not m.also_seen) for k in signatures.KINDS}
    said = {"error": lambda n: trn("{n} error", "{n} errors", n),
            "warning": lambda n: trn("{n} warning", "{n} warnings", n),
            "info": lambda n: trn("{n} info", "{n} info", n),
            "positive": lambda n: trn("{n} positive sign", "{n} positive signs", n)}
    parts = [said[k](n) if k in said else f"{n} {k}" for k, n in counts.items() if n]
    generic = sum(1 for m in matches if m.also_seen)
    if generic:
        parts.append(tr("{n} generic code(s) also seen", n=generic))
    con.print(f"{escape(label)}: " + ", ".join(parts))


DIAGNOSE_EXIT_HELP = """\b
Exit codes:
  0    no error signature matched (warnings may have)
  1    at least one error signature matched
  2    usage or input error (unreadable or oversized log, invalid --signatures catalogue)
  3    internal error of ascend-doctor itself
"""


@click.command("diagnose", cls=DoctorCommand, epilog=DIAGNOSE_EXIT_HELP)
@click.argument("logfile", metavar="LOGFILE|-")
@click.option("--format", "fmt", type=click.Choice(choices("diagnose")), default="console", show_default=True)
@click.option("--all", "show_all", is_flag=True, help="Also show info and positive signatures (harmless lines, "
                                                          "healthy signals).")
@click.option("--signatures", "catalogue", metavar="FILE",
              help="Use this signature catalogue instead of the shipped one.")
@click.option("--matrix", "matrix", multiple=True, metavar="FILE", type=click.Path(exists=True, dir_okay=False),
              help="Signatures layered over the shipped catalogue (a file with `table = "
                   "\"signatures/error-signatures\"`); repeatable.")
@click.option("-o", "--output", "output", default="-", metavar="FILE",
              help="Write the result here (atomically) instead of stdout.")
def diagnose(logfile: str, fmt: str, show_all: bool, catalogue: Optional[str], matrix, output: str) -> None:
    """Match a log (vllm serve, torch_npu, CANN, HCCL, npu-smi) against known error signatures: code, meaning, fix."""
    from ascend_doctor.knowledge.door import Knowledge

    knowledge = Knowledge(matrix)
    knowledge.check()
    table = (knowledge.instead("signatures/error-signatures", catalogue) if catalogue else knowledge.signatures)
    text = read_log(logfile)
    kinds = signatures.KINDS if show_all else ("error", "warning")
    matches = signatures.diagnose(text, table, kinds=kinds)
    label = "stdin" if logfile == "-" else logfile
    exit_code = 1 if any(m.signature.kind == "error" for m in matches) else 0
    from ascend_doctor.cli.output import console_text, write_output

    if fmt == "json":
        doc = {"schema_version": JSON_SCHEMA_VERSION, "log": label, "exit_code": exit_code,
               "matches": [_row(m) for m in matches]}
        write_output(output, dump_json(redact_tree(doc)) + "\n", "diagnosis")
    elif output != "-":
        write_output(output, console_text(lambda _, file: _render_console(matches, label, show_all, file=file),
                                          None), "diagnosis")
    else:
        _render_console(matches, label, show_all)
    sys.exit(exit_code)

