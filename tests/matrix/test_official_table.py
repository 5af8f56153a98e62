"""`matrix pins` agrees with the official vllm-ascend release table, row by row, for every release that was ever in it.

OFFICIAL is that table as upstream wrote it (vLLM · Python · Stable CANN · torch / torch_npu · Triton Ascend):
  - 39 rows of docs/source/community/versioning_policy.md in the vllm_ascend-0.30.0rc2 sdist (PyPI, sha256 05cb5144…),
  - v0.24.0rc1 from tag v0.24.0rc1 (412cda2), its only copy; v0.27.1rc1 from its own sdist's copy,
  - v0.8.4rc1, v0.7.3rc2, v0.7.3rc1, v0.7.1rc1 from the copy at tag v0.8.5rc1 (ec27af3) /
    vllm_ascend-0.8.5rc1.tar.gz docs/source/developer_guide/versioning_policy.md: PR #799 (804ebb17bd) removed them.
Read with `matrix sync` from the PyPI sdists and checked against ../shared/facts/matrix-audit-2026-12-01.md §1.2.
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.knowledge.matrix import load_matrix
from ascend_doctor.text.versions import parse_version

OFFICIAL = [
    ('0.30.0rc1', '0.30.0', '>=3.10,<3.13', '9.2.0', '2.10.0', '2.10.0.post4', '3.2.2'),
    ('0.27.1rc1', '0.27.1', '>=3.10,<3.13', '9.1.0', '2.10.0', '2.10.0.post4', '3.2.2'),
    ('0.26.0rc1', '0.26.0', '>=3.10,<3.13', '9.1.0', '2.10.0', '2.10.0.post4', '3.2.2'),
    ('0.24.0rc1', '0.24.0', '>=3.10,<3.13', '9.0.1', '2.10.0', '2.10.0.post2', '3.2.1'),
    ('0.23.0.post1', '0.23.0', '>=3.10,<3.13', '9.1.0', '2.10.0', '2.10.0.post4', '3.2.2'),
    ('0.23.0', '0.23.0', '>=3.10,<3.13', '9.1.0', '2.10.0', '2.10.0.post4', '3.2.2'),
    ('0.23.0rc1', '0.23.0', '>=3.10,<3.13', '9.0.1', '2.10.0', '2.10.0.post2', '3.2.1'),
    ('0.22.1rc1', '0.22.1', '>=3.10,<3.13', '9.0.0', '2.10.0', '2.10.0', '3.2.1'),
    ('0.21.0rc1', '0.21.0', '>=3.10,<3.13', '9.0.0', '2.10.0', '2.10.0', '3.2.1'),
    ('0.20.2rc1', '0.20.2', '>=3.10,<3.12', '9.0.0', '2.10.0', '2.10.0', '3.2.1'),
    ('0.19.1rc1', '0.19.1', '>=3.10,<3.12', '8.5.1', '2.9.0', '2.9.0', '3.2.0'),
    ('0.18.0', '0.18.0', '>=3.10,<3.12', '8.5.1', '2.9.0', '2.9.0.post1+git4c901a4', '3.2.0.dev20260322'),
    ('0.18.0rc1', '0.18.0', '>=3.10,<3.12', '8.5.1', '2.9.0', '2.9.0', '3.2.0'),
    ('0.17.0rc1', '0.17.0', '>=3.10,<3.12', '8.5.1', '2.9.0', '2.9.0', '3.2.0'),
    ('0.16.0rc1', '0.16.0', '>=3.10,<3.12', '8.5.1', '2.9.0', '2.9.0', '3.2.0'),
    ('0.15.0rc1', '0.15.0', '>=3.10,<3.12', '8.5.0', '2.9.0', '2.9.0', '3.2.0'),
    ('0.14.0rc1', '0.14.1', '>=3.10,<3.12', '8.5.0', '2.9.0', '2.9.0', '3.2.0'),
    ('0.13.0', '0.13.0', '>=3.10,<3.12', '8.5.0', '2.8.0', '2.8.0.post2', '3.2.0'),
    ('0.13.0rc3', '0.13.0', '>=3.10,<3.12', '8.5.1', '2.8.0', '2.8.0.post2', '3.2.0'),
    ('0.13.0rc2', '0.13.0', '>=3.10,<3.12', '8.5.0', '2.8.0', '2.8.0.post1', '3.2.0'),
    ('0.13.0rc1', '0.13.0', '>=3.10,<3.12', '8.3.RC2', '2.8.0', '2.8.0', 'N/A'),
    ('0.12.0rc1', '0.12.0', '>=3.10,<3.12', '8.3.RC2', '2.8.0', '2.8.0', 'N/A'),
    ('0.11.0', '0.11.0', '>=3.9,<3.12', '8.3.RC2', '2.7.1', '2.7.1.post1', 'N/A'),
    ('0.11.0rc3', '0.11.0', '>=3.9,<3.12', '8.3.RC2', '2.7.1', '2.7.1.post1', 'N/A'),
    ('0.11.0rc2', '0.11.0', '>=3.9,<3.12', '8.3.RC2', '2.7.1', '2.7.1', 'N/A'),
    ('0.11.0rc1', '0.11.0', '>=3.9,<3.12', '8.3.RC1', '2.7.1', '2.7.1', 'N/A'),
    ('0.11.0rc0', '0.11.0rc3', '>=3.9,<3.12', '8.2.RC1', '2.7.1', '2.7.1.dev20250724', 'N/A'),
    ('0.10.2rc1', '0.10.2', '>=3.9,<3.12', '8.2.RC1', '2.7.1', '2.7.1.dev20250724', 'N/A'),
    ('0.10.1rc1', '0.10.1/0.10.1.1', '>=3.9,<3.12', '8.2.RC1', '2.7.1', '2.7.1.dev20250724', 'N/A'),
    ('0.10.0rc1', '0.10.0', '>=3.9,<3.12', '8.2.RC1', '2.7.1', '2.7.1.dev20250724', 'N/A'),
    ('0.9.2rc1', '0.9.2', '>=3.9,<3.12', '8.1.RC1', '2.5.1', '2.5.1.post1.dev20250619', 'N/A'),
    ('0.9.1', '0.9.1', '>=3.9,<3.12', '8.2.RC1', '2.5.1', '2.5.1.post1', 'N/A'),
    ('0.9.1rc3', '0.9.1', '>=3.9,<3.12', '8.2.RC1', '2.5.1', '2.5.1.post1', 'N/A'),
    ('0.9.1rc2', '0.9.1', '>=3.9,<3.12', '8.2.RC1', '2.5.1', '2.5.1.post1', 'N/A'),
    ('0.9.1rc1', '0.9.1', '>=3.9,<3.12', '8.1.RC1', '2.5.1', '2.5.1.post1.dev20250528', 'N/A'),
    ('0.9.0rc2', '0.9.0', '>=3.9,<3.12', '8.1.RC1', '2.5.1', '2.5.1', 'N/A'),
    ('0.9.0rc1', '0.9.0', '>=3.9,<3.12', '8.1.RC1', '2.5.1', '2.5.1', 'N/A'),
    ('0.8.5rc1', '0.8.5.post1', '>=3.9,<3.12', '8.1.RC1', '2.5.1', '2.5.1', 'N/A'),
    ('0.8.4rc2', '0.8.4', '>=3.9,<3.12', '8.0.0', '2.5.1', '2.5.1', 'N/A'),
    ('0.8.4rc1', '0.8.4', '>=3.9,<3.12', '8.0.0', '2.5.1', '2.5.1.dev20250320', 'N/A'),
    ('0.7.3.post1', '0.7.3', '>=3.9,<3.12', '8.1.RC1', '2.5.1', '2.5.1', 'N/A'),
    ('0.7.3', '0.7.3', '>=3.9,<3.12', '8.1.RC1', '2.5.1', '2.5.1', 'N/A'),
    ('0.7.3rc2', '0.7.3', '>=3.9,<3.12', '8.0.0', '2.5.1', '2.5.1.dev20250320', 'N/A'),
    ('0.7.3rc1', '0.7.3', '>=3.9,<3.12', '8.0.0', '2.5.1', '2.5.1.dev20250308', 'N/A'),
    ('0.7.1rc1', '0.7.1', '>=3.9,<3.12', '8.0.0', '2.5.1', '2.5.1.dev20250218', 'N/A'),
]

# Releases whose own package pins another torch_npu / triton-ascend than the table (requirements.txt at the tag:
# torch-npu==2.9.0 @e18643f, ==2.8.0 @a17059a, ==2.7.1 @b6d63bb/2f1aed9; triton-ascend==3.2.0 @e18643f): the
# package's pin comes first and the table's value is carried as a documented conflict (audit §1.2, "not an error").
OWN_PIN_FIRST = {"0.18.0", "0.13.0rc2", "0.11.0rc3", "0.11.0"}


def _pins(version: str) -> dict:
    r = CliRunner().invoke(cli, ["matrix", "pins", "--vllm-ascend", version])
    assert r.exit_code == 0, r.output
    out = {}
    for line in r.output.splitlines():
        m = re.match(r"^([a-z-]+)==(\S+)(?:\s+#\s*other documents name: (.*))?", line)
        if m:
            out[m.group(1)] = [m.group(2)] + [x.strip() for x in (m.group(3) or "").split(",") if x.strip()]
    out["_text"] = r.output
    return out


def _same(a: str, b: str) -> bool:
    return parse_version(a) == parse_version(b)


def test_official_table_has_45_releases_all_listed_as_matrix():
    m = load_matrix()
    assert len(OFFICIAL) == 45 and len({r[0] for r in OFFICIAL}) == 45
    listed = {r.version for r in m.releases if r.listed == "matrix"}
    assert listed == {r[0] for r in OFFICIAL}


@pytest.mark.parametrize("row", OFFICIAL, ids=lambda r: r[0])
def test_pins_agree_with_the_official_table(row):
    version, vllm, python, cann, torch, torch_npu, triton = row
    pins = _pins(version)
    assert any(_same(v, pins["vllm"][0]) for v in vllm.split("/")), (version, pins["vllm"])
    assert _same(pins["torch"][0], torch), (version, pins["torch"])
    if version in OWN_PIN_FIRST:
        assert any(_same(torch_npu, v) for v in pins["torch-npu"][1:]), (version, pins["torch-npu"])
    else:
        assert _same(pins["torch-npu"][0], torch_npu), (version, pins["torch-npu"])
    if triton == "N/A":
        assert "triton-ascend" not in pins
    elif version in OWN_PIN_FIRST and version == "0.18.0":
        assert triton in pins["triton-ascend"][1:]
    else:
        assert _same(pins["triton-ascend"][0], triton), (version, pins["triton-ascend"])
    m = load_matrix()
    r = m.vllm_ascend_release(version)
    assert r.python == python, version
    assert any(_same(cann, c) for c in r.cann), (version, r.cann)
    assert f"# Python {python};" in pins["_text"]


def test_pins_name_the_index_for_pins_pypi_does_not_have():
    """triton-ascend 3.2.1/3.2.2 are not on PyPI (PyPI JSON 2026-12-01; vllm-ascend#10641); the triton-ascend
    maintainers point to the Huawei mirror (triton-lang/triton-ascend#900)."""
    text = _pins("0.23.0rc1")["_text"]
    assert "--extra-index-url https://mirrors.huaweicloud.com/ascend/repos/pypi" in text.splitlines()
    assert "# NOT ON PYPI triton-ascend==3.2.1: add --extra-index-url https://mirrors.huaweicloud.com" in text
    text = _pins("0.7.1rc1")["_text"]
    assert "# NOT ON PYPI torch-npu==2.5.1.dev20250218: no source names an index that serves it" in text
    assert "--extra-index-url" not in text
    assert "NOT ON PYPI vllm==0.11.0rc3" in _pins("0.11.0rc0")["_text"]
    assert "NOT ON PYPI" not in _pins("0.13.0")["_text"]  # every pin of 0.13.0 is on PyPI
