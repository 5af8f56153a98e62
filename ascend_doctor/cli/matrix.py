"""`ascend-doctor matrix ...`: list the tables, validate them (shipped, or with a user layer), show the compatibility
matrix, print pins, sync rows from upstream releases."""

from __future__ import annotations

from typing import List, Optional

import click

from ascend_doctor.cli.i18n_click import DoctorSubGroup
from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T, tr
from ascend_doctor.render.formats import choices
from ascend_doctor.text.redact import redact_text, redact_tree
from ascend_doctor.text.textsafe import dump_json


def _load(files: List[str]):
    from ascend_doctor.knowledge.door import Knowledge

    return Knowledge(files).matrix


def _release_or_fail(m, version: str):
    row = m.vllm_ascend_release(version)
    if row is None:
        nearest, rel = m.nearest_release(version)
        hint = T("; nearest known: {version} ({relation})", version=nearest.version, relation=rel) if nearest else ""
        raise InputError(T("vllm-ascend {version} is not in the matrix{hint}", version=version, hint=hint))
    return row


def _console():
    from ascend_doctor.render.console import make_console

    return make_console()


TABLE_WIDTH = 132  # the nine-column release table needs this; narrower terminals get one stacked block per release


def _joined(values: List[str]) -> str:
    return " | ".join(values) if values else "-"


@click.group("matrix", cls=DoctorSubGroup)
def matrix():
    """Inspect the compatibility matrix (vllm-ascend, vLLM, torch/torch_npu, CANN, HDK, parsers, advisories)."""


@matrix.command("tables")
def tables():
    """List every table the doctor ships: the name a layer gives as `table = "…"`, its file, what identifies a row."""
    from ascend_doctor.i18n import localize, split
    from ascend_doctor.knowledge.tables import describe

    for line in describe():
        click.echo(localize(*split(line)))


@matrix.command("validate")
@click.argument("files", nargs=-1, metavar="[FILE]...")
def validate(files: tuple):
    """Validate every shipped table, or them with each FILE layered on top (a FILE's `table` key says which table it
    extends; none: the compatibility matrix), and say what each of its rows does. Exit 0 when valid, 2 (with the file
    and key path) when not."""
    from ascend_doctor.knowledge.door import Knowledge
    from ascend_doctor.knowledge.tables import TABLES

    k = Knowledge(files)
    for name in TABLES:
        k.table(name)
    m = k.matrix
    for path, table, said in k.check():
        click.echo(tr("{path}: layered over the {table} table ({n} change(s))", path=path, table=table, n=len(said)))
        for line in said:
            click.echo(f"  {line}")
    click.echo(tr("ok: {releases} vllm-ascend releases, {torch_npu} torch_npu rows, {hdk} CANN/HDK pairings, "
                  "{parsers} vLLM parser lists, {advisories} advisories from {files} files; {tables} other tables",
                  releases=len(m.releases), torch_npu=len(m.torch_npu), hdk=len(m.hdk), parsers=len(m.parsers),
                  advisories=len(m.advisories), files=len(m.files), tables=len(TABLES)))


@matrix.command("show")
@click.option("--vllm-ascend", "version", metavar="X", help="Show the row for this vllm-ascend release.")
@click.option("--matrix", "extra", multiple=True, metavar="FILE", help="Matrix TOML layered over the shipped one.")
@click.option("--format", "fmt", type=click.Choice(choices("matrix")), default="console", show_default=True)
def show(version: Optional[str], extra, fmt: str):
    """Print the vllm-ascend release table, or (with --vllm-ascend X) everything the matrix says about X."""
    from rich.table import Table

    m = _load(list(extra))
    if version:
        row = _release_or_fail(m, version)
        if fmt == "json":
            data = row.model_dump(mode="json")
            data["hdk_for_cann"] = [h.model_dump(mode="json") for c in row.cann for h in m.hdk_for_cann(c)]
            npu = m.torch_npu_row(row.torch_npu[0]) if row.torch_npu else None
            data["torch_npu_row"] = npu.model_dump(mode="json") if npu else None
            click.echo(dump_json(redact_tree(data)))  # a user layer's notes and sources may hold credentials
            return
        t = Table(title=f"vllm-ascend {row.version}", show_header=False)
        t.add_column("field", style="bold")
        t.add_column("value", overflow="fold")
        data = row.model_dump(mode="json")
        data = {**{k: v for k, v in data.items() if k not in ("note", "source")}, "note": data["note"],
                "source": data["source"]}
        for key, value in data.items():
            if value in (None, [], {}, ""):
                continue
            if isinstance(value, list):
                value = ", ".join(value) if key in ("source", "hardware", "experimental_hardware", "wheel_cp") \
                    else _joined(value)
            elif isinstance(value, dict):
                value = "; ".join(f"{k}: {v}" for k, v in value.items())
            t.add_row(key, redact_text(str(value)))
        for cann in row.cann:
            for h in m.hdk_for_cann(cann):
                hw = f" [{', '.join(h.hardware)}]" if h.hardware else ""
                t.add_row(f"HDK for CANN {cann}{hw}", redact_text(f"{_joined(h.driver)} ({'; '.join(h.source)})"))
        _console().print(t)
        return
    if fmt == "json":
        click.echo(dump_json(redact_tree([r.model_dump(mode="json") for r in m.releases])))
        return
    con = _console()
    title = "vllm-ascend releases (first value = what the package pins; | = documents disagree)"
    if con.width < TABLE_WIDTH:
        import textwrap

        from rich.text import Text

        con.print(Text(title, style="bold"))
        for r in reversed(m.releases):
            facts = (f"vLLM {_joined(r.vllm)} · Python {r.python} · CANN {_joined(r.cann)} · torch {_joined(r.torch)}"
                     f" · torch_npu {_joined(r.torch_npu)} · triton-ascend {_joined(r.triton_ascend)} · "
                     f"{','.join(r.hardware)} · {r.listed}")
            lines = textwrap.wrap(facts, width=max(con.width, 40) - 14, break_on_hyphens=False)
            for i, line in enumerate(lines):
                head = Text(f"{r.version:<13} " if i == 0 else " " * 14, style="bold" if i == 0 else "")
                head.append(line)
                con.print(head, soft_wrap=True)
        return
    t = Table(title=title)
    for col in ("vllm-ascend", "vLLM", "Python", "CANN", "torch", "torch_npu", "triton-ascend", "hardware", "listed"):
        t.add_column(col, overflow="fold", no_wrap=col == "vllm-ascend")
    for r in reversed(m.releases):
        t.add_row(r.version, _joined(r.vllm), r.python, _joined(r.cann), _joined(r.torch), _joined(r.torch_npu),
                  _joined(r.triton_ascend), ",".join(r.hardware), r.listed)
    con.print(t)


@matrix.command("pins")
@click.option("--vllm-ascend", "version", required=True, metavar="X", help="The vllm-ascend release to pin for.")
@click.option("--matrix", "extra", multiple=True, metavar="FILE", help="Matrix TOML layered over the shipped one.")
def pins(version: str, extra):
    """Print a pip constraints file (`pip install -c FILE ...`) for vllm-ascend X: vllm, torch, torch-npu,
    triton-ascend, transformers; the CANN, HDK and Python it needs, conflicts and sources as comments."""
    m = _load(list(extra))
    row = _release_or_fail(m, version)
    out: List[str] = [f"# pip constraints for vllm-ascend {row.version} (ascend-doctor matrix; row listed in: "
                      f"{row.listed})",
                      f"# Python {row.python}; hardware: {', '.join(row.hardware)}"
                      + (f" (experimental: {', '.join(row.experimental_hardware)})" if row.experimental_hardware
                         else "")]
    cann_line = f"# CANN {row.cann[0]}"
    if len(row.cann) > 1:
        cann_line += f" (also named: {', '.join(row.cann[1:])})"
    if row.cann_per_hardware:
        cann_line += "; images per hardware: " + ", ".join(f"{k} {v}" for k, v in row.cann_per_hardware.items())
    out.append(cann_line)
    for cann in row.cann:
        pairs = m.hdk_for_cann(cann)
        if not pairs:
            out.append(f"# Ascend HDK (driver/firmware) for CANN {cann}: no source in the matrix pairs it")
        for h in pairs:
            hw = f" [{', '.join(h.hardware)}]" if h.hardware else ""
            fw = f", firmware {h.firmware}" if h.firmware else ""
            out.append(f"# Ascend HDK for CANN {cann}{hw}: driver {' / '.join(h.driver)}{fw} ({'; '.join(h.source)})")
    for field, text in row.conflict.items():
        out.append(f"# CONFLICT {field}: {text}")
    if row.note:
        out.append(f"# note: {row.note}")
    out.append("# vllm-ascend does not declare vllm in its metadata: install this vLLM built with "
               "VLLM_TARGET_DEVICE=empty first, then vllm-ascend, then `python -m pip check`.")
    for src in row.source:
        out.append(f"# source: {src}")
    pins: List[tuple] = [("vllm", row.vllm[0])]
    pins += [(dist, getattr(row, field)[0]) for dist, field in PINNED if getattr(row, field)]
    indexes = [(dist, v, m.index_for(dist, v)) for dist, v in pins]
    urls = sorted({ix.index_url for _d, _v, ix in indexes if ix is not None and ix.index_url})
    for dist, v, ix in indexes:
        if ix is None:
            continue
        where = (f"add --extra-index-url {ix.index_url}" if ix.index_url
                 else "no source names an index that serves it")
        out.append(f"# NOT ON PYPI {dist}=={v}: {where} [{ix.id}: {'; '.join(ix.source)}]")
    out.append("")
    for url in urls:  # pip reads index options in requirements and constraints files alike
        out.append(f"--extra-index-url {url}")
    out.append(f"vllm-ascend=={row.version}")
    out.append(f"vllm=={row.vllm[0]}" + (f"  # also targets: {', '.join(row.vllm[1:])}" if len(row.vllm) > 1 else ""))
    for dist, field in PINNED:
        values = getattr(row, field)
        if not values:
            out.append(f"# {dist}: not pinned by this release")
            continue
        line = f"{dist}=={values[0]}"
        if len(values) > 1:
            line += f"  # other documents name: {', '.join(values[1:])}"
        if field == "torch_npu":
            npu = m.torch_npu_row(values[0])
            if npu is not None and npu.pypi == "absent" and m.index_for(dist, values[0]) is None:
                line += "  # " + (npu.note or "not on PyPI")
        out.append(line)
    out.append(f"transformers{row.transformers}" if row.transformers else "# transformers: not pinned by this release")
    click.echo(redact_text("\n".join(out)))  # an index URL or a layer's note may carry credentials


PINNED = (("torch", "torch"), ("torch-npu", "torch_npu"), ("triton-ascend", "triton_ascend"))


@matrix.command("sync")
@click.option("--vllm-ascend", "ascend", multiple=True, metavar="PATH",
              help="A vllm-ascend sdist or checkout (repeatable: older sdists add the rows newer tables dropped).")
@click.option("--vllm", "vllm", multiple=True, metavar="PATH", help="A vLLM sdist, wheel or checkout (repeatable).")
@click.option("--transformers", "transformers", multiple=True, metavar="PATH",
              help="A transformers wheel or sdist (repeatable).")
@click.option("--pypi-json", "pypi_json", multiple=True, metavar="FILE",
              help="https://pypi.org/pypi/NAME/json saved to a file (vllm-ascend, triton-ascend, torch-npu, vllm).")
@click.option("--vllm-ascend-git", "ascend_git", metavar="DIR",
              help="A clone or mirror of the vllm-ascend repository (its .git directory or work tree): its bug "
                   "fixes and the releases that carry them (the signatures/release-fixes table).")
@click.option("--matrix", "extra", multiple=True, metavar="FILE", help="Matrix TOML layered over the shipped one.")
@click.option("--format", "fmt", type=click.Choice(choices("sync")), default="text", show_default=True)
@click.option("-o", "--output", "output", default="-", metavar="FILE", help="Write here instead of stdout.")
def sync_cmd(ascend, vllm, transformers, pypi_json, ascend_git, extra, fmt, output):
    """For maintainers: read upstream release files and propose matrix rows, with their sources, as a diff against
    the shipped matrix. Never uses the network: pass sdists/wheels and saved PyPI JSON files. Exit 0 when there is
    nothing to propose, 1 when rows are proposed or something is left to review by hand (a subpackage a release's
    wheel leaves out that no release rule names), 2 when an input cannot be read."""
    from ascend_doctor.cli.output import write_output
    from ascend_doctor.sync.run import render_text, render_toml, sync

    if not (ascend or vllm or transformers or pypi_json or ascend_git):
        raise InputError(T("matrix sync: nothing to read (give --vllm-ascend, --vllm, --transformers, --pypi-json or "
                           "--vllm-ascend-git)"))
    for path in list(ascend) + list(vllm) + list(transformers) + list(pypi_json) + ([ascend_git] if ascend_git else []):
        import os

        if not os.path.exists(path):
            raise InputError(T("matrix sync: {path}: no such file or directory", path=path))
    from ascend_doctor.knowledge.door import Knowledge

    knowledge = Knowledge(list(extra))
    res = sync(knowledge.matrix, ascend=ascend, vllm=vllm, transformers=transformers, pypi_json=pypi_json,
               additional_config=knowledge.additional_config, names=knowledge.release_names,
               support=knowledge.support_matrix, known_issues=knowledge.known_issues, ascend_git=ascend_git,
               refusals=knowledge.release_refusals, kv_pool_env=knowledge.kv_pool_env, images=knowledge.images,
               flashcomm_vl=knowledge.flashcomm_vl, quant_schemes=knowledge.quant_schemes,
               release_fixes=knowledge.release_fixes if ascend_git else None, release_rules=knowledge.release_rules,
               release_changes=knowledge.release_changes)
    if fmt == "json":
        text = dump_json(res.model_dump(mode="json"))
    elif fmt == "toml":
        text = render_toml(res)
    else:
        text = render_text(res)
    write_output(output, text, "proposals")
    raise SystemExit(1 if res.proposals or res.review else 0)
