"""`ascend-doctor list`, `explain`, `schema`: what the doctor knows, without looking at any host."""

from __future__ import annotations

import click

from ascend_doctor.cli.i18n_click import DoctorCommand
from ascend_doctor.cli.options import lang_option
from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T, current, tr
from ascend_doctor.render.formats import choices
from ascend_doctor.text.textsafe import dump_json


@click.command("list", cls=DoctorCommand)
@click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(choices("list")), default="console")
@lang_option()
def list_checks(checks_dirs, fmt):
    """Every check: code, slug, family, severity, stage, source (built-in or plugin)."""
    from ascend_doctor.core.registry import load_registry

    reg = load_registry(checks_dirs)
    rows = [{"code": c.code, "slug": c.slug, "family": c.family, "severity": c.severity.value, "stage": c.stage,
             "source": c.source, "title": c.title} for c in reg.all()]
    if fmt == "json":
        click.echo(dump_json(rows))
        return
    for r in rows:
        r["title"] = tr(r["title"])
    from rich.table import Table

    from ascend_doctor.render.console import make_console

    con = make_console()
    # Fewer columns on a narrow terminal; the title wraps in its column, never cut (#22: 64 of 98 titles ended in "…").
    if con.width >= 150:
        cols = ("code", "slug", "family", "severity", "stage", "source", "title")
    elif con.width >= 100:
        cols = ("code", "slug", "severity", "title")
    else:
        cols = ("code", "severity", "title")
    # Widths set here: rich squeezes no_wrap columns to nothing when a row is too wide for the terminal.
    from rich.cells import cell_len

    heads = {"code": tr("code"), "slug": tr("slug"), "family": tr("family"), "severity": tr("severity"),
             "stage": tr("stage"), "source": tr("source"), "title": tr("title")}
    widths = {c: max([cell_len(heads[c])] + [cell_len(r[c]) for r in rows]) for c in cols if c != "title"}
    widths["title"] = max(con.width - sum(widths.values()) - 2 * len(widths), 10)
    t = Table(box=None, pad_edge=False)
    for col in cols:
        t.add_column(heads[col], no_wrap=col != "title", overflow="fold", width=widths[col])
    for r in rows:
        t.add_row(*(r[k] for k in cols))
    con.print(t)


@click.command(cls=DoctorCommand)
@click.argument("code")
@click.option("--checks-dir", "checks_dirs", multiple=True, metavar="DIR",
              type=click.Path(exists=True, file_okay=False))
@lang_option()
def explain(code, checks_dirs):
    """Print a check's doc: what it checks, why it matters, how to fix."""
    from ascend_doctor.core.registry import load_registry

    reg = load_registry(checks_dirs)
    c = reg.get(code)
    if c is None and reg.retired_note(code):
        click.echo(tr(reg.retired_note(code)))
        click.echo("")
        c = reg.get(reg.retired[code.strip().upper()].into)
    if c is None:
        import difflib

        names = sorted(reg.checks) + sorted(reg.retired)
        close = difflib.get_close_matches(code.strip().upper(), names, n=3, cutoff=0.6)
        hint = T("; did you mean {names}?", names=" or ".join(close)) if close else ""
        raise InputError(T("unknown check {code}{hint} (see `ascend-doctor list`)", code=repr(code), hint=hint))
    click.echo(f"{c.code} {c.slug} — {tr(c.title)}")
    click.echo(tr("family: {family}   severity: {severity}   stage: {stage}   source: {source}", family=c.family,
                  severity=c.severity.value, stage=c.stage, source=c.source))
    if c.needs:
        click.echo(tr("facts: {facts}", facts=", ".join(c.needs)))
    body = c.doc.strip().split("\n", 1)
    text = body[1].strip() if len(body) > 1 else ""
    click.echo("")
    if current() == "en":
        click.echo(rewrap(text))
    else:
        _explain_translated(c)
    if c.needs:
        import shutil

        from ascend_doctor.facts.graph import chain
        from ascend_doctor.probes import load_probes
        from ascend_doctor.render.wrap import wrap

        probes = load_probes()
        width = max(min(shutil.get_terminal_size((100, 24)).columns, 120), 40)
        click.echo("")
        click.echo(tr("Where its facts come from:"))
        for name in c.needs:
            for line in chain(name, probes, depth=1, say=tr):
                pad = " " * (len(line) - len(line.lstrip()))
                click.echo("\n".join(wrap(line.strip(), width, pad, pad + "    ")))


def _explain_translated(c) -> None:
    """The doc section by section in the chosen language (msgid: the section's re-flowed text, registry.doc_section).
    """
    parts, untranslated = [], False
    for name in ("What it checks", "Why it matters", "How to fix"):
        en = c.section(name)
        if not en:
            continue
        zh = tr(en)
        untranslated = untranslated or zh == en
        parts.append(f"{tr(name)}：{zh}")
    if untranslated:
        click.echo(tr("(This check's explanation is not translated yet; the English text follows.)"))
        click.echo("")
    click.echo(rewrap("\n\n".join(parts)))


def rewrap(doc: str) -> str:
    """A check doc's paragraphs re-wrapped to the terminal (they are written at 120 columns)."""
    import shutil

    from ascend_doctor.render.wrap import wrap

    width = max(min(shutil.get_terminal_size((100, 24)).columns, 120), 40)
    paragraphs = [" ".join(line.strip() for line in p.splitlines()) for p in doc.split("\n\n")]
    return "\n\n".join("\n".join(wrap(p, width=width)) for p in paragraphs)


@click.command(cls=DoctorCommand)
@click.option("--snapshot", is_flag=True, help="Print the JSON Schema of the host snapshot instead of the report.")
@click.option("--plan", "plan_", is_flag=True, help="Print the JSON Schema of `plan --format json` instead.")
def schema(snapshot, plan_):
    """Print the JSON Schema of the report (or, with --snapshot, of a host snapshot; with --plan, of a plan)."""
    if plan_:
        from ascend_doctor.deploy.report import PlanReport as model
    elif snapshot:
        from ascend_doctor.seam.snapshot import Snapshot as model
    else:
        from ascend_doctor.report import Report as model
    click.echo(dump_json(model.model_json_schema(by_alias=True)))
