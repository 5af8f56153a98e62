"""SERVE308 MTP speculative decoding against the checkpoint's MTP layers (catalogue configs: DeepSeek-R1 has one MTP
layer, Kimi-K2 none, Qwen3-8B no key at all)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import facts
from tests.helpers import run_check

CATALOGUE = Path(__file__).resolve().parents[2] / "matrices" / "deploy" / "models"


@pytest.fixture
def models(tmp_path) -> dict:
    out = {}
    for name in ("deepseek-ai--DeepSeek-R1", "moonshotai--Kimi-K2-Instruct", "Qwen--Qwen3-8B"):
        d = tmp_path / name
        d.mkdir()
        shutil.copy(CATALOGUE / f"{name}.json", d / "config.json")
        out[name.split("--")[1]] = str(d)
    return out


def judge(model: str, spec: dict | str):
    raw = spec if isinstance(spec, str) else json.dumps(spec, separators=(",", ":"))
    return run_check("SERVE308", facts(f"vllm serve {model} --speculative-config {raw}"))


def test_one_draft_step_per_mtp_layer_passes(models):
    f = judge(models["DeepSeek-R1"], {"method": "deepseek_mtp", "num_speculative_tokens": 1})
    assert f.status == Status.PASS and "deepseek_mtp with 1 draft token(s) over 1 MTP layer(s)" in f.message


def test_more_steps_than_layers_passes_as_the_tutorials_configure_it(models):
    """The vllm-ascend tutorials serve 3 draft tokens over one MTP layer (Qwen3.5 in 0.18.0rc1, DeepSeek-V3.2, GLM in
    0.30.0rc2); h38n: a warning here contradicted the release's own tutorial."""
    f = judge(models["DeepSeek-R1"], {"method": "deepseek_mtp", "num_speculative_tokens": 3})
    assert f.status == Status.PASS and "3 draft tokens over 1 MTP layer(s)" in f.message


def test_a_checkpoint_without_mtp_layers_fails(models):
    f = judge(models["Kimi-K2-Instruct"], {"method": "deepseek_mtp", "num_speculative_tokens": 1})
    assert f.status == Status.FAIL and "has none (num_nextn_predict_layers / mtp_num_hidden_layers 0)" in f.message
    f = judge(models["Qwen3-8B"], {"method": "mtp", "num_speculative_tokens": 1})
    assert f.status == Status.FAIL and "absent" in f.message


def test_a_separate_draft_model_or_another_method_is_not_judged_here(models):
    assert judge(models["Qwen3-8B"], {"method": "eagle3", "model": "/m/eagle3",
                                      "num_speculative_tokens": 3}).status == Status.SKIP
    assert run_check("SERVE308", facts(f"vllm serve {models['Qwen3-8B']}")).status == Status.SKIP


def test_a_value_that_is_not_json_fails_with_the_parsers_words(models):
    f = judge(models["DeepSeek-R1"], "{method:deepseek_mtp}")
    assert f.status == Status.FAIL and "Expecting property name" in f.message


def test_steps_that_are_no_multiple_of_the_layers_fail_like_vllm(tmp_path):
    d = tmp_path / "two-mtp"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                                               "num_attention_heads": 128, "num_nextn_predict_layers": 2}))
    f = judge(str(d), {"method": "deepseek_mtp", "num_speculative_tokens": 3})
    assert f.status == Status.FAIL and "num_speculative_tokens:3 must be divisible by n_predict=2" in f.message
    assert judge(str(d), {"method": "deepseek_mtp", "num_speculative_tokens": 4}).status == Status.PASS  # 2 x 2


def test_a_count_the_config_class_defaults_or_names_by_its_new_key_is_read(tmp_path):
    """h38g: a config.json without the MTP count was judged "no MTP layers" where the runtime defaults it. transformers
    5's DeepseekV3Config and Glm4MoeConfig default `num_mtp_layers` (their attribute_map's name for
    num_nextn_predict_layers) to 1; a config.json that writes `num_mtp_layers` names the count by that key."""
    def model(name: str, **keys) -> str:
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps({"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe",
                                                   "num_attention_heads": 96, **keys}))
        return str(d)

    f = judge(model("no-key"), {"method": "mtp", "num_speculative_tokens": 1})
    assert f.status == Status.PASS and "1 MTP layer(s)" in f.message, f.message
    assert any("defaults it to 1" in str(e.excerpt) for e in f.evidence)
    f = judge(model("new-key", num_mtp_layers=2), {"method": "mtp", "num_speculative_tokens": 3})
    assert f.status == Status.FAIL and "n_predict=2" in f.message


def test_a_count_left_out_for_a_model_type_with_an_mtp_module_is_not_known(tmp_path):
    """h38g: a model type whose MTP module vLLM has (`qwen3_next_mtp`) with no count in config.json: the config
    class may default it, so not known — not "no MTP layers". A model type with no MTP module still fails."""
    d = tmp_path / "next"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
                                               "num_attention_heads": 16}))
    f = judge(str(d), {"method": "qwen3_next_mtp", "num_speculative_tokens": 1})
    assert f.status == Status.UNKNOWN and "model_type qwen3_next" in f.message, f.message
