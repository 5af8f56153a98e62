"""Matrix rows as TOML text, in the shipped files' layout (one `key = value` per line, sources one per line).

The rows `matrix sync` proposes hold only strings, booleans, dates, lists of strings and tables of strings, so a
writer is a few lines: strings are written as TOML basic strings, whose escapes are JSON's (`json.dumps` with
`ensure_ascii` gives only \\" \\\\ \\n \\t \\uXXXX, all valid TOML). Every emitted row is read back with the TOML
reader before it is printed (`emit_rows` raises on anything that does not round-trip), so what a maintainer pastes
is what the loader reads.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any, Dict, Iterable, List

from ascend_doctor.knowledge.tomlread import loads_toml

WRAP = 116


def _str(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)


def _value(value: Any, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _str(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v, k)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, (list, tuple)):
        items = [_value(v, key) for v in value]
        one_line = "[" + ", ".join(items) + "]"
        if key != "source" and len(key) + 3 + len(one_line) <= WRAP:
            return one_line
        lines, line = [], "  "
        for item in items:
            if len(line) + len(item) + 2 > WRAP and line.strip():
                lines.append(line.rstrip())
                line = "  "
            line += item + ", "
            if key == "source":  # one source per line, as the shipped files have them
                lines.append(line.rstrip())
                line = "  "
        if line.strip():
            lines.append(line.rstrip())
        return "[\n" + "\n".join(lines) + "\n]"
    raise TypeError(f"{key}: cannot write {type(value).__name__} to TOML")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else _str(key)


def _sub_table(value: Any) -> bool:
    """A table of lists (`names = {kind: [...]}`) is written as its own `[row.key]` section, one list per line."""
    return isinstance(value, dict) and bool(value) and all(isinstance(v, list) for v in value.values())


def emit_row(table: str, row: Dict[str, Any], comments: Iterable[str] = ()) -> str:
    lines: List[str] = [f"# {c}" for c in comments]
    lines.append(f"[[{table}]]")
    subs = []
    for k, v in row.items():
        if v is None or v == [] or v == {} or v == "":
            continue
        if _sub_table(v):
            subs.append((k, v))
            continue
        lines.append(f"{_key(k)} = {_value(v, k)}")
    for k, v in subs:
        lines.append(f"[{table}.{_key(k)}]")
        lines += [f"{_key(kk)} = {_value(vv, kk)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


def emit_rows(table: str, rows: List[Dict[str, Any]], comments: List[List[str]] | None = None) -> str:
    """Rows of one table; raises ValueError when the text would not read back as the same rows."""
    parts = [emit_row(table, r, (comments or [[]] * len(rows))[i]) for i, r in enumerate(rows)]
    text = "\n".join(parts)
    back = loads_toml(text, "proposed rows").get(table, [])
    want = [{k: v for k, v in r.items() if not (v is None or v == [] or v == {} or v == "")} for r in rows]
    if back != want:
        raise ValueError(f"{table}: emitted TOML does not read back as the rows it was made from")
    return text
