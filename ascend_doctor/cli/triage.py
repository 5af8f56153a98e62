"""`ascend-doctor triage FILE|-`: a pasted bug report in (collect_env, pip list, npu-smi info, tracebacks…), the
diagnosis out — the same checks that judge a live host, run on whatever the paste contains."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone

import click

from ascend_doctor.cli.exits import EXIT_HELP, exit_internal, guarded_run
from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.cli.options import output_options, selection_options, selection_setup
from ascend_doctor.cli.output import default_console, emit, output_kwargs


def read_paste_file(path: str) -> str:
    """The paste's text ('-': stdin). Undecodable bytes are replaced: a paste is never refused for them."""
    from ascend_doctor.seam.inputs import read_text

    return read_text(path, "paste")


def triage_console(report, file=None, verbose: bool = False, **kwargs) -> None:
    """The answer's order first (cause, other problems, what to paste), then the usual per-family report."""
    from ascend_doctor.i18n import localize, tr
    from ascend_doctor.render.console import make_console, paragraph

    t = report.triage
    if t is not None:
        con = make_console(file)
        by_code = {f.code: f for f in report.findings}
        found = tr(", ").join(f"{s.kind} {s.lines}" for s in t.sections[:8]) or tr("no known section found")
        # (first-line prefix, text, indent of the wrapped lines): wrapped to the terminal, never one 365-column line.
        lines = [("", tr("triage of {source} ({lines} lines): {sections}", source=t.source, lines=t.lines,
                         sections=found), "  ")]
        if t.root_cause and t.root_cause in by_code:
            f = by_code[t.root_cause]
            lines += [None, ("", tr("most likely cause: {code} {title}", code=f.code, title=tr(f.title)), "  "),
                      ("  ", localize(f.message, f.message_template, f.message_fields), "  ")]
            # What proves it: the finding's first evidence items, one line each (the report below has them whole).
            for e in f.evidence[:3]:
                first = (e.shown_excerpt() or "").strip().split("\n")[0]  # wrapped, never cut
                lines.append(("  ", f"{tr('seen:')} {tr(e.source)}" + (f" → {first}" if first else ""), " " * 14))
            lines.append(("  ", tr("why: {why}", why=t.text("root_cause_why")), "       "))
            if f.remediation:
                lines.append(("  ", tr("fix: {fix}", fix=localize(f.remediation, f.remediation_template,
                                                                 f.remediation_fields)), "       "))
        if t.others:
            lines += [None, ("", tr("also: {codes}", codes=", ".join(t.others)), "      ")]
        if t.leads:
            lines += [None, ("", tr("leads (where to look, no verdict):"), "")] + [("  - ", m, "    ")
                                                                                  for m in t.text("leads")]
        if t.missing:
            lines += [None, ("", tr("to decide the rest, paste:"), "")] + [("  - ", m, "    ")
                                                                           for m in t.text("missing")]
        for item in lines + [None]:
            if item is None:
                con.print()
            else:
                paragraph(con, *item)
    default_console(report, file=file, verbose=verbose, **kwargs)


@click.command("triage", cls=DoctorCommand, epilog=EXIT_HELP)
@click.argument("paste", metavar="FILE|-")
@selection_options
@output_options
def triage(paste, matrix, checks_dirs, select, ignore, config_path, fail_on, fail_on_unknown, **kw):
    """Diagnose a pasted bug report: collect_env, pip/conda lists, npu-smi info, CANN and driver version files,
    the vllm serve command line and tracebacks are found in the text (fences, <details>, prompts, `cat -n`, CRLF,
    ANSI colours) and judged by the same checks as `check`; what the paste lacks is unknown. `--format markdown`
    writes a reply ready to post: the most likely cause first, then the rest, then what to paste next."""
    from ascend_doctor.core.evaluator import apply_config
    from ascend_doctor.triage.run import triage_text

    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    outputs = output_kwargs(kw)
    text = read_paste_file(paste)
    source = "stdin" if paste == "-" else paste

    def work():
        config, options, registry = selection_setup(config_path, select, ignore, fail_on, fail_on_unknown,
                                                    checks_dirs, matrix)
        outputs.for_run(registry, options)
        report = triage_text(text, source, registry, options)
        notes = apply_config(report.findings, config)
        return report.with_notes(report.note_msgs() + notes)

    report, crash = guarded_run("triage", started_at, t0, fail_on or "error", work)
    emit(report, outputs, console=triage_console)
    if crash is not None:
        exit_internal(crash)
    sys.exit(report.exit_code)
