"""The plan against published Ascend deployments: a layout the vllm-ascend docs run must fit, a layout the docs or
vLLM refuse must not. Rows: docs/research/deploy-facts.md §1 (tutorials at vllm-ascend 182b75ea unless noted).

Rows the model does not agree with yet are listed in DISAGREE with the reason, and checked to still disagree, so a
change that fixes one shows up here."""

from __future__ import annotations

import pytest

from ascend_doctor.deploy.arch import read_architecture
from ascend_doctor.deploy.budget import Layout
from ascend_doctor.deploy.chips import find_chip
from ascend_doctor.deploy.kv import kv_per_token
from ascend_doctor.deploy.plan import Want, layouts, make_plan, size
from ascend_doctor.deploy.weights import estimate
from tests.deploy import configs as C
from tests.helpers import shipped

T = "https://github.com/vllm-project/vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/docs/source/tutorials/"
OLD = "https://github.com/vllm-project/vllm-ascend/blob/e56dba9b0d44dbdd37f8c57ea89658f6af19b031/docs/source/tutorials/"
P310 = ("https://github.com/vllm-project/vllm-ascend/blob/1180747b6e17bd70fc33e50e9d755eaa822adb01/docs/source/"
        "tutorials/hardwares/310p.md")

# (config, weights, chip, ranks, layout, max_model_len, gmu, fits, source)
ROWS = [
    (C.QWEN3_8B, "bf16", "910B3", 1, Layout(tp=1), 26240, 0.9, True, OLD + "single_npu.md"),
    (C.QWQ_32B, "bf16", "910B3", 4, Layout(tp=4), 4096, 0.9, True, OLD + "multi_npu.md"),
    (C.QWQ_32B, "w8a8", "910B3", 4, Layout(tp=4), 4096, 0.9, True, OLD + "multi_npu_quantization.md"),
    (C.QWEN3_30B_A3B, "bf16", "910B3", 4, Layout(tp=4, ep=True), 4096, 0.9, True, OLD + "multi_npu_qwen3_moe.md"),
    (C.QWEN3_30B_A3B, "w8a8", "A3", 4, Layout(tp=4, ep=True), 40960, 0.95, True, T + "models/Qwen3-30B-A3B.md"),
    (C.QWEN3_30B_A3B, "w8a8", "910B3", 4, Layout(tp=4, ep=True), 40960, 0.95, True, T + "models/Qwen3-30B-A3B.md"),
    (C.QWEN3_30B_A3B, "w8a8", "310P3", 2, Layout(tp=2), 16384, 0.9, True, T + "models/Qwen3-30B-A3B.md (300I Duo)"),
    (C.QWEN3_235B, "w8a8", "910B3", 8, Layout(tp=8, ep=True), 40960, 0.95, True, T + "models/Qwen3-235B-A22B.md"),
    (C.QWEN3_235B, "w8a8", "A3", 16, Layout(tp=4, dp=4, ep=True), 32768, 0.9, True, T + "models/Qwen3-235B-A22B.md"),
    (C.QWEN3_235B, "w8a8", "A3", 16, Layout(tp=16, ep=True), 32768, 0.9, True, T + "models/Qwen3-235B-A22B.md"),
    (C.QWEN3_235B, "w8a8", "A3", 16, Layout(tp=8, dp=2, ep=True), 40960, 0.85, True, T + "models/Qwen3-235B-A22B.md"),
    (C.DEEPSEEK_V3, "w8a8", "A3", 16, Layout(tp=4, dp=4, ep=True), 16384, 0.92, True, T + "models/DeepSeek-R1.md"),
    (C.DEEPSEEK_V3, "w8a8", "910B3", 16, Layout(tp=4, dp=4, ep=True), 16384, 0.92, True,
     T + "models/DeepSeek-R1.md (2 × Atlas 800 A2)"),
    (C.DEEPSEEK_V3, "w8a8", "910B3", 16, Layout(tp=4, dp=4, ep=True), 8192, 0.9, True, OLD + "multi_node.md (V3.1)"),
    (C.DEEPSEEK_V3, "w8a8", "A3", 16, Layout(tp=8, dp=2, ep=True), 8192, 0.92, True, T + "models/DeepSeek-V3.2.md"),
    (C.QWEN3_32B, "w8a8", "910B3", 4, Layout(tp=4), 5500, 0.9, True, T + "models/Qwen3-Dense.md"),
    (C.QWEN3_8B, "w8a8", "310P3", 1, Layout(tp=1), 20480, 0.9, True, T + "models/Qwen3-Dense.md (300I Duo)"),
    (C.QWEN3_14B, "w8a8", "310P3", 1, Layout(tp=1), 20480, 0.9, True, T + "models/Qwen3-Dense.md (300I Duo); " + P310),
    (C.QWEN3_32B, "w8a8", "310P3", 4, Layout(tp=4), 20480, 0.9, True, T + "models/Qwen3-Dense.md (300I Duo)"),
    (C.DEEPSEEK_V3, "w8a8", "A3", 16, Layout(tp=4, dp=4, ep=True), 16384, 0.92, True,
     T + "models/DeepSeek-V3.1.md (w8a8-mtp-QuaRot, same architecture)"),
    (C.KIMI_K2, "w8a8", "A3", 32, Layout(tp=8, dp=4, ep=True), 8192, 0.9, True, OLD + "multi_node_kimi.md (2 × A3)"),
    (C.GLM_47, "w8a8", "A3", 16, Layout(tp=8, dp=2, ep=True), 133000, 0.9, True, T + "models/GLM4.x.md"),
    (C.GLM_47, "w8a8", "910B3", 16, Layout(tp=8, dp=2, ep=True), 140000, 0.9, True, T + "models/GLM4.x.md (2 × A2)"),
    (C.MIXTRAL, "bf16", "910B3", 4, Layout(tp=4), 4096, 0.7, True, T + "models/Mixtral-8x7B-Instruct-v0.1.md"),
    (C.QWEN25_7B, "bf16", "910B4", 1, Layout(tp=1), 32768, 0.9, True,
     "https://github.com/vllm-project/vllm-ascend/blob/5714eeb12c291d2601abb91f52478c4e98077d3c/docs/source/"
     "tutorials/models/Qwen2.5-7B.md (1 × 910B4 32G)"),
    (C.QWEN3_VL_8B, "bf16", "910B3", 1, Layout(tp=1), 32768, 0.91, True, T + "models/Qwen-VL-Dense.md"),
    (C.DEEPSEEK_V2_LITE, "bf16", "910B4", 4, Layout(tp=2, dp=2, ep=True), 4096, 0.95, True,
     "https://github.com/vllm-project/vllm-ascend/issues/1171 (starts; precision is the thread's subject)"),
    (C.DEEPSEEK_V2_LITE, "bf16", "910B3", 1, Layout(tp=1), 32768, 0.75, True,
     "https://github.com/vllm-project/vllm-ascend/issues/5403 (user report: TP1 on one 910B)"),
    # Refused or out of memory
    (C.DEEPSEEK_V3, "w8a8", "910B3", 8, Layout(tp=8, ep=True), 16384, 0.92, False,
     T + "models/DeepSeek-R1.md: W8A8 requires 1 A3 (64G x16) or 2 A2 (64G x8)"),
    (C.DEEPSEEK_V3, "bf16", "A3", 16, Layout(tp=16, ep=True), 8192, 0.9, False,
     T + "models/DeepSeek-V3.1.md: BF16 weights need more than one A3 (the tutorials run W8A8)"),
    (C.QWEN3_235B, "bf16", "910B4", 8, Layout(tp=8, ep=True), 4096, 0.9, False,
     T + "models/Qwen3-235B-A22B.md: 32 GB A2 boxes need 2 nodes"),
]

# Documented deployments the model does not reproduce, and why (kept honest: each must still disagree).
DISAGREE = [
    # 117 B parameters in BF16 are 218 GiB: 54.5 GiB per rank of 4 is the whole 0.9 × 60.94 GiB budget. The
    # tutorial's box is "1 x A3 or 1 x A2"; on A3 `4` may count cards (8 dies) — the page does not say.
    (C.GPT_OSS_120B, "bf16", "910B3", 4, Layout(tp=4, ep=True), 4096, 0.9, True, T + "models/gpt-oss-120b.md"),
]


def _fits(cfg, fmt, chip, ranks, layout, max_len, gmu) -> bool:
    a = read_architecture(cfg, 1 << 20)
    want = Want(ranks=ranks, max_len=max_len, gmu=gmu, dtype_bytes=2)
    admitted, _rejected = layouts(a, want)
    if layout.tp not in {lay.tp for lay in admitted}:  # vLLM would refuse it before sizing anything
        return False
    return size(a, estimate(a, fmt), find_chip(chip, shipped().chips), want, layout, max_len).fits


@pytest.mark.parametrize("cfg, fmt, chip, ranks, layout, max_len, gmu, fits, source", ROWS,
                         ids=[f"{r[0]['model_type']}-{r[1]}-{r[2]}x{r[3]}-{r[4].label()}-{r[5]}" for r in ROWS])
def test_the_plan_agrees_with_published_deployments(cfg, fmt, chip, ranks, layout, max_len, gmu, fits, source):
    assert _fits(cfg, fmt, chip, ranks, layout, max_len, gmu) is fits, source


@pytest.mark.parametrize("row", DISAGREE, ids=lambda r: r[-1].rsplit("/", 1)[-1])
def test_known_disagreements_still_disagree(row):
    cfg, fmt, chip, ranks, layout, max_len, gmu, fits, _source = row
    assert _fits(cfg, fmt, chip, ranks, layout, max_len, gmu) is not fits


def test_vllm_refuses_tp_that_does_not_divide_the_heads():
    """vllm-ascend PR #2139: Qwen2.5-0.5B-Instruct "total number of attention heads (14) must be divisible by tensor
    parallel size (4)"."""
    qwen05 = dict(C.QWQ_32B, num_attention_heads=14, num_key_value_heads=2, hidden_size=896, num_hidden_layers=24)
    admitted, rejected = layouts(read_architecture(qwen05), Want(ranks=4))
    assert [lay.tp for lay in admitted] == [1, 2]
    assert any("attention heads (14) must be divisible by tensor parallel size (4)" in r for r in rejected)


def test_the_table_covers_enough_deployments_and_architectures():
    assert len(ROWS) >= 25
    assert len({r[0]["model_type"] for r in ROWS}) >= 8


def test_the_hybrid_tutorial_layout_fits_and_is_paged_as_its_release_pages_it():
    """Qwen3-Next (vllm-ascend tutorial, v0.16.0 on: TP4 on A3, --max-model-len 32768, gmu 0.8): 36 Gated DeltaNet
    layers paged with the 12 attention layers (deploy/hybrid.py); the state sets the block, not 128 tokens."""
    a = read_architecture(C.QWEN3_NEXT, 1 << 20)
    want = Want(ranks=4, max_len=32768, gmu=0.8, vllm_ascend="0.18.0rc1", page_rules=shipped().hybrid_pages)
    c = size(a, estimate(a, "bf16"), find_chip("A3", shipped().chips), want, Layout(tp=4), 32768)
    assert c.fits and c.kv.hybrid.block == 512 and c.capacity.block == 512
    assert c.capacity.tokens % 512 == 0 and c.capacity.tokens > 32768
    plan = make_plan(a, estimate(a, "bf16"), find_chip("A3", shipped().chips), want)
    assert plan.verdict == "fits" and plan.unknown is None


def test_graph_mode_limits_of_the_chosen_layout_are_noted():
    """F1 of deploy-facts.md: MLA + graph mode needs 32/64/128 heads per rank (DeepSeek-V2-Lite has 16); 310P with
    TP > 1 captures few graphs."""
    from ascend_doctor.deploy.plan import graph_mode_notes

    lite = read_architecture(C.DEEPSEEK_V2_LITE)
    assert any("16 / TP 1 = 16" in n for n in graph_mode_notes(lite, find_chip("910B3", shipped().chips), Layout(tp=1)))
    v3 = read_architecture(C.DEEPSEEK_V3)
    assert graph_mode_notes(v3, find_chip("A3", shipped().chips), Layout(tp=2, dp=8, ep=True)) == []  # 128 / 2 = 64
    assert graph_mode_notes(v3, find_chip("A3", shipped().chips), Layout(tp=16, ep=True))  # 8 per rank
    q = read_architecture(C.QWEN3_32B)
    assert any("310P with TP 4" in n for n in graph_mode_notes(q, find_chip("310P3", shipped().chips), Layout(tp=4)))


# The catalogue models plan cannot size, each with the reason it says: DeepSeek-V4 is there for the checks that read
# its config.json on a paste (SERVE326's compressed-attention unit, the V4 block-size rules); how vLLM caches its
# compressed layers is not modelled, and plan says so rather than guess.
NOT_SIZED = {"deepseek-ai/DeepSeek-V4-Flash": "compressed attention (DeepSeek-V4"}


def test_every_catalogue_model_is_sized():
    """#41: no model `plan --model NAME` knows stops at `cannot_size` — hybrids, MLA, sliding windows, nested text
    configs and vision towers included — at the release a plan proposes and at the oldest hybrid rule."""
    from ascend_doctor.deploy.catalogue import catalogue_files

    for m in shipped().catalogue:
        files = catalogue_files(m)
        if m.id in NOT_SIZED:
            assert any(NOT_SIZED[m.id] in str(c) for c in files.arch.cannot_size), m.id
            continue
        assert files.arch.cannot_size == [], m.id
        for release in (None, "0.13.0rc3", "0.18.0rc1"):
            kv = kv_per_token(files.arch, tp=4 if files.arch.heads % 4 == 0 else 1, kv_dtype_bytes=2, release=release,
                              page_rules=shipped().hybrid_pages)
            assert kv.unknown is None and kv.bytes_per_token > 0, (m.id, release, kv.unknown)
