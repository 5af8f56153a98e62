"""The shipped matrix agrees, row by row, with the sourced facts in ../shared/facts/matrix-facts.md."""

from __future__ import annotations

import re

import pytest

from ascend_doctor.knowledge.matrix import load_matrix
from ascend_doctor.text.versions import parse_version
from tests.matrix.facts import cp_range, expand_shorthand, tables_after


def same(a: str, b: str) -> bool:
    return parse_version(a) == parse_version(b)


def member(value: str, values) -> bool:
    return any(same(value, v) for v in values)


@pytest.fixture(scope="module")
def m():
    return load_matrix()


def test_official_matrix_rows_match(m):
    """§1.1: every row of the official vllm-ascend matrix, every column."""
    (rows,) = tables_after("### 1.1")
    assert len(rows) == 40
    for ver, vllm, py, cann, torch_pair, triton, mooncake in rows:
        r = m.vllm_ascend_release(ver)
        assert r is not None, ver
        assert r.listed == "matrix", ver
        assert {parse_version(v) for v in vllm.split("/")} == {parse_version(v) for v in r.vllm}, ver
        assert r.python == py, ver
        assert member(cann, r.cann), (ver, cann, r.cann)
        torch, npu = [x.strip() for x in torch_pair.split("/")]
        assert member(torch, r.torch), ver
        assert member(npu, r.torch_npu), (ver, npu, r.torch_npu)
        if triton == "N/A":
            assert r.triton_ascend == [], ver
        else:
            assert member(triton, r.triton_ascend), ver
        assert (r.mooncake is None) if mooncake == "N/A" else same(mooncake, r.mooncake), ver
    listed = {r.version for r in m.releases if r.listed == "matrix"}
    # The 2026-12-01 audit (matrix-audit-2026-12-01.md §1.1) found five more rows in other copies of the official
    # table: v0.27.1rc1 in its own sdist, and the four rows PR #799 removed.
    assert listed - {row[0].lstrip("v") for row in rows} == {"0.27.1rc1", "0.8.4rc1", "0.7.3rc2", "0.7.3rc1",
                                                              "0.7.1rc1"}


def _pin(cell: str):
    m = re.fullmatch(r"==\s*([\w.+]+)", cell.strip())
    return m.group(1) if m else None


def test_tag_rows_match_their_own_files(m):
    """§1.2: per tag, the exact pins in requirements.txt are the first value; the commit is recorded."""
    tags, pypi_only = tables_after("### 1.2", 2)
    assert len(tags) == 42
    for tag, torch, npu, triton, transformers, pyreq, cann_docker, _py, vllm_docker, _other in tags:
        ver, commit = re.match(r"v(\S+) \(`(\w+)`\)", tag).groups()
        r = m.vllm_ascend_release(ver)
        assert r is not None and r.commit == commit, ver
        for cell, values in ((torch, r.torch), (npu, r.torch_npu), (triton, r.triton_ascend)):
            if _pin(cell):
                assert values and same(values[0], _pin(cell)), (ver, cell, values)
        assert r.transformers == (None if transformers == "–" else transformers), ver
        docker_cann = re.search(r"(\d+\.\d+\.(?:rc\d+|\d+))", cann_docker).group(1)
        assert member(docker_cann, r.cann), (ver, docker_cann, r.cann)
        docker_vllm = re.match(r"v([\w.]+)", vllm_docker).group(1)
        assert member(docker_vllm, r.vllm), ver
        if r.listed == "tag":
            assert r.python == pyreq or r.python.startswith(pyreq + ","), ver
    assert len(pypi_only) == 6
    for ver, torch, npu, triton, transformers, pyreq, _cann, vllm_docker, _readme in pypi_only:
        r = m.vllm_ascend_release(ver)
        assert r is not None, ver
        assert same(r.torch[0], _pin(torch)) and same(r.torch_npu[0], _pin(npu)), ver
        assert same(r.triton_ascend[0], _pin(triton)) and r.transformers == transformers, ver
        assert member(re.match(r"v([\w.]+)", vllm_docker).group(1), r.vllm), ver


def test_pypi_only_and_tag_only_releases_present(m):
    # In no copy of the official table (audit §1.1: all refs and all sdists checked): values from their own files.
    for ver in ("0.25.1rc1", "0.28.0rc1", "0.29.0rc1", "0.30.0rc2"):
        r = m.vllm_ascend_release(ver)
        assert r is not None and r.listed in ("tag", "pypi"), ver
    for ver in ("0.7.1rc1", "0.7.3rc1", "0.7.3rc2", "0.8.4rc1"):
        assert m.vllm_ascend_release(ver).pypi == "sdist-only", ver  # audit §1.5


def test_conflicts_are_encoded_not_picked(m):
    """§1.5: where vllm-ascend's documents disagree, both values are accepted and the row says who says what."""
    r = m.vllm_ascend_release("0.18.0")
    assert {"8.5.0", "8.5.1"} <= set(r.cann) and "README" in r.conflict["cann"]
    assert "2.9.0.post1+git4c901a4" in r.torch_npu and r.torch_npu[0] == "2.9.0"
    r = m.vllm_ascend_release("0.13.0")
    assert r.cann[0] == "8.5.0" and "8.3.RC2" in r.cann
    r = m.vllm_ascend_release("0.30.0rc2")
    assert set(r.cann) == {"9.2.0", "9.1.0"} and "9.2.0_20260930220649" in r.conflict["cann"]


def test_torch_npu_table_matches(m):
    """§2.1: torch_npu -> torch -> CANN, current and end-of-life tables."""
    (rows,) = tables_after("### 2.1")
    checked = 0
    for npu_cell, _branch, torch_cell, cann in rows:
        npu_cell = npu_cell.replace("(EOL table)", "").strip()
        npus = [x.strip() for x in npu_cell.split(" / ")]
        torches = [x.strip() for x in torch_cell.split(" / ")] if torch_cell else [None] * len(npus)
        for npu, torch in zip(npus, torches):
            row = m.torch_npu_row(npu)
            assert row is not None, npu
            assert member(cann, row.cann), (npu, cann, row.cann)
            if torch:
                assert same(row.torch, torch), npu
            checked += 1
    assert checked >= 36


def test_torch_python_table_matches(m):
    """§2.2: PyTorch -> Python."""
    (rows,) = tables_after("### 2.2")
    assert len(rows) == 7
    for torch_cell, py_cell in rows:
        pys = {re.sub(r"\(.*\)", "", p).strip() for p in py_cell.split(",")}
        for torch in (t.strip() for t in torch_cell.split(",")):
            for minor in range(6, 16):
                py = f"3.{minor}"
                assert m.python_ok_for_torch(torch, py) is (py in pys), (torch, py)


def test_torch_npu_wheel_tags_match(m):
    """§2.3: the CPython tags PyPI ships per torch_npu version."""
    (rows,) = tables_after("### 2.3")
    assert len(rows) == 11
    for versions_cell, tags_cell in rows:
        tags = cp_range(tags_cell)
        versions = [v for part in versions_cell.split(",") for v in expand_shorthand(part.strip())]
        for v in versions:
            row = m.torch_npu_row(v)
            assert row is not None, v
            assert row.wheel_cp == tags, (v, row.wheel_cp, tags)


def test_ascend_docs_hdk_pairs_match(m):
    """§3.1, Ascend/docs table: CANN -> 910b/310p driver and firmware."""
    (rows,) = tables_after("### 3.1")
    assert len(rows) == 8
    for cann_cell, drv_a2, fw_a2, drv_310p, fw_310p, _hdk in rows:
        for cann in (c.strip() for c in cann_cell.split(" / ")):
            pairs = m.hdk_for_cann(cann)
            for hw, drv, fw in (("A2", drv_a2, fw_a2), ("310P", drv_310p, fw_310p)):
                drv = drv.split(" ")[0]
                match = [h for h in pairs if hw in h.hardware]
                assert len(match) == 1, (cann, hw)
                assert member(drv, match[0].driver) and same(match[0].firmware, fw), (cann, hw)


def test_hicann_release_notes_pairs_match(m):
    """§3.1, hicann/release-management table: each CANN's paired HDK versions."""
    (rows,) = tables_after("From HC")
    assert len(rows) == 9
    for cann_cell, hdk_cell, _where in rows:
        cell = hdk_cell.split("(pair)")[0]
        drivers = re.findall(r"\d+\.\d+\.(?:RC\d+|\d+)", cell)
        assert drivers, cann_cell
        for cann in (c.strip() for c in cann_cell.split(" / ")):
            pairs = m.hdk_for_cann(cann)
            assert pairs, cann
            named = {parse_version(d) for h in pairs for d in h.driver}
            if cann == "8.5.0-beta.1":  # the audit (matrix-audit-2026-12-01.md §3.2) found 25.5.0 there too
                assert {parse_version(d) for d in drivers} | {parse_version("25.5.0")} == named, (cann, drivers)
                continue
            assert {parse_version(d) for d in drivers} == named, (cann, drivers)


def test_tool_parser_table_matches(m):
    """§4.1: the per-release ✓/– columns of tool-call parser names."""
    (rows,) = tables_after("### 4.1")
    header = ["deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v4", "deepseek_v41", "hermes", "qwen3_coder",
              "qwen3_xml", "kimi_k2"]
    assert len(rows) == 14
    for row in rows:
        vllm, marks = row[0], row[1:10]
        for name, mark in zip(header, marks):
            assert m.has_parser(vllm, "tool_parser", name) is (mark == "✓"), (vllm, name)
