"""The shipped error-signature catalogue and its validation: every problem is an InputError naming file and key."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ascend_doctor.core.errors import InputError
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.files import shipped_file
from ascend_doctor.knowledge.signatures import diagnose as _diagnose
from tests.helpers import CORPUS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FACTS = CORPUS.parent / "facts" / "error-codes.toml"  # ../shared/facts, beside the corpus
SHIPPED = shipped_file("signatures/error-signatures")
TABLE = "signatures/error-signatures"


def load_signatures(path=None):
    """The shipped catalogue, or the file at `path` in its place (`diagnose --signatures FILE`)."""
    k = Knowledge()
    return (k.instead(TABLE, path) if path else k.signatures).signature


def diagnose(text, path=None, **kw):
    k = Knowledge()
    return _diagnose(text, k.instead(TABLE, path) if path else k.signatures, **kw)


def test_shipped_catalogue_validates():
    sigs = load_signatures()
    assert len(sigs) >= 179
    assert len({s.id for s in sigs}) == len(sigs)
    for s in sigs:
        re.compile(s.pattern, re.MULTILINE)
        assert s.source.strip() and s.meaning.strip() and s.fix.strip(), s.id


def test_shipped_catalogue_has_header_fields():
    data = tomllib.loads(SHIPPED.read_text(encoding="utf-8"))
    assert data["schema_version"] == 1
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", data["updated"])


def test_shipped_text_is_english_and_cites_no_unshipped_corpus():
    text = SHIPPED.read_text(encoding="utf-8")
    assert "meaning_zh" not in text and "shared/corpus" not in text
    for s in load_signatures():
        assert not re.search(r"[\u4e00-\u9fff]", s.meaning + s.fix), s.id


@pytest.mark.skipif(not FACTS.is_file(), reason="../shared/facts/error-codes.toml not present")
def test_every_researched_signature_is_in_the_catalogue():
    """The researched facts are where the catalogue started; it grows past them (signatures read from the trackers,
    #39 item 3), never loses one."""
    facts = tomllib.loads(FACTS.read_text(encoding="utf-8"))["signature"]
    ours = {s.id: s for s in load_signatures()}
    assert {f["id"] for f in facts} <= set(ours)
    for f in facts:
        s = ours[f["id"]]
        assert (s.kind, s.priority, s.family, s.confidence) == (f["kind"], f["priority"], f["family"],
                                                              f["confidence"]), f["id"]
        assert s.code == f.get("code"), f["id"]


@pytest.mark.skipif(not FACTS.is_file(), reason="../shared/facts/error-codes.toml not present")
def test_rewritten_acl_patterns_match_what_the_facts_patterns_match():
    # The ACL prefix `ret(?:\[| =|=|:)` was spelled out as `ret\[|ret =|ret=|ret:` so that the prefilter gets
    # 4-character literals instead of "ret"; the two must accept exactly the same lines.
    facts = {f["id"]: f["pattern"] for f in tomllib.loads(FACTS.read_text(encoding="utf-8"))["signature"]}
    samples = ["ret[207001", "ret = 207001", "ret=207001", "ret: 207001", "ret 207001", "return 207001",
               "error code is 207001", "runtime result = 207001", "ErrCode=207001", "retcode: 207001",
               "failed: 207001", "ret:2070011", "ret[ 207001]"]
    for s in load_signatures():
        if s.id in facts and s.pattern != facts[s.id]:
            assert s.id.startswith("acl-"), s.id
            for line in samples + [x.replace("207001", s.code or "") for x in samples]:
                assert bool(re.search(s.pattern, line)) == bool(re.search(facts[s.id], line)), (s.id, line)


def test_fixes_are_our_own_actions_not_the_vendor_boilerplate():
    # The vendor's generic "Rectify the fault based on the error information in the ascend log" says nothing a
    # platform engineer can act on; every fix must say what to look at or change instead.
    for s in load_signatures():
        assert s.fix.strip() != s.meaning.strip(), s.id
        assert "Rectify the fault based on the error information" not in s.fix, s.id
        assert not s.fix.lower().startswith("vendor"), s.id


# -- invalid catalogues ----------------------------------------------------------------------------------------
GOOD = """\
[[signature]]
id = "{id}"
family = "test"
kind = "error"
priority = "specific"
component = "test"
pattern = '{pattern}'
meaning = "m"
fix = "f"
source = "{source}"
confidence = "inferred"
"""


def _write(tmp_path: Path, *rows: str, header: str = 'schema_version = 1\nupdated = "2026-11-29"\n') -> str:
    p = tmp_path / "sigs.toml"
    p.write_text(header + "\n".join(rows), encoding="utf-8")
    return str(p)


def test_custom_catalogue_loads_and_diagnoses(tmp_path):
    path = _write(tmp_path, GOOD.format(id="a", pattern=r"\bBOOM\d+", source="here"))
    assert [s.id for s in load_signatures(path)] == ["a"]
    assert [m.signature.id for m in diagnose("x\nBOOM42 y\n", path=path)] == ["a"]


def test_bad_regex_names_file_entry_and_key(tmp_path):
    path = _write(tmp_path, GOOD.format(id="ok", pattern="fine", source="s"),
                  GOOD.format(id="broken", pattern="unbalanced (paren", source="s"))
    with pytest.raises(InputError) as ei:
        load_signatures(path)
    msg = str(ei.value)
    assert path in msg and "signature[1] (broken).pattern" in msg
    assert "does not compile" in msg


def test_duplicate_id_names_both_entries(tmp_path):
    path = _write(tmp_path, GOOD.format(id="twice", pattern="a", source="s"),
                  GOOD.format(id="twice", pattern="b", source="s"))
    dup = r"signature\[1\] \(twice\)\.id: duplicate id \(also signature\[0\]\)"
    with pytest.raises(InputError, match=dup):
        load_signatures(path)


def test_missing_source_is_refused(tmp_path):
    row = GOOD.format(id="nosrc", pattern="a", source="x").replace('source = "x"\n', "")
    path = _write(tmp_path, row)
    with pytest.raises(InputError, match=r"signature\[0\] \(nosrc\)\.source: required key missing"):
        load_signatures(path)


def test_blank_source_is_refused(tmp_path):
    path = _write(tmp_path, GOOD.format(id="blank", pattern="a", source="   "))
    with pytest.raises(InputError, match=r"\(blank\)\.source"):
        load_signatures(path)


def test_unknown_field_is_refused(tmp_path):
    path = _write(tmp_path, GOOD.format(id="extra", pattern="a", source="s") + 'meaning_zh = "x"\n')
    with pytest.raises(InputError, match=r"\(extra\)\.meaning_zh: unknown key"):
        load_signatures(path)


def test_bad_kind_is_refused(tmp_path):
    path = _write(tmp_path, GOOD.format(id="k", pattern="a", source="s").replace('kind = "error"', 'kind = "fatal"'))
    with pytest.raises(InputError, match=r"\(k\)\.kind"):
        load_signatures(path)


@pytest.mark.parametrize("header, key", [
    ('updated = "2026-11-29"\n', "schema_version"),
    ('schema_version = 1\n', "updated"),
    ('schema_version = 2\nupdated = "2026-11-29"\n', "schema_version"),
    ('schema_version = 1\nupdated = "x"\ncount = 3\n', "count"),
])
def test_header_problems_name_the_key(tmp_path, header, key):
    path = _write(tmp_path, GOOD.format(id="a", pattern="a", source="s"), header=header)
    with pytest.raises(InputError, match=rf"{re.escape(path)}: {key}"):
        load_signatures(path)


def test_unreadable_and_invalid_toml(tmp_path):
    with pytest.raises(InputError, match="cannot read signature catalogue"):
        load_signatures(str(tmp_path / "absent.toml"))
    p = tmp_path / "bad.toml"
    p.write_text("schema_version = = 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="is not valid TOML"):
        load_signatures(str(p))


def test_mined_signatures_match_their_thread_lines_and_not_their_near_misses():
    """A signature mined from a thread carries the thread's own line (`example`), which it must explain, and a near
    line (`near_miss`: the same code with another cause, a neighbouring line), which it must not; a generic
    (fallback) row may match a near miss, never this one."""
    sigs = load_signatures()
    mined = [s for s in sigs if s.example]
    assert mined
    problems = []
    for s in mined:
        for line in s.example:
            if s.id not in {m.signature.id for m in diagnose(line)}:
                problems.append(f"{s.id}: does not match its example {line!r}")
        for line in s.near_miss:
            if s.id in {m.signature.id for m in diagnose(line)}:
                problems.append(f"{s.id}: matches its near miss {line!r}")
    assert problems == []


def test_a_signature_names_only_checks_that_exist_and_its_threads():
    from ascend_doctor.core.registry import load_registry

    codes = set(load_registry(entry_points=False).checks)
    sigs = load_signatures()
    assert [s.id for s in sigs if s.check and s.check not in codes] == []
    # a row mined from the trackers cites the threads that confirmed it
    assert [s.id for s in sigs if s.example and s.confidence == "issue" and not s.threads] == []


def test_a_thread_that_is_not_a_github_url_is_refused(tmp_path):
    text = SHIPPED.read_text().replace(
        'threads = ["https://github.com/vllm-project/vllm-ascend/issues/4859"',
        'threads = ["vllm-ascend#4859"', 1)
    p = tmp_path / "sigs.toml"
    p.write_text(text)
    with pytest.raises(InputError, match="not a GitHub thread URL"):
        load_signatures(p)


def test_a_signature_supersedes_a_generic_reading_of_the_same_line_only():
    """vllm-ascend#1813's line matches the vendor facts' EZ1001 pattern ("the opp_kernel package is missing") and the
    precise one (the chip has no kernel for this operator); the precise one drops the generic match on that line,
    not on another line."""
    from ascend_doctor.knowledge.door import Knowledge
    from ascend_doctor.knowledge.signatures import diagnose

    cat = Knowledge().signatures
    line = ("RuntimeError: call aclnnMoeGatingTopKSoftmax failed, detail:EZ1001: [PID: 51715] Get regInfo failed, "
            "The binary_info_config.json of socVersion [ascend310p] does not support opType [MoeGatingTopKSoftmax].")
    assert [m.signature.id for m in diagnose(line, cat)] == ["cann-EZ1001-optype-not-for-soc"]
    other = "EZ1001: read binary_info_config.json failed"
    assert [m.signature.id for m in diagnose(line + "\n" + other, cat)] == ["cann-EZ1001-optype-not-for-soc",
                                                                              "cann-EZ1001-opp-kernel"]
