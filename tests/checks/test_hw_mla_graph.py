"""HW106 MLA heads per TP rank in graph mode (matrix rule HW-MLA-001), with the catalogue's MLA configs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check

CATALOGUE = Path(__file__).resolve().parents[2] / "matrices" / "deploy" / "models"


@pytest.fixture
def mla(tmp_path) -> dict:
    out = {}
    for name in ("deepseek-ai--DeepSeek-R1", "deepseek-ai--DeepSeek-V2-Lite"):
        d = tmp_path / name
        d.mkdir()
        shutil.copy(CATALOGUE / f"{name}.json", d / "config.json")
        out[name.split("--")[1]] = str(d)
    return out


def judge(command: str):
    return run_check("HW106", facts(command))


def test_eight_heads_per_rank_warns_with_the_tp_sizes_that_fit(mla):  # FAQ 13: DeepSeek-V3 at TP 16
    f = judge(f"vllm serve {mla['DeepSeek-R1']} --tensor-parallel-size 16")
    assert f.status == Status.WARN and "128 heads / TP 16 = 8 per rank" in f.message and "HW-MLA-001" in f.message
    assert "TP 1 or 2 or 4" in f.remediation


def test_deepseek_v2_lite_has_no_tp_that_fits(mla):  # vllm-ascend#1451
    f = judge(f"vllm serve {mla['DeepSeek-V2-Lite']}")
    assert f.status == Status.WARN and "16 per rank" in f.message
    assert "no TP size (this model needs eager mode)" in f.remediation


def test_a_fitting_tp_passes_eager_and_non_mla_are_not_judged(mla):
    assert judge(f"vllm serve {mla['DeepSeek-R1']} --tensor-parallel-size 4").status == Status.PASS
    assert judge(f"vllm serve {mla['DeepSeek-R1']} --tensor-parallel-size 16 --enforce-eager").status == Status.SKIP
    f = judge(f"vllm serve {mla['DeepSeek-R1']} --tensor-parallel-size 16 --compilation-config "
              "{\"cudagraph_mode\":\"NONE\"}")
    assert f.status == Status.SKIP and "cudagraph_mode NONE" in f.message
    assert judge(f"vllm serve {QWEN}").status == Status.SKIP
