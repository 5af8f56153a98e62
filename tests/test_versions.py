"""The version algebra: parsing, ordering and specifiers over every string shape seen on Ascend stacks."""

from __future__ import annotations

import re

import pytest
from packaging.version import Version as PepVersion

from ascend_doctor.core.errors import ParseError
from ascend_doctor.text.versions import (
    SpecifierSet,
    Version,
    cann_version_from_cfg_value,
    parse_innerversion,
    parse_version,
    try_parse_version,
    version_in,
)
from tests.helpers import CORPUS, corpus_files

ISSUE_STRINGS = [
    "8.0.RC3", "8.1.RC1.alpha001", "8.1.T6", "9.2.0-beta.2", "24.1.rc2", "24.1.rc3.7", "23.0.rc3.3",
    "24.1.rc1.b030", "21.0.4.B030", "25.0.rc1.1", "7.6.0.1.220:8.0.0", "V100R001C19SPC001B124",
    "2.7.1.dev20250724", "2.9.0.post1+git4c901a4", "0.11.0+empty", "0.1.dev1+gbdb2cdd", "v0.13.0rc3",
    "8.5.0", "8.5.1", "7.5.0.1.129", "7.1.0.6.220", "8.0.0.B100", "7.6.T13.0.B094:8.0.T63", "9.2.0_20260930220649",
]


@pytest.mark.parametrize("text", ISSUE_STRINGS)
def test_issue_strings_parse_and_keep_text(text):
    v = parse_version(f"  {text}\n")
    assert str(v) == text
    assert v == parse_version(text) and hash(v) == hash(parse_version(text))


def _assert_ascending(texts):
    vs = [parse_version(t) for t in texts]
    for a, b in zip(vs, vs[1:]):
        assert a < b, f"{a} should sort below {b}"
        assert not b < a and b > a and a != b
    assert sorted(reversed(vs)) == vs


@pytest.mark.parametrize(
    "chain",
    [
        ["8.0.RC1", "8.0.RC2", "8.0.RC3", "8.0.0", "8.0.1", "8.1.RC1"],
        ["8.1.T6", "8.1.RC1.alpha001", "8.1.RC1", "8.1.RC2", "8.1.0"],
        ["24.1.rc1", "24.1.rc1.b030", "24.1.rc2", "24.1.rc2.2", "24.1.rc3", "24.1.rc3.7", "24.1.0", "25.0.rc1.1"],
        ["23.0.rc2", "23.0.rc3", "23.0.rc3.3", "23.0.0", "23.0.3", "23.0.7"],
        ["9.2.0-beta.1", "9.2.0-beta.2", "9.2.0"],
        ["2.7.1.dev20250724", "2.7.1", "2.7.1.post1", "2.7.1.post2", "2.8.0"],
        ["2.5.1", "2.5.1.post1.dev20250528", "2.5.1.post1.dev20250619", "2.5.1.post1"],
        ["0.1.dev1+gbdb2cdd", "0.11.0rc3", "0.11.0", "v0.13.0rc3", "0.13.0"],
        ["8.5.0", "8.5.1", "8.5.2", "9.0.0"],
        ["7.1.0.6.220", "7.3.0.1.231", "7.5.0.1.129", "7.7.0.1.231"],
        ["V100R001C13B222", "V100R001C13SPC005B246", "V100R001C19SPC001B124", "V100R001C21B058"],
        ["7.5.0.1.129:8.0.RC3", "7.6.0.1.220:8.0.0", "8.1.RC1"],
        ["21.0.4", "21.0.4.B030", "21.0.5"],
    ],
)
def test_ordering_chains(chain):
    _assert_ascending(chain)


def test_case_insensitive_rc_and_equalities():
    assert parse_version("8.0.RC3") == parse_version("8.0.rc3")
    assert parse_version("8.0") == parse_version("8.0.0")
    assert parse_version("v0.13.0rc3") == parse_version("0.13.0rc3")
    # a version.cfg pair orders by its public part
    assert parse_version("7.6.0.1.220:8.0.0").main_key == parse_version("8.0.0").main_key
    assert parse_version("7.6.0.1.220:8.0.0").internal == "7.6.0.1.220"


def test_local_labels_only_break_ties():
    cpu, plain, nxt = parse_version("2.5.1+cpu"), parse_version("2.5.1"), parse_version("2.5.2")
    assert plain < cpu < nxt
    assert cpu != plain
    assert parse_version("2.9.0.post1+git4c901a4") > parse_version("2.9.0.post1")
    assert parse_version("2.9.0.post1+git4c901a4") < parse_version("2.9.0.post2")


def test_base_and_prerelease():
    assert parse_version("8.0.RC3").base() == (8, 0)
    assert parse_version("24.1.rc3.7").base() == (24, 1)
    assert parse_version("8.0.0").base() == (8, 0, 0)
    assert parse_version("7.6.0.1.220:8.0.0").base() == (8, 0, 0)
    for pre in ["8.0.RC3", "24.1.rc3.7", "8.1.T6", "8.1.RC1.alpha001", "9.2.0-beta.2", "2.7.1.dev20250724",
                "v0.13.0rc3", "24.1.rc1.b030"]:
        assert parse_version(pre).is_prerelease(), pre
    for final in ["8.0.0", "2.9.0.post1+git4c901a4", "0.11.0+empty", "21.0.4.B030", "7.5.0.1.129", "2.5.1+cpu"]:
        assert not parse_version(final).is_prerelease(), final


def test_agrees_with_packaging_on_pep440_strings():
    texts = ["2.7.1.dev20250724", "2.7.1", "2.7.1.post1", "2.5.1.post1.dev20250528", "2.5.1.post1", "1.0a1",
             "1.0b2", "1.0rc1", "1.0rc1.post1", "1.0", "1.0.post1.dev1", "0.11.0rc3", "0.11.0", "3.10", "3.9.18",
             "2.5.1+cpu", "2.5.1", "0.1.dev1+gbdb2cdd", "1.0.dev1", "1.0a1.dev1"]
    ours = sorted(texts, key=parse_version)
    theirs = sorted(texts, key=PepVersion)
    assert [PepVersion(t) for t in ours] == [PepVersion(t) for t in theirs]


@pytest.mark.parametrize(
    "text",
    ["", "   ", "garbage", "8.0.RC3 foo", "abc1.0", "1.0.0+", "1..0", "8.0.XYZ1", "1.0+bad label", "v", ":8.0.0"],
)
def test_garbage_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_version(text)
    assert try_parse_version(text) is None


def test_try_parse_none():
    assert try_parse_version(None) is None
    assert try_parse_version("8.0.RC3") == parse_version("8.0.RC3")


def test_immutable_but_copyable():
    import copy
    import pickle

    w = parse_version("7.6.0.1.220:8.0.RC3+x")
    assert copy.deepcopy(w) == w and pickle.loads(pickle.dumps(w)) == w and str(copy.copy(w)) == w.raw
    v = parse_version("8.0.0")
    with pytest.raises(AttributeError):
        v.raw = "9"  # type: ignore[misc]
    assert {v, parse_version("8.0")} == {v}


@pytest.mark.parametrize(
    "version,spec,expected",
    [
        # the line rule: a shorter final lower bound admits its line's pre-releases
        ("8.0.RC2", ">=8.0", True),
        ("8.0.T6", ">=8.0", True),
        ("8.0.RC2", ">=8.0.0", False),
        ("7.0.RC1", ">=8.0", False),
        ("24.1.rc3.7", ">=24.1", True),
        ("9.2.0-beta.2", ">=9.2", True),
        ("9.2.0-beta.2", ">=9.2.0", False),
        ("2.7.1.dev20250724", ">=2.7.1", False),
        ("8.0.RC3", ">=8.0.RC1", True),
        ("8.0.T6", ">=8.0.RC1", False),
        ("8.1.RC1.alpha001", ">=8.1.RC1", False),
        ("8.0.0", ">=8.0.RC1", True),
        ("8.0.RC1", "!=8.0.RC1", False),
        ("8.0.rc1", "!=8.0.RC1", False),
        ("8.0.RC2", "!=8.0.RC1", True),
        # wildcards
        ("8.5.0", "==8.5.*", True),
        ("8.5.1", "==8.5.*", True),
        ("8.5.RC1", "==8.5.*", True),
        ("8.50.0", "==8.5.*", False),
        ("8.6.0", "==8.5.*", False),
        ("8.5.0", "!=8.5.*", False),
        ("8.3.RC2", "!=8.5.*", True),
        ("26.0.rc1", "==26.0.RC1.*", True),
        ("26.0.rc1.1", "==26.0.RC1.*", True),
        ("26.0.RC1.B020", "==26.0.RC1.*", True),
        ("26.0.rc10", "==26.0.RC1.*", False),
        ("26.0.0", "==26.0.RC1.*", False),
        ("26.0.rc2", "==26.0.RC1.*", False),
        ("26.0.rc1.1", "==26.0.RC1", False),
        ("26.0.rc1.1", "!=26.0.RC1.*", False),
        ("8.1.RC1.alpha001", "==8.1.RC1.*", True),
        # python ranges and upper bounds
        ("3.11.14", ">=3.10,<3.13", True),
        ("3.13.0", ">=3.10,<3.13", False),
        ("3.13.0rc1", ">=3.10,<3.13", False),
        ("3.9.18", ">=3.10,<3.13", False),
        ("8.1.RC1", "<8.1", False),
        ("8.0.1", "<8.1", True),
        ("8.1.RC1", "<8.1.0", False),
        ("8.1.RC1", "<=8.1.0", True),
        ("8.0.RC2", ">8.0", False),
        ("8.0.1", ">8.0", True),
        # compatible release
        ("2.9.0", "~=2.9.0", True),
        ("2.9.0.post1+git4c901a4", "~=2.9.0", True),
        ("2.9.5", "~=2.9.0", True),
        ("2.10.0", "~=2.9.0", False),
        ("2.8.0", "~=2.9.0", False),
        # exact pins and local labels / builds
        ("2.5.1", "==2.5.1", True),
        ("2.5.1+cpu", "==2.5.1", True),
        ("2.5.1.post1", "==2.5.1", False),
        ("2.5.1", "==2.5.1+cpu", False),
        ("2.5.1+cpu", "==2.5.1+cpu", True),
        ("24.1.rc1.b030", "==24.1.rc1", True),
        ("8.0", "==8.0.0", True),
        ("v0.13.0rc3", "==0.13.0rc3", True),
        ("8.0.RC3", "8.0.RC3", True),
        ("8.0.RC3", "===8.0.RC3", True),
        ("8.0.rc3", "===8.0.RC3", False),
        ("7.6.0.1.220:8.0.0", "==8.0.0", True),
        # either of two groups: a fix in a dev build of the final the release pins
        ("3.2.0", "<3.2.0.dev20260322 || ==3.2.0", True),
        ("3.2.0rc1", "<3.2.0.dev20260322 || ==3.2.0", False),
        ("3.1.0", "<3.2.0.dev20260322 || ==3.2.0", True),
        ("3.2.0.dev20260322", "<3.2.0.dev20260322 || ==3.2.0", False),
        ("3.2.1", "<3.2.0.dev20260322 || ==3.2.0", False),
        ("0.9.5", ">=0.9,<0.10 || >=1.2", True),
        # everything
        ("8.1.T6", "", True),
        ("8.1.T6", "*", True),
    ],
)
def test_specifiers(version, spec, expected):
    assert version_in(version, spec) is expected
    assert SpecifierSet(spec).contains(parse_version(version)) is expected


@pytest.mark.parametrize(
    "spec",
    [">=", "=>8.0", ">=8.0,", "<1.0 ||", "|| ==2.0", "<1.0 || *", "==8.RC*", ">=8.5.*", "~=2", "abc def", ">= 8.0 junk", "==2.5.1+cpu.*", "==junk.*"],
)
def test_bad_specifiers_raise(spec):
    with pytest.raises(ParseError):
        SpecifierSet(spec)


def test_specifier_str_and_unparseable_version():
    assert str(SpecifierSet(" >=3.10, <3.13 ")) == ">=3.10,<3.13"
    assert str(SpecifierSet("")) == ""
    assert str(SpecifierSet("<3.2.0.dev20260322||==3.2.0")) == "<3.2.0.dev20260322 || ==3.2.0"
    with pytest.raises(ParseError):
        SpecifierSet(">=8.0").contains("not a version")


def test_cfg_value_and_innerversion():
    assert cann_version_from_cfg_value("[7.6.0.1.220:8.0.0]") == "8.0.0"
    assert cann_version_from_cfg_value("7.6.0.1.220:8.0.0") == "8.0.0"
    assert cann_version_from_cfg_value(" [1.84.15.1.310:6.0.1] ") == "6.0.1"
    assert cann_version_from_cfg_value("[7.6.T13.0.B094:8.0.T63]") == "8.0.T63"
    for bad in ["", "[]", "[7.6.0.1.220:]", "[7.6.0.1.220:junk!]"]:
        with pytest.raises(ParseError):
            cann_version_from_cfg_value(bad)
    assert parse_innerversion("V100R001C19SPC001B124") == {"V": 100, "R": 1, "C": 19, "SPC": 1, "B": 124}
    assert parse_innerversion("V100R001C21B058") == {"V": 100, "R": 1, "C": 21, "B": 58}
    assert parse_innerversion("V100R001C13") == {"V": 100, "R": 1, "C": 13}
    with pytest.raises(ParseError):
        parse_innerversion("8.0.0")


# --- every version string in the shared corpus and the draft matrix must parse -------------------------------

_VALUE_RE = re.compile(
    r"(?:^|[\s|])(?:[A-Za-z_]*[Vv]ersion[A-Za-z_]*|npu-smi|torch[-_]npu|torch|vllm[-_]ascend|vLLM|vllm)"
    r"\s*(?:==|=|:|\s)\s*(\[[^\s]*\]|[vV]?\d[^\s,;|'()]*)"
)


def _version_tokens(value: str):
    """Version strings in one captured value; `[a,b],[c]` lists are split, a trailing '.' (range prefix) dropped."""
    value = value.rstrip(".,;)'")
    items = re.split(r"[\[\],]+", value) if value.startswith("[") else [value]
    for item in items:
        item = item.strip().rstrip(".")
        if item:
            yield item


def _corpus_versions():
    found = set()
    for kind in ("cann_version", "collect_env", "npu_smi_info", "npu_smi_board", "npu_smi_health", "error_logs"):
        for path in corpus_files(kind):
            body = path.read_text(encoding="utf-8").partition("\n\n")[2]
            for m in _VALUE_RE.finditer(body):
                for tok in _version_tokens(m.group(1)):
                    found.add((path.name, tok))
    return sorted(found)


_CORPUS_VERSIONS = _corpus_versions()


@pytest.mark.skipif(not _CORPUS_VERSIONS, reason=f"{CORPUS} not present")
@pytest.mark.parametrize("source,text", _CORPUS_VERSIONS or [("none", "0")])
def test_every_corpus_version_parses(source, text):
    v = parse_version(text)
    assert str(v) == text


def test_corpus_scan_finds_the_known_strings():
    if not _CORPUS_VERSIONS:
        pytest.skip(f"{CORPUS} not present")
    texts = {t for _, t in _CORPUS_VERSIONS}
    assert {"24.1.rc3.7", "8.1.T6", "V100R001C19SPC001B124", "7.6.0.1.220:8.0.0", "2.7.1.dev20250724"} <= texts


def _matrix_values():
    from ascend_doctor.knowledge.tomlread import read_toml

    path = CORPUS.parent / "facts" / "matrix-draft.toml"
    if not path.is_file():
        return []
    data = read_toml(path)
    keys = {"vllm_ascend", "vllm", "cann", "cann_docker_a2", "torch", "torch_npu", "driver", "firmware_910b",
            "triton_ascend"}
    out = set()
    for table in data.values():
        if not isinstance(table, list):
            continue
        for row in table:
            for k in keys & set(row):
                # values may carry prose ("8.1.RC1 (vllm-ascend v0.9.1rc1)", "26.0.RC1 | 25.5.2"): take version-shaped
                # words; `25.5.X` / `v0.10.x` family wildcards are not versions
                for word in re.split(r"[\s|/,;()]+", str(row[k])):
                    if re.match(r"^v?\d+\.\d", word) and not re.search(r"\.[xX]\b", word):
                        out.add((k, word.rstrip(".:")))
            if "python" in row:
                out.add(("python-spec", str(row["python"]).split()[0]))
    return sorted(out)


_MATRIX = _matrix_values()


@pytest.mark.skipif(not _MATRIX, reason="facts/matrix-draft.toml not present")
@pytest.mark.parametrize("field,text", _MATRIX or [("none", "0")])
def test_every_matrix_draft_version_parses(field, text):
    if field == "python-spec":
        assert SpecifierSet(text).contains("3.10.12") or SpecifierSet(text).contains("3.9.18")
    else:
        assert str(parse_version(text)) == text


def test_version_class_is_the_parse_result():
    assert isinstance(parse_version("8.0.0"), Version)


def test_release_line_is_the_major_minor_of_the_first_clause():
    """What the CANN x HDK inference reads of a published grid's cells (Matrix._older_than_the_line)."""
    from ascend_doctor.text.versions import SpecifierSet

    assert SpecifierSet("==8.2.RC1").release_line() == (8, 2)
    assert SpecifierSet(">=24.1.rc2,<24.1.1").release_line() == (24, 1)
    assert SpecifierSet("==25.0.rc1.*").release_line() == (25, 0)
    assert SpecifierSet("==25.0.*").release_line() == (25, 0)
    assert SpecifierSet("<3.2.0.dev1 || ==3.2.0").release_line() == (3, 2)
    assert SpecifierSet("").release_line() is None
