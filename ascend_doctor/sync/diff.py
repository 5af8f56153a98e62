"""What upstream says against what the matrix says, as proposed rows.

Every proposal is a whole row, ready to paste into the matrix files, with the differences that motivated it and the
files they were read from. Nothing here decides which of two disagreeing upstream documents is right: where a
release's own files and the official table differ, the row carries both values and a `conflict` note, as the shipped
rows do. A field the sources read do not give (a new release's hardware list) is copied from the newest shipped row
and the proposal says so, for the maintainer to confirm.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Dict, Iterable, List, Literal, Optional, Tuple

from ascend_doctor.core.model import Model
from ascend_doctor.knowledge.matrix import Matrix
from ascend_doctor.knowledge.matrix_schema import CONFLICT_FIELDS
from ascend_doctor.sync.ascend import AscendOwn, AscendTable, TableRow, merge_tables
from ascend_doctor.sync.hf import TransformersRelease
from ascend_doctor.sync.metadata import PypiProject
from ascend_doctor.sync.vllm import VllmRelease
from ascend_doctor.text.versions import parse_version, try_parse_version

PARSER_FIELDS = ("tool_parser", "reasoning_parser", "tokenizer_mode")


class Proposal(Model):
    table: str
    id: str
    change: Literal["new", "changed"]
    differences: List[str] = []
    row: Dict[str, Any]


def merge_release_rows(per_release: Dict[str, Tuple[List[Dict], str]], cite) -> Dict[str, Dict]:
    """id -> row over several releases (version -> (its rows, its source label)) for the tables whose rows carry the
    `releases` they hold in: every release read that has the row, and `cite(source label, row)` of the newest one as
    its `source` (the row's own `where` is dropped)."""
    out: Dict[str, Dict] = {}
    for version in sorted(per_release, key=parse_version):
        rows, source = per_release[version]
        for r in rows:
            row = out.setdefault(r["id"], {k: v for k, v in r.items() if k != "where"} | {"releases": []})
            row["releases"].append(version)
            row["source"] = cite(source, r)
    return out


def release_row_proposals(table: str, recorded: Iterable[Any], extracted: Dict[str, Dict], new_words,
                          more_words) -> List["Proposal"]:
    """Proposals for a table whose rows carry the `releases` they hold in (signatures/release-refusals,
    serve/kv-pool-env): a row the table does not record ("new", `new_words(row)` says what), and a recorded one that
    a release read also holds (the row with those releases added, `more_words(releases)`; a row is never shrunk by
    a partial read)."""
    rows = {r.id: r for r in recorded}
    out = []
    for rid, fields in extracted.items():
        have = rows.get(rid)
        if have is None:
            out.append(Proposal(table=table, id=rid, change="new", row=fields, differences=[new_words(fields)]))
            continue
        more = [v for v in fields["releases"] if v not in have.releases]
        if more:
            row = {**have.model_dump(), "releases": sorted(set(have.releases) | set(more), key=parse_version)}
            out.append(Proposal(table=table, id=rid, change="changed", row=row, differences=[more_words(more)]))
    return out


def _same_version(a: Optional[str], b: Optional[str]) -> bool:
    if a is None or b is None:
        return a is b
    va, vb = try_parse_version(a), try_parse_version(b)
    if va is None or vb is None:
        return a.strip().lower() == b.strip().lower()
    return va == vb or va.main_key == vb.main_key


def _in(value: str, values: Iterable[str]) -> bool:
    return any(_same_version(value, v) for v in values)


def _spec_norm(spec: Optional[str]) -> str:
    return ",".join(sorted((spec or "").replace(" ", "").split(","))) if spec else ""


def _row_dict(row: Model) -> Dict[str, Any]:
    return row.model_dump(mode="python", exclude_defaults=False)


def _ordered(row: Dict[str, Any], first: Tuple[str, ...]) -> Dict[str, Any]:
    out = {k: row[k] for k in first if k in row}
    out.update({k: v for k, v in row.items() if k not in out and k not in ("source", "note")})
    for k in ("note", "source"):
        if k in row:
            out[k] = row[k]
    return out


# vLLM parser names ---------------------------------------------------------------------------------------------
def parser_proposals(matrix: Matrix, releases: List[VllmRelease]) -> List[Proposal]:
    out: List[Proposal] = []
    shipped = {str(parse_version(r.vllm).main_key): r for r in matrix.parsers}
    for rel in sorted(releases, key=lambda r: parse_version(r.version)):
        row = {"vllm": rel.version}
        sources = []
        for kind in PARSER_FIELDS:
            names = rel.names.get(kind)
            if names is not None:
                row[kind] = names
                sources.append(rel.source(kind))
        if len(row) == 1:
            continue
        if rel.torch:
            row["torch"] = rel.torch
            sources.append(f"pypi:{rel.archive}:PKG-INFO (Requires-Dist torch)")
        row["source"] = sorted(set(sources))
        have = shipped.get(str(parse_version(rel.version).main_key))
        if have is None:
            out.append(Proposal(table="vllm_parsers", id=rel.version, change="new", row=row,
                                differences=[f"vLLM {rel.version} is not recorded"]))
            continue
        diffs = []
        for kind in PARSER_FIELDS:
            if kind not in row:
                continue
            old = getattr(have, kind)
            if old is None:
                diffs.append(f"{kind}: not recorded, upstream has {len(row[kind])} names")
            elif kind in have.partial or set(old) != set(row[kind]):
                added, removed = sorted(set(row[kind]) - set(old)), sorted(set(old) - set(row[kind]))
                what = "partial list" if kind in have.partial else "list"
                lacks = f", upstream lacks {removed}" if removed else ""
                diffs.append(f"{kind}: recorded {what} lacks {added}{lacks}")
        if rel.torch and not _same_version(rel.torch, have.torch):
            diffs.append(f"torch: recorded {have.torch}, its Requires-Dist pins {rel.torch}")
        if diffs:
            merged = {k: v for k, v in _row_dict(have).items() if k not in ("partial", "absent")}
            merged.update(row)
            merged["partial"] = [k for k in have.partial if k not in row]
            out.append(Proposal(table="vllm_parsers", id=rel.version, change="changed", differences=diffs,
                                row=_ordered(merged, ("vllm",) + PARSER_FIELDS)))
    return out


# model-name chains ------------------------------------------------------------------------------------------
def _chain_rows(table: str, field: str, kinds: Tuple[str, ...], full: Dict[str, Dict[str, set]],
                sources: Dict[str, List[str]]) -> List[Dict[str, Any]]:
    rows, prev, prev_v = [], None, None
    for v in sorted(full, key=parse_version):
        row: Dict[str, Any] = {field: v}
        if prev is None:
            for k in kinds:
                row[k] = sorted(full[v][k])
        else:
            row["after"] = prev_v
            for k in kinds:
                row[k] = sorted(full[v][k] - prev[k])
                row["removed_" + k] = sorted(prev[k] - full[v][k])
        row["source"] = sources[v]
        rows.append(row)
        prev, prev_v = full[v], v
    return rows


def _chain_proposals(table: str, field: str, kinds: Tuple[str, ...], shipped_rows: list,
                     resolve, extracted: Dict[str, Tuple[Dict[str, set], List[str]]]) -> List[Proposal]:
    full: Dict[str, Dict[str, set]] = {}
    sources: Dict[str, List[str]] = {}
    for r in shipped_rows:
        v = getattr(r, field)
        full[v] = {k: set(resolve(v, k) or ()) for k in kinds}
        sources[v] = list(r.source)
    by_key = {str(parse_version(v).main_key): v for v in full}
    changed_sets = set()
    for v, (sets, src) in extracted.items():
        key = str(parse_version(v).main_key)
        old = by_key.get(key)
        if old is not None and all(full[old][k] == sets[k] for k in kinds):
            continue
        if old is not None:
            del full[old]
            del sources[old]
        full[v], sources[v] = sets, src
        by_key[key] = v
        changed_sets.add(v)
    proposed = _chain_rows(table, field, kinds, full, sources)
    have = {str(parse_version(getattr(r, field)).main_key): r for r in shipped_rows}
    out = []
    for row in proposed:
        v = row[field]
        old = have.get(str(parse_version(v).main_key))
        clean = {k: x for k, x in row.items() if x not in (None, [], "")}
        if old is None:
            n = sum(len(row.get(k, [])) for k in kinds)
            out.append(Proposal(table=table, id=v, change="new", row=row,
                                differences=[f"{field} {v} is not recorded ({n} names "
                                             f"{'listed' if 'after' not in row else 'added'})"]))
            continue
        old_clean = {k: x for k, x in old.model_dump(mode="python").items() if x not in (None, [], "", {})}
        old_clean.pop("note", None)
        clean_cmp = dict(clean)
        if {k: sorted(x) if isinstance(x, list) else x for k, x in old_clean.items()} != \
                {k: sorted(x) if isinstance(x, list) else x for k, x in clean_cmp.items()}:
            diffs = []
            if v in changed_sets:
                for k in kinds:
                    a, b = full[v][k], set(resolve(getattr(old, field), k) or ())
                    if a != b:
                        diffs.append(f"{k}: upstream adds {sorted(a - b)[:8]}, drops {sorted(b - a)[:8]}")
            if old.after != row.get("after"):
                diffs.append(f"after: {old.after} -> {row.get('after')} (a release was recorded before it)")
            out.append(Proposal(table=table, id=v, change="changed", row=row,
                                differences=diffs or ["the delta against the previous recorded release changes"]))
    return out


def model_proposals(matrix: Matrix, releases: List[VllmRelease]) -> List[Proposal]:
    extracted = {}
    for rel in releases:
        if rel.names.get("architectures") is None or rel.names.get("model_types") is None:
            continue
        extracted[rel.version] = ({"architectures": set(rel.names["architectures"]),
                                   "model_types": set(rel.names["model_types"])},
                                  sorted({rel.source("architectures"), rel.source("model_types")}))
    if not extracted:
        return []

    def resolve(v, k):
        return matrix.vllm_architectures(v) if k == "architectures" else matrix.vllm_model_types(v)
    return _chain_proposals("vllm_models", "vllm", ("architectures", "model_types"), matrix.vllm_models, resolve,
                            extracted)


def option_proposals(matrix: Matrix, releases: List[VllmRelease]) -> List[Proposal]:
    extracted = {rel.version: ({"serve_options": set(rel.names["serve_options"])}, [rel.source("serve_options")])
                 for rel in releases if rel.names.get("serve_options") is not None}
    if not extracted:
        return []
    return _chain_proposals("vllm_options", "vllm", ("serve_options",), matrix.vllm_options,
                            lambda v, k: matrix.vllm_serve_options(v), extracted)


def transformers_proposals(matrix: Matrix, releases: List[TransformersRelease]) -> List[Proposal]:
    extracted = {r.version: ({"model_types": set(r.model_types)}, [r.source()]) for r in releases}
    if not extracted:
        return []
    return _chain_proposals("transformers_models", "transformers", ("model_types",), matrix.transformers_models,
                            lambda v, k: matrix.transformers_model_types(v), extracted)


# vllm-ascend releases ---------------------------------------------------------------------------------------
def _upstream_release(version: str, trow: Optional[Tuple[TableRow, str]], own: Optional[AscendOwn],
                      pypi: Optional[PypiProject]) -> Tuple[Dict[str, Any], Dict[str, str], List[str]]:
    """(fields, conflicts, sources) for one release from the table row, its own files and PyPI."""
    fields: Dict[str, Any] = {}
    conflict: Dict[str, str] = {}
    sources: List[str] = []
    t = trow[0] if trow else None
    if trow:
        sources.append(trow[1])
        fields["listed"] = "matrix"
        fields["vllm"] = t.vllm
        if t.python:
            fields["python"] = t.python
    if own is not None:
        sources.append(f"{own.archive}:" + ",".join(sorted(set(own.where.values()))))
        if "vllm" not in fields and own.vllm_tag:
            fields["vllm"] = [own.vllm_tag]
        if "python" not in fields and (own.readme_python or own.requires_python):
            fields["python"] = own.readme_python or own.requires_python.replace(" ", "")
        if own.transformers:
            fields["transformers"] = own.transformers
    cann = []
    if t and t.cann:
        cann.append(t.cann)
    for label, value in (("README", own.readme_cann if own else None),
                         ("Dockerfile", own.dockerfile_cann if own else None)):
        if value and "_" not in value and not _in(value, cann):
            cann.append(value)
    if cann:
        fields["cann"] = cann
        if len(cann) > 1:
            who = [f"table {t.cann}"] if t and t.cann else []
            if own and own.readme_cann:
                who.append(f"README {own.readme_cann}")
            if own and own.dockerfile_cann:
                who.append(f"Dockerfile {own.dockerfile_cann}")
            conflict["cann"] = "; ".join(who)
    for field, pkg in (("torch", "torch"), ("torch_npu", "torch-npu"), ("triton_ascend", "triton-ascend")):
        values = []
        pinned = own.pins.get(pkg) if own else None
        if pinned:
            values.append(pinned)
        tv = getattr(t, field) if t else None
        if tv and not _in(tv, values):
            values.append(tv)
        if values:
            fields[field] = values
            if len(values) > 1:
                conflict[field] = f"{own.where.get(pkg, 'own files')} pins {values[0]}; the official table says {tv}"
    if t and t.mindie_turbo:
        fields["mindie_turbo"] = t.mindie_turbo
    if t and t.mooncake:
        fields["mooncake"] = t.mooncake
    elif own is not None and own.mooncake:
        fields["mooncake"] = own.mooncake  # the Dockerfile's MOONCAKE_TAG where the table has no column for it
    if own is not None and own.ops_cann:
        fields["ops_cann"] = own.ops_cann
        if own.ops_cann_requires:
            fields["ops_cann_requires"] = own.ops_cann_requires
    if pypi is not None:
        state, tags, uploaded = pypi.state(version)
        fields["pypi"] = state
        if tags:
            fields["wheel_cp"] = tags
        if uploaded:
            fields["released"] = date.fromisoformat(uploaded)
        sources.append(f"pypi:{pypi.path}")
    if "listed" not in fields and (own is not None or pypi is not None):
        fields["listed"] = "pypi"
    return fields, conflict, sources


def _compare_release(have, fields: Dict[str, Any], conflict: Dict[str, str], pinned: Iterable[str] = ()) -> List[str]:
    """Differences between a shipped row and what upstream says. The first value of a list field is compared only
    where the release's own files were read (`pinned`): a table row alone does not say what the package pins."""
    pinned = set(pinned)
    diffs = []
    for key, value in fields.items():
        old = getattr(have, key, None)
        if key in ("vllm",) + CONFLICT_FIELDS:
            old = old or []
            missing = [v for v in value if not _in(v, old)]
            if missing:
                diffs.append(f"{key}: matrix {old}, upstream names {missing} too")
            elif key in pinned and value and old and not _same_version(value[0], old[0]):
                diffs.append(f"{key}: matrix pins {old[0]} first, the release's own files pin {value[0]}")
        elif key in ("python", "transformers", "ops_cann_requires"):
            if _spec_norm(old) != _spec_norm(value):
                diffs.append(f"{key}: matrix {old!r}, upstream {value!r}")
        elif key == "listed":
            if old != value and not (value == "pypi" and old in ("tag", "matrix")):
                diffs.append(f"listed: matrix {old!r}, upstream {value!r} (the row is in a copy of the official table)")
        elif key == "released":
            continue  # upload dates differ from tag dates; not a fact worth a diff
        elif key == "wheel_cp":
            if sorted(old or []) != sorted(value):
                diffs.append(f"wheel_cp: matrix {old}, PyPI {value}")
        elif old != value:
            diffs.append(f"{key}: matrix {old!r}, upstream {value!r}")
    for key, text in conflict.items():
        if key not in (have.conflict or {}):
            diffs.append(f"conflict.{key}: not recorded ({text})")
    return diffs


def release_proposals(matrix: Matrix, tables: List[AscendTable], owns: List[AscendOwn],
                      pypi: Optional[PypiProject]) -> List[Proposal]:
    merged = merge_tables(tables)
    newest = next((t for t in tables if t.newest), None)
    in_newest = {str(parse_version(r.version).main_key) for r in newest.rows} if newest else set()
    own_by = {str(parse_version(o.version).main_key): o for o in owns}
    versions = {str(parse_version(v).main_key): v for v in merged}
    versions.update({str(parse_version(o.version).main_key): o.version for o in owns})
    out: List[Proposal] = []
    newest_row = matrix.releases[-1] if matrix.releases else None
    for key, version in sorted(versions.items(), key=lambda kv: parse_version(kv[1])):
        trow = next((merged[v] for v in merged if str(parse_version(v).main_key) == key), None)
        own = own_by.get(key)
        fields, conflict, sources = _upstream_release(version, trow, own, pypi)
        have = matrix.vllm_ascend_release(version)
        if have is None:
            row: Dict[str, Any] = {"version": version}
            row.update(fields)
            row.setdefault("pypi", "unknown")
            notes = []
            if newest_row is not None:
                row["hardware"] = list(newest_row.hardware)
                notes.append(f"hardware copied from {newest_row.version} (no source read names it): confirm")
            if trow and key not in in_newest:
                notes.append(f"only in an older copy of the table ({trow[1]}), not in the newest ({newest.path})")
            if pypi is not None and pypi.has(version) is False:
                notes.append(f"no such release on PyPI ({pypi.path}): a label in the table, not a release?")
            if conflict:
                row["conflict"] = conflict
            row["source"] = sources
            out.append(Proposal(table="vllm_ascend_release", id=version, change="new", row=_ordered(row, (
                "version", "listed", "released", "vllm", "python", "cann", "ops_cann", "ops_cann_requires", "torch",
                "torch_npu", "triton_ascend", "transformers", "mooncake", "mindie_turbo", "hardware", "pypi",
                "wheel_cp", "conflict")),
                differences=[f"vllm-ascend {version} is not recorded"] + notes))
            continue
        pinned = {f for f, pkg in (("torch", "torch"), ("torch_npu", "torch-npu"), ("triton_ascend", "triton-ascend"))
                  if own is not None and pkg in own.pins}
        diffs = _compare_release(have, fields, conflict, pinned)
        if not diffs:
            continue
        row = _row_dict(have)
        for k, v in fields.items():
            if k in ("vllm",) + CONFLICT_FIELDS:
                old = list(row.get(k) or [])
                if k in pinned or not old:  # the release's own pin goes first
                    row[k] = list(v) + [x for x in old if not _in(x, v)]
                else:  # a document that disagrees: its value is added after what the matrix has
                    row[k] = old + [x for x in v if not _in(x, old)]
            elif k == "released" and row.get("released"):
                continue
            elif k == "listed" and v == "pypi" and row.get("listed") in ("tag", "matrix"):
                continue
            elif k in ("python", "transformers", "ops_cann_requires") and _spec_norm(row.get(k)) == _spec_norm(v):
                continue  # the same specifier, written in another order
            else:
                row[k] = v
        row["conflict"] = {**conflict, **(row.get("conflict") or {})}  # a recorded explanation stays
        for k in CONFLICT_FIELDS:
            if len(row.get(k) or []) < 2:
                row["conflict"].pop(k, None)
            elif k not in row["conflict"]:
                row["conflict"][k] = "values from several vllm-ascend documents (see source)"
        row["source"] = list(dict.fromkeys(list(have.source) + sources))
        out.append(Proposal(table="vllm_ascend_release", id=version, change="changed", differences=diffs,
                            row=_ordered(row, ("version", "listed", "commit", "released", "vllm", "python", "cann",
                                               "cann_per_hardware", "ops_cann", "ops_cann_requires"))))
    return out


# pins PyPI does not have ------------------------------------------------------------------------------------
def index_proposals(matrix: Matrix, releases: List[Proposal], projects: Dict[str, PypiProject],
                    today: date) -> List[Proposal]:
    pins: Dict[str, Dict[str, List[str]]] = {}
    rows = {r.version: _row_dict(r) for r in matrix.releases}
    for p in releases:
        rows[p.id] = p.row
    for version, row in rows.items():
        for field, pkg in (("vllm", "vllm"), ("torch_npu", "torch-npu"), ("triton_ascend", "triton-ascend")):
            values = row.get(field) or []
            if values:
                pins.setdefault(pkg, {}).setdefault(values[0], []).append(version)
    out = []
    for pkg, by_version in sorted(pins.items()):
        project = projects.get(pkg)
        if project is None:
            continue
        missing = sorted((v for v in by_version if project.has(v) is False and matrix.index_for(pkg, v) is None),
                         key=parse_version)
        if not missing:
            continue
        users = sorted({u for v in missing for u in by_version[v]}, key=parse_version)
        out.append(Proposal(table="package_index", id=f"{pkg}-not-on-pypi", change="new", row={
            "id": f"{pkg}-not-on-pypi", "package": pkg, "versions": missing, "on_pypi": False,
            "checked": today, "note": f"pinned by vllm-ascend {', '.join(users)}",
            "source": [f"pypi:{project.path} (no file for these versions)"]},
            differences=[f"{pkg} {', '.join(missing)}: pinned, not on PyPI, no package_index row (index_url: "
                         "add the index a source names, if any)"]))
    return out


# --additional-config keys --------------------------------------------------------------------------------------
def config_key_proposals(table, extracted: Dict[str, Tuple[Any, str]]) -> List[Proposal]:
    """Rows of the serve/additional-config table: one per release read (version -> (ReleaseConfigKeys, source)),
    whole, since each row lists every key of its release. A release whose recorded row says the same is left out."""
    out = []
    have = {str(parse_version(r.version).main_key): r for r in (table.releases if table is not None else ())}
    for version, (found, source) in sorted(extracted.items(), key=lambda kv: parse_version(kv[0])):
        row = {"version": version, "source": source, "keys": list(found.keys), "strict": found.strict,
               "lenient_with": found.lenient_with}
        old = have.get(str(parse_version(version).main_key))
        if old is None:
            out.append(Proposal(table="additional_config", id=version, change="new", row=row,
                                differences=[f"vllm-ascend {version} is not recorded ({len(found.keys)} keys, "
                                             + ("unknown keys rejected" if found.strict else "unknown keys ignored")
                                             + ")"]))
            continue
        diffs = []
        added, dropped = set(found.keys) - old.keys, old.keys - set(found.keys)
        if added or dropped:
            diffs.append(f"keys: upstream adds {sorted(added)[:8]}, drops {sorted(dropped)[:8]}")
        if (old.strict, old.lenient_with) != (found.strict, found.lenient_with):
            diffs.append(f"strict: {old.strict} (lenient with {old.lenient_with}) -> {found.strict} "
                         f"(lenient with {found.lenient_with})")
        if diffs:
            out.append(Proposal(table="additional_config", id=version, change="changed", row=row, differences=diffs))
    return out
