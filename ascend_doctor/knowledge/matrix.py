"""The compatibility matrix: shipped TOML data (matrices/*.toml), optional user files layered on top, and the
queries checks ask of it ("which stack did vllm-ascend X ship with", "does CANN C go with driver D", ...).

Queries answer `None` (unknown) rather than guess: a version the data does not cover is "not in the matrix yet",
which callers turn into a warning, never a failure.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ascend_doctor import __version__
from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.knowledge.files import matrix_files
from ascend_doctor.knowledge.matrix_schema import (
    ID_FIELD,
    PARSER_KINDS,
    TABLES,
    Advisory,
    DriverRule,
    HdkPairing,
    MarkupFamily,
    MatrixFile,
    ModelFamily,
    ModelNames,
    PackageIndex,
    Release,
    ServeOptionKind,
    ServeRule,
    TorchNpuRow,
    TorchPythonRow,
    TransformersModels,
    VllmModels,
    VllmOptions,
    VllmParsers,
    normalize_name,
)
from ascend_doctor.knowledge.tables import MATRIX as MATRIX_TABLE
from ascend_doctor.knowledge.tomlread import read_toml, validate
from ascend_doctor.text.versions import (
    SpecifierSet,
    Version,
    build_of,
    final_of,
    parse_version,
    try_parse_version,
    version_in,
)

VERSION_KEYED = ("vllm_ascend_release", "torch_npu", "torch_python", "vllm_parsers", "vllm_models",
                 "vllm_options", "transformers_models")


def _row_id(table: str, row) -> object:
    """Identity for layering: versions compare as versions (`v0.13.0` is `0.13.0`), other ids as text."""
    value = getattr(row, ID_FIELD[table])
    return parse_version(value) if table in VERSION_KEYED else value


class StackItem(Model):
    """One component of an installed stack compared with the release row of the installed vllm-ascend."""

    component: str  # PyPI name, or "cann" / "python"
    installed: Optional[str]
    expected: List[str]  # versions, first = what the package pins; or one specifier for python / transformers
    # ok | alternative (a value another vllm-ascend document names) | build (an OBS/dev build of the pin) | final (CANN
    # only: the final release of the pinned beta) | image (what the release's official image installs; set by
    # VLLM102) | not-shipped | mismatch | unpinned | unknown
    status: str
    conflict: str = ""
    # CANN only: what the release's compiled custom ops say (csrc/version.info), "" where not recorded.
    built_for: str = ""  # the CANN they were built against
    requires: str = ""  # the CANN runtime their package requires (">=9.1.0")
    image: str = ""  # status "image": the official image whose recipe installs exactly this version


# (component, Release field) compared by `Matrix.compare_stack`; python and transformers are specifiers.
STACK_FIELDS = (("vllm", "vllm"), ("torch", "torch"), ("torch-npu", "torch_npu"), ("triton-ascend", "triton_ascend"),
                ("cann", "cann"), ("python", "python"), ("transformers", "transformers"))


def _vkey(v: Version) -> tuple:
    """What `==` compares: release + tags, without build number, local label or internal number."""
    return v.main_key


class PairingVerdict(Model):
    """The matrix's answer to "does CANN C go with driver D": True/False/None (no source covers the pair), the
    sentence that says why (with its sources), and whether a False is inferred (no source says "N" outright)."""

    compatible: Optional[bool]
    why: str
    inferred: bool = False
    sources: List[str] = []


class Matrix:
    """All rows of the shipped matrix plus any layered user files, sorted by version where rows have one."""

    def __init__(self, tables: Dict[str, list], files: Sequence[str]):
        self.files: List[str] = list(files)
        self.releases: List[Release] = sorted(tables["vllm_ascend_release"], key=lambda r: parse_version(r.version))
        self.torch_npu: List[TorchNpuRow] = sorted(tables["torch_npu"], key=lambda r: parse_version(r.version))
        self.torch_python: List[TorchPythonRow] = sorted(tables["torch_python"], key=lambda r: parse_version(r.torch))
        self.hdk: List[HdkPairing] = list(tables["cann_hdk"])
        self.driver_rules: List[DriverRule] = list(tables["cann_driver_rule"])
        self.parsers: List[VllmParsers] = sorted(tables["vllm_parsers"], key=lambda r: parse_version(r.vllm))
        self.advisories: List[Advisory] = list(tables["advisory"])
        self.vllm_models: List[VllmModels] = sorted(tables.get("vllm_models", []), key=lambda r: parse_version(r.vllm))
        self.vllm_options: List[VllmOptions] = sorted(tables.get("vllm_options", []),
                                                      key=lambda r: parse_version(r.vllm))
        self.transformers_models: List[TransformersModels] = sorted(
            tables.get("transformers_models", []), key=lambda r: parse_version(r.transformers))
        self.package_index: List[PackageIndex] = list(tables.get("package_index", []))
        self.serve_rules: List[ServeRule] = list(tables.get("serve_rule", []))
        self.markup_families: Dict[str, MarkupFamily] = {r.id: r for r in tables.get("markup_family", [])}
        self.model_families: List[ModelFamily] = list(tables.get("model_family", []))
        self.serve_option_kinds: List[ServeOptionKind] = list(tables.get("serve_option_kind", []))
        _check_chain(self.vllm_models, "vllm_models", "vllm")
        _check_chain(self.vllm_options, "vllm_options", "vllm")
        _check_chain(self.transformers_models, "transformers_models", "transformers")
        self._resolved: Dict[tuple, Dict[str, Dict[str, frozenset]]] = {}

    # how `vllm serve` options parse ----------------------------------------------------------------------------
    def serve_option_syntax(self, vllm_version: Optional[str] = None) -> Tuple[frozenset, frozenset, Dict[str, str]]:
        """(flags, multi-value options, short aliases) of `vllm serve` in this vLLM release, as dest names
        (`enable_auto_tool_choice`): an option is a flag where the release defines its `no-X` form, plus the
        serve_option_kind rows. A release the matrix does not record (or None) gets every recorded release's flags:
        an option that takes no value anywhere is read as a flag, never as swallowing the next word."""
        names = self.vllm_serve_options(vllm_version) if vllm_version else None
        v = try_parse_version(vllm_version) if vllm_version and names is not None else None
        if names is None:
            names = frozenset(n for r in self.vllm_options for n in (self.vllm_serve_options(r.vllm) or ()))
        dest = lambda n: n.replace("-", "_")  # noqa: E731
        flags = {dest(n[3:]) for n in names if n.startswith("no-")}
        multi: set = set()
        aliases: Dict[str, str] = {}
        for row in self.serve_option_kinds:
            if row.vllm and v is not None and not version_in(v, row.vllm):
                continue
            if row.kind == "flag":
                flags.add(dest(row.option))
            elif row.kind == "value":
                flags.discard(dest(row.option))
            elif row.kind == "multi":
                multi.add(dest(row.option))
            elif row.alias:
                aliases[row.alias] = dest(row.option)
        return frozenset(flags), frozenset(multi), aliases

    def serve_option_levels(self, vllm_version: Optional[str] = None) -> frozenset:
        """The options (dest names) whose bare 0-3 this vLLM release reads as a compilation level (the `level`
        serve_option_kind rows); a release the matrix does not record gets every row's, so a form some release
        accepts is never called wrong without knowing the release."""
        v = try_parse_version(vllm_version) if vllm_version and self.vllm_serve_options(vllm_version) else None
        return frozenset(row.option.replace("-", "_") for row in self.serve_option_kinds if row.kind == "level"
                         and not (row.vllm and v is not None and not version_in(v, row.vllm)))

    # model families ---------------------------------------------------------------------------------------------
    def tool_parsers_for(self, model_type: str, model_name: str = "") -> Optional[Tuple[List[str], List[str]]]:
        """(expected parsers, every parser some release of this model_type uses) for a config.json `model_type`,
        or None when no model_family row names it. The expected row is the one whose name_pattern matches
        `model_name`, else the one without a name_pattern (see ModelFamily)."""
        rows = [r for r in self.model_families if model_type in r.model_types]
        if not rows:
            return None
        named = [r for r in rows if r.name_pattern and re.search(r.name_pattern, model_name or "")]
        plain = [r for r in rows if not r.name_pattern]
        expected = (named or plain or rows)[0]
        every = list(dict.fromkeys(p for r in rows for p in r.tool_parsers))
        return list(expected.tool_parsers), every

    # vllm-ascend releases ----------------------------------------------------------------------------------------
    def vllm_ascend_release(self, version: str) -> Optional[Release]:
        """The row for exactly this release (`v0.13.0rc3`, `0.13.0rc3+local` both find 0.13.0rc3), else None."""
        v = try_parse_version(version)
        if v is None:
            return None
        for row in self.releases:
            if _vkey(parse_version(row.version)) == _vkey(v):
                return row
        return None

    def nearest_release(self, version: str) -> Tuple[Optional[Release], str]:
        """(row, relation): "exact"; "newer-than-matrix" (newest row); "older" (older than every row: oldest row);
        "between" (the nearest older row); (None, "unparseable") for text that is not a version."""
        v = try_parse_version(version)
        if v is None or not self.releases:
            return None, "unparseable" if v is None else "newer-than-matrix"
        exact = self.vllm_ascend_release(version)
        if exact is not None:
            return exact, "exact"
        if v > parse_version(self.releases[-1].version):
            return self.releases[-1], "newer-than-matrix"
        if v < parse_version(self.releases[0].version):
            return self.releases[0], "older"
        below = [r for r in self.releases if parse_version(r.version) < v]
        return below[-1], "between"

    @staticmethod
    def by_preference(rows: Iterable[Release]) -> List[Release]:
        """The one release policy the doctor recommends by (plan, VLLM105's fix, the fix script): the newest final
        release first, then older finals; release candidates only after every final one, newest first. A final
        release is what vllm-ascend documents and images as stable; an rc is a preview of the next one."""
        def key(r: Release):
            v = parse_version(r.version)
            return (not v.is_prerelease(), v)

        return sorted(rows, key=key, reverse=True)

    def releases_for_vllm(self, vllm_version: str) -> List[Release]:
        """vllm-ascend releases that target this vLLM release (oldest first); local labels like `+empty` ignored."""
        v = try_parse_version(vllm_version)
        if v is None:
            return []
        return [r for r in self.releases if any(_vkey(parse_version(x)) == _vkey(v) for x in r.vllm)]

    def compare_stack(self, versions: Dict[str, str], hardware: Optional[str] = None) -> List[StackItem]:
        """Each component of `versions` (PyPI names + "cann", "python") against the row of the installed
        vllm-ascend (`versions["vllm-ascend"]`), as its image for `hardware` carries it (`Release.pins_for`: the
        -310p image's own CANN, no triton-ascend); [] when that release is not in the matrix (see nearest_release).
        A component the variant does not ship is `not-shipped`: whether it may be there is a hardware rule's call."""
        known = {normalize_name(k): v for k, v in versions.items() if v}
        row = self.vllm_ascend_release(known.get("vllm-ascend", ""))
        if row is None:
            return []
        out = []
        for component, field in STACK_FIELDS:
            installed = known.get(component)
            value = row.pins_for(field, hardware)
            expected = value if isinstance(value, list) else ([value] if value else [])
            v = try_parse_version(installed)
            if isinstance(value, list) and not value and getattr(row, field) and value != getattr(row, field):
                status = "not-shipped"  # the variant's image removes what the package pins
            elif not expected:
                status = "unpinned"
            elif v is None:
                status = "unknown"
            elif isinstance(value, str):
                status = "ok" if version_in(v, value) else "mismatch"
            elif version_in(v, f"=={expected[0]}"):
                status = "ok"
            elif any(version_in(v, f"=={e}") for e in expected[1:]):
                status = "alternative"
            elif _is_build_of_any(v, expected):
                status = "build"  # an OBS/dev build of the pinned release, as the official images ship
            elif field == "cann" and any(try_parse_version(e) is not None and final_of(v, e) for e in expected):
                status = "final"  # CANN 9.1.0 where the image ships 9.1.0-beta.1: the release its beta previewed
            else:
                status = "mismatch"
            item = StackItem(component=component, installed=installed, expected=expected, status=status,
                             conflict=row.conflict.get(field, ""))
            if field == "cann" and row.ops_cann and value == row.cann:  # a variant with its own CANN: not these ops
                item.built_for, item.requires = row.ops_cann, row.ops_cann_requires or ""
                if status == "alternative" and v is not None and version_in(v, f"=={row.ops_cann}"):
                    item.status = "ok"  # the CANN the release's compiled ops were built against
            out.append(item)
        return out

    # torch_npu / torch / python --------------------------------------------------------------------------------------
    def torch_npu_row(self, torch_npu_version: str) -> Optional[TorchNpuRow]:
        """The torch_npu row for this version: exact match first, then ignoring the local label."""
        v = try_parse_version(torch_npu_version)
        if v is None:
            return None
        for row in self.torch_npu:
            if parse_version(row.version) == v:
                return row
        for row in self.torch_npu:
            if _vkey(parse_version(row.version)) == _vkey(v):
                return row
        return None

    def python_ok_for_torch(self, torch_version: str, python: str) -> Optional[bool]:
        """Does this PyTorch release support this Python (`3.11` or `3.11.4`)? None when the table lacks the torch."""
        t, p = try_parse_version(torch_version), try_parse_version(python)
        if t is None or p is None or len(p.release) < 2:
            return None
        base = (tuple(t.release) + (0, 0, 0))[:3]
        for row in self.torch_python:
            if (tuple(parse_version(row.torch).release) + (0, 0, 0))[:3] == base and not t.is_prerelease():
                return f"{p.release[0]}.{p.release[1]}" in row.python
        return None

    def torch_npu_wheel_has_cp(self, torch_npu_version: str, cp_tag: str, arch: Optional[str] = None) -> Optional[bool]:
        """Does PyPI ship a torch_npu wheel for this CPython tag ("cp311", or "3.11"; optionally for one arch)?
        None when the version is unknown or its wheels were never listed (mirror/OBS builds, old releases)."""
        row = self.torch_npu_row(torch_npu_version)
        if row is None or not row.wheel_cp:
            return None
        tag = cp_tag.strip().lower()
        if not tag.startswith("cp"):
            tag = "cp" + tag.replace(".", "")
        if tag not in row.wheel_cp:
            return False
        if arch and tag in row.wheel_cp_arch:
            return arch in row.wheel_cp_arch[tag]
        return True

    # CANN <-> driver --------------------------------------------------------------------------------------------------
    def hdk_for_cann(self, cann_version: str) -> List[HdkPairing]:
        """Drivers sources name together with this CANN release (tested pairs), possibly one row per hardware."""
        v = try_parse_version(cann_version)
        if v is None:
            return []
        return [h for h in self.hdk if _vkey(parse_version(h.cann)) == _vkey(v)]

    def cann_driver_compatible(self, cann: str, driver: str) -> "PairingVerdict":
        """compatible True/False/None with why and sources. False where a published grid says "N" (or, `inferred`,
        where every source of the CANN line names a newer driver); True for a "Y" cell or a tested pair; None when
        no source covers the combination."""
        c, d = try_parse_version(cann), try_parse_version(driver)
        if c is None or d is None:
            bad = cann if c is None else driver
            return PairingVerdict(compatible=None, why=f"cannot compare: {bad!r} is not a version")
        for wanted in (False, True):
            for rule in self.driver_rules:
                if rule.compatible is wanted and any(version_in(c, s) for s in rule.cann) \
                        and any(_driver_in(d, s) for s in rule.driver):
                    verdict = "compatible" if wanted else "NOT compatible"
                    return PairingVerdict(
                        compatible=wanted, sources=list(rule.source), inferred=rule.inferred,
                        why=(f"CANN {cann} with driver {driver}: {verdict} per {rule.id}"
                             f"{' (inferred from its neighbours)' if rule.inferred else ''} ({rule.note}) "
                             f"[source: {'; '.join(rule.source)}]"))
        pairs = self.hdk_for_cann(cann)
        for h in pairs:
            for listed in h.driver:
                if _driver_matches(d, listed):
                    return PairingVerdict(
                        compatible=True, sources=list(h.source),
                        why=(f"CANN {cann} was released with driver {listed}{' (' + h.hdk + ')' if h.hdk else ''}; "
                             f"{driver} is that driver or a patch of it [source: {'; '.join(h.source)}]"))
        older = self._older_than_the_line(c, d)
        if older is not None:
            return older
        sources = sorted({s for h in pairs for s in h.source})
        if pairs:
            named = ", ".join(sorted({x for h in pairs for x in h.driver}))
            return PairingVerdict(compatible=None, sources=sources,
                                  why=(f"CANN {cann} was released with driver {named} [source: {'; '.join(sources)}]; "
                                       f"{driver} is not among them and no published compatibility table covers the "
                                       "pair"))
        return PairingVerdict(compatible=None, why=f"no source in the matrix pairs CANN {cann} with a driver version")

    def _older_than_the_line(self, c: Version, d: Version) -> "Optional[PairingVerdict]":
        """INFERRED incompatibility: every source for this CANN's minor line (8.5.0, 8.5.0-beta.1, 8.5.2 for any
        CANN 8.5.x) names only HDKs of a newer major.minor than the driver (25.5 vs 24.1). No source says the pair
        fails, but none pairs any CANN of the line with a driver that old, and an HDK older than its CANN is what
        `import torch_npu` segfaults on. None when the line has no rows or any of them names an old-enough driver.
        A CANN released before every row of its line (8.3.RC1 where only 8.3.RC2 is paired) may have shipped with an
        older HDK of the same generation: for it only a driver of an older major (24.x against 25.x) is inferred."""
        line = tuple(c.release[:2])
        dline = tuple(d.release[:2])
        if any(rule.compatible and _spec_line(s) == line and any(_spec_line(x) == dline for x in rule.driver)
               for rule in self.driver_rules for s in rule.cann):
            return None  # a published grid pairs a CANN of this line with a driver of this line (MindIE's, 8.2.RC1)
        rows = [h for h in self.hdk if tuple(parse_version(h.cann).release[:2]) == line]
        drivers = [(x, parse_version(x)) for h in rows for x in h.driver]
        depth = 2 if any(parse_version(h.cann) <= c for h in rows) else 1
        if not drivers or not all(tuple(v.release[:depth]) > tuple(d.release[:depth]) for _x, v in drivers):
            return None
        named = ", ".join(sorted({x for x, _v in drivers}, key=parse_version))
        sources = sorted({s for h in rows for s in h.source})
        return PairingVerdict(
            compatible=False, inferred=True, sources=sources,
            why=(f"driver {d} is older than any HDK published for CANN {line[0]}.{line[1]} (its sources name {named} "
                 f"for {', '.join(sorted({h.cann for h in rows}, key=parse_version))}); no source pairs a CANN "
                 f"{line[0]}.{line[1]} release with a {d.release[0]}.{d.release[1]} driver "
                 f"[source: {'; '.join(sources)}]; {FIELD_ON_OLDER_DRIVERS}"))

    # vLLM parser names ------------------------------------------------------------------------------------------
    def _parser_rows(self, vllm_version: str, kind: str):
        if kind not in PARSER_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PARSER_KINDS)}, not {kind!r}")
        v = try_parse_version(vllm_version)
        if v is None:
            return None, None, None
        for row in self.parsers:
            if _vkey(parse_version(row.vllm)) == _vkey(v):
                return row, None, None
        lower = [r for r in self.parsers if parse_version(r.vllm) < v]
        upper = [r for r in self.parsers if parse_version(r.vllm) > v]
        return None, (lower[-1] if lower else None), (upper[0] if upper else None)

    @staticmethod
    def _complete(row: Optional[VllmParsers], kind: str) -> Optional[set]:
        if row is None or getattr(row, kind) is None or kind in row.partial:
            return None
        return set(getattr(row, kind))

    def parsers_in_vllm(self, vllm_version: str, kind: str) -> Optional[set]:
        """Every name this vLLM release accepts for `kind` (tool_parser | reasoning_parser | tokenizer_mode), or None
        when not known: the release is not recorded (no guessing between recorded releases: vLLM 0.10.0 has
        `glm4_moe`, which neither 0.9.2 nor 0.10.1 has), or its list was only partly extracted."""
        exact, _lower, _upper = self._parser_rows(vllm_version, kind)
        return self._complete(exact, kind) if exact is not None else None

    def has_parser(self, vllm_version: str, kind: str, name: str) -> Optional[bool]:
        """Does this vLLM release accept `name` for `kind`? True/False from its recorded row, None when the release
        is not recorded or the row does not tell. One case of an unrecorded release is told: a name that first
        appears after the next recorded release, which lacks it (a complete list), is not in the release either
        (deepseek_v4, first in 0.20.0, is not in 0.11.0rc3: 0.11.0 lacks it). Nothing is guessed for a name some
        recorded release at or before that next one has (glm4_moe is in 0.10.0 and in neither 0.9.2 nor 0.10.1)."""
        exact, _lower, upper = self._parser_rows(vllm_version, kind)
        if exact is not None:
            return _says(exact, kind, name)
        first = self.first_vllm_release_with(kind, name) if upper is not None else None
        if first is not None and parse_version(first) > parse_version(upper.vllm) and _says(upper, kind, name) is False:
            return False
        return None

    def first_vllm_release_with(self, kind: str, name: str) -> Optional[str]:
        """The first recorded vLLM release whose `kind` list has `name` (deepseek_v4 -> 0.20.0), or None."""
        if kind not in PARSER_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PARSER_KINDS)}, not {kind!r}")
        for row in self.parsers:
            if name in (getattr(row, kind) or []):
                return row.vllm
        return None

    def last_vllm_release_without(self, kind: str, name: str) -> Optional[str]:
        """The recorded release just before the first one with `name`, when its list is complete and lacks the name
        (deepseek_v4 -> 0.19.1): what "first appears in" rests on."""
        first = self.first_vllm_release_with(kind, name)
        if first is None:
            return None
        before = [r for r in self.parsers if parse_version(r.vllm) < parse_version(first)]
        if before and _says(before[-1], kind, name) is False:
            return before[-1].vllm
        return None

    def first_ascend_release_with(self, kind: str, name: str) -> Optional[Release]:
        """The first vllm-ascend release whose paired vLLM (its first `vllm` value) is recorded with `name`:
        deepseek_v4 -> v0.20.2rc1 (no vllm-ascend pairs with 0.20.0/0.20.1), deepseek_v41 -> v0.30.0rc1."""
        for row in self.releases:
            if any(self.has_parser(v, kind, name) for v in row.vllm):
                return row
        return None

    def vllm_torch_pin(self, vllm_version: str) -> Optional[str]:
        """The torch a recorded vLLM release pins in its Requires-Dist (what `pip install vllm==X` brings)."""
        v = try_parse_version(vllm_version)
        if v is None:
            return None
        for row in self.parsers:
            if _vkey(parse_version(row.vllm)) == _vkey(v):
                return row.torch
        return None

    # model registries ------------------------------------------------------------------------------------------
    def _names(self, rows: list, field: str, version: str, kind: str) -> Optional[frozenset]:
        v = try_parse_version(version)
        if v is None:
            return None
        cache = self._resolved.setdefault((field, kind), {})
        if not cache:
            current: set = set()
            for row in rows:
                added = getattr(row, kind)
                removed = getattr(row, "removed_" + kind)
                current = (set(added) if row.after is None else (current | set(added))) - set(removed)
                cache[str(_vkey(parse_version(getattr(row, field))))] = {"names": frozenset(current)}
        hit = cache.get(str(_vkey(v)))
        return hit["names"] if hit else None

    def vllm_architectures(self, vllm_version: str) -> Optional[frozenset]:
        """Architectures this recorded vLLM release implements; None when the release is not recorded."""
        return self._names(self.vllm_models, "vllm", vllm_version, "architectures")

    def vllm_model_types(self, vllm_version: str) -> Optional[frozenset]:
        """model_types this recorded vLLM release configures itself (beyond transformers); None when not recorded."""
        return self._names(self.vllm_models, "vllm", vllm_version, "model_types")

    def vllm_serve_options(self, vllm_version: str) -> Optional[frozenset]:
        """`vllm serve` option names (no `--`) of this recorded vLLM release; None when the release is not recorded."""
        return self._names(self.vllm_options, "vllm", vllm_version, "serve_options")

    def option_history(self, option: str, before: str) -> tuple[Optional[str], Optional[str]]:
        """(the last recorded vLLM release up to `before` that defined `option`, the first after it that did not):
        `--task` -> (0.10.2, 0.11.0)-like answers for an option a release removed."""
        name = option.lstrip("-")
        b = try_parse_version(before)
        last = dropped = None
        for row in self.vllm_options:
            if b is None or parse_version(row.vllm) > b:
                break
            names = self.vllm_serve_options(row.vllm) or frozenset()
            if name in names:
                last, dropped = row.vllm, None
            elif last is not None and dropped is None:
                dropped = row.vllm
        return (last, dropped) if dropped else (None, None)

    def first_vllm_with_option(self, option: str) -> Optional[str]:
        """The first recorded vLLM release that defines `option` (`--tool-strict-level` or `tool-strict-level`)."""
        name = option.lstrip("-")
        for row in self.vllm_options:
            names = self.vllm_serve_options(row.vllm)
            if names is not None and name in names:
                return row.vllm
        return None

    def transformers_model_types(self, transformers_version: str) -> Optional[frozenset]:
        """model_types this recorded transformers release knows; None when the release is not recorded."""
        return self._names(self.transformers_models, "transformers", transformers_version, "model_types")

    def first_transformers_with(self, model_type: str) -> Optional[str]:
        """The first recorded transformers release that knows `model_type` (never one before the oldest record)."""
        for row in self.transformers_models:
            names = self.transformers_model_types(row.transformers)
            if names is not None and model_type in names:
                return row.transformers
        return None

    def first_vllm_with(self, kind: str, name: str) -> Optional[str]:
        """The first recorded vLLM release whose `kind` (architectures | model_types) has `name`."""
        for row in self.vllm_models:
            names = self._names(self.vllm_models, "vllm", row.vllm, kind)
            if names is not None and name in names:
                return row.vllm
        return None

    def first_ascend_release_with_model(self, kind: str, name: str) -> Optional[Release]:
        """The first vllm-ascend release whose paired vLLM is recorded with `name` among its `kind` (architectures |
        model_types): Qwen3ForCausalLM -> v0.8.4rc1 (vLLM 0.8.4)."""
        for row in self.releases:
            if any(name in (self._names(self.vllm_models, "vllm", v, kind) or ()) for v in row.vllm):
                return row
        return None

    # package indexes -------------------------------------------------------------------------------------------
    def index_for(self, package: str, version: str) -> Optional[PackageIndex]:
        """The package_index row naming this exact pin (triton-ascend 3.2.1), or None (PyPI has it, or nobody
        recorded otherwise)."""
        name, v = normalize_name(package), try_parse_version(version)
        if v is None:
            return None
        for row in self.package_index:
            if normalize_name(row.package) == name and any(_vkey(parse_version(x)) == _vkey(v) for x in row.versions):
                return row
        return None

    # hardware rules --------------------------------------------------------------------------------------------
    def serve_rules_for(self, hardware: str, vllm_ascend: str, kind: str) -> List[ServeRule]:
        """Rules of `kind` the documentation sets for this hardware family and vllm-ascend release."""
        v = try_parse_version(vllm_ascend)
        if v is None:
            return []
        return [r for r in self.serve_rules
                if r.kind == kind and hardware in r.hardware and version_in(v, r.vllm_ascend)]

    # advisories --------------------------------------------------------------------------------------------------
    def matching_advisories(self, versions: Dict[str, str]) -> List[Advisory]:
        """Advisories whose every condition holds. Keys: PyPI names (any spelling), "cann", "nnal" (the NNAL/ATB
        version.info), "driver", "firmware", "python", and "machine" (uname -m). A condition on something missing from
        `versions` does not hold."""
        known = {normalize_name(k): v for k, v in versions.items() if v is not None}
        out = []
        for adv in self.advisories:
            if adv.machine and known.get("machine") not in adv.machine:
                continue
            ok = True
            for name, spec in adv.when.items():
                v = try_parse_version(known.get(name))
                if v is None or not version_in(v, spec):
                    ok = False
                    break
            if ok:
                out.append(adv)
        return out

    # "newer than the matrix" -------------------------------------------------------------------------------------
    def known_versions(self, package: str) -> List[str]:
        """Every version of `package` the matrix mentions (vllm-ascend, vllm, torch, torch-npu, triton-ascend, cann,
        driver, python)."""
        name = normalize_name(package)
        vals: List[str] = []
        if name == "vllm-ascend":
            vals = [r.version for r in self.releases]
        elif name == "vllm":
            vals = [x for r in self.releases for x in r.vllm] + [p.vllm for p in self.parsers]
        elif name == "torch":
            vals = ([x for r in self.releases for x in r.torch] + [t.torch for t in self.torch_npu]
                    + [t.torch for t in self.torch_python])
        elif name == "torch-npu":
            vals = [x for r in self.releases for x in r.torch_npu] + [t.version for t in self.torch_npu]
        elif name == "triton-ascend":
            vals = [x for r in self.releases for x in r.triton_ascend]
        elif name == "cann":
            vals = ([x for r in self.releases for x in r.cann] + [x for t in self.torch_npu for x in t.cann]
                    + [h.cann for h in self.hdk])
        elif name == "driver":
            vals = [x for h in self.hdk for x in h.driver]
        elif name == "python":
            vals = [x for t in self.torch_python for x in t.python]
        return vals

    def newest_known(self, package: str) -> Optional[str]:
        """The newest version of `package` the matrix knows, for "newer than the matrix" warnings; None if none."""
        vals = self.known_versions(package)
        return max(vals, key=parse_version) if vals else None

    def newer_than_matrix(self, package: str, version: str) -> Optional[bool]:
        """True when `version` is newer than every version of `package` the matrix knows ("not in the matrix yet":
        warn, do not fail); None when the package is not covered or the version does not parse."""
        newest, v = self.newest_known(package), try_parse_version(version)
        if newest is None or v is None:
            return None
        return _vkey(v) > _vkey(parse_version(newest))  # a build or local label of a known version is not newer


def _check_chain(rows: Sequence[ModelNames], table: str, field: str) -> None:
    """A delta chain must start with a full list and each later row must name the recorded release before it."""
    for i, row in enumerate(rows):
        want = getattr(rows[i - 1], field) if i else None
        same = want is not None and row.after is not None and parse_version(row.after) == parse_version(want)
        if (row.after is None) != (want is None) or (want is not None and not same):
            here = getattr(row, field)
            expected = f"after = {want!r} (the recorded release before it)" if want else "no `after` (the first row)"
            raise InputError(T("matrix {table} ({here}): after = {after}, expected {expected}", table=table, here=here,
                               after=repr(row.after), expected=expected))


def _is_build_of_any(v: Version, expected: List[str]) -> bool:
    for e in expected:
        r = try_parse_version(e)
        if r is not None and build_of(v, r):
            return True
    return False


# What users saw on such unpublished pairs (the inference is a warning, never a failure): said with every verdict of
# `_older_than_the_line`, so the checks that quote it (CANN106, DRV104) say the same.
FIELD_ON_OLDER_DRIVERS = ("in the field such pairs have both failed (24.1 under CANN 8.3/8.5: AICore and watchdog "
                          "time-outs, vllm-ascend#4972, #5468; 23.0.7 under CANN 8.5.1: HCCL could not allocate its "
                          "resources until HDK 25.5.0, #9005) and served (CANN 8.5 releases on npu-smi 23.0.3 and "
                          "23.0.6: #8350, #9666, #6909)")


def _spec_line(spec: str) -> Optional[tuple]:
    """The major.minor line a specifier names (`==8.2.RC1` -> (8, 2), `>=24.1.rc2,<24.1.1` -> (24, 1))."""
    return SpecifierSet(spec).release_line()


def _driver_matches(installed: Version, listed: str) -> bool:
    """Same driver, or a patch of it: 24.1.rc2.2 and 25.0.rc1.1 belong to the 24.1.rc2 / 25.0.rc1 HDK."""
    lv = parse_version(listed)
    if _vkey(installed) == _vkey(lv):
        return True
    return str(installed).lower().startswith(str(lv).lower() + ".")


def _driver_in(d: Version, spec: str) -> bool:
    """A driver within a grid cell's specifier; `==25.7.RC1` also holds its patches (25.7.rc1.1: the HDK's patch
    build, which npu-smi reports; h38p: CANN106 warned a pair the CANN 9.1.0 grid marks Y)."""
    bare = spec.strip()
    if bare.startswith("==") and not any(ch in bare for ch in "*,<>!~"):
        return _driver_matches(d, bare[2:].strip())
    return version_in(d, spec)


def _says(row: VllmParsers, kind: str, name: str) -> Optional[bool]:
    names = getattr(row, kind)
    if names is None:
        return None
    if name in names:
        return True
    if kind not in row.partial or name in row.absent.get(kind, []):
        return False
    return None


# Loading -----------------------------------------------------------------------------------------------------------
def _read_file(path: str) -> MatrixFile:
    data = read_toml(path, T("matrix file"))
    if data.get("table", MATRIX_TABLE) == MATRIX_TABLE:  # a layer may say which table it extends: this one
        data.pop("table", None)
    mf = validate(MatrixFile, data, T("matrix"), path, ids=ID_FIELD)
    if mf.min_tool_version and parse_version(mf.min_tool_version) > parse_version(__version__):
        raise InputError(T("matrix {path}: min_tool_version: needs ascend-doctor >= {min_tool_version} (this is "
                           "{version})", path=path, min_tool_version=mf.min_tool_version,
                           version=__version__))
    for table in TABLES:
        seen: Dict[object, int] = {}
        for i, row in enumerate(getattr(mf, table)):
            rid = _row_id(table, row)
            if rid in seen:
                raise InputError(T("matrix {path}: {table}[{i}] ({row_id}).{id_field}: duplicate id (also "
                                   "{table}[{seen}])", path=path, table=table, i=i,
                                   row_id=getattr(row, ID_FIELD[table]), id_field=ID_FIELD[table], seen=seen[rid]))
            seen[rid] = i
    return mf


def _shipped_tables() -> Tuple[Dict[str, dict], List[str]]:
    tables: Dict[str, dict] = {t: {} for t in TABLES}
    files = []
    origin: Dict[Tuple[str, object], str] = {}
    for p in matrix_files():
        mf = _read_file(str(p))
        for key in ("updated", "min_tool_version"):
            if getattr(mf, key) is None:
                raise InputError(T("matrix {p}: {key}: required key missing (shipped files carry it)", p=p, key=key))
        for table in TABLES:
            for row in getattr(mf, table):
                rid = _row_id(table, row)
                if rid in tables[table]:
                    raise InputError(T("matrix {p}: {table} ({row_id}): duplicate id (also in {origin})", p=p,
                                       table=table, row_id=getattr(row, ID_FIELD[table]), origin=origin[table, rid]))
                tables[table][rid] = row
                origin[(table, rid)] = p.name
        files.append(str(p))
    return tables, files


_lock = threading.Lock()
_cache: Dict[tuple, Matrix] = {}


def _stamp(path: str) -> tuple:
    try:
        st = os.stat(path)
        return (str(Path(path).resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        return (path, None, None)


def load_matrix(extra_files: Iterable[str] = ()) -> Matrix:
    """The shipped matrix with each of `extra_files` layered on in order: a row whose id (release version, torch_npu
    version, advisory id, ...) already exists replaces it, any other row is added. Cached per file contents.
    Every problem is an InputError naming the file and the key path. Called by the knowledge door
    (`Knowledge.matrix`) only: everything else asks the door, so the user's layers are never dropped."""
    extra = [str(f) for f in (extra_files or ())]
    key = tuple(_stamp(p) for p in [str(f) for f in matrix_files()] + extra) + (len(extra),)
    with _lock:
        hit = _cache.get(key)
    if hit is not None:
        return hit
    tables, files = _shipped_tables()
    for path in extra:
        mf = _read_file(path)
        for table in TABLES:
            for row in getattr(mf, table):
                tables[table][_row_id(table, row)] = row
        files.append(path)
    m = Matrix({t: list(rows.values()) for t, rows in tables.items()}, files)
    with _lock:
        _cache[key] = m
    return m


def layer_rows(path: str) -> List[str]:
    """What each row of the matrix layer `path` does to the shipped matrix ("vllm_ascend_release 0.13.0: replaces
    the shipped row", "advisory ADV-X: added"), for `matrix validate`."""
    shipped, _ = _shipped_tables()
    mf = _read_file(path)
    said = []
    for table in TABLES:
        for row in getattr(mf, table):
            rid = getattr(row, ID_FIELD[table])
            if _row_id(table, row) in shipped[table]:
                said.append(T("{key} {id}: replaces the shipped row", key=table, id=rid))
            else:
                said.append(T("{key} {id}: added", key=table, id=rid))
    return said
