"""The `--tool-call-parser` (and `--reasoning-parser`) a plan gives, from two sources that must agree: the model
family's row (the matrix's model-families.toml, by config.json `model_type` — what SERVE203 judges) and the markup the
chat template itself writes. When they disagree the template decides (the parser must read what the model writes)
and the plan says so; a template that never renders `tools`, or drops tool results, is said too."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.template import TemplateFacts
from ascend_doctor.i18n import Localized, T


class ToolChoice(Model):
    tool_parser: Optional[str] = None
    reasoning_parser: Optional[str] = None
    template: Optional[TemplateFacts] = None
    notes: list[Localized] = Field(default_factory=list)


def _family(matrix, model_type: str, name: str) -> tuple[Optional[str], list[str], Optional[str]]:
    """(expected tool parser, every parser the family uses, reasoning parser) of the model family's row."""
    known = matrix.tool_parsers_for(model_type, name)
    if known is None:
        return None, [], None
    tool = known[0][0]
    row = next((r for r in matrix.model_families if tool in r.tool_parsers and model_type in r.model_types), None)
    reasoning = None
    for fam in (row.markup if row is not None else []):
        mf = matrix.markup_families.get(fam)
        if mf is not None and mf.reasoning_parser:
            reasoning = mf.reasoning_parser
            break
    return tool, list(known[1]), reasoning


def choose_parsers(matrix, model_type: str, name: str, template: Optional[TemplateFacts]) -> ToolChoice:
    tool, every, reasoning = _family(matrix, model_type, name)
    out = ToolChoice(tool_parser=tool, reasoning_parser=reasoning, template=template)
    if template is None:
        return out
    if template.tool_parser and template.tool_parser != tool and template.tool_parser not in every:
        if tool:
            out.notes.append(T("the chat template ({source}) writes tool calls as {markup}, which {parser} reads; "
                               "model_type {model_type}'s family would use {family}: the template decides",
                               source=template.source, markup=template.markup[0], parser=template.tool_parser,
                               model_type=model_type, family=tool))
        out.tool_parser = template.tool_parser
    if not template.renders_tools:
        out.notes.append(T("the chat template ({source}) never mentions `tools`: the model will not see the tool "
                           "definitions — pass a tool-aware template with --chat-template FILE",
                           source=template.source))
    elif not template.renders_tool_results:
        out.notes.append(T("the chat template ({source}) has no branch for messages of role `tool`: a tool's result "
                           "is not shown to the model", source=template.source))
    return out
