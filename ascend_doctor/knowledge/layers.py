"""Layering a user's file over a shipped table (the rule of ascend_doctor/knowledge/tables.py), with errors that name
the file and the row the way that file numbers it."""

from __future__ import annotations

import os
from typing import Any, Optional

from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T
from ascend_doctor.knowledge.tables import Table
from ascend_doctor.text.versions import try_parse_version

# (file, index of the row in that file) for each row of a merged row array
Origins = dict[str, list[tuple[str, int]]]


def row_key(t: Table, value: Any) -> Any:
    """What makes two rows one row: the id as text, or as a version for version-keyed tables."""
    if t.version_ids:
        v = try_parse_version(str(value))
        if v is not None:
            return ("v", v.main_key)
    return ("s", str(value))


def _absolute(t: Table, array: str, row: dict, path: str) -> dict:
    fields = t.paths.get(array, ())
    if not fields:
        return row
    base = os.path.dirname(os.path.abspath(path))
    return {k: (os.path.join(base, v) if k in fields and isinstance(v, str) and not os.path.isabs(v) else v)
            for k, v in row.items()}


def _merge_dicts(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge_dicts(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _unique(t: Table, array: str, rows: list, path: str) -> None:
    """Two rows with one id in one file: which one was meant is not for the doctor to guess."""
    seen: dict[Any, int] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or row.get(t.rows[array]) is None:
            continue
        k = row_key(t, row[t.rows[array]])
        if k in seen:
            raise InputError(T("{what} {path}: {key}[{i}] ({id}).{field}: duplicate id (also {key}[{seen}])",
                               what=t.what, path=path, key=array, i=i, id=row[t.rows[array]], field=t.rows[array],
                               seen=seen[k]))
        seen[k] = i


def start(t: Table, data: dict, path: str) -> tuple[dict, Origins]:
    """The shipped file's data, row paths made absolute, each row's origin recorded."""
    out = dict(data)
    origins: Origins = {}
    for array in t.rows:
        rows = data.get(array)
        if isinstance(rows, list):
            _unique(t, array, rows, path)
            out[array] = [_absolute(t, array, r, path) if isinstance(r, dict) else r for r in rows]
            origins[array] = [(path, i) for i in range(len(rows))]
    return out, origins


def layer(t: Table, base: dict, origins: Origins, top: dict, path: str) -> tuple[dict, Origins, list[str]]:
    """`top` (a layer file's data, its `table` key removed) over `base`: (merged data, origins, what each row did —
    "added"/"replaced" lines for `matrix validate`)."""
    out = dict(base)
    origins = {k: list(v) for k, v in origins.items()}
    said: list[str] = []
    for key, value in top.items():
        if key in t.rows:
            id_field = t.rows[key]
            if not isinstance(value, list):
                raise InputError(T("{what} {path}: {key}: must be a list", what=t.what, path=path, key=key))
            _unique(t, key, value, path)
            rows = list(out.get(key) or [])
            where = list(origins.get(key) or [(path, i) for i in range(len(rows))])
            index = {row_key(t, r.get(id_field)): i for i, r in enumerate(rows) if isinstance(r, dict)}
            for j, row in enumerate(value):
                if not isinstance(row, dict) or row.get(id_field) is None:
                    raise InputError(T("{what} {path}: {key}[{j}].{field}: required key missing", what=t.what,
                                       path=path, key=key, j=j, field=id_field))
                row = _absolute(t, key, row, path)
                k = row_key(t, row[id_field])
                if k in index:
                    rows[index[k]] = row
                    where[index[k]] = (path, j)
                    said.append(T("{key} {id}: replaces the shipped row", key=key, id=row[id_field]))
                else:
                    index[k] = len(rows)
                    rows.append(row)
                    where.append((path, j))
                    said.append(T("{key} {id}: added", key=key, id=row[id_field]))
            out[key] = rows
            origins[key] = where
        else:
            out[key] = _merge_dicts(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) \
                else value
            said.append(T("{key}: set", key=key))
    return out, origins, said


def locate(t: Table, exc: Exception, data: dict, origins: Origins, fallback: str) -> str:
    """`<what> <file>: <array>[<row in that file>] (<id>).<field>: <message>` for a merged table that failed its
    schema: the file is the one that brought the faulty row (`fallback` for a key outside the rows)."""
    from ascend_doctor.knowledge.tomlread import located

    err = exc.errors()[0]  # type: ignore[attr-defined]
    loc = list(err["loc"])
    text = located(exc, data, t.rows)
    path: Optional[str] = None
    if len(loc) >= 2 and loc[0] in origins and isinstance(loc[1], int) and loc[1] < len(origins[loc[0]]):
        path, j = origins[loc[0]][loc[1]]
        text = text.replace(f"{loc[0]}[{loc[1]}]", f"{loc[0]}[{j}]", 1)
    return T("{what} {path}: {where}", what=t.what, path=path or fallback, where=text)
