"""The one table of output formats: what each renders, how `-o FILE` recognises it, whether a program reads it.

A report (check, exec, smoke, triage, fleet) can be written in every format whose `renders` is set; the other commands
write their own document (a plan, a diagnosis, a diff, a listing, a parse, the matrix) in the formats listed for it
in `DOCUMENTS`. Adding a format is one row here and its renderer module; `cli.options.output_options` and every
command's `--format` read their choices from this table (tests/render/test_formats.py holds them to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Format:
    name: str
    renders: Optional[tuple[str, str]] = None  # (module under ascend_doctor.render, function) for a report
    extensions: tuple[str, ...] = ()  # what `-o FILE` without --format recognises
    machine: bool = True  # a program reads it: never mixed with the console view on one stream
    choosable: bool = True  # a value of --format (fixscript and termination have their own options)


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("console", extensions=(".txt", ".log"), machine=False),
    Format("json", ("json_out", "render_json"), (".json",)),
    Format("junit", ("junit", "render_junit"), (".xml", ".junit")),
    Format("sarif", ("sarif", "render_sarif"), (".sarif.json", ".sarif")),
    Format("github", ("github", "render_github"), machine=False),
    Format("markdown", ("markdown", "render_markdown"), (".md",)),
    Format("prometheus", ("prometheus", "render_prometheus"), (".prom",)),
    Format("fixscript", ("fixscript", "render_fixscript"), choosable=False),
    Format("termination", ("termination", "termination_message"), choosable=False),
    # documents other than a report
    Format("text", machine=False),
    Format("toml"),
)}

REPORT = "report"
# What each kind of document can be written as (the first is the default).
DOCUMENTS: dict[str, tuple[str, ...]] = {
    REPORT: tuple(f.name for f in FORMATS.values() if f.choosable and (f.renders or f.name == "console")),
    "plan": ("console", "json", "markdown"),
    "diagnose": ("console", "json"),
    "diff": ("console", "json"),
    "list": ("console", "json"),
    "parse": ("console", "json"),
    "matrix": ("console", "json"),
    "sync": ("text", "toml", "json"),
}


def choices(document: str = REPORT) -> list[str]:
    return list(DOCUMENTS[document])


def machine() -> tuple[str, ...]:
    return tuple(f.name for f in FORMATS.values() if f.machine and f.renders)


def renderer(name: str) -> tuple[str, str]:
    r = FORMATS[name].renders
    if r is None:
        raise KeyError(name)
    return r


def extensions() -> tuple[tuple[str, str], ...]:
    """(extension, format), longest first (so `.sarif.json` wins over `.json`)."""
    pairs = [(ext, f.name) for f in FORMATS.values() for ext in f.extensions]
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))
