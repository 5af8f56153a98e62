"""What a model's chat template says about tool calling: whether it renders the tool definitions and the tool
results, and which markup it writes calls in — the markup decides `--tool-call-parser` (the parser must read what
the model writes), so a template that writes `<tool_call>` needs hermes whatever the model's family is called.

The markup is recognised with the smoke's table of families (the matrix's model-families.toml `markup_family`, passed in
as (family id, tool parser, marker) found by the caller), so the template, the serve lint and the leak detector
agree on one list."""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.jsonread import loads

# A template handles tool results when it tests for the `tool` role (or Llama's `ipython`).
_TOOL_ROLE = re.compile(r"""['"](?:tool|ipython)['"]""")


class TemplateFacts(Model):
    source: str = Field(description="the file the template came from")
    renders_tools: bool = Field(description="mentions `tools`: the tool definitions reach the model")
    renders_tool_results: bool = Field(description="handles messages of role `tool` (or `ipython`)")
    markup: list[str] = Field(default_factory=list, description="tool-call markup families the template writes")
    tool_parser: Optional[str] = Field(None, description="the parser of that markup (the first family's)")


def template_text(files: dict[str, str]) -> tuple[Optional[str], str]:
    """(template, where) from a model directory's files: chat_template.jinja, chat_template.json, else
    tokenizer_config.json `chat_template` (a string, or a list of named templates: all of them)."""
    if files.get("chat_template.jinja"):
        return files["chat_template.jinja"], "chat_template.jinja"
    for name in ("chat_template.json", "tokenizer_config.json"):
        raw = files.get(name)
        if not raw:
            continue
        try:
            value = loads(raw).get("chat_template")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, str):
            return value, name
        if isinstance(value, list):
            return "\n".join(str(t.get("template", "")) for t in value if isinstance(t, dict)), name
    return None, ""


def read_template(text: str, source: str, markup: list[tuple[str, Optional[str]]]) -> TemplateFacts:
    """`markup`: (family, tool parser) of the families found in the template text, most specific first."""
    tool = [(fam, parser) for fam, parser in markup if parser]
    return TemplateFacts(source=source, renders_tools="tools" in text,
                         renders_tool_results=bool(_TOOL_ROLE.search(text)), markup=[f for f, _p in tool],
                         tool_parser=tool[0][1] if tool else None)
