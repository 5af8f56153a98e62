"""SERVE324: a Qwen3-style chat template (thinks unless `enable_thinking` is false) without --reasoning-parser
(vllm-ascend#8350: Qwen3.5 on v0.18.0rc1, thinking mixed into the answer)."""

from __future__ import annotations

import json

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import PLAIN, facts, run_check

# The generation-prompt end of the Qwen3 template, as public copies of it quote it (Qwen/Qwen3-8B's
# tokenizer_config.json `chat_template`): the switch that writes an empty think block only when a request turns
# thinking off. The Qwen3.5 form (QWEN35_TAIL) opens `<think>` itself otherwise.
QWEN3_TAIL = ("{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n"
              "    {%- if enable_thinking is defined and enable_thinking is false %}\n"
              "        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- endif %}\n{%- endif %}")
QWEN35_TAIL = ("{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n"
               "    {%- if enable_thinking is defined and enable_thinking is false %}\n"
               "        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- else %}\n        {{- '<think>\\n' }}\n"
               "    {%- endif %}\n{%- endif %}")
# DeepSeek-V3.1's: thinks only when asked (`thinking` true)
ASKED_ONLY = "{% if thinking %}{{'<think>'}}{% else %}{{'</think>'}}{% endif %}"


def _model(tmp_path, template: str, name: str = "Qwen3.5-27B"):
    d = tmp_path / name
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
                                               "num_attention_heads": 32, "num_key_value_heads": 8}))
    (d / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    return str(d)


def judge(cmd: str):
    return run_check("SERVE324", facts(cmd))


def test_a_thinking_template_without_a_reasoning_parser_warns(tmp_path):
    m = _model(tmp_path, QWEN3_TAIL)
    f = judge(f"vllm serve {m}")
    assert f.status == Status.WARN and "comes back in `content`" in f.message, f.message
    assert "--reasoning-parser qwen3" in f.remediation and "enable_thinking" in f.remediation
    assert any("enable_thinking is defined and enable_thinking is false" in e.excerpt for e in f.evidence)


def test_controls_the_parser_thinking_off_and_templates_that_think_only_when_asked(tmp_path):
    m = _model(tmp_path, QWEN3_TAIL)
    assert judge(f"vllm serve {m} --reasoning-parser qwen3").status == Status.SKIP
    off = judge(f"vllm serve {m} --default-chat-template-kwargs " + '{"enable_thinking":false}')
    assert off.status == Status.PASS and "thinking is off by default" in off.message
    on = judge(f"vllm serve {m} --default-chat-template-kwargs " + '{"enable_thinking":true}')
    assert on.status == Status.WARN
    asked = _model(tmp_path, ASKED_ONLY, "DeepSeek-V3.1-like")
    assert judge(f"vllm serve {asked}").status == Status.SKIP
    assert judge(f"vllm serve {PLAIN}").status == Status.SKIP  # a template with no thinking at all


def test_a_chat_template_given_on_the_command_line_is_the_one_read(tmp_path):
    m = _model(tmp_path, ASKED_ONLY)
    tpl = tmp_path / "qwen3.jinja"
    tpl.write_text(QWEN3_TAIL)
    assert judge(f"vllm serve {m} --chat-template {tpl}").status == Status.WARN


def test_a_model_that_cannot_be_read_is_unknown():
    f = run_check("SERVE324", facts("vllm serve /nowhere/model"))
    assert f.status == Status.UNKNOWN, f.message


def test_the_qwen35_form_of_the_switch_warns_too(tmp_path):
    assert judge(f"vllm serve {_model(tmp_path, QWEN35_TAIL)}").status == Status.WARN
