"""`ascend-doctor list`, `explain`, `schema`: what the doctor knows, without looking at any host."""

from __future__ import annotations

import click

from ascend_doctor.errors import InputError
from ascend_doctor.textsafe import dump_json


@click.command("list")
@click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["console", "json"]), default="console")
def list_checks(checks_dirs, fmt):
    """Every check: code, slug, family, severity, stage, source (built-in or plugin)."""
    from ascend_doctor.registry import load_registry

    reg = load_registry(checks_dirs)
    rows = [{"code": c.code, "slug": c.slug, "family": c.family, "severity": c.severity.value, "stage": c.stage,
             "source": c.source, "title": c.title} for c in reg.all()]
    if fmt == "json":
        click.echo(dump_json(rows))
        return
    from rich.table import Table

    from ascend_doctor.render.console import make_console

    t = Table(box=None, pad_edge=False)
    for col in ("code", "slug", "family", "severity", "stage", "source", "title"):
        t.add_column(col)
    for r in rows:
        t.add_row(*(r[k] for k in ("code", "slug", "family", "severity", "stage", "source", "title")))
    make_console().print(t)


@click.command()
@click.argument("code")
@click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR", type=click.Path(exists=True, file_okay=False))
def explain(code, checks_dirs):
    """Print a check's doc: what it checks, why it matters, how to fix."""
    from ascend_doctor.registry import load_registry

    reg = load_registry(checks_dirs)
    c = reg.get(code)
    if c is None:
        raise InputError(f"unknown check {code!r} (see `ascend-doctor list`)")
    click.echo(f"{c.code} {c.slug} — {c.title}")
    click.echo(f"family: {c.family}   severity: {c.severity.value}   stage: {c.stage}   source: {c.source}")
    if c.needs:
        click.echo(f"facts: {', '.join(c.needs)}")
    body = c.doc.strip().split("\n", 1)
    click.echo("")
    click.echo(body[1].strip() if len(body) > 1 else "")


@click.command()
@click.option("--snapshot", is_flag=True, help="Print the JSON Schema of the host snapshot instead of the report.")
def schema(snapshot):
    """Print the JSON Schema of the report (or, with --snapshot, of a host snapshot)."""
    if snapshot:
        from ascend_doctor.snapshot import Snapshot as model
    else:
        from ascend_doctor.report import Report as model
    click.echo(dump_json(model.model_json_schema(by_alias=True)))
