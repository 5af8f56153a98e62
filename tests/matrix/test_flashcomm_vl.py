"""The serve/flashcomm-vl table: matrix sync reads each release's sequence-parallelism guide and the code that
refuses or adapts FlashComm1 on VL models; the shipped rows are what it extracts from the stored PyPI sdists
(skipped on a plain clone)."""

from __future__ import annotations

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.sync.flashcomm_vl import GUIDE, MLA, PLATFORM, QWEN3_VL_PATCH, merge_flashcomm_vl, read_flashcomm_vl
from tests.matrix.stored import VA_SDISTS as SDISTS

GUIDE_TEXT = """# Sequence Parallelism

## Support Matrix

### Without Quantization

|                      | VL + Dense | VL + MoE | non-VL + Dense | non-VL + MoE |
| -------------------- | ---------- | -------- | -------------- | ------------ |
| Sequence Parallelism | graph      | graph    | x              | x            |
| Flash Comm V1        | x          | x        | eager/graph    | eager/graph  |

### With Quantization

|                      | VL + Dense | VL + MoE | non-VL + Dense | non-VL + MoE |
| -------------------- | ---------- | -------- | -------------- | ------------ |
| Flash Comm V1        | x          | x        | eager/graph    | eager/graph  |

## Pass Design

| Pattern | Match |
| ------- | ----- |
| Flash Comm V1 | not a support row |
"""

SPLIT_REFUSAL = '''        if is_vl_model(vllm_config):
            if bool(int(os.getenv("VLLM_ASCEND_ENABLE_FLASHCOMM1", "0"))):
                raise ValueError(
                    "Currently, VL models doesn't support "
                    "FLASHCOMM in vllm-ascend. We will fix this in the future. "
'''


def _row(files: dict) -> dict:
    rows = read_flashcomm_vl(lambda p: files.get(p))
    assert len(rows) <= 1
    return rows[0] if rows else {}


def test_the_guide_s_tables_are_read_per_quantization_and_only_under_their_headings():
    row = _row({PLATFORM: "", GUIDE: GUIDE_TEXT})
    assert row["guide"] == {"sp": {"vl_dense": "graph", "vl_moe": "graph", "dense": "x", "moe": "x"},
                            "flashcomm1": {"vl_dense": "x", "vl_moe": "x", "dense": "eager/graph",
                                           "moe": "eager/graph"}}
    assert row["guide_quantized"] == {"flashcomm1": {"vl_dense": "x", "vl_moe": "x", "dense": "eager/graph",
                                                     "moe": "eager/graph"}}
    assert f"{GUIDE}:10" in row["where"] and f"{GUIDE}:16" in row["where"]
    assert row["refuses"] is False and row["adapted"] == []


def test_a_refusal_split_over_two_literals_and_the_adaptations():
    row = _row({PLATFORM: SPLIT_REFUSAL,
                QWEN3_VL_PATCH: "Qwen3VLForConditionalGeneration._get_deepstack_input_embeds = tensor_parallel_wrap(\n"
                                "    Qwen3VLForConditionalGeneration._get_deepstack_input_embeds)",
                MLA: "        _is_vl = is_vl_model(vllm_config)"})
    assert row["refuses"] is True and f"{PLATFORM}:4" in row["where"]
    assert row["adapted"] == ["qwen3_vl", "mla"] and row["guide"] == {}
    assert _row({}) == {}  # no platform.py: not a release tree
    assert _row({PLATFORM: "", QWEN3_VL_PATCH: "def other(): pass"})["adapted"] == []


def test_releases_that_say_and_do_the_same_share_a_row():
    a = read_flashcomm_vl(lambda p: {PLATFORM: "", GUIDE: GUIDE_TEXT}.get(p))
    b = read_flashcomm_vl(lambda p: {PLATFORM: "x = 1", GUIDE: GUIDE_TEXT}.get(p))
    merged = merge_flashcomm_vl({"0.19.1rc1": (a, "pypi:a"), "0.18.0": (b, "pypi:b")})
    (row,) = merged.values()
    assert row["releases"] == ["0.18.0", "0.19.1rc1"] and row["source"][0].startswith("pypi:a:")


def test_the_table_answers_by_release():
    t = Knowledge().flashcomm_vl
    assert t.row_of("0.13.0rc2").adapted == ["qwen3_vl"] and t.row_of("0.13.0rc1").refuses
    assert t.row_of("0.99.0") is None
    row, at = t.guide_for("0.13.0rc2")
    assert at == "0.15.0rc1" and row.guide["flashcomm1"]["vl_moe"] == "x"
    assert t.guide_for("0.27.1rc1") == (None, None)


@pytest.mark.skipif(not SDISTS, reason="the vllm-ascend sdists are not stored here")
def test_the_shipped_rows_are_what_sync_extracts_from_the_sdists():
    from tests.matrix.stored import assert_shipped_rows_are, per_release

    assert_shipped_rows_are(merge_flashcomm_vl(per_release(read_flashcomm_vl, listdir=True)),
                            {r.id: r.model_dump() for r in Knowledge().flashcomm_vl.release})
