"""The `unknown` outcome of the model-level checks added for #25 (SERVE306, SERVE308, SERVE208, HW106): a model
directory whose config.json is not valid JSON — the check says it could not look, it does not guess."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts
from tests.helpers import run_check


@pytest.mark.parametrize("code, flags", [
    ("SERVE306", "--enable-expert-parallel"),
    ("SERVE308", "--speculative-config {\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":1}"),
    ("SERVE208", ""),
    ("HW106", "--tensor-parallel-size 16"),
])
def test_an_unreadable_config_is_unknown_with_the_reason(tmp_path, code, flags):
    model = tmp_path / "broken-model"
    model.mkdir()
    (model / "config.json").write_text("{\"model_type\": \"deepseek_v3\",")  # cut off mid-write
    f = run_check(code, facts(f"vllm serve {model} {flags}"))
    assert f.status == Status.UNKNOWN, f.message
    assert "config.json" in f.message
