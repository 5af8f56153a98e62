"""deploy/replication.py: the weights vllm-ascend features keep whole on every rank, per release where the
`deploy/replication` rows were read (checked against vllm-ascend's nightly DeepSeek-V3.2-W8A8 logs in
tests/data/calibration), the bound where they were not."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ascend_doctor.deploy.arch import read_architecture
from ascend_doctor.deploy.replication import ReplicationRange, kept_whole
from tests.deploy import configs as C
from tests.helpers import shipped

V32 = read_architecture(dict(C.DEEPSEEK_V3, model_type="deepseek_v32", index_topk=2048, index_head_dim=128,
                             index_n_heads=64))
Q_B, KV_B = 1536 * 128 * 192, 512 * 128 * 256  # q_lora_rank × heads × (nope + rope); kv_lora_rank × heads × (nope + v)
SHARED = 58 * 3 * 7168 * 2048  # MoE layers × (gate, up, down) × hidden × the shared expert's intermediate
MLAPO = 61 * (7168 * 1536 + 7168 * 576)  # the q_a ‖ kv_a copy, per layer


def kept(env: dict, release: str, fmt: str = "w8a8", additional=None, tp: int = 8, **kw):
    return kept_whole(V32, fmt, tp, (env, additional, None), release, shipped().replication, **kw)


def test_flashcomm1_on_a_dsa_model_keeps_the_shared_experts_and_q_b_kv_b_whole_and_turns_mlapo_off():
    """0.13.0rc2-0.19.1rc1: sequence parallelism leaves the shared experts unsharded and turns on DSA context
    parallelism (q_b_proj at W8A8 and the unquantized kv_b_proj whole, one full o_proj as a pool); MLAPO is off
    under it ("Currently mlapo does not support SFA with CP")."""
    k = kept({"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1", "VLLM_ASCEND_ENABLE_MLAPO": "1"}, "0.15.0rc1")
    assert k.features == ["shared-expert-dp", "dsa-cp"]
    o_proj = 128 * 128 * 7168
    assert k.bytes == int(SHARED * 7 / 8 + 61 * (Q_B * 1 + KV_B * 2) * 7 / 8 + o_proj)
    assert "vllm-ascend 0.15.0rc1: vllm_ascend/utils.py enable_dsa_cp()" in str(k.words)


def test_mlapo_alone_keeps_its_copy_on_w8a8_only():
    k = kept({"VLLM_ASCEND_ENABLE_MLAPO": "1"}, "0.14.0rc1")
    assert k.features == ["mlapo-dsa"] and k.bytes == int(MLAPO + 61 * Q_B / 8)
    assert kept({"VLLM_ASCEND_ENABLE_MLAPO": "1"}, "0.14.0rc1", fmt="bf16").bytes == 0  # "mlapo only supports W8A8"
    assert kept({}, "0.14.0rc1").bytes == 0


def test_what_the_rows_do_not_cover_is_none_so_the_caller_bounds_it():
    fc1 = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}
    assert kept(fc1, "0.23.0") is None  # DSA context parallelism needs enable_dsa_cp there: not read
    assert kept(fc1, "0.10.2rc1") is None  # before every row
    assert kept(fc1, "0.15.0rc1.dev12+gabc") is not None  # a development build of a covered release
    assert kept({}, "0.17.0rc1", additional={"enable_shared_expert_dp": True}) is None  # `unsure` in that range
    assert kept({"VLLM_ASCEND_ENABLE_MLAPO": "1"}, "0.14.0rc1", kv_role="kv_both") is None  # MLAPO drops originals
    assert kept({"VLLM_ASCEND_ENABLE_MLAPO": "1"}, "0.14.0rc1", kv_role="kv_producer").features == ["mlapo-dsa"]
    fc1 = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}
    sharded = {"layer_sharding": ["q_b_proj", "o_proj"]}
    assert kept(fc1, "0.15.0rc1", additional=sharded, kv_role="kv_producer") is None  # q_b spread over the layers
    assert kept(fc1, "0.15.0rc1", additional=sharded).features == ["shared-expert-dp", "dsa-cp"]  # no KV transfer
    assert kept_whole(V32, "w8a8", 8, (fc1, None, None), "0.15.0rc1", []) is None  # no rows loaded
    r1 = read_architecture(C.DEEPSEEK_V3)  # MLAPO on an MLA model without DSA: no row read
    assert kept_whole(r1, "w8a8", 8, ({"VLLM_ASCEND_ENABLE_MLAPO": "1"}, None, None), "0.15.0rc1",
                      shipped().replication) is None


def test_from_0_26_flashcomm1_no_longer_replicates_the_shared_experts():
    dense_moe = read_architecture(C.DEEPSEEK_V2_LITE)
    fc1 = ({"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}, None, None)
    rows = shipped().replication
    assert kept_whole(dense_moe, "bf16", 2, fc1, "0.25.1rc1", rows).features == ["shared-expert-dp"]
    assert kept_whole(dense_moe, "bf16", 2, fc1, "0.26.0rc1", rows).bytes == 0
    sp_pass = ({}, None, {"enable_sp": True})
    assert kept_whole(dense_moe, "bf16", 2, sp_pass, "0.26.0rc1", rows).features == ["shared-expert-dp"]
    assert kept_whole(dense_moe, "bf16", 2, sp_pass, "0.28.0rc1", rows).bytes == 0


def test_a_row_naming_a_switch_the_code_does_not_read_is_refused():
    with pytest.raises(ValidationError, match="unknown switch flashcomm3"):
        ReplicationRange(id="x", feature="dsa-cp", first="0.13.0rc2", when=["flashcomm3+sp-pass"], source="s")

