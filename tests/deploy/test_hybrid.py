"""Gated DeltaNet hybrids (Qwen3-Next, Qwen3.5) sized as vLLM and vllm-ascend page them, checked against what real
runs logged and what the vllm-ascend maintainers' thread computed."""

from __future__ import annotations

import pytest

from ascend_doctor.deploy.arch import read_architecture
from ascend_doctor.deploy.hybrid import rule_for, state_bytes
from ascend_doctor.deploy.kv import capacity, kv_per_token
from tests.deploy import configs as C
from tests.helpers import shipped

PAGES = shipped().hybrid_pages  # the deploy/hybrid-pages rows


def test_qwen3_next_on_vllm_ascend_0_12_matches_its_logged_cache():
    """vllm-ascend#5020 (v0.12.0rc1, A3, TP4, --max-model-len 4096) logged `GPU KV cache size: 282,240 tokens` and
    `Maximum concurrency for 4,096 tokens per request: 210.07x`. Both follow from one block count only if the block
    is 384 tokens (282,240 = 735 × 384), the layers form 4 groups (2941 // 4 = 735) and a request takes
    ⌈4096 / 384⌉ = 11 blocks of the full group + 1 state page of each of 3 linear groups (2941 / 14 = 210.07)."""
    a = read_architecture(C.QWEN3_NEXT)
    assert (a.full_layers, a.linear_layers, a.cannot_size) == (12, 36, [])
    kv = kv_per_token(a, tp=4, release="0.12.0rc1", page_rules=PAGES)
    h = kv.hybrid
    assert (h.rule, h.block, h.group_size, h.full_groups, h.linear_groups) == ("pad-state", 384, 12, 1, 3)
    assert h.page_bytes == 384 * 2 * 256 * 2  # the attention page; the state (274,432 B) padded up to it
    cap = capacity(kv, 2941 * h.page_bytes * h.group_size, 4096, h.block)
    assert cap.tokens == 282_240 and f"{cap.concurrency:.2f}" == "210.07"


def test_qwen35_on_the_ssm_aligned_releases_matches_the_maintainers_numbers():
    """vllm-ascend#7393 (patch_mamba_config.py of 0.16.0rc1-0.29.0rc1), Qwen3.5-35B TP8: `attn_block_size=512
    ssm_block_page_size=262144 … attn_single_token_k_page_size=512`, the attention page recomputed with K and V
    (524,288) and the conv page added to it. The ssm state is float32 (config.json mamba_ssm_dtype)."""
    a = read_architecture(C.QWEN35_35B_A3B)
    assert (a.full_layers, a.linear_layers, a.ssm_dtype_bytes, a.cannot_size) == (10, 30, 4, [])
    conv, ssm = state_bytes(a, 8, 2)
    assert ssm == 262_144 and conv == 1024 * 3 * 2
    assert state_bytes(a, 8, 2, spec_tokens=3)[0] == 12_288  # the thread's conv page: 3 MTP tokens widen it
    h = kv_per_token(a, tp=8, release="0.18.0rc1", page_rules=PAGES).hybrid
    assert (h.rule, h.block, h.page_bytes) == ("ssm-aligned", 512, 524_288 + conv)
    assert (h.group_size, h.full_groups, h.linear_groups) == (10, 1, 3)


@pytest.mark.parametrize("release, rule", [("0.11.0rc1", "pad-state"), ("0.15.0rc1", "pad-state"),
                                           ("0.16.0rc1", "ssm-aligned"), ("0.29.0rc1", "ssm-aligned"),
                                           ("0.30.0rc1", "pad-state"), ("0.30.0rc2", "pad-state")])
def test_the_page_rule_follows_the_release(release, rule):
    """Read in every sdist (the shipped deploy/hybrid-pages rows): patch_mamba_config.py follows vLLM's rule until
    0.15.0rc1, aligns the ssm page to K from 0.16.0rc1, and leaves it to vLLM's `_align_hybrid_block_size` from
    0.30.0rc1."""
    assert rule_for(PAGES, release)[0] == rule


def test_a_release_before_the_rules_and_an_unaligned_state_are_said():
    a = read_architecture(C.QWEN3_NEXT)
    assert "predates" in kv_per_token(a, tp=1, release="0.10.2rc1", page_rules=PAGES).unknown
    odd = dict(C.QWEN3_NEXT, linear_value_head_dim=100)  # ssm 32 × 100 × 128 × 2 B = 800 K tokens, not 128k
    assert "Cannot align ssm_page_size" in kv_per_token(read_architecture(odd), tp=1, release="0.18.0rc1", page_rules=PAGES).unknown
    assert "not divisible by tensor parallel size 3" in kv_per_token(a, tp=3, release="0.18.0rc1", page_rules=PAGES).unknown
    mamba = dict(C.QWEN3_NEXT, model_type="some_mamba_hybrid")
    assert "does not compute" in kv_per_token(read_architecture(mamba)).unknown
