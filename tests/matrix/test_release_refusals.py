"""signatures/release-refusals: the messages with which each vllm-ascend release refuses a configuration at start, read
from its own source (ascend_doctor.sync.refusals), and TRIAGE106 naming a pasted one."""

from __future__ import annotations

import re

import pytest

from ascend_doctor.core.registry import load_registry
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.refusals import refusal_id
from ascend_doctor.sync.refusals import merge_refusals, read_refusals, refusal_proposals
from ascend_doctor.triage.run import triage_text
from tests.matrix.stored import VA_SDISTS

SDISTS = VA_SDISTS  # ASCEND_DOCTOR_SDISTS/va (default ../sdists/va), as every sdist-backed test reads them

SOURCE = '''
class NPUPlatform:
    @classmethod
    def check_and_update_config(cls, vllm_config):
        if is_vl_model(vllm_config):
            raise ValueError(
                "Currently, VL models doesn't support "
                "FLASHCOMM in vllm-ascend. Please set VLLM_ASCEND_ENABLE_FLASHCOMM1=0.")
        assert tp > 1, f"Flash Comm v1 is only supported when tp_size > 1, got {tp} here."
        assert ok, """Flash Comm V1 is not supported for VL models. \\
                Please disable it."""
        raise NotImplementedError("Unsupported soc_version: %s on this release" % soc)
        raise ValueError(msg)
        raise ValueError("Invalid value")
        raise RuntimeError("{} is valid only when Torchair graph mode is enabled".format(name))
'''


def read(files: dict):
    return lambda path: files.get(path)


def test_the_messages_are_read_as_templates_from_the_source():
    found = read_refusals(read({"vllm_ascend/platform.py": SOURCE}))
    assert set(found) == {
        "Currently, VL models doesn't support FLASHCOMM in vllm-ascend. Please set VLLM_ASCEND_ENABLE_FLASHCOMM1=0.",
        "Flash Comm v1 is only supported when tp_size > 1, got {} here.",
        "Flash Comm V1 is not supported for VL models. Please disable it.",  # continued lines, one space
        "Unsupported soc_version: {} on this release",
        "{} is valid only when Torchair graph mode is enabled",
    }  # a variable and a short message ("Invalid value") name nothing
    at = found["Unsupported soc_version: {} on this release"]
    assert at == {"exception": "NotImplementedError", "where": "vllm_ascend/platform.py:check_and_update_config",
                  "line": 12}
    assert read_refusals(read({"vllm_ascend/platform.py": "def f(:\n"})) == {}  # unparsable: nothing, no crash


def test_rows_list_every_release_that_raises_a_message_and_a_partial_read_never_shrinks_one():
    a = read_refusals(read({"vllm_ascend/platform.py": SOURCE}))
    b = {k: v for k, v in a.items() if "Torchair" not in k}
    rows = merge_refusals({"0.18.0": (b, "pypi:b"), "0.9.1": (a, "pypi:a")})
    torchair = rows[refusal_id("{} is valid only when Torchair graph mode is enabled")]
    assert torchair["releases"] == ["0.9.1"] and torchair["source"] == "pypi:a:vllm_ascend/platform.py:15"
    vl = rows[refusal_id("Flash Comm V1 is not supported for VL models. Please disable it.")]
    assert vl["releases"] == ["0.9.1", "0.18.0"] and vl["source"].startswith("pypi:b:")
    table = Knowledge().release_refusals
    shipped = next(r for r in table.refusal if "VL models doesn't support FLASHCOMM" in r.text)
    props = refusal_proposals(table, {shipped.id: {**shipped.model_dump(), "releases": ["0.99.0"]}})
    assert len(props) == 1 and props[0].change == "changed"
    assert props[0].row["releases"] == shipped.releases + ["0.99.0"]


@pytest.mark.skipif(not SDISTS, reason="the vllm-ascend sdists are not stored here")
def test_the_shipped_rows_are_what_sync_extracts_from_the_sdists():
    """Every stored sdist read as `matrix sync` reads it: the shipped table holds exactly its messages, with the same
    releases, place and source."""
    from tests.matrix.stored import assert_shipped_rows_are, per_release

    assert_shipped_rows_are(merge_refusals(per_release(read_refusals)),
                            {r.id: r.model_dump() for r in Knowledge().release_refusals.refusal})


def test_the_table_names_the_releases_of_known_refusals():
    """Read in the sdists: 0.11.0rc2-0.14.0rc1 raise on FlashComm with a VL model except 0.13.0rc2-0.13.0, and
    0.15.0rc1-0.17.0rc1 assert it (vllm-ascend#4222, #5848)."""
    t = Knowledge().release_refusals
    vl = t.match("ValueError: Currently, VL models doesn't support FLASHCOMM in vllm-ascend. We will fix this in the "
                 "future. Please set VLLM_ASCEND_ENABLE_FLASHCOMM1=0.")
    assert vl is not None and "0.11.0rc2" in vl.releases and "0.14.0rc1" in vl.releases
    assert "0.13.0" not in vl.releases and vl.exception == "ValueError"
    cut = t.match("AssertionError: Flash Comm V1 is not supported for VL models.                 Please disable it")
    assert cut is not None and cut.releases[0] == "0.15.0rc1" and cut.releases[-1] == "0.17.0rc1"
    assert t.match("ValueError: Currently, VL models") is None  # too little of it to tell
    assert t.match("KeyError: 'model.layers.0.mlp.experts.w2_weight_scale_inv'") is None
    assert all(re.fullmatch(r"RR-[0-9a-f]{10}", r.id) and r.id == refusal_id(r.text) for r in t.refusal)


REG = load_registry(entry_points=False)


def test_triage_calls_a_pasted_refusal_the_release_s_own_words():
    """A refusal with nothing in the paste that explains it is the answer (not "a bug of the release"); where a check
    judges the same condition on the command (SERVE318 at TP 1), that check is."""
    head = "```\n$ pip list | grep vllm\nvllm                  0.17.0\nvllm-ascend           0.17.0rc1\n"
    vl = (head + "$ vllm serve /models/Qwen2.5-VL-7B-Instruct --tensor-parallel-size 2\nTraceback (most recent call "
          "last):\n  File \"/usr/local/lib/python3.11/site-packages/vllm_ascend/platform.py\", line 409, in "
          "check_and_update_config\nAssertionError: Flash Comm V1 is not supported for VL models.                 "
          "Please disable it by setting VLLM_ASCEND_ENABLE_FLASHCOMM1=0.\n```\n")
    r = triage_text(vl, "p.md", REG)
    f = next(x for x in r.findings if x.code == "TRIAGE106")
    assert f.status.value == "fail" and "0.15.0rc1-0.17.0rc1" in f.message and "is one of them" in f.message
    assert r.triage.root_cause == "TRIAGE106", r.triage.root_cause_why
    tp1 = (head + "$ VLLM_ASCEND_ENABLE_FLASHCOMM1=1 vllm serve /models/Qwen3-8B --tensor-parallel-size 1\n"
           "Traceback (most recent call last):\n  File \"/x/vllm_ascend/platform.py\", line 405, in "
           "check_and_update_config\nAssertionError: Flash Comm v1 is only supported when tp_size > 1.\n```\n")
    r = triage_text(tp1, "p.md", REG)
    assert r.triage.root_cause == "SERVE318", r.triage.root_cause_why
    crash = head + "Traceback (most recent call last):\n  File \"/x/vllm_ascend/worker/model_runner_v1.py\", line 9, " \
                   "in f\nKeyError: 'layers.0'\n```\n"
    f = next(x for x in triage_text(crash, "p.md", REG).findings if x.code == "TRIAGE106")
    assert f.status.value == "pass"
    none = next(x for x in triage_text(head + "```\n", "p.md", REG).findings if x.code == "TRIAGE106")
    assert none.status.value == "skip" and "no exception line" in none.message  # (the paste is always known)



def test_a_hostile_exception_line_is_compared_in_bounded_time():
    """A pasted line is untrusted: a megabyte of dotted words or of one repeated fixed part is compared on its first
    MAX_LINE characters, each in well under a second."""
    import time

    t = Knowledge().release_refusals
    for line in ("ValueError: " + "a." * 500_000 + " x", "a." * 500_000 + "x y",
                 "ValueError: " + " is valid only when " * 100_000):
        t0 = time.monotonic()
        assert t.match(line) is None
        assert time.monotonic() - t0 < 1.0
