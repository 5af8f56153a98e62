"""SERVE208: audio libraries for an audio model; --limit-mm-per-prompt on a text-only model."""

from __future__ import annotations

import json

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check

AUDIO = {"architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
         "audio_config": {"model_type": "qwen2_audio_encoder"}, "text_config": {"model_type": "qwen2"}}
VL = {"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
      "vision_config": {"depth": 27}, "text_config": {"model_type": "qwen3_vl_text"}}


def judge(tmp_path, config: dict, flags: str = "", dists=("vllm",)):
    d = tmp_path / "model"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps(config))
    out = facts(f"vllm serve {d} {flags}")
    out["python"] = PythonEnv(distributions=[Distribution(name=n, version="1") for n in dists])
    return run_check("SERVE208", out)


def test_an_audio_model_without_librosa_warns(tmp_path):  # vllm#23232
    f = judge(tmp_path, AUDIO)
    assert f.status == Status.WARN and "no librosa, soundfile" in f.message
    assert "vllm[audio]" in f.remediation
    assert judge(tmp_path, AUDIO, dists=("vllm", "librosa", "soundfile")).status == Status.PASS


def test_a_vision_model_needs_nothing_more_and_a_text_model_is_skipped(tmp_path):
    assert judge(tmp_path, VL).status == Status.PASS
    assert run_check("SERVE208", facts(f"vllm serve {QWEN}")).status == Status.SKIP


def test_limit_mm_per_prompt_on_a_text_only_model_warns():  # zai-org/GLM-V#15
    f = run_check("SERVE208", facts(f"vllm serve {QWEN} --limit-mm-per-prompt image=2"))
    assert f.status == Status.WARN and "only supported for multimodal models" in f.message
