"""SERVE306 expert parallelism, on test_serve_checks' fixture stack with the catalogue's DeepSeek-R1 config.json (256
routed experts) and its dense Qwen3-8B."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check

CATALOGUE = Path(__file__).resolve().parents[2] / "matrices" / "deploy" / "models"


@pytest.fixture
def moe(tmp_path) -> str:
    model = tmp_path / "DeepSeek-R1"
    model.mkdir()
    shutil.copy(CATALOGUE / "deepseek-ai--DeepSeek-R1.json", model / "config.json")
    return str(model)


def judge(command: str):
    return run_check("SERVE306", facts(command))


def test_without_the_flag_there_is_nothing_to_judge(moe):
    assert judge(f"vllm serve {moe} --tensor-parallel-size 8").status == Status.SKIP


def test_a_dense_model_with_expert_parallel_warns():
    f = judge(f"vllm serve {QWEN} --tensor-parallel-size 2 --enable-expert-parallel")
    assert f.status == Status.WARN and "no routed experts" in f.message
    assert "Remove `--enable-expert-parallel`" in f.remediation


def test_eplb_experts_must_divide_the_ep_size(moe):  # vllm#52435: n_physical_experts=256 must be divisible by ep_size=3
    f = judge(f"vllm serve {moe} --tensor-parallel-size 3 --enable-expert-parallel --enable-eplb")
    assert f.status == Status.FAIL
    assert "256 physical experts (256 + 0 redundant) do not divide over EP size 3" in f.message
    f = judge(f"vllm serve {moe} --tensor-parallel-size 8 --data-parallel-size 2 --enable-expert-parallel "
              "--enable-eplb --eplb-config {\"num_redundant_experts\":16}")
    assert f.status == Status.PASS and "256 routed experts over EP size 16" in f.message
    f = judge(f"vllm serve {moe} --tensor-parallel-size 8 --data-parallel-size 2 --enable-expert-parallel "
              "--enable-eplb --eplb-config {\"num_redundant_experts\":9}")
    assert f.status == Status.FAIL and "(256 + 9 redundant)" in f.message


def test_uneven_experts_without_eplb_are_vllms_business(moe):
    assert judge(f"vllm serve {moe} --tensor-parallel-size 3 --enable-expert-parallel").status == Status.PASS


def test_expert_tensor_parallel_above_one_warns(moe):  # vllm-ascend#971
    f = judge(f"vllm serve {moe} --tensor-parallel-size 16 --enable-expert-parallel --additional-config "
              "{\"expert_tensor_parallel_size\":16}")
    assert f.status == Status.WARN and "expert_tensor_parallel_size 16" in f.message
