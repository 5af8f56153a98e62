"""`matrix sync` for the `serve/names-vllm` and `serve/names-vllm-ascend` tables: the names a release accepts (KV
connectors, speculative methods, cudagraph modes, structured-outputs backends, environment variables), read from
its sdist, wheel or checkout by the same readers that read an installed package
(ascend_doctor.parsers.release_names), proposed as whole rows."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ascend_doctor.parsers.release_names import PACKAGE, read_release_names
from ascend_doctor.sync.archive import Tree
from ascend_doctor.text.versions import parse_version

TABLE_KEY = {"vllm": "names_vllm", "vllm-ascend": "names_vllm_ascend"}  # sync's table ids


def read_names(project: str, tree: Tree, source: str) -> Optional[Dict[str, Any]]:
    """The row for one release tree (version filled in by the caller), or None when no kind could be read."""
    pkg = PACKAGE[project]
    found = read_release_names(project, pkg, tree.read, tree.listdir, pkg)
    names = {k: f.names for k, f in found.items() if f.names is not None}
    if not any(names.values()):  # only empty lists (no patch modules in a tree that has nothing else): no release
        return None
    return {"source": source, "where": [f"{k}: {f.source}" for k, f in found.items() if f.names is not None],
            "names": names}


def names_proposals(project: str, table, extracted: Dict[str, Dict[str, Any]]) -> List[Any]:
    """One proposal per release read whose row the shipped table lacks or records otherwise."""
    from ascend_doctor.sync.diff import Proposal

    key = TABLE_KEY[project]
    have = {parse_version(r.version).main_key: r for r in (table.releases if table is not None else ())}
    out = []
    for version, row in sorted(extracted.items(), key=lambda kv: parse_version(kv[0])):
        row = {"version": version, **row}
        old = have.get(parse_version(version).main_key)
        if old is None:
            out.append(Proposal(table=key, id=version, change="new", row=row,
                                differences=[f"{project} {version} is not recorded ("
                                             + ", ".join(f"{len(v)} {k}" for k, v in row["names"].items()) + ")"]))
            continue
        diffs = _differences(old.names, row["names"])
        if diffs:
            out.append(Proposal(table=key, id=version, change="changed", row=row, differences=diffs))
    return out


def _differences(old: Dict[str, List[str]], new: Dict[str, List[str]]) -> List[str]:
    out: List[str] = []
    for kind in sorted(set(old) | set(new)):
        a, b = set(old.get(kind, ())), set(new.get(kind, ()))
        if a != b:
            out.append(f"{kind}: upstream adds {sorted(b - a)[:8]}, drops {sorted(a - b)[:8]}")
        elif (kind in old) != (kind in new):  # an empty list read is a fact ("none"), an absent one is "not read"
            out.append(f"{kind}: upstream {'defines' if kind in new else 'does not define'} the list (empty)")
    return out

