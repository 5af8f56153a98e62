"""Pure parsers: vendor text -> typed facts (pydantic). Each raises only `ascend_doctor.errors.ParseError`.

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
    """Register `fn(text) -> BaseModel` as `ascend-doctor parse <name>`; `expects` says what input it wants."""

    def deco(func):
        KINDS[name] = (func, expects)
        return func

    return deco


def parser_kinds() -> dict[str, tuple[Callable[[str], BaseModel], str]]:
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    return KINDS


def clean_paste(text: str) -> str:
    """Undo common paste artefacts: CRLF, tabs, `cat -n` line numbers, and shell prompt lines.

    Only strips `cat -n` numbering when every non-empty line carries it, so a table is never mangled.
    """
    import re

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    numbered = re.compile(r"^\s*\d+\t")
    nonempty = [ln for ln in lines if ln.strip()]
    if nonempty and all(numbered.match(ln) for ln in nonempty):
        lines = [numbered.sub("", ln, count=1) for ln in lines]
    lines = [ln.replace("\t", "    ") for ln in lines]
    prompt = re.compile(r"^\s*(\[[^\]]*\]\s*)?([\w.@:/~-]*[#$>])\s+\S")
    return "\n".join(ln for ln in lines if not prompt.match(ln))
