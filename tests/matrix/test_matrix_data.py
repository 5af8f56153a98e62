"""The shipped matrix files: valid, complete headers, every version and specifier parses, rows hang together."""

from __future__ import annotations

import re
import sys

import pytest

from ascend_doctor.knowledge.files import matrix_files as builtin_matrix_files
from ascend_doctor.knowledge.matrix import load_matrix
from ascend_doctor.knowledge.matrix_schema import TABLES, MatrixFile
from ascend_doctor.knowledge.tomlread import read_toml
from ascend_doctor.text.versions import SpecifierSet, parse_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Fields holding one version / a list of versions / a specifier, per table (what the schema validates; here checked
# independently on the raw TOML so a schema slip cannot hide a bad string).
VERSION_FIELDS = {
    "vllm_ascend_release": ("version", "vllm", "cann", "torch", "torch_npu", "triton_ascend", "mooncake"),
    "torch_npu": ("version", "torch", "cann"),
    "torch_python": ("torch",),
    "cann_hdk": ("cann", "driver", "firmware"),
    "vllm_parsers": ("vllm", "torch"),
    "vllm_models": ("vllm", "after"),
    "vllm_options": ("vllm", "after"),
    "transformers_models": ("transformers", "after"),
    "package_index": ("versions",),
}
SPEC_FIELDS = {"vllm_ascend_release": ("python", "transformers"), "torch_npu": ("requires_torch",),
               "cann_driver_rule": ("cann", "driver"), "serve_rule": ("vllm_ascend",)}


@pytest.fixture(scope="module")
def m():
    return load_matrix()


def test_shipped_files_found_and_policy_excluded():
    names = [p.name for p in builtin_matrix_files()]
    assert {"vllm-ascend.toml", "torch-npu.toml", "cann-hdk.toml", "vllm-parsers.toml", "advisories.toml"} <= set(names)
    assert "host-policy.toml" not in names


@pytest.mark.parametrize("path", builtin_matrix_files(), ids=lambda p: p.name)
def test_each_file_validates_with_header(path):
    data = read_toml(path)
    mf = MatrixFile.model_validate(data)
    assert mf.schema_version == 1 and mf.updated is not None and mf.min_tool_version is not None


@pytest.mark.parametrize("path", builtin_matrix_files(), ids=lambda p: p.name)
def test_every_version_and_specifier_parses(path):
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    count = 0
    for table in TABLES:
        for row in data.get(table, []):
            assert row.get("source"), (path.name, table, row)
            for field in VERSION_FIELDS.get(table, ()):
                value = row.get(field)
                for v in ([value] if isinstance(value, str) else value or []):
                    parse_version(v)
                    count += 1
            for field in SPEC_FIELDS.get(table, ()):
                value = row.get(field)
                for s in ([value] if isinstance(value, str) else value or []):
                    SpecifierSet(s)
                    count += 1
            for s in row.get("when", {}).values():
                SpecifierSet(s)
                count += 1
            for v in row.get("cann_per_hardware", {}).values():
                parse_version(v)
    versioned = [t for t in TABLES if data.get(t) and (VERSION_FIELDS.get(t) or SPEC_FIELDS.get(t))]
    assert count > 0 or not versioned  # model-families.toml has no version fields


def test_every_release_has_one_row_and_every_paired_vllm_its_parser_list(m):
    """Counts follow the data (a new release is a new row, not an edit here): one row per release, and a parser list
    for every vLLM a vllm-ascend release pairs with, the same releases in the parser and model tables."""
    assert len(m.releases) >= 49  # 40 official + 5 tag-only + 4 PyPI-only on 2026-12-04
    assert len({r.version for r in m.releases}) == len(m.releases)
    listed = {str(p.vllm) for p in m.parsers}
    paired = {v for r in m.releases for v in r.vllm}
    assert not {v for v in paired if v not in listed and v != "0.11.0rc3"}, "a paired vLLM has no parser list"
    assert [p.vllm for p in m.parsers] == [v.vllm for v in m.vllm_models]
    assert len(m.advisories) >= 8
    assert len({a.id for a in m.advisories}) == len(m.advisories)


def test_release_pins_have_torch_npu_rows(m):
    """Every torch_npu a release names is a torch_npu row, and built for the release's torch."""
    for r in m.releases:
        for npu in r.torch_npu:
            row = m.torch_npu_row(npu)
            assert row is not None, (r.version, npu)
            assert r.torch and parse_version(row.torch) == parse_version(r.torch[0]), (r.version, npu)


def test_release_python_range_has_wheels(m):
    """Where a release ships wheels, each wheel's Python lies inside the release's Python range."""
    for r in m.releases:
        for tag in r.wheel_cp:
            py = f"3.{tag[3:]}"
            assert SpecifierSet(r.python).contains(py), (r.version, tag, r.python)


def test_hardware_history(m):
    # 300I: experimental in v0.9.1rc1 and v0.9.2rc1 (their release notes, Dockerfile.310p), "will NOT be included" in
    # the v0.9.1rc2 notes (the 0.9.1 line), back from v0.10.0rc1.
    assert m.vllm_ascend_release("0.9.2rc1").hardware == ["A2", "310P"]
    assert m.vllm_ascend_release("0.9.1rc1").experimental_hardware == ["310P"]
    assert "310P" not in m.vllm_ascend_release("0.9.1rc2").hardware + m.vllm_ascend_release("0.9.1").hardware
    assert "A3" in m.vllm_ascend_release("0.10.0rc1").hardware
    assert "A5" not in m.vllm_ascend_release("0.20.2rc1").hardware
    assert "A5" in m.vllm_ascend_release("0.21.0rc1").hardware
    assert m.vllm_ascend_release("0.21.0rc1").cann_per_hardware == {"310P": "9.1.0-beta.1"}


def test_wheel_availability(m):
    assert m.vllm_ascend_release("0.7.3").pypi == "sdist-only"
    assert m.vllm_ascend_release("0.11.0").wheel_cp == ["cp39", "cp310", "cp311"]
    assert m.vllm_ascend_release("0.20.2rc1").wheel_cp == ["cp310", "cp311"]
    assert m.vllm_ascend_release("0.26.0rc1").wheel_cp == ["cp310", "cp311", "cp312"]
    assert m.vllm_ascend_release("0.23.0.post1").pypi == "sdist-only"


def test_every_source_names_a_repo_or_registry(m):
    """A source is `owner/repo[@commit]:path`, `owner/repo#issue`, a `pypi:` artefact, or a vendor document's https
    address (Huawei's release notes live on hiascend.com): something one can open."""
    rows = (m.releases + m.torch_npu + m.torch_python + m.hdk + m.driver_rules + m.parsers + m.advisories)
    for row in rows:
        for s in row.source:
            assert s.startswith(("pypi:", "https://")) or re.match(r"[\w.-]+/[\w.-]+([@#:]|$)", s), (row, s)


def test_every_paired_vllm_release_is_recorded(m):
    """Each vLLM release a vllm-ascend release targets has its parser names and model registry recorded — except
    0.11.0rc3 (vllm-ascend v0.11.0rc0), which is on PyPI neither as sdist nor as wheel (audit §0)."""
    recorded = {str(parse_version(p.vllm)) for p in m.parsers}
    paired = {str(parse_version(v)) for r in m.releases for v in r.vllm}
    assert paired - recorded == {"0.11.0rc3"}
    assert {"0.19.0", "0.20.0", "0.20.1", "0.31.0", "0.32.0"} <= recorded  # the DeepSeek boundaries


def test_an_advisory_handed_to_a_serve_check_names_a_real_one():
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.knowledge.matrix import load_matrix

    checks = load_registry(entry_points=False).checks
    handed = {a.id: a.judged_by for a in load_matrix().advisories if a.judged_by}
    assert handed  # ADV-2026-006/007: the graph budget, judged with the command by SERVE312
    assert all(code in checks and checks[code].stage == "serve" for code in handed.values()), handed
