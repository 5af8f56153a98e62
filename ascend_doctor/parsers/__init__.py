"""Pure parsers: vendor text -> typed facts (records). Each raises only `ascend_doctor.core.errors.ParseError`.

Modules register the kinds `ascend-doctor parse KIND FILE` understands with `@parser_kind("npu-smi-info")`.
Every module in this package is imported by `parser_kinds()`, so a new parser module needs no registration.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from pydantic import BaseModel

KINDS: dict[str, tuple[Callable[[str], BaseModel], str]] = {}


def parser_kind(name: str, expects: str):
    """Register `fn(text) -> Record` as `ascend-doctor parse <name>`; `expects` says what input it wants."""

    def deco(func):
        KINDS[name] = (func, expects)
        return func

    return deco


def parser_kinds() -> dict[str, tuple[Callable[[str], BaseModel], str]]:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    return KINDS


# Commands users paste with their prompt; a bare `# word` line is only a prompt when the word is one of these.
_PASTED_COMMANDS = ("npu-smi", "hccn_tool", "cat", "ls", "pip", "pip3", "python", "python3", "sudo", "docker",
                    "for", "echo", "grep", "vllm", "ll", "find", "export", "source", "cd")


def clean_paste(text: str) -> str:
    """Undo common paste artefacts: CRLF, tabs, `cat -n` line numbers, and shell prompt lines.

    `cat -n` numbering is stripped only when every non-empty line carries it (a tab after the number, or, where the
    tab became spaces, numbers that count 1, 2, 3, ...), so a table is never mangled. A prompt line is one with a
    `user@host`/`[user@host dir]`/`(venv)` prefix before `#`/`$`/`>`, or a bare `#`/`$` followed by a known command
    (`# npu-smi info`, `$npu-smi info`) — never a `# comment` such as version.cfg's `# version: 1.0`.
    """
    import re

    from ascend_doctor.text.numbers import int_or_none

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    with_host = re.compile(r"^\s*(\([^)]*\)\s*)?(\[[^\]]*\]|[\w.-]+@[\w.-]+(:[^\s#$>]*)?)\s*[#$>]\s*\S")
    bare = re.compile(r"^\s*(\([^)]*\)\s*)?[#$>]\s*(" + "|".join(re.escape(c) for c in _PASTED_COMMANDS) + r")(\s|$)")
    # Prompt lines first: `$ cat -n f` is typed, only the output after it carries the numbers.
    lines = [ln for ln in text.split("\n") if not (with_host.match(ln) or bare.match(ln))]
    nonempty = [ln for ln in lines if ln.strip()]
    tabbed = re.compile(r"^\s*\d+\t")
    spaced = re.compile(r"^\s*(\d+) +")
    if nonempty and all(tabbed.match(ln) for ln in nonempty):
        lines = [tabbed.sub("", ln, count=1) for ln in lines]
    elif nonempty and all(spaced.match(ln) for ln in nonempty):
        numbers = [int_or_none(spaced.match(ln).group(1)) for ln in nonempty]
        if numbers == list(range(1, len(numbers) + 1)) and len(numbers) > 1:
            lines = [spaced.sub("", ln, count=1) if ln.strip() else ln for ln in lines]
    return "\n".join(ln.replace("\t", "    ") for ln in lines)


def split_kv(line: str, sep: str = ":") -> "tuple[str, str] | None":
    """`  Key Name :  value  ` -> ("Key Name", "value"), split at the first `sep`, or None without one (or with an
    empty key). Plain string operations, not a regex: `^\\s*(.+?)\\s*:\\s*(.*?)\\s*$` is quadratic in a line of spaces,
    and vendor output is untrusted text (#23)."""
    key, found, value = line.partition(sep)
    key = key.strip()
    if not found or not key:
        return None
    return key, value.strip()
