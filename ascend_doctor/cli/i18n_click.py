"""The command line in the chosen language: click's own strings (Usage, Options, its usage errors), our help texts,
and wrapping by terminal cells so Chinese help stays inside its width.

Click marks its strings with `gettext` (`from gettext import gettext as _` in each module) and leaves installing a
catalogue to the application; the stdlib's global gettext picks the language from the environment only, so it cannot
follow `--lang`. `install()` therefore points the `_`/`ngettext` names of click's modules at our catalogue, looked up
per call in the current language (i18n.current()). If a click release stops using those names, its strings simply
stay English (tests/core/test_i18n.py checks a Chinese usage error and help page).

Help texts are msgids in the same catalogue: a command's docstring as `inspect.cleandoc` leaves it (up to `\\f`),
each option's `help`, each epilog, translated when the help page is written (DoctorFormatter), never at import.
"""

from __future__ import annotations

import inspect
import re
from typing import Optional, Sequence

import click

from ascend_doctor import i18n

_CLICK_MODULES = ("core", "decorators", "exceptions", "formatting", "parser", "types", "termui", "utils")
_EXTRA = re.compile(r"^(?P<help>.*?)(?P<extra>(?<!\s)\s+\[[^\[\]]*\])?$", re.S)


def _gettext(message: str) -> str:
    return i18n.catalogue(i18n.current()).gettext(message)


def _ngettext(singular: str, plural: str, n: int) -> str:
    return i18n.catalogue(i18n.current()).ngettext(singular, plural, n)


def install() -> None:
    """Route click's own strings through our catalogue (idempotent)."""
    import importlib

    for name in _CLICK_MODULES:
        try:
            mod = importlib.import_module(f"click.{name}")
        except ImportError:
            continue
        if hasattr(mod, "_"):
            mod._ = _gettext  # type: ignore[attr-defined]
        if hasattr(mod, "ngettext"):
            mod.ngettext = _ngettext  # type: ignore[attr-defined]


def lang_from_argv(argv: Sequence[str]) -> Optional[str]:
    """`--lang X` / `--lang=X` anywhere before `--`: known before click parses, so its usage errors and `--help`
    (which stop parsing before our option's callback) already speak that language."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
    return None


def help_text(text: Optional[str]) -> str:
    """A help text (docstring or option help) in the current language; the msgid is its cleaned English form."""
    if not text:
        return text or ""
    return i18n.tr(inspect.cleandoc(text))


def _first_sentence(cmd: click.Command) -> str:
    text = inspect.cleandoc(cmd.short_help or cmd.help or "").partition("\f")[0]
    return re.split(r"(?<=[.?!])\s", text.strip(), maxsplit=1)[0].strip()


def short_help(cmd: click.Command) -> str:
    """The first sentence of a command's help, translated (a msgid of its own, so it is never cut mid-word)."""
    return i18n.tr(_first_sentence(cmd))


def help_msgids(group: click.Group) -> dict[str, str]:
    """Every help text of the command tree rooted at `group` that a help page shows: {msgid: where}."""
    out: dict[str, str] = {}
    ctx = click.Context(group)

    def visit(cmd: click.Command, path: str) -> None:
        if cmd.help:
            out.setdefault(inspect.cleandoc(cmd.help).partition("\f")[0], path)
            out.setdefault(_first_sentence(cmd), f"{path} (short)")
        if cmd.epilog:
            out.setdefault(inspect.cleandoc(cmd.epilog), f"{path} epilog")
        for p in cmd.params:
            if isinstance(p, click.Option) and p.help:
                out.setdefault(inspect.cleandoc(p.help), f"{path} {p.opts[-1]}")
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    visit(sub, f"{path} {name}")

    visit(group, "ascend-doctor")
    return out


_TABLE_ROW = re.compile(r"^\s*\S{1,6}\s{2,}")  # `  2    usage or input error …`: a term, then its description


def _joined_rows(lines: list[str]) -> list[str]:
    """The lines of a `\\b` block with a table row's continuation lines (indented under its description) joined to
    it, so the row is wrapped as one."""
    out: list[str] = []
    hang = None
    for line in lines:
        lead = len(line) - len(line.lstrip())
        if hang is not None and line.strip() and lead >= hang and not _TABLE_ROW.match(line[hang:] or " "):
            out[-1] = out[-1].rstrip() + " " + line.strip()
            continue
        row = _TABLE_ROW.match(line)
        hang = len(row.group(0)) if row else None
        out.append(line)
    return out


class DoctorFormatter(click.HelpFormatter):
    """click's HelpFormatter that translates what it is given and wraps by cells (CJK takes two columns)."""

    def write_heading(self, heading: str) -> None:
        from ascend_doctor.render.wrap import has_wide

        if has_wide(heading):  # a Chinese heading takes the full-width colon
            self.write(f"{'':>{self.current_indent}}{heading}：\n")
        else:
            super().write_heading(heading)

    def write_text(self, text: str) -> None:
        translated = help_text(text)
        from ascend_doctor.render.wrap import has_wide

        if not has_wide(translated) and "\b" not in translated:
            return super().write_text(translated)
        from ascend_doctor.render.wrap import wrap

        indent = " " * self.current_indent
        width = max(self.width - self.current_indent, 11)
        for para in translated.split("\n\n"):
            lines = para.splitlines()
            if lines and lines[0].strip() == "\b":  # click's "do not rewrap" marker: the lines as written...
                for line in _joined_rows(lines[1:]):
                    # ...but none wider than the terminal (#40 item 16: the exit-code table ran to 103 columns):
                    # a table row hangs under its description, a sentence under its own indent.
                    row = _TABLE_ROW.match(line)
                    head = row.group(0) if row else line[:len(line) - len(line.lstrip())]
                    for part in wrap(line[len(head):].strip(), width, head, " " * len(head)) or [""]:
                        self.write(f"{indent}{part}\n")
            else:
                for line in wrap(" ".join(x.strip() for x in lines), width) or [""]:
                    self.write(f"{indent}{line}\n")
            self.write("\n")
        if translated.strip():
            self.buffer.pop()  # no blank line after the last paragraph, as click's own write_text

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        out = []
        for term, desc in rows:
            m = _EXTRA.match(desc or "")
            head, extra = (m.group("help"), m.group("extra") or "") if m else (desc, "")
            out.append((term, (help_text(head) if head else head) + extra))
        from ascend_doctor.render.wrap import has_wide

        if not any(has_wide(d) for _, d in out):
            return super().write_dl(out, col_max, col_spacing)
        from rich.cells import cell_len

        from ascend_doctor.render.wrap import wrap

        first_col = min(max((cell_len(t) for t, _ in out), default=0), col_max) + col_spacing
        for term, desc in out:
            self.write(f"{'':>{self.current_indent}}{term}")
            if not desc:
                self.write("\n")
                continue
            pad = first_col - cell_len(term)
            if pad <= 0:  # a long term: the text starts on the next line
                self.write("\n" + " " * (first_col + self.current_indent))
            else:
                self.write(" " * pad)
            width = max(self.width - first_col - self.current_indent, 10)
            lines = wrap(desc, width) or [""]
            self.write(lines[0] + "\n")
            for line in lines[1:]:
                self.write(" " * (first_col + self.current_indent) + line + "\n")


class DoctorContext(click.Context):
    formatter_class = DoctorFormatter


class _Doctor:
    """Help in the chosen language, and `--lang` on every command and group."""

    context_class = DoctorContext

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        if not any(p.name == "lang" for p in self.params):  # type: ignore[attr-defined]
            from ascend_doctor.cli.options import lang_option

            lang_option()(self)  # click.option applied to a Command appends it to its params

    def get_short_help_str(self, limit: int = 45) -> str:
        return short_help(self)  # type: ignore[arg-type]


class DoctorCommand(_Doctor, click.Command):
    """Every ascend-doctor command."""


class DoctorSubGroup(_Doctor, click.Group):
    """A command group below the root (`matrix`); its commands are DoctorCommands."""

    command_class = DoctorCommand
