"""Text every output can carry: bytes that were not UTF-8 are shown escaped, never a crash of the writer.

Python hands us undecodable bytes as lone surrogates (`os.environ`, `sys.argv`, paths and — since the host seam decodes
with `surrogateescape` — command output and file contents: byte 0xff is U+DCFF). That is lossless in memory, but
`str.encode("utf-8")` refuses it, so one such byte used to make every writer raise and leave a 0-byte report.

Two renderings, both visible:
- text (console, JUnit, annotations, one-line errors): `\\xff` for an undecodable byte, `\\uXXXX` for any other lone
  surrogate — for people to read;
- JSON: the JSON escape `\\udcff` inside the string, which `json.loads` turns back into the same lone surrogate (and so
  `os.fsencode` into the same byte): lossless, for replay. Reports and snapshots also carry a note saying where.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
# What must never reach a terminal or a text file from input (#40 item 7): C0 controls but tab and newline (ESC opens
# clear-screen, window-title and OSC-8 hyperlink sequences; CR overwrites the line; BEL, BS, NUL), DEL, the C1 controls
# (0x9b is a one-byte CSI on some terminals), the bidirectional overrides and isolates that reorder what a reader sees
# ("Trojan Source", CVE-2021-42574) and lone surrogates (undecodable bytes).
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                          "\ud800-\udfff]")
# The same minus the C0 controls, which json.dumps already escapes: what a JSON document must escape too.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# XML 1.0 allows tab, LF, CR and U+0020 up; everything else (ANSI escapes from command output, NUL, surrogates) is
# written as a visible escape in JUnit text.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clipped(value: Any, limit: int = 64) -> str:
    """A value from input (a command, a paste) as a message quotes it: at most `limit` characters of it, so a
    10,000-character option value is not a 10,000-character finding."""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _text_escape(m: re.Match) -> str:
    cp = ord(m.group())
    if 0xDC80 <= cp <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\x{cp - 0xDC00:02x}"
    if cp < 0xA0:
        return f"\\x{cp:02x}"
    return f"\\u{cp:04x}"


def escape_text(text: str) -> str:
    """`text` with every lone surrogate written as `\\xNN` (the undecodable byte) or `\\uXXXX`."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(_text_escape, text)


def printable(text: str) -> str:
    """`text` as the doctor may print or write it: every control character but tab and newline, every bidi override
    and every lone surrogate written as a visible escape (`\\x1b`, `\\u202e`, `\\xff` for an undecodable byte).

    This is the one rule for text leaving the process: the terminal streams (`TerminalStream`, installed by the CLI),
    rich's consoles (`render.console.make_console`) and every file the doctor writes (`seam.atomicfile.write_atomic`)
    apply it, so a hostile model id, node name, paste or log line is shown, never obeyed by the terminal. The doctor's
    own text never needs anything it escapes."""
    if not _UNPRINTABLE.search(text):
        return text
    return _UNPRINTABLE.sub(_text_escape, text)


def unprintable(text: str) -> bool:
    """Whether `printable` would change `text`."""
    return _UNPRINTABLE.search(text) is not None


class TerminalStream:
    """A text stream that writes everything through `printable`: what `sys.stdout`/`sys.stderr` become for the run
    (`install_terminal_streams`). `raw` is the stream underneath, for rich, which writes its own colour codes and
    applies the same rule to the text it lays out (`render.console.make_console`)."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(printable(text))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def install_terminal_streams() -> None:
    """Wrap `sys.stdout` and `sys.stderr` in `TerminalStream` (once; idempotent)."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, TerminalStream):
            setattr(sys, name, TerminalStream(stream))


def raw_stream(stream):
    """The stream under a `TerminalStream` (rich writes its colour codes there), else `stream` itself."""
    return stream.raw if isinstance(stream, TerminalStream) else stream


def xml_text(text: str) -> str:
    """`text` with what XML 1.0 cannot hold written as visible escapes."""
    return _XML_ILLEGAL.sub(_text_escape, text)


def json_escape_surrogates(doc: str) -> str:
    """A JSON document (from `json.dumps(..., ensure_ascii=False)`) with lone surrogates, C1 controls and bidi
    overrides as `\\uXXXX` escapes (json.dumps escapes the C0 controls itself).

    These can only occur inside JSON strings, where `\\uXXXX` is a valid escape, so the result parses back to the
    very same strings: lossless for replay, inert when the file is printed with `cat`.
    """
    if not _JSON_UNSAFE.search(doc):
        return doc
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", doc)


def dump_json(data: Any, indent: int | None = 2) -> str:
    """`json.dumps` for output: non-ASCII kept readable, undecodable bytes as JSON escapes, never an encode error."""
    return json_escape_surrogates(json.dumps(data, indent=indent, ensure_ascii=False))


def restore_keys(json_data: Any, py_data: Any) -> Any:
    """`json_data` (a `model_dump(mode="json")`) with the mapping keys of `py_data` (the same model's python-mode
    dump) put back where they hold undecodable bytes: pydantic's JSON mode turns a key's `\\udcff` into three U+FFFD,
    losing the byte and the trace that there was one (#23: an env var name with a non-UTF-8 byte)."""
    if isinstance(json_data, dict) and isinstance(py_data, dict) and len(json_data) == len(py_data):
        return {(pk if isinstance(pk, str) and _SURROGATE.search(pk) else jk): restore_keys(jv, py_data[pk])
                for (jk, jv), pk in zip(json_data.items(), py_data)}
    if isinstance(json_data, list) and isinstance(py_data, (list, tuple)) and len(json_data) == len(py_data):
        return [restore_keys(j, p) for j, p in zip(json_data, py_data)]
    return json_data


def undecodable_paths(data: Any, prefix: str = "", limit: int = 20) -> list[str]:
    """Where in a JSON-like tree a key or string holds undecodable bytes (`env.X`, `files./m\\xfe.content`), at most
    `limit` places."""
    out: list[str] = []

    def walk(node: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(node, str):
            if _SURROGATE.search(node):
                out.append(where or "(top)")
        elif isinstance(node, dict):
            for k, v in node.items():
                key = escape_text(str(k))
                here = f"{where}.{key}" if where else key
                if isinstance(k, str) and _SURROGATE.search(k) and len(out) < limit:
                    out.append(here + " (key)")
                walk(v, here)
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    walk(data, prefix)
    return out


def undecodable_note(places: list[str]) -> str:
    """The run note that says where undecodable bytes were seen and how they are shown."""
    more = "" if len(places) < 20 else " (and more)"
    return (f"bytes that are not valid UTF-8 were seen in {', '.join(places)}{more}: shown as \\xNN in text and as "
            f"\\udcNN escapes in JSON (Python's surrogateescape: json.loads + os.fsencode give the original bytes "
            "back)")
