"""What names each vLLM and vllm-ascend release accepts in a deployment, and what that means for one name.

Two shipped tables of one schema, `serve/names-vllm` and `serve/names-vllm-ascend`: per release, each kind of name
(`ascend_doctor.parsers.release_names.READERS`) as its source defines it, proposed by `matrix sync` from the sdists
and tags. For a live host the installed files are read instead (the `vllm_files` fact); the rows stand in for a
snapshot, a paste or a plan.

`KINDS` says, per kind, which projects contribute names (a KV connector is either vLLM's or one vllm-ascend
registers; a speculative method must pass vLLM's Literal and then vllm-ascend's dispatcher) and what happens to a
name the release does not have. `Names.judge` is the one place that turns "this release's list" plus the table's
history into a judgement the checks (SERVE313, SERVE402) word.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.parsers.release_names import JSON_CONFIGS
from ascend_doctor.text.versions import parse_version, release_row

PROJECTS = ("vllm", "vllm-ascend")
TABLE = {"vllm": "serve/names-vllm", "vllm-ascend": "serve/names-vllm-ascend"}
# Kinds whose names count as another kind's: a variable vllm-ascend reads with os.getenv outside envs.py
# (`env_read`) is one the release acts on, as much as an envs.py key (`env`).
JOINS = {"env": ("env_read",)}


class ReleaseNames(Model, extra="forbid", frozen=True):
    """The names of one release, kind by kind; a kind the release's source does not define is absent."""

    version: str
    source: str  # the archive or tag read
    names: dict[str, list[str]]
    where: list[str] = []  # "kind: the file(s) read (what in them)"

    def where_of(self, kind: str) -> str:
        return next((w.split(": ", 1)[1] for w in self.where if w.startswith(kind + ": ")), self.source)

    def joined(self, kind: str) -> Optional[set]:
        """The names of `kind` with those of the kinds that count as it (`JOINS`); None when the release's source
        defines no `kind` list."""
        if kind not in self.names:
            return None
        return set(self.names[kind]).union(*(self.names.get(j, ()) for j in JOINS.get(kind, ())))


class NamesTable(Model, extra="forbid"):
    schema_version: int
    updated: date
    release: list[ReleaseNames] = Field(min_length=1)

    @cached_property
    def releases(self) -> tuple[ReleaseNames, ...]:
        return tuple(sorted(self.release, key=lambda r: parse_version(r.version)))

    def row_for(self, version: str) -> tuple[Optional[ReleaseNames], str]:
        """(row, how): the release's own row ("exact"), the nearest older one ("nearest older"), or (None, "")."""
        return release_row(self.releases, version)

    def history(self, kind: str, name: str, before: str) -> tuple[Optional[str], Optional[str]]:
        """(last release up to `before` that had `name`, the first after it that did not), among releases that
        define `kind` at all."""
        last = dropped = None
        b = parse_version(before)
        for r in self.releases:
            if parse_version(r.version) > b:
                break
            have = r.joined(kind)
            if have is None:
                continue
            if name in have:
                last, dropped = r.version, None
            elif last is not None and dropped is None:
                dropped = r.version
        return last, dropped

    def first_with(self, kind: str, name: str) -> Optional[str]:
        return next((r.version for r in self.releases if name in (r.joined(kind) or ())), None)

    def list_ends(self, kind: str) -> Optional[str]:
        """The first recorded release after the last one that defines a `kind` list (for an open-ended kind: the one
        from which any name is taken); None when the newest release still defines it."""
        rows = self.releases
        last = max((i for i, r in enumerate(rows) if kind in r.names), default=None)
        return rows[last + 1].version if last is not None and last + 1 < len(rows) else None

    def new_in(self, kind: str, version: str) -> set:
        """Names of `kind` the release `version` has and the recorded release before it had not."""
        rows = [r for r in self.releases if kind in r.names]
        for prev, cur in zip(rows, rows[1:]):
            if cur.version == version:
                return cur.joined(kind) - prev.joined(kind)
        return set()


@dataclass(frozen=True)
class Kind:
    kind: str
    projects: tuple  # projects whose lists make up the accepted names (their union)
    what: str  # how a message names them ("KV connectors")
    case_insensitive: bool = False
    open_ended: bool = False  # a recorded release whose source defines no list accepts any name


KINDS = {k.kind: k for k in (
    Kind("kv_connector", ("vllm", "vllm-ascend"), "KV connectors"),
    Kind("speculative_method", ("vllm",), "speculative methods"),
    Kind("cudagraph_mode", ("vllm",), "cudagraph modes", case_insensitive=True),
    Kind("structured_outputs_backend", ("vllm",), "structured-outputs backends"),
    Kind("env", ("vllm", "vllm-ascend"), "environment variables"),
    Kind("env_read", ("vllm-ascend",), "variables read with os.getenv / os.environ"),
    Kind("eplb_model_type", ("vllm-ascend",), "model types EPLB registers", open_ended=True),
    Kind("quant_fused_experts", ("vllm-ascend",), "model types whose quantized experts the msModelSlim config maps",
         open_ended=True),
    Kind("compilation_config_key", ("vllm",), "CompilationConfig fields"),
    Kind("attention_config_key", ("vllm",), "AttentionConfig fields"),
    Kind("speculative_config_key", ("vllm",), "SpeculativeConfig fields"),
    Kind("structured_outputs_config_key", ("vllm",), "StructuredOutputsConfig fields"),
    Kind("kv_transfer_config_key", ("vllm",), "KVTransferConfig fields"),
    Kind("compilation_config_value", ("vllm",), "CompilationConfig values"),
    Kind("attention_config_value", ("vllm",), "AttentionConfig values"),
    Kind("speculative_config_value", ("vllm",), "SpeculativeConfig values"),
    Kind("structured_outputs_config_value", ("vllm",), "StructuredOutputsConfig values"),
    Kind("kv_transfer_config_value", ("vllm",), "KVTransferConfig values"),
    Kind("patched_field", ("vllm-ascend",), "config fields vllm-ascend's platform patches retype"),
    Kind("config_literal", ("vllm",), "config fields' Literal values"),
    Kind("engine_arg_field", ("vllm",), "options backed by a config field"),
    Kind("option_choice_added", ("vllm-ascend",), "options whose choices vllm-ascend's platform widens"),
    Kind("config_strict", ("vllm",), "the config decorator's policy for unknown keys (`forbid`)"),
)}
# JSON option -> the kind its top-level keys are, and the kind of the values its Literal-typed fields admit
# (`field=value`: `kv_role=kv_both`)
CONFIG_CLASS = {option: cls for option, cls, _files in JSON_CONFIGS}
OPTION_KEYS = {option: f"{option}_key" for option in CONFIG_CLASS}
OPTION_VALUES = {option: f"{option}_value" for option in CONFIG_CLASS}


@dataclass
class Listed:
    """One project's list of one kind for the serving stack: from the installed files or a table row."""

    project: str
    version: str
    names: Optional[set]  # None: not known
    source: str  # where the list came from ("file: …", "matrix: …"), or why it is not known
    how: str = "installed"  # "installed", "exact", "nearest older", "paired" (a development build: see Names)
    row_version: Optional[str] = None  # the recorded release whose row stood in (a table row)
    unrestricted: bool = False  # the release defines no list of an open-ended kind: any name is accepted


@dataclass
class Verdict:
    """A name against the serving stack's lists."""

    name: str
    known: Optional[bool]  # None: some list it could be in is not known
    lists: list = field(default_factory=list)  # the Listed consulted
    last: Optional[str] = None  # "vllm-ascend 0.12.0": the last release that had it
    dropped: Optional[str] = None  # "vllm-ascend 0.13.0": the first that no longer had it
    successor: Optional[str] = None  # a near name new in the release that dropped it (a rename)
    close: list = field(default_factory=list)
    first: Optional[str] = None  # "vLLM 0.20.0": the first recorded release that has it (newer than installed)


def retypes(patched: Listed, field: str) -> bool:
    """Whether vllm-ascend's platform patches (the `patched_field` list `patched`) retype config field `field`
    (`CacheConfig.cache_dtype`, or a bare field name when the class is implied, as inside a JSON option): a patch
    that reaches the class through a variable (`config_cls.__annotations__["policy"]`) matches by the field's name."""
    name = field.rsplit(".", 1)[-1]
    return field in (patched.names or ()) or any(
        n.rsplit(".", 1)[-1] == name and ("." not in field or n[:1].islower()) for n in patched.names or ())


def strict(names: "Names") -> Optional[bool]:
    """Whether the serving vLLM's config classes forbid unknown keys (True), ignore them (False), or it is not
    known (None)."""
    listed = names.listed("vllm", "config_strict")
    if listed is None:
        return None
    if listed.names is not None:
        return "forbid" in listed.names
    row, _ = names.tables["vllm"].row_for(listed.version)
    return False if row is not None and "config_strict" not in row.names and "env" in row.names else None


class Names:
    """The serving stack's names: `installed` is project -> kind -> NameList (or None), `versions` project ->
    version (None: not installed), `tables` project -> NamesTable."""

    def __init__(self, versions: dict, tables: dict, installed: Optional[dict] = None,
                 stand_in: Optional[dict] = None):
        """`stand_in` (project -> release): the recorded release whose rows stand for a development build of the
        project (`paired_release`)."""
        self.versions = versions
        self.tables = tables
        self.installed = installed or {}
        self.stand_in = stand_in or {}

    def listed(self, project: str, kind: str) -> Optional[Listed]:
        """None when `project` is not installed. A kind with joins (`JOINS`) lists their names too, where known:
        an installed envs.py's keys with the variables the release's row says it reads elsewhere (the row of the
        nearest older release stands in for an unrecorded one)."""
        base = self._listed(project, kind)
        if base is None or base.names is None:
            return base
        for j in JOINS.get(kind, ()):
            more = self._listed(project, j) if project in KINDS[j].projects else None
            if more is not None and more.names is not None:
                base.names |= more.names
                base.source += f" + {more.source}"
        return base

    def _listed(self, project: str, kind: str) -> Optional[Listed]:
        version = self.versions.get(project)
        if not version:
            return None
        nl = (self.installed.get(project) or {}).get(kind)
        if nl is not None and nl.ok:
            return Listed(project, version, set(nl.names), f"file: {nl.source}")
        why = nl.why_not if nl is not None else ""
        row, how = self.tables[project].row_for(self.stand_in.get(project) or version)
        if project in self.stand_in and row is not None:
            how = "paired"
        spec = KINDS.get(kind)  # a kind read only to interpret another (mtp_model_type) has no Kind of its own
        if row is not None and kind not in row.names and spec is not None and spec.open_ended:
            return Listed(project, version, None, f"matrix: {TABLE[project]}.toml ({project} {row.version}): no "
                          f"{kind} list (any is accepted)", how, unrestricted=True)
        if row is None or kind not in row.names:
            reason = (f"{project} {version}: " + (why + "; " if why else "")
                      + ("no recorded release at or before it" if row is None
                         else f"{row.version}'s source defines no {kind} list"))
            return Listed(project, version, None, reason, how)
        return Listed(project, version, set(row.names[kind]),
                      f"matrix: {TABLE[project]}.toml ({project} {row.version}): {row.where_of(kind)}",
                      how, row_version=row.version)

    def judge(self, kind: str, name: str, projects: Optional[tuple] = None) -> Verdict:
        spec = KINDS[kind]
        lists = [x for x in (self.listed(p, kind) for p in projects or spec.projects) if x is not None]
        v = Verdict(name=name, known=None, lists=lists)
        if not lists:
            return v
        key = name.upper() if spec.case_insensitive else name
        norm = (lambda s: s.upper()) if spec.case_insensitive else (lambda s: s)
        if any(x.unrestricted or (x.names is not None and key in {norm(n) for n in x.names}) for x in lists):
            v.known = True
            return v
        if any(x.names is None for x in lists):
            return v
        v.known = False
        every = sorted(set().union(*(x.names for x in lists)))
        v.close = difflib.get_close_matches(name, every, n=3, cutoff=0.8)
        for x in lists:
            table = self.tables[x.project]
            last, dropped = table.history(kind, name, x.version)
            if last and dropped:
                v.last, v.dropped = f"{x.project} {last}", f"{x.project} {dropped}"
                near = difflib.get_close_matches(name, sorted(table.new_in(kind, dropped) & x.names), n=1,
                                                 cutoff=0.8)
                v.successor = near[0] if near else None
                break
            first = table.first_with(kind, name)
            if first and parse_version(first) > parse_version(x.version):
                v.first = f"{'vLLM' if x.project == 'vllm' else x.project} {first}"
        return v


def paired_release(vllm_ascend: Optional[str], vllm: Optional[str], matrix) -> Optional[str]:
    """The recorded vllm-ascend release whose names stand for a development build `vllm_ascend` (`X.devN`): main
    is built against the newest vLLM, and setuptools-scm names a main build after the last tag it can reach, which
    can be releases behind (vllm-ascend 0.19.1rc2.dev1265 served with vLLM 0.25.1, vllm-ascend#14260) — so the build
    is judged by the newest release that pairs the same vLLM, when that is of a newer release line than its name.
    None otherwise."""
    from ascend_doctor.text.versions import parse_version, try_parse_version

    v = try_parse_version(vllm_ascend)
    if v is None or not v.is_devrelease() or not vllm:
        return None
    paired = sorted((r.version for r in matrix.releases_for_vllm(vllm)), key=parse_version)
    # only a build named after an older release line (a stale tag): `0.30.0rc2.dev3` is between 0.30.0rc1 and rc2
    return paired[-1] if paired and parse_version(paired[-1]).release[:3] > v.release[:3] else None
