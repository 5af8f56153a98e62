"""Every output of every command goes through here: redacted, undecodable bytes escaped, files written atomically.

A report is cleaned once (`clean_report`: secrets masked in every string, a note where bytes were not UTF-8), then
rendered by the renderers, which compute nothing, and written with `write_output` (`-` is stdout; a file is replaced
atomically, so a failed run never truncates the previous report).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Optional, TextIO

from ascend_doctor.errors import InputError
from ascend_doctor.redact import redact_tree
from ascend_doctor.textsafe import escape_text, undecodable_note, undecodable_paths

FORMATS = ["console", "json", "junit", "github"]

# name -> (module under ascend_doctor.render, function); imported only when used (rich and xml.etree cost start-up
# time that a JSON gate does not need).
_RENDERERS = {"json": ("json_out", "render_json"), "junit": ("junit", "render_junit"),
              "github": ("github", "render_github")}


def clean_record(record, note_field: Optional[str] = "notes"):
    """A copy of a record (report, diff) with every string redacted and, when some string holds bytes that are not
    UTF-8, a note saying where (in `note_field`)."""
    data = redact_tree(record.model_dump(mode="json", by_alias=True))
    places = undecodable_paths(data)
    if places and note_field is not None and note_field in data:
        data[note_field] = [*data[note_field], undecodable_note(places)]
    return type(record).model_validate(data)


def clean_report(report):
    """The report every renderer prints (see clean_record)."""
    return clean_record(report)


def render_text(report, fmt: str) -> str:
    """The report in a text format (json, junit, github)."""
    mod, func = _RENDERERS[fmt]
    return getattr(importlib.import_module(f"ascend_doctor.render.{mod}"), func)(report)


def write_output(dest: str, text: str, what: str = "report", stream: Optional[TextIO] = None) -> None:
    """Write `text` to `dest` (`-`: `stream`, default stdout) — atomically for a file; InputError when it cannot."""
    if dest == "-":
        out = stream or sys.stdout
        out.write(escape_text(text))
        out.flush()
        return
    from ascend_doctor.atomicfile import write_atomic

    try:
        write_atomic(dest, text)
    except OSError as exc:
        raise InputError(f"cannot write {what} to {dest}: {exc.strerror or exc}") from None


def console_text(render: Callable[..., Any], obj, **kwargs) -> str:
    """What a console renderer prints for `obj`, as text (for a file): rendered into a buffer, no colour."""
    import io

    buf = io.StringIO()
    render(obj, file=buf, **kwargs)
    return buf.getvalue()


def default_console(report, file=None, verbose: bool = False, **kwargs) -> None:
    importlib.import_module("ascend_doctor.render.console").render_console(report, file=file, verbose=verbose,
                                                                           **kwargs)


def emit(report, fmt: str, output: Optional[str], verbose: bool = False, quiet: bool = False,
         console: Optional[Callable] = None, stream: Optional[TextIO] = None) -> None:
    """Write the cleaned report in `fmt` to `output` (and the console view to `stream`), or `fmt` to `stream`.

    `console`: the console view, `fn(report, file=None, verbose=False)` (default: the per-family view; `fleet`
    passes its node-by-check table). `stream` defaults to stdout.
    """
    report = clean_report(report)
    view = console or default_console
    out = stream or sys.stdout
    if output and output != "-":
        text = console_text(view, report, verbose=verbose) if fmt == "console" else render_text(report, fmt)
        write_output(output, text)
        if not quiet:
            view(report, file=out, verbose=verbose)
    elif fmt == "console":
        view(report, file=out, verbose=verbose)
    else:
        write_output("-", render_text(report, fmt), stream=out)
