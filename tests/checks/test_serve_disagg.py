"""SERVE309 prefill/decode sizes in --kv-transfer-config against the node's flags (vllm-ascend check_kv_extra_config),
and SERVE301 with one DP rank per process."""

from __future__ import annotations

import json

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check


def judge(flags: str, kv: dict, ascend: str = "0.13.0"):
    out = facts(f"vllm serve {QWEN} {flags} --kv-transfer-config {json.dumps(kv, separators=(',', ':'))}")
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=ascend)])
    return run_check("SERVE309", out)


def kv(role: str, **sections) -> dict:
    return {"kv_connector": "MooncakeConnectorV1", "kv_role": role, "kv_connector_extra_config": sections}


def test_a_decode_tp_that_is_not_the_nodes_fails_with_vllm_ascends_words():  # vllm-ascend#8442
    f = judge("--tensor-parallel-size 4", kv("kv_consumer", decode={"tp_size": 8, "dp_size": 1}))
    assert f.status == Status.FAIL
    assert "KV transfer 'decode' config has a conflicting tensor parallel size. Expected 4, but got 8." in f.message


def test_the_producer_is_judged_by_its_prefill_section_and_kv_both_by_both():
    assert judge("--tensor-parallel-size 8 --data-parallel-size 2",
                 kv("kv_producer", prefill={"tp_size": 8, "dp_size": 2}, decode={"tp_size": 4})).status == Status.PASS
    f = judge("--tensor-parallel-size 8", kv("kv_both", prefill={"tp_size": 8}, decode={"dp_size": 2}))
    assert f.status == Status.FAIL and "conflicting data parallel size. Expected 1, but got 2" in f.message  # #8344


def test_before_the_release_that_refuses_it_is_a_warning():
    f = judge("--tensor-parallel-size 4", kv("kv_consumer", decode={"tp_size": 8}), ascend="0.11.0")
    assert f.status == Status.WARN and "refuses it from 0.12.0rc1" in f.message


def test_no_config_or_no_role_is_not_judged_and_bad_json_fails():
    assert run_check("SERVE309", facts(f"vllm serve {QWEN}")).status == Status.SKIP
    assert judge("", {"kv_connector": "X"}).status == Status.SKIP
    f = run_check("SERVE309", facts(f"vllm serve {QWEN} --kv-transfer-config {{kv_role:kv_producer}}"))
    assert f.status == Status.FAIL and "Expecting property name" in f.message


def test_one_dp_rank_per_process_needs_only_its_own_tp():  # vllm-ascend#8345 (external load balancer mode)
    f = run_check("SERVE301", facts(f"vllm serve {QWEN} --data-parallel-size 2 --tensor-parallel-size 8 "
                                    "--data-parallel-rank 0"))
    assert f.status == Status.PASS and "needs 8 NPU(s)" in f.message
