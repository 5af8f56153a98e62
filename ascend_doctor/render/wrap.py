"""Wrapping by terminal cells, not characters: a CJK character takes two columns and may break anywhere (Chinese
has no spaces), so `textwrap` both miscounts it and cannot break it. ASCII text keeps textwrap's exact behaviour."""

from __future__ import annotations

import re
import textwrap

from rich.cells import cell_len

_WIDE = re.compile(r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]")
_TOKENS = re.compile(r"\s+|[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60"
                     r"\uffe0-\uffe6]|[^\s\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f"
                     r"\uff00-\uff60\uffe0-\uffe6]+")
# Never start a line with closing punctuation: it stays with the character before it.
_NO_START = set("，。、；：！？）」』】》〉”’,.;:!?)]}")


def has_wide(text: str) -> bool:
    return bool(_WIDE.search(text))


def wrap(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    """Lines of at most `width` cells (a single word longer than that stays whole, as textwrap does)."""
    if not has_wide(text + initial_indent + subsequent_indent):
        return textwrap.wrap(text, width=width, initial_indent=initial_indent, subsequent_indent=subsequent_indent,
                             break_on_hyphens=False, break_long_words=False)
    lines: list[str] = []
    line, used = initial_indent, cell_len(initial_indent)
    start = True  # nothing but the indent on this line yet
    for tok in _TOKENS.findall(text.strip()):
        if tok.isspace():
            if not start:
                line, used = line + " ", used + 1
            continue
        w = cell_len(tok)
        if not start and used + w > width and tok not in _NO_START:
            lines.append(line.rstrip())
            line, used = subsequent_indent, cell_len(subsequent_indent)
        line, used, start = line + tok, used + w, False
    if not start:
        lines.append(line.rstrip())
    return lines
