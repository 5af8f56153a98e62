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
# XML 1.0 allows tab, LF, CR and U+0020 up; everything else (ANSI escapes from command output, NUL, surrogates) is
# written as a visible escape in JUnit text.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text_escape(m: re.Match) -> str:
    cp = ord(m.group())
    if 0xDC80 <= cp <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\x{cp - 0xDC00:02x}"
    if cp < 0x20:
        return f"\\x{cp:02x}"
    return f"\\u{cp:04x}"


def escape_text(text: str) -> str:
    """`text` with every lone surrogate written as `\\xNN` (the undecodable byte) or `\\uXXXX`."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(_text_escape, text)


def xml_text(text: str) -> str:
    """`text` with what XML 1.0 cannot hold written as visible escapes."""
    return _XML_ILLEGAL.sub(_text_escape, text)


def json_escape_surrogates(doc: str) -> str:
    """A JSON document (from `json.dumps(..., ensure_ascii=False)`) with lone surrogates as `\\uXXXX` escapes.

    Lone surrogates can only occur inside JSON strings, where `\\uXXXX` is a valid escape, so the result parses back
    to the very same strings.
    """
    if not _SURROGATE.search(doc):
        return doc
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", doc)


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
