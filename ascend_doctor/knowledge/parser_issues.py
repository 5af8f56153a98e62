"""The vLLM releases whose tool-call parser breaks streamed tool calls (the `serve/tool-parser-issues` table), judged
by SERVE210. The rows are data; this module holds their schema and says which apply to a command."""

from __future__ import annotations

from datetime import date
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import SpecifierSet, try_parse_version


class ParserIssue(Model, extra="forbid"):
    id: str
    tool_parser: list[str] = Field(min_length=1)
    reasoning_parser: list[str] = Field(default_factory=list, description="only with one of these reasoning parsers")
    vllm: str
    trigger: str = Field(pattern="^(any|multi_token)$")
    says: str
    fixed_in: str
    note: str = ""
    source: list[str] = Field(min_length=1)


class ParserIssues(Model, extra="forbid"):
    schema_version: int
    updated: date
    parser_issue: list[ParserIssue]


def issues_for(rows: list[ParserIssue], vllm: str, tool_parser: str,
               reasoning_parser: Optional[str]) -> list[ParserIssue]:
    """The rows for this vLLM release and parser pair (a version that does not parse matches none)."""
    v = try_parse_version(vllm)
    if v is None:
        return []
    return [r for r in rows if tool_parser in r.tool_parser
            and (not r.reasoning_parser or reasoning_parser in r.reasoning_parser)
            and SpecifierSet(r.vllm).contains(v)]
