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
# Never end a line with opening punctuation: it moves down with the text it opens.
_NO_END = set("（「『【《〈“‘")


def has_wide(text: str) -> bool:
    return bool(_WIDE.search(text))


def wrap(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    """Lines of at most `width` cells, broken only between words (and between CJK characters). A word longer than a
    line (a path, a URL, a `docker run -v` mount) is never broken: it gets a line of its own and overflows it, so a
    copied command still runs (#40 item 13: `-v /us` / `r/local/…` did not). Nothing is cut either way (#22)."""
    if not has_wide(text + initial_indent + subsequent_indent):
        return textwrap.wrap(text, width=width, initial_indent=initial_indent, subsequent_indent=subsequent_indent,
                             break_on_hyphens=False, break_long_words=False)
    lines: list[str] = []
    toks: list[str] = []  # the current line's tokens after its indent (spaces included)
    indent = initial_indent

    def cells(items: list[str]) -> int:
        return cell_len(indent) + sum(cell_len(t) for t in items)

    for tok in _TOKENS.findall(text.strip()):
        if tok.isspace():
            if toks:
                toks.append(" ")
            continue
        if toks and cells(toks + [tok]) > width:
            carry: list[str] = []
            if tok in _NO_START:
                # Closing punctuation may not start a line: the token before it moves down with it.
                while toks and toks[-1] == " ":
                    toks.pop()
                # (and any closing punctuation right before it: `）。` moves down with the character before both)
                while len([t for t in toks if t != " "]) > 1:
                    t = toks.pop()
                    if t == " ":
                        continue  # a space where the line breaks is not carried
                    carry.insert(0, t)
                    if t not in _NO_START:
                        break
            while toks and toks[-1] == " ":
                toks.pop()
            if toks and toks[-1] in _NO_END and len(toks) > 1:
                carry = [toks.pop()] + carry  # opening punctuation may not end one
            if toks:
                lines.append((indent + "".join(toks)).rstrip())
                indent, toks = subsequent_indent, carry
        toks.append(tok)
    if toks:
        lines.append((indent + "".join(toks)).rstrip())
    return lines
