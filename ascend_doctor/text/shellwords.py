"""A command line split into words as a POSIX shell does (quotes, backslashes), in linear time.

`shlex.split` builds each word a character at a time and took 7 s on one 1 MB word of a pasted `vllm serve` line
(#40 item 8: 12.6–127.8 s for 1–2 MB); a paste is untrusted input of any size. Same rules as `shlex.split` in POSIX
mode — single quotes literal, double quotes with `\\"` and `\\\\` escapes, a backslash outside quotes escaping the next
character — and the same errors for an unclosed quote or a trailing backslash.
"""

from __future__ import annotations

import re

# One word: runs of plain characters, quoted strings, escaped characters and `$((…))` / `$(…)` substitutions (one word
# to the shell, blanks inside and all: `--max-num-seqs $((N * 16))`) with no blank between them.
_SUBST = r"""\$\(\([^()]*\)\)|\$\([^()]*\)"""
_PLAIN = r"""[^\s'"\\$]+|\$"""
_WORD = re.compile(rf"""(?:{_SUBST}|{_PLAIN}|'[^']*'|"(?:[^"\\]|\\.)*"|\\.|\\$)+""", re.S)
_PIECE = re.compile(rf"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|\\$|({_SUBST}|{_PLAIN})""", re.S)
_DQ_ESCAPE = re.compile(r"""\\([\\"])""")


def split(text: str) -> list[str]:
    """The words of `text`; ValueError("No closing quotation") when a quote is left open, as shlex.split."""
    words: list[str] = []
    pos = 0
    for m in _WORD.finditer(text):
        if text[pos:m.start()].strip():  # something no word pattern took: an unclosed quote
            raise ValueError("No closing quotation")
        out = []
        for p in _PIECE.finditer(m.group(0)):
            single, double, escaped, plain = p.groups()
            if single is not None:
                out.append(single)
            elif double is not None:
                out.append(_DQ_ESCAPE.sub(r"\1", double))
            elif escaped is not None:
                out.append(escaped)
            elif plain is not None:
                out.append(plain)
            else:  # a backslash at the very end
                raise ValueError("No escaped character")
        words.append("".join(out))
        pos = m.end()
    if text[pos:].strip():
        raise ValueError("No closing quotation")
    return words


def _walk(text: str, quote: str = "", stop=None, until_closed: bool = False) -> tuple[str, int]:
    """One pass of the shell's quoting rules over `text`, starting inside `quote` — nothing escapes inside '…', a
    backslash escapes the next character elsewhere: (the quote still open at the end, the index of the first
    character outside quotes that `stop(character, the one before)` accepts, or -1). `until_closed`: the index is
    that of the character closing the quote `text` starts inside. Linear."""
    escaped = False
    prev = " "
    for k, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = ""
                if until_closed:
                    return quote, k
        elif ch in "'\"":
            quote = ch
        elif stop is not None and stop(ch, prev):
            return quote, k
        prev = ch
    return quote, -1


def closing_quote(text: str, quote: str) -> int:
    """The index of the character that closes `quote` in `text` (which starts inside it), -1 when it stays open:
    where a string handed to `bash -c '…'` ends."""
    return _walk(text, quote, until_closed=True)[1]


def open_quote(text: str, quote: str = "") -> str:
    """The quote (' or ") still open at the end of `text`, starting inside `quote`; "" when none."""
    return _walk(text, quote)[0]


def strip_comment(line: str, quote: str = "") -> str:
    """`line` without its shell comment: from a `#` that starts a word (at the line's start or after a blank),
    outside quotes, to the end of the line — as a shell reads `--tp 8 \\  # eight cards`. `quote`: a quote already
    open at the line's start (a value spread over lines)."""
    k = _walk(line, quote, lambda ch, prev: ch == "#" and prev.isspace())[1]
    return line[:k] if k >= 0 else line
