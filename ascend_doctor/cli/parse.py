"""`ascend-doctor parse KIND FILE`: show what the doctor understands of one vendor output."""

from __future__ import annotations

import click

from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.core.errors import InputError, ParseError
from ascend_doctor.i18n import T, tr
from ascend_doctor.parsers import parser_kinds
from ascend_doctor.render.formats import choices
from ascend_doctor.text.redact import redact_tree
from ascend_doctor.text.textsafe import dump_json


@click.command(cls=DoctorCommand)
@click.argument("kind", metavar="KIND", required=False)
@click.argument("file", metavar="FILE", required=False)
@click.option("--format", "fmt", type=click.Choice(choices("parse")), default="console")
@click.option("--list", "list_kinds", is_flag=True, help="List every KIND and what it expects.")
def parse(kind, file, fmt, list_kinds):
    """Parse a captured vendor output (FILE, or - for stdin) and print the facts understood.

    KIND names the output, e.g. npu-smi-info, npu-smi-health, npu-smi-board, npu-smi-topo, npu-smi-map,
    hccn-tool, hccn-conf, version-cfg, toolkit-install-info, driver-version-info, firmware-version-info
    (`ascend-doctor parse --list` prints them all with what each expects).
    Exit 0 when understood (an error capture such as `dcmi module initialize failed` is understood: its `error`
    field is set), 2 when the input is not what KIND expects.
    """
    kinds = parser_kinds()
    if list_kinds:
        if fmt == "json":
            click.echo(dump_json([{"kind": name, "expects": kinds[name][1]} for name in sorted(kinds)]))
            return
        for name in sorted(kinds):
            from ascend_doctor.render.console import make_console, paragraph

            paragraph(make_console(), f"{name:<24} ", tr(kinds[name][1]), " " * 25)
        return
    if not kind or not file:
        raise InputError(T("usage: ascend-doctor parse KIND FILE (see --list for the kinds)"))
    if kind not in kinds:
        raise InputError(T("unknown KIND {kind}; one of: {kinds}", kind=repr(kind), kinds=', '.join(sorted(kinds))))
    func, expects = kinds[kind]
    from ascend_doctor.seam.inputs import read_text

    text = read_text(file, "vendor output")
    try:
        fact = func(text)
    except ParseError as exc:
        raise InputError(T("{file}: {exc}", file=file, exc=exc)) from None
    data = fact.model_dump(mode="json")
    if fmt == "json":
        click.echo(dump_json(redact_tree(data)))
    else:
        from rich.pretty import Pretty

        from ascend_doctor.render.console import make_console

        make_console().print(Pretty(redact_tree(data), expand_all=False))
