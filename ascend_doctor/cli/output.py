"""Every output of every command goes through here: redacted, undecodable bytes escaped, files written atomically.

A report is cleaned once (`clean_report`: secrets masked in every string, a note where bytes were not UTF-8), then
rendered by the renderers, which compute nothing, and written with `write_output` (`-` is stdout; a file is replaced
atomically, so a failed run never truncates the previous report).

One run can write several outputs (`Outputs`): `-o FILE` in `--format` (or, without `--format`, the format its
extension names), `--json FILE`, `--junit FILE`, `--sarif FILE`, `--github` (annotations on stdout), beside the console
view. The console view goes to the command's stream unless a machine-readable format took it (`--format json` or
`-o -` / `--json -`).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Optional, TextIO

from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import Msg, T
from ascend_doctor.render.formats import choices, extensions, machine, renderer
from ascend_doctor.text.redact import redact_text, redact_tree
from ascend_doctor.text.textsafe import printable, undecodable_note, undecodable_paths

# The formats, their renderers (imported only when used: rich and xml.etree cost start-up time that a JSON gate does
# not need) and extensions: the one table in ascend_doctor/render/formats.py.
FORMATS = choices()
MACHINE = machine()
POD_TERMINATION_LOG = "/dev/termination-log"  # the kubelet's default terminationMessagePath


def format_for_path(path: str) -> str:
    """The format `-o PATH` writes when --format is not given (console for `-` and unknown extensions)."""
    low = path.lower()
    for ext, fmt in extensions():
        if low.endswith(ext):
            return fmt
    return "console"


class Outputs:
    """What one run writes where: a list of (format, destination) plus how the console view is shown."""

    def __init__(self, fmt: Optional[str] = None, output: Optional[str] = None, json_path: Optional[str] = None,
                 junit_path: Optional[str] = None, sarif_path: Optional[str] = None, github: bool = False,
                 verbose: bool = False, quiet: bool = False, fixscript_path: Optional[str] = None,
                 termination_path: Optional[str] = None):
        self.verbose = bool(verbose)
        self.quiet = bool(quiet)
        # The run's checks by code (built-in, --checks-dir, plugins), for the SARIF rule descriptions; set by the
        # command once its registry is loaded. Renderers never load the registry themselves.
        self.checks: Optional[dict[str, Any]] = None
        # The run's knowledge (shipped tables and --matrix layers), which validates the fix script's steps; set with
        # `checks` by `for_run`. Unset: the shipped tables.
        self.knowledge: Any = None
        self.targets: list[tuple[str, str]] = []
        self._stream_taken = False  # `--format X` without -o: the stream is X's alone
        if output:
            self.targets.append((fmt or format_for_path(output), output))
        elif fmt and fmt != "console":
            self.targets.append((fmt, "-"))
            self._stream_taken = True
        for kind, dest in (("json", json_path), ("junit", junit_path), ("sarif", sarif_path),
                           ("fixscript", fixscript_path), ("termination", termination_path)):
            if dest:
                self.targets.append((kind, dest))
        if github:
            self.targets.append(("github", "-"))
        # `--format json --json -` asks for the same thing twice: written once ("json and json cannot both go to
        # stdout" was the message, #22).
        self.targets = list(dict.fromkeys(self.targets))
        on_stdout = [k for k, d in self.targets if d == "-" and k in MACHINE]
        if len(on_stdout) > 1:
            raise InputError(T("{on_stdout} cannot both go to stdout: give one of them a file",
                               on_stdout=' and '.join(on_stdout)))

    def for_run(self, registry, options) -> None:
        """What the renderers take from the run: its checks (SARIF rules) and its knowledge (the fix script)."""
        from ascend_doctor.knowledge.door import Knowledge

        self.checks = registry.checks
        self.knowledge = Knowledge.for_options(options)

    @property
    def console_on_stream(self) -> bool:
        """The console view is shown unless `--format X` or a machine-readable format (`--json -`) took the stream;
        `--github` annotations go beside it (the Actions log reads them anywhere)."""
        return not self._stream_taken and not any(d == "-" and k in MACHINE for k, d in self.targets)

    @property
    def fmt(self) -> str:
        """The main format (what `-o` or stdout gets), for callers that only know one."""
        return self.targets[0][0] if self.targets else "console"

    def wants(self, kind: str) -> bool:
        return any(k == kind for k, _ in self.targets)


def output_kwargs(kw: dict) -> Outputs:
    """Take the output options (see cli.options.output_options) out of a command's keyword arguments."""
    return Outputs(fmt=kw.pop("fmt", None), output=kw.pop("output", None), json_path=kw.pop("json_path", None),
                   junit_path=kw.pop("junit_path", None), sarif_path=kw.pop("sarif_path", None),
                   github=kw.pop("github", False), verbose=kw.pop("verbose", False), quiet=kw.pop("quiet", False),
                   fixscript_path=kw.pop("fixscript_path", None),
                   termination_path=termination_log(kw.pop("termination_path", None)))


def termination_log(given: Optional[str]) -> Optional[str]:
    """--termination-log FILE; in a Kubernetes pod whose kubelet made /dev/termination-log, that file by default
    (`--termination-log ''` turns it off)."""
    import os

    if given is not None:
        return given or None
    if os.environ.get("KUBERNETES_SERVICE_HOST") and os.path.exists(POD_TERMINATION_LOG):
        return POD_TERMINATION_LOG
    return None


def clean_record(record, note_field: Optional[str] = "notes"):
    """A copy of a record (report, diff) with every string redacted and, when some string holds bytes that are not
    UTF-8, a note saying where (in `note_field`)."""
    data = redact_tree(record.model_dump(mode="json", by_alias=True))
    places = undecodable_paths(data)
    if places and note_field is not None and note_field in data:
        data[note_field] = [*data[note_field], undecodable_note(places)]
    return type(record).model_validate(data)


def clean_report(report):
    """The report every renderer prints (see clean_record). The texts a report keeps as messages for other
    languages (notes, the triage answer) do not survive the copy: they are rendered in the current language first and
    redacted like everything else."""
    notes = [redact_text(n) for n in report.note_texts()]
    triage = {}
    if report.triage is not None:
        for name in report.triage.TEXTS:
            value = report.triage.text(name)
            triage[name] = [redact_text(v) for v in value] if isinstance(value, list) else redact_text(value)
    excerpts = {(i, j): redact_text(e.shown_excerpt()) for i, f in enumerate(report.findings)
                for j, e in enumerate(f.evidence) if isinstance(e.excerpt, Msg)}
    values = {i: redact_text(f.shown_value()) for i, f in enumerate(report.findings) if isinstance(f.value, Msg)}
    cleaned = clean_record(report)
    for i, text in values.items():
        cleaned.findings[i]._value_shown = text
    cleaned._notes_shown = notes + cleaned.notes[len(notes):]  # + the undecodable-bytes note clean_record adds
    for (i, j), text in excerpts.items():
        cleaned.findings[i].evidence[j]._shown = text
    if cleaned.triage is not None:
        cleaned.triage._shown = triage
    return cleaned


def render_text(report, fmt: str, checks: Optional[dict[str, Any]] = None, knowledge: Any = None) -> str:
    """The report in a text format (json, junit, sarif, github); SARIF describes its rules from `checks`, the fix
    script validates its steps against `knowledge` (default: the shipped tables)."""
    mod, func = renderer(fmt)
    render = getattr(importlib.import_module(f"ascend_doctor.render.{mod}"), func)
    if fmt == "fixscript":
        from ascend_doctor.knowledge.door import Knowledge

        return render(report, knowledge if knowledge is not None else Knowledge())
    return render(report, checks) if fmt == "sarif" else render(report)


def write_output(dest: str, text: str, what: str = "report", stream: Optional[TextIO] = None) -> None:
    """Write `text` to `dest` (`-`: `stream`, default stdout) — atomically for a file; InputError when it cannot."""
    if dest == "-":
        out = stream or sys.stdout
        out.write(printable(text))
        out.flush()
        return
    from ascend_doctor.seam.atomicfile import write_atomic

    try:
        write_atomic(dest, text)
    except OSError as exc:
        raise InputError(T("cannot write {what} to {dest}: {strerror}", what=what, dest=dest,
                           strerror=exc.strerror or exc)) from None


def console_text(render: Callable[..., Any], obj, **kwargs) -> str:
    """What a console renderer prints for `obj`, as text (for a file): rendered into a buffer, no colour."""
    import io

    buf = io.StringIO()
    render(obj, file=buf, **kwargs)
    return buf.getvalue()


def default_console(report, file=None, verbose: bool = False, **kwargs) -> None:
    importlib.import_module("ascend_doctor.render.console").render_console(report, file=file, verbose=verbose,
                                                                           **kwargs)


def emit(report, outputs: Outputs, console: Optional[Callable] = None, stream: Optional[TextIO] = None,
         console_kwargs: Optional[dict] = None) -> None:
    """Write the cleaned report to every target of `outputs`, and the console view to `stream` (default stdout).

    `console`: the console view, `fn(report, file=None, verbose=False, quiet=False)` (default: the per-family view;
    `fleet` passes its node-by-check table).
    """
    from ascend_doctor.i18n import current

    report = clean_report(report).model_copy(update={"lang": current()})
    view = console or default_console
    out = stream or sys.stdout
    kwargs = {"verbose": outputs.verbose, "quiet": outputs.quiet, **(console_kwargs or {})}
    for kind, dest in outputs.targets:
        if kind == "console":
            write_output(dest, console_text(view, report, verbose=outputs.verbose), stream=out)
        else:
            write_output(dest, render_text(report, kind, outputs.checks, outputs.knowledge), stream=out)
    if outputs.console_on_stream and not any(k == "console" and d == "-" for k, d in outputs.targets):
        view(report, file=out, **kwargs)
