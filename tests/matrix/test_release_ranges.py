"""Every release-keyed range in matrices/, at its boundaries: pre-, dev- and post-releases fall where the row's
sources put them, never silently between two rows.

PEP 440 (and ascend_doctor.text.versions) excludes `0.18.0rc1` from both `<0.18.0` and `>=0.18.0`. A row written with
such a bound while the matrix knows a pre-release at it is ambiguous: whoever wrote `<0.18.0` from a source that
covers 0.18.0rc1 left 0.18.0rc1 unjudged (the design notes warn about it). So: (1) a `<X` or `>=X` bound on a final
release must not leave out a pre-release of X the matrix knows — write the bound on the pre-release itself
(`<=0.18.0rc1`, `<0.18.0rc1`, `>=0.18.0rc1`); (2) a serve rule covers every release its sources quote
(`pypi:vllm_ascend-X.tar.gz`, `(vX)`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ascend_doctor.knowledge.matrix import load_matrix
from ascend_doctor.knowledge.tomlread import read_toml
from ascend_doctor.text.versions import SpecifierSet, parse_version

REPO = Path(__file__).resolve().parents[2]
MATRICES = REPO / "matrices"
OP = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Range:
    where: str      # file: table[index] field
    package: str    # the versions the range is about (matrix names: vllm-ascend, cann, driver, ...)
    spec: str
    sources: tuple


def _ranges() -> list[Range]:
    out: list[Range] = []
    for path in sorted(MATRICES.rglob("*.toml")):
        data = read_toml(path)
        name = path.relative_to(REPO).as_posix()
        for i, row in enumerate(data.get("serve_rule", [])):
            out.append(Range(f"{name}: serve_rule {row['id']} vllm_ascend", "vllm-ascend", row["vllm_ascend"],
                             tuple(row.get("source", []))))
        for table in ("advisory", "allow"):
            for i, row in enumerate(data.get(table, [])):
                for pkg, spec in (row.get("when") or {}).items():
                    out.append(Range(f"{name}: {table} {row.get('id', i)} when.{pkg}", pkg, spec,
                                     tuple(row.get("source", []))))
        for i, row in enumerate(data.get("cann_driver_rule", [])):
            for pkg in ("cann", "driver"):
                for spec in row.get(pkg, []):
                    out.append(Range(f"{name}: cann_driver_rule {row.get('id', i)} {pkg}", pkg, spec,
                                     tuple(row.get("source", []))))
        for row in data.get("release_rule", []):
            out.append(Range(f"{name}: release_rule {row['id']} vllm_ascend", "vllm-ascend", row["vllm_ascend"],
                             tuple(row.get("source", []))))
        for row in data.get("known_issue", []):
            if row.get("vllm_ascend"):
                out.append(Range(f"{name}: known_issue {row['id']} vllm_ascend", "vllm-ascend", row["vllm_ascend"],
                                 (row["source"],)))
            for pkg, spec in (row.get("stack") or {}).items():
                out.append(Range(f"{name}: known_issue {row['id']} stack.{pkg}", pkg, spec, (row["source"],)))
        for row in data.get("open_bug", []):
            out.append(Range(f"{name}: open_bug {row['id']} vllm_ascend", "vllm-ascend", row["vllm_ascend"],
                             tuple(row.get("source", []))))
        for row in data.get("parser_issue", []):
            out.append(Range(f"{name}: parser_issue {row['id']} vllm", "vllm", row["vllm"],
                             tuple(row.get("source", []))))
        for row in data.get("start_check", []):
            out.append(Range(f"{name}: start_check {row['id']} vllm_ascend", "vllm-ascend", row["vllm_ascend"],
                             tuple(row.get("source", []))))
        for i, row in enumerate(data.get("torch_npu", [])):
            if row.get("requires_torch"):
                out.append(Range(f"{name}: torch_npu {row.get('version')} requires_torch", "torch",
                                 row["requires_torch"], tuple(row.get("source", []))))
    return out


RANGES = _ranges()


def _boundary_releases(package: str, bound: str) -> list[str]:
    """The versions the matrix knows at `bound`'s release numbers other than the final itself: 0.18.0rc1 and
    0.18.0.post1 for 0.18.0; 8.5.RC1 for 8.5.0."""
    b = parse_version(bound)
    n = max(len(b.release), 3)
    pad = lambda rel: tuple(rel) + (0,) * (n - len(rel))  # noqa: E731
    out = []
    for known in set(load_matrix().known_versions(package)):
        try:
            v = parse_version(known)
        except Exception:
            continue
        if v.raw != b.raw and pad(v.release) == pad(b.release) and (v.is_prerelease() or "post" in known.lower()):
            out.append(known)
    return sorted(out)


def test_the_matrix_has_release_keyed_ranges_to_check():
    assert len(RANGES) > 40
    assert {r.package for r in RANGES} >= {"vllm-ascend", "cann", "driver", "torch"}


@pytest.mark.parametrize("rng", RANGES, ids=lambda r: f"{r.where}={r.spec}")
def test_no_known_pre_or_post_release_falls_silently_outside_a_final_bound(rng: Range):
    spec = SpecifierSet(rng.spec)
    ambiguous = []
    for clause in (c.strip() for c in re.split(r",|\|\|", rng.spec)):
        m = OP.match(clause)
        if not m or m.group(2).endswith(".*") or m.group(1) not in ("<", ">="):
            continue  # `==X` names one release exactly; `<=X`, `>X` order pre/post releases as written
        bound = parse_version(m.group(2))
        if bound.is_prerelease() or "post" in m.group(2).lower():
            continue  # the row names the pre/post release itself: it says where it falls
        for known in _boundary_releases(rng.package, m.group(2)):
            if not spec.contains(known):
                ambiguous.append(f"{known} (outside `{clause}`)")
    assert ambiguous == [], (f"{rng.where} = {rng.spec!r} leaves known releases out at its bound: {ambiguous}. "
                             "Say where they fall: write the bound on the pre/post release (`<=X.Y.Zrc1`, "
                             "`>=X.Y.Zrc1`, `==X.Y.*`), as the row's sources put it.")


_QUOTED = re.compile(r"vllm_ascend-([0-9][0-9A-Za-z.]*?)\.tar\.gz|\(v([0-9][0-9A-Za-z.]*)\)")


@pytest.mark.parametrize("rng", [r for r in RANGES if " serve_rule " in r.where or " release_rule " in r.where],
                         ids=lambda r: r.where)
def test_a_serve_rule_covers_every_release_its_sources_quote(rng: Range):
    quoted = {a or b for s in rng.sources for a, b in _QUOTED.findall(s)}
    assert quoted, f"{rng.where}: no release named in its sources"
    outside = sorted(v for v in quoted if not SpecifierSet(rng.spec).contains(v))
    assert outside == [], f"{rng.where} = {rng.spec!r} does not cover releases its sources quote: {outside}"


def test_the_property_catches_the_pep440_trap():
    """The failure this file exists for, on a made-up row: `<0.18.0` leaves the known 0.18.0rc1 out."""
    assert "0.18.0rc1" in _boundary_releases("vllm-ascend", "0.18.0")
    assert not SpecifierSet(">=0.10.0rc1,<0.18.0").contains("0.18.0rc1")
    assert not SpecifierSet(">=0.18.0").contains("0.18.0rc1")
    assert SpecifierSet(">=0.10.0rc1,<=0.18.0rc1").contains("0.18.0rc1")


def test_the_rows_fixed_by_this_property_now_judge_their_quoted_pre_releases():
    m = load_matrix()
    assert [r.id for r in m.serve_rules_for("310P", "0.18.0rc1", "dtype")] == ["HW-310P-001"]
    assert [r.id for r in m.serve_rules_for("310P", "0.23.0rc1", "required_flag")] == ["HW-310P-008"]
    assert m.serve_rules_for("310P", "0.23.0", "required_flag") == []  # the 0.23.0 sdist has no 310P tutorial
    ids = [a.id for a in m.matching_advisories({"vllm-ascend": "0.21.0rc1", "cann": "8.5.0-beta.1"})]
    assert "ADV-2026-007" in ids
