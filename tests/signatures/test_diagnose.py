"""diagnose(): the diagnosis of real (corpus) and hand-written logs, priority, kinds, excerpts, prefilter exactness."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.signatures import KINDS
from ascend_doctor.knowledge.signatures import diagnose as _diagnose
from tests.helpers import CORPUS, DATA, corpus_files, corpus_params, read_corpus


def diagnose(text, kinds=("error", "warning"), path=None):
    """The shipped catalogue, or the file at `path` in its place (`diagnose --signatures FILE`)."""
    k = Knowledge()
    return _diagnose(text, k.instead("signatures/error-signatures", path) if path else k.signatures, kinds=kinds)


def load_signatures():
    return Knowledge().signatures.signature

HAND = DATA / "signatures"


def ids(matches) -> list:
    """The signatures that explain the log: generic ones kept as `also_seen` beside a specific match are left out
    (test_the_fallback_beside_a_specific_match_is_also_seen checks those)."""
    return [m.signature.id for m in matches if not m.also_seen]


def also_seen(matches) -> list:
    return [(m.signature.id, m.line) for m in matches if m.also_seen]


# What each public error log means, read by eye (ordered by first occurrence in the log).
CORPUS_EXPECTED = {
    "ascend-pytorch-24-no-module-torch_npu._C.txt": ["pta-torch_npu-_C-missing"],
    "ascend-samples-11-atc-EZ3003-no-ops-kernel.txt": ["atc-EZ3003"],
    "blog-atc-EC0010-decorator-missing-traceback.txt": ["atc-EC0010"],
    "chatlog-310B-ais-bench-libascendcl-not-found.txt": ["pta-libascendcl-missing"],
    # torch_npu init 507033 -> EE1001 context-null follow-on -> root: TsdOpen failed
    "notes-507033-TsdOpen-failed-set-device.txt": ["acl-507033", "cann-EE1001", "cann-TsdOpen-failed"],
    # Ray rewrote ASCEND_RT_VISIBLE_DEVICES: set-device 107001, EE1001 'Set visible device failed'
    "vllm-ascend-168-ray-setdevice-107001-EE1001-invalid-device.txt":
        ["acl-107001", "pta-ERR00100", "cann-EE1001", "cann-EE1001-visible-device"],
    # HcclAllreduce error 6 -> EI0006 socket timeout, createLink to each peer
    "vllm-ascend-486-hccl-EI0006-socket-timeout-createlink.txt":
        ["pta-ERR01100", "hccl-EI0006", "hccl-transport-init-error"],
    "vllm-plugin-FL-129-set-random-seed-importerror.txt": ["vllm-set-random-seed-import"],
    "vllm-recipes-51-invalid-tool-call-parser-openai.txt": ["vllm-invalid-tool-parser"],
}


@pytest.mark.parametrize("path", corpus_params("error_logs"))
def test_corpus_error_log_diagnosis(path: Path):
    assert path.name in CORPUS_EXPECTED, f"new corpus log {path.name}: read it and add its expected diagnosis"
    _, body = read_corpus(path)
    got = diagnose(body)
    assert ids(got) == CORPUS_EXPECTED[path.name]
    assert all(m.signature.kind == "error" for m in got)
    for m in got:  # the excerpt is the matching line, and really matches
        assert re.search(m.signature.pattern, m.excerpt), m.signature.id
        assert m.excerpt in body.splitlines()[m.line - 1]


@pytest.mark.parametrize("path", corpus_params("error_logs"))
def test_corpus_positive_signal_only_with_all_kinds(path: Path):
    _, body = read_corpus(path)
    positive = [m for m in diagnose(body, kinds=KINDS) if m.signature.kind == "positive"]
    expected = ["vllm-platform-ascend-activated"] if "Platform plugin ascend is activated" in body else []
    assert ids(positive) == expected


# Hand-written logs (realistic, not copied) so the suite means something without the corpus.
HAND_EXPECTED = {
    "import-torch-npu-libatb.log": ["pta-libatb-missing"],
    "torch-npu-atb-undefined-symbol.log": ["pta-atb-undefined-symbol"],
    "npu-smi-dcmi-8005.log": ["npusmi-drvmng-loglevel", "dcmi-8005"],
    "hccl-notify-wait-timeout.log": ["pta-watchdog-timeout", "hccl-EI0002", "pta-ERR02200"],
    "client-tool-messages-400.log": ["openai-tool-calls-not-followed"],
    "clean-serve.log": [],
}


@pytest.mark.parametrize("name", sorted(HAND_EXPECTED))
def test_hand_written_log_diagnosis(name: str):
    text = (HAND / name).read_text(encoding="utf-8")
    assert ids(diagnose(text)) == HAND_EXPECTED[name]


def test_hand_written_logs_all_have_expectations():
    assert sorted(p.name for p in HAND.glob("*.log")) == sorted(HAND_EXPECTED)


def test_clean_log_shows_harmless_and_healthy_lines_only_with_all_kinds():
    text = (HAND / "clean-serve.log").read_text(encoding="utf-8")
    got = diagnose(text, kinds=KINDS)
    assert [(m.signature.id, m.signature.kind, m.line) for m in got] == [
        ("vllm-platform-ascend-activated", "positive", 4), ("vllm-no-module-vllm-C", "info", 5)]
    assert ids(diagnose(text, kinds=("info",))) == ["vllm-no-module-vllm-C"]


def test_dcmi_warning_is_a_warning_and_the_code_an_error():
    got = [m for m in diagnose((HAND / "npu-smi-dcmi-8005.log").read_text(encoding="utf-8")) if not m.also_seen]
    assert [(m.signature.kind, m.line) for m in got] == [("warning", 2), ("error", 3)]
    assert got[1].excerpt == "dcmi module initialize failed. ret is -8005"
    assert ids(diagnose("DrvMngGetConsoleLogLevel failed.\n", kinds=("error",))) == []


# -- priority: specific entries decide, fallbacks only when nothing specific matched ----------------------------
WRAPPER = ("RuntimeError: SetDevice:torch_npu/csrc/core/npu/NPUFunctions.cpp:90 NPU function error: "
           "aclrtSetDevice(device), error code is {code}")


def test_fallback_alone_when_no_specific_signature_matches():
    # 123456 is not an ACL code we know: only the generic wrapper decoder can say something.
    assert ids(diagnose(WRAPPER.format(code=123456))) == ["pta-npu-function-error"]


def test_specific_signature_suppresses_the_fallback():
    assert ids(diagnose(WRAPPER.format(code=107001))) == ["acl-107001"]


def test_the_fallback_beside_a_specific_match_is_also_seen():
    got = diagnose("[ERROR] GE(1234): build op model failed, result = 500001\nEE9999: Inner Error\n")
    assert ids(got) == ["acl-500001"]  # the ACL 500001 signature reads `result = 500001` too
    assert also_seen(got) == [("cann-inner-error-9xxx", 2)]
    assert also_seen(diagnose("EE9999: Inner Error\n")) == []  # alone, a generic match is the explanation


def test_fallback_import_skew_vs_specific_set_random_seed():
    generic = "ImportError: cannot import name 'FusedMoEState' from 'vllm.model_executor.layers.fused_moe'"
    specific = "ImportError: cannot import name 'set_random_seed' from 'vllm.utils.torch_utils' (/x.py)"
    assert ids(diagnose(generic)) == ["vllm-import-skew-generic"]
    assert ids(diagnose(generic + "\n" + specific)) == ["vllm-set-random-seed-import"]


def test_info_or_positive_specific_does_not_suppress_an_error_fallback():
    text = "INFO Platform plugin ascend is activated\n" + WRAPPER.format(code=123456)
    assert ids(diagnose(text)) == ["pta-npu-function-error"]
    # with every kind, the info decoder of the numeric ACL family (1xxxxx: environment/call error) joins in
    assert ids(diagnose(text, kinds=KINDS)) == ["vllm-platform-ascend-activated", "pta-npu-function-error",
                                               "acl-family-rules"]


def test_info_fallback_decoders_show_with_all_kinds_when_nothing_specific():
    # EE1099 is not in the catalogue: the code-format decoder explains it (info), but it does not count as an error.
    assert ids(diagnose("EE1099: [PID: 1] something odd")) == []
    assert ids(diagnose("EE1099: [PID: 1] something odd", kinds=KINDS)) == ["cann-code-format"]


def test_priority_with_a_custom_catalogue(tmp_path):
    rows = []
    for sid, prio, kind, pat in (("generic", "fallback", "error", r"failed"),
                                 ("exact", "specific", "error", r"disk \w+ failed"),
                                 ("hint", "specific", "info", r"hint")):
        rows.append(f'[[signature]]\nid = "{sid}"\nfamily = "t"\nkind = "{kind}"\npriority = "{prio}"\n'
                    f'component = "t"\npattern = \'{pat}\'\nmeaning = "m"\nfix = "f"\nsource = "s"\n'
                    f'confidence = "inferred"\n')
    p = tmp_path / "c.toml"
    p.write_text('schema_version = 1\nupdated = "2026-01-01"\n' + "\n".join(rows), encoding="utf-8")
    assert ids(diagnose("job failed\n", path=str(p))) == ["generic"]
    assert ids(diagnose("job failed\ndisk sda failed\n", path=str(p))) == ["exact"]
    assert ids(diagnose("hint\njob failed\n", path=str(p), kinds=KINDS)) == ["hint", "generic"]


# -- ordering, line numbers, excerpts --------------------------------------------------------------------------
def test_ordered_by_first_occurrence_with_line_numbers():
    text = "\n".join(["ok", "EI0006: socket", "ok", "ImportError: libatb.so: cannot open shared object file",
                      "EI0006 again"])
    got = diagnose(text)
    assert [(m.signature.id, m.line) for m in got] == [("hccl-EI0006", 2), ("pta-libatb-missing", 4)]


def test_same_line_matches_ordered_by_column():
    line = ("EE1001: The argument is invalid.Reason: Set visible device failed, invalid device=3, "
            "input visible devices:3")
    assert ids(diagnose(line)) == ["cann-EE1001", "cann-EE1001-visible-device"]


def test_crlf_logs_and_excerpts_trimmed():
    text = "start\r\n    dcmi module initialize failed. ret is -8005   \r\nend\r\n"
    (m,) = [x for x in diagnose(text) if not x.also_seen]
    assert (m.signature.id, m.line, m.excerpt) == ("dcmi-8005", 2, "dcmi module initialize failed. ret is -8005")


def test_long_line_excerpt_keeps_the_match_in_view():
    line = "x" * 5000 + " NPU out of memory. Tried to allocate 2.00 GiB " + "y" * 5000
    (m,) = diagnose(line)
    assert m.signature.id == "pta-npu-oom"
    assert "NPU out of memory. Tried to allocate" in m.excerpt and len(m.excerpt) <= 310


def test_empty_and_binary_like_text():
    assert diagnose("") == []
    assert diagnose("\x00\x01\ufffd\n\n\n") == []


def test_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError):
        diagnose("x", kinds=("fatal",))


# -- the prefilter never changes the result ------------------------------------------------------------------------
def brute_force(text: str) -> set:
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    return {s.id for s in load_signatures() if any(re.search(s.pattern, ln, re.MULTILINE) for ln in lines)}


FACTS_MD = CORPUS.parent / "facts" / "error-codes.md"


def _texts():
    yield from ((p.name, p.read_text(encoding="utf-8")) for p in sorted(HAND.glob("*.log")))
    yield from ((p.name, read_corpus(p)[1]) for p in corpus_files("error_logs"))
    if FACTS_MD.is_file():  # quotes real messages for most signatures: a dense equivalence check
        yield FACTS_MD.name, FACTS_MD.read_text(encoding="utf-8")


@pytest.mark.parametrize("name, text", list(_texts()))
def test_prefilter_agrees_with_brute_force(name, text):
    comp = Knowledge().signatures.matcher()
    assert {comp.sigs[i].id for i in comp.first_matches(text)} == brute_force(text)


def test_prefilter_agrees_with_brute_force_on_one_line_per_signature():
    # A line built from each pattern's own required literals (plus the catalogue's ACL/DCMI shapes) exercises the
    # prefilter for every signature, including case-insensitive ones and those without any literal.
    lines = ["error code is 507033", "runtime result = 107001", "ret=207018", "ret is -8020", "ret is -9005",
             "EE9999", "EZ9999 fault kernel_name=x", "E39999", "EH0003", "EL0011", "W21234: x", "I31234 ",
             "MIE04E0A0B0C", "AN ASSISTANT MESSAGE WITH 'tool_calls' MUST BE FOLLOWED BY TOOL MESSAGES",
             "ALLOC SQ CQ FAIL", "Health          : Alarm", "  Invalid card id.  "]
    comp = Knowledge().signatures.matcher()
    for (_ci, word) in comp.by_literal:
        lines.append(f"prefix {word} suffix")
    text = "\n".join(lines)
    assert {comp.sigs[i].id for i in comp.first_matches(text)} == brute_force(text)
    assert len(brute_force(text)) > 30


def test_the_lowered_text_searched_in_chunks_finds_what_the_whole_text_finds(monkeypatch):
    """The case-insensitive literals are searched in the paste lower-cased a chunk of whole lines at a time (a 10 MB
    paste with one emoji lower-cased at once peaked at 208 MiB). Tiny chunks: a literal on the line that straddles a
    chunk's nominal end, a line longer than a chunk, a chunk whose lower-casing changes its length (İ) and an emoji."""
    from ascend_doctor.knowledge import signatures

    comp = Knowledge().signatures.matcher()
    logs = "\n".join(text for _name, text in _texts())
    text = "🐛 x\n" + logs + "\nİ " + logs.upper() + "\n" + "y" * 300 + logs.upper()[:2000]
    whole = comp.first_matches(text)
    for size in (7, 64, 1000):
        monkeypatch.setattr(signatures, "_LOWER_CHUNK", size)
        assert comp.first_matches(text) == whole
    assert len(whole) >= 10 and {comp.sigs[i].id for i in whole} == brute_force(text)  # the hand-written logs alone: 13


def test_prefilter_with_nested_and_overlapping_literals(tmp_path):
    # "Set device" is a prefix of "Set device failed" and overlaps "device failed with": the prefilter must still
    # offer all three signatures on a line that contains all three strings.
    rows = []
    for sid, pat in (("short", r"Set device\b"), ("long", r"Set device failed"), ("overlap", r"device failed with"),
                     ("ci", r"(?i)SET DEVICE FAILED WITH"), ("none", r"[xyz]\d{3}q")):
        rows.append(f'[[signature]]\nid = "{sid}"\nfamily = "t"\nkind = "error"\npriority = "specific"\n'
                    f'component = "t"\npattern = \'{pat}\'\nmeaning = "m"\nfix = "f"\nsource = "s"\n'
                    f'confidence = "inferred"\n')
    p = tmp_path / "c.toml"
    p.write_text('schema_version = 1\nupdated = "2026-01-01"\n' + "\n".join(rows), encoding="utf-8")
    got = diagnose("noise\nrtSetDevice: Set device failed with 107001, y123q\n", path=str(p))
    assert sorted(ids(got)) == ["ci", "long", "none", "overlap", "short"]
    assert ids(diagnose("Set devices\n", path=str(p))) == []


def test_the_kernel_config_error_is_named_and_a_near_text_is_not():
    """#39: `Parse dynamic kernel config fail` (vllm-ascend#4859, gpustack#1514) had no signature; triage and
    diagnose offered only the generic EZ9999 decoder."""
    cat = {s.id: s for s in Knowledge().signatures.signature}
    sig = cat["aclnn-parse-dynamic-kernel-config"]
    line = ("ERROR 12-10 10:52:09 [patch_core.py:58] EZ9999[PID: 3473945] 2025-12-10-10:52:09.632.838 "
            "AclNN_Inner_Error(EZ9999):  Parse dynamic kernel config fail.")
    assert re.search(sig.pattern, line)
    assert not re.search(sig.pattern, "Parse dynamic kernel config successfully.")
    assert "CANN108" in sig.fix
