"""User matrix files layered over the shipped one, and the one-line InputErrors for bad files."""

from __future__ import annotations

import pytest

from ascend_doctor.core.errors import InputError
from ascend_doctor.knowledge.matrix import load_matrix
from tests.helpers import DATA

D = DATA / "matrix"


def test_user_row_replaces_shipped_row_by_release_id():
    shipped = load_matrix()
    assert shipped.vllm_ascend_release("0.13.0").cann == ["8.5.0", "8.3.RC2"]
    m = load_matrix([str(D / "golden-stack.toml")])
    row = m.vllm_ascend_release("0.13.0")
    assert row.cann == ["8.5.1"] and row.hardware == ["A2"]
    assert row.source == ["acme/platform-docs:golden-stacks/2026-11.md"]
    # replaced, not duplicated (the user wrote "v0.13.0")
    assert len([r for r in m.releases if r.vllm == ["0.13.0"] and r.version.lstrip("v") == "0.13.0"]) == 1
    assert len(m.releases) == len(shipped.releases) + 1
    # the shipped matrix itself is untouched
    assert load_matrix().vllm_ascend_release("0.13.0").cann == ["8.5.0", "8.3.RC2"]


def test_user_rows_are_added():
    m = load_matrix([str(D / "golden-stack.toml")])
    assert m.vllm_ascend_release("0.31.0rc1") is not None
    assert m.nearest_release("0.31.0rc1")[1] == "exact"
    assert m.newest_known("vllm-ascend") == "0.31.0rc1"
    ids = [a.id for a in m.matching_advisories({"driver": "25.0.rc1.1", "firmware": "7.7.0.1.231"})]
    assert ids == ["ADV-9000-001"]
    assert str(D / "golden-stack.toml") in m.files


def test_user_advisory_replaces_by_id(tmp_path):
    f = tmp_path / "adv.toml"
    f.write_text('schema_version = 1\n[[advisory]]\nid = "ADV-2026-001"\ntitle = "narrowed"\nseverity = "warning"\n'
                 'when = { vllm-ascend = "==0.14.0rc1", vllm = "==0.13.0" }\nsymptom = ["x"]\nfix = "y"\n'
                 'source = ["acme/notes"]\n', encoding="utf-8")
    m = load_matrix([str(f)])
    adv = [a for a in m.advisories if a.id == "ADV-2026-001"]
    assert len(adv) == 1 and adv[0].severity == "warning"
    assert m.matching_advisories({"vllm-ascend": "0.15.0rc1", "vllm": "0.13.0"}) == []


def test_later_file_wins(tmp_path):
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    row = ('schema_version = 1\n[[torch_python]]\ntorch = "2.9.0"\npython = [{py}]\nsource = ["acme/notes"]\n')
    a.write_text(row.format(py='"3.11"'), encoding="utf-8")
    b.write_text(row.format(py='"3.12"'), encoding="utf-8")
    m = load_matrix([str(a), str(b)])
    assert m.python_ok_for_torch("2.9.0", "3.12") is True
    assert m.python_ok_for_torch("2.9.0", "3.11") is False


def test_edited_file_is_reread(tmp_path):
    f = tmp_path / "m.toml"
    row = 'schema_version = 1\n[[torch_python]]\ntorch = "2.9.0"\npython = [{py}]\nsource = ["acme/notes"]\n'
    f.write_text(row.format(py='"3.11"'), encoding="utf-8")
    assert load_matrix([str(f)]).python_ok_for_torch("2.9.0", "3.12") is False
    f.write_text(row.format(py='"3.11", "3.12"'), encoding="utf-8")
    assert load_matrix([str(f)]).python_ok_for_torch("2.9.0", "3.12") is True


@pytest.mark.parametrize("name, expected", [
    ("bad-toml.toml", "is not valid TOML"),
    ("bad-unknown-key.toml", "torch_npu[0] (2.9.0).cuda: unknown key"),
    ("bad-missing-source.toml", "cann_hdk[0] (hdk-acme).source: required key missing"),
    ("bad-specifier.toml", "advisory[0] (ADV-9000-003).when: vllm-ascend: not a version specifier"),
    ("bad-version.toml", "vllm_ascend_release[0] (0.40.0).cann[0]: not a version"),
    ("bad-duplicate.toml", "torch_python[1] (v2.9.0).torch: duplicate id"),
    ("bad-unexplained-conflict.toml", "cann has 2 values"),
    ("bad-schema-version.toml", "schema_version 2 is not supported"),
])
def test_invalid_user_file_is_one_line_input_error(name, expected):
    path = str(D / name)
    with pytest.raises(InputError) as info:
        load_matrix([path])
    msg = str(info.value)
    assert path in msg and expected in msg
    assert "\n" not in msg


def test_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read matrix file"):
        load_matrix([str(tmp_path / "nope.toml")])


def test_empty_source_list_rejected(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('schema_version = 1\n[[torch_python]]\ntorch = "2.9.0"\npython = ["3.11"]\nsource = []\n',
                 encoding="utf-8")
    with pytest.raises(InputError, match=r"torch_python\[0\] \(2.9.0\).source: every row needs a non-empty source"):
        load_matrix([str(f)])


def test_min_tool_version_enforced(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('schema_version = 1\nmin_tool_version = "99.0"\n', encoding="utf-8")
    with pytest.raises(InputError, match="min_tool_version: needs ascend-doctor >= 99.0"):
        load_matrix([str(f)])
