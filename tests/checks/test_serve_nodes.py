"""SERVE319: the secondary node of a multi-node instance runs headless (vLLM's multi-node guide; vllm-ascend#15116),
on the fixture stack of test_serve_checks."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check

PP2 = "--tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --master-addr 10.0.0.1"


@pytest.mark.parametrize("extra, status, words", [
    ("--node-rank 1", Status.FAIL, "node 1 of 2 (--node-rank 1) starts without --headless"),
    ("--node-rank 1 --headless", Status.PASS, "runs headless"),
    ("--node-rank 1 --api-server-count 0", Status.PASS, "runs headless"),
    ("--node-rank 0", Status.PASS, "the head node (--node-rank 0) of 2"),
    ("", Status.PASS, "the head node (--node-rank 0, the default) of 2"),
])
def test_secondary_node(extra, status, words):
    f = run_check("SERVE319", facts(f"vllm serve {QWEN} {PP2} {extra}"))
    assert f.status == status and words in f.message, f.message
    if status == Status.FAIL:
        assert "--headless" in f.remediation


def test_a_single_node_command_passes():
    f = run_check("SERVE319", facts(f"vllm serve {QWEN} --node-rank 1"))
    assert f.status == Status.PASS and "one node: the command gives no --nnodes above 1" in f.message


def test_a_node_rank_that_is_not_a_number_is_unknown():
    f = run_check("SERVE319", facts(f"vllm serve {QWEN} {PP2} --node-rank one"))
    assert f.status == Status.UNKNOWN and "not an integer" in f.message
