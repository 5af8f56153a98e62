"""Property tests: every parser, the version module and the snapshot/matrix/config loaders, fed random text and
mutations of real captures. The only exception allowed out of a parser is ParseError; out of a loader, InputError.

Bounded to run in seconds (quick tier): a fixed number of examples per property, no deadline per example.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ascend_doctor.core.errors import InputError, ParseError  # noqa: E402
from ascend_doctor.parsers import clean_paste, parser_kinds  # noqa: E402
from ascend_doctor.text.redact import redact_argv, redact_text  # noqa: E402
from ascend_doctor.text.textsafe import escape_text, json_escape_surrogates, xml_text  # noqa: E402
from ascend_doctor.text.versions import SpecifierSet, Version, parse_version, try_parse_version  # noqa: E402
from tests.helpers import DATA, corpus_files, read_corpus  # noqa: E402

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
KINDS = parser_kinds()
HUGE = "9" * 4301  # past Python's int() digit limit


def _captures() -> list[str]:
    texts = []
    for d in ("npu_smi", "hccn", "ascend_files"):
        for p in sorted((DATA / d).glob("*")):
            texts.append(p.read_text(encoding="utf-8", errors="replace"))
    for kind in ("npu_smi_info", "npu_smi_health", "npu_smi_board", "npu_smi_topo", "hccn_tool", "cann_version"):
        for p in corpus_files(kind):
            texts.append(read_corpus(p)[1])
    return texts


CAPTURES = _captures()

# Edits that real pastes and broken tools produce: inserted garbage, cut lines, a number blown up to 4,301 digits,
# undecodable bytes (as lone surrogates), CRLF, NULs.
_edit = st.one_of(
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.text(max_size=40)),
    st.tuples(st.just("cut"), st.integers(0, 10**6), st.integers(0, 200)),
    st.tuples(st.just("huge"), st.integers(0, 10**6), st.just(HUGE)),
    st.tuples(st.just("every number huge"), st.just(0), st.just(HUGE)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.sampled_from(["\udcff", "\x00", "\r\n", ":", " : ",
                                                                         "NPU ID : ", "0x", "-" * 80, "|", ".",
                                                                         "1.2.3"])),
)


def _mutate(text: str, edits) -> str:
    for kind, pos, arg in edits:
        pos = pos % (len(text) + 1)
        if kind == "cut":
            text = text[:pos] + text[pos + arg:]
        elif kind == "every number huge":
            text = re.sub(r"\d+", arg, text)
        else:
            if kind == "huge":  # replace the number at pos (if any) with a huge one
                while pos < len(text) and text[pos].isdigit():
                    pos += 1
            text = text[:pos] + arg + text[pos:]
    return text


mutated = st.builds(_mutate, st.sampled_from(CAPTURES), st.lists(_edit, min_size=1, max_size=6))
noise = st.text(alphabet=st.characters(codec="utf-8"), max_size=400) | st.text(max_size=200)


def _parse_all(text: str) -> None:
    for name, (func, _) in KINDS.items():
        try:
            func(text)
        except ParseError:
            pass


@FAST
@given(mutated)
def test_parsers_raise_only_parse_error_on_mutated_captures(text):
    _parse_all(text)


@FAST
@given(noise)
def test_parsers_raise_only_parse_error_on_random_text(text):
    _parse_all(text)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_parser_refuses_random_bytes(kind):
    """A parser that recognises nothing says so: 100 KB of random bytes is never a valid capture."""
    data = os.urandom(100_000).decode("utf-8", "replace")
    func, _ = KINDS[kind]
    with pytest.raises(ParseError):
        func(data)


@pytest.mark.parametrize("kind", ["npu-smi-board", "npu-smi-common", "npu-smi-usages", "npu-smi-ecc",
                                  "npu-smi-info"])
def test_a_4301_digit_number_is_a_parse_error_or_ignored(kind):
    func, _ = KINDS[kind]
    text = f"NPU ID : 0\nChip Count : {HUGE}\n"
    try:
        fact = func(text)
    except ParseError:
        return
    assert getattr(fact, "chip_count", None) is None


def test_a_malformed_decimal_is_a_parse_error():
    """`float()` on the `[\\d.]+` a tool's line matched raised ValueError (exit 3 from `parse hccn-tool`)."""
    func, _ = KINDS["hccn-tool"]
    ping = ("hccn_tool -i 0 -ping -g address 10.0.0.2\nPING 10.0.0.2\n64 bytes from 10.0.0.2: time={t} ms\n"
            "3 packets transmitted, 3 received, {loss}% packet loss\n")
    assert func(ping.format(t="0.051", loss="0")).devices[0].ping.times_ms == [0.051]
    for t, loss in (("1.2.3", "0"), ("0.05", "1..0"), ("9" * 400, "0")):
        with pytest.raises(ParseError):
            func(ping.format(t=t, loss=loss))


@FAST
@given(st.text(max_size=60) | st.from_regex(r"[0-9vV]{0,3}[0-9.:+_\-a-zA-Z]{0,30}", fullmatch=True))
def test_versions_raise_only_parse_error(text):
    try:
        parse_version(text)
    except ParseError:
        pass
    try_parse_version(text)


_version_text = st.from_regex(r"(?:[0-9A-Za-z]{1,3}:)?\d{1,3}(?:\.\d{1,3}){0,3}(?:\.(?:RC|rc|T|alpha|b)\d{0,3})?"
                              r"(?:\.\d{1,2})?(?:\+[a-z0-9]{1,6})?", fullmatch=True)


@FAST
@given(st.lists(_version_text, min_size=2, max_size=8))
def test_any_two_versions_compare_and_sort_consistently(texts):
    vs = [v for v in (try_parse_version(t) for t in texts) if v is not None]
    ordered = sorted(vs)
    for a, b in zip(ordered, ordered[1:]):
        assert a <= b and not b < a
    for a in vs:
        for b in vs:
            assert (a < b) + (a == b) + (a > b) == 1


def test_version_regressions():
    assert try_parse_version("271dev" + HUGE) is None
    with pytest.raises(ParseError):
        Version("1." + HUGE)
    assert (Version("0:8.0.0") < Version("V:8.0.0")) in (True, False)  # comparable, no TypeError
    assert sorted([Version("V:8.0.0"), Version("0:8.0.0"), Version("W:8.0.0")])


@FAST
@given(st.text(max_size=40), _version_text)
def test_specifiers_raise_only_parse_error(spec, version):
    try:
        s = SpecifierSet(spec)
    except ParseError:
        return
    try:
        s.contains(version)
    except ParseError:
        pass


@FAST
@given(st.text(max_size=300))
def test_text_helpers_never_raise(text):
    clean_paste(text)
    redact_text(text)
    redact_text(text, code=True)
    redact_argv(text.split())
    escape_text(text).encode("utf-8")
    xml_text(text).encode("utf-8")
    json.loads(json_escape_surrogates(json.dumps(text, ensure_ascii=False)))


# Loaders ------------------------------------------------------------------------------------------------------------
def _snapshot_docs():
    base = {"format": "ascend-doctor-snapshot", "version": 1}
    json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                               lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                            max_size=3),
                               max_leaves=12)
    keys = st.sampled_from(["env", "commands", "files", "dirs", "links", "disk", "python_envs", "system",
                            "collected_at", "description", "notes", "junk"])
    return st.dictionaries(keys, json_values, max_size=4).map(lambda d: {**base, **d})


@FAST
@given(_snapshot_docs())
def test_snapshot_loader_raises_only_input_error(tmp_path_factory, doc):
    from ascend_doctor.seam.snapshot import load_snapshot

    p = tmp_path_factory.mktemp("snap") / "s.json"
    p.write_text(json.dumps(doc))
    try:
        load_snapshot(p)
    except InputError:
        pass


@pytest.mark.parametrize("text", [
    '{"format": "ascend-doctor-snapshot", "version": 1, "env": ' + "[" * 100000 + "]" * 100000 + "}",
    '{"format": "ascend-doctor-snapshot", "version": 1, "disk": {"/": {"total_bytes": ' + HUGE + "}}}",
    "[" * 100000,
    '{"format": "ascend-doctor-snapshot", "version": 1, "env": {"X": "\\udc80"}}',
])
def test_snapshot_loader_regressions(tmp_path: Path, text):
    from ascend_doctor.seam.snapshot import load_snapshot

    p = tmp_path / "s.json"
    p.write_text(text)
    try:
        load_snapshot(p)
    except InputError as exc:
        assert str(p) in str(exc)


@FAST
@given(st.text(max_size=300) | st.builds(lambda k, v: f"[options]\n{k} = {v}\n",
                                          st.sampled_from(["fail_on", "select", "probe_timeout", "python", "x"]),
                                          st.sampled_from(['"warning"', "[1, 2]", HUGE, "-1", '"a"', "{a=1}"])))
def test_config_and_matrix_loaders_raise_only_input_error(tmp_path_factory, text):
    from ascend_doctor.core.config import load_config
    from ascend_doctor.knowledge.matrix import load_matrix

    p = tmp_path_factory.mktemp("cfg") / "ascend-doctor.toml"
    p.write_text(text, encoding="utf-8", errors="surrogateescape")
    for load in (lambda: load_config(str(p)), lambda: load_matrix([str(p)])):
        try:
            load()
        except InputError:
            pass


@pytest.mark.parametrize("text", ["a = " + "[" * 100000 + "]" * 100000, "a = " + HUGE,
                                  "[options]\nprobe_timeout = " + HUGE])
def test_toml_loader_regressions(tmp_path: Path, text):
    from ascend_doctor.core.config import load_config

    p = tmp_path / "c.toml"
    p.write_text(text)
    with pytest.raises(InputError):
        load_config(str(p))
