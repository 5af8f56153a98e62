"""The vLLM releases whose tool-call parser breaks streamed tool calls: matrices/serve/tool-parser-issues.toml, judged
by SERVE210. The rows are data; this module only loads them and says which apply to a command."""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from typing import Optional

from pydantic import Field

from ascend_doctor.model import Model
from ascend_doctor.paths import builtin_matrices_dir
from ascend_doctor.tomlread import load_model
from ascend_doctor.versions import SpecifierSet, try_parse_version


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


@lru_cache(maxsize=1)
def load_parser_issues() -> list[ParserIssue]:
    return load_model(builtin_matrices_dir() / "serve" / "tool-parser-issues.toml", ParserIssues,
                      "tool-parser issues").parser_issue


def issues_for(vllm: str, tool_parser: str, reasoning_parser: Optional[str]) -> list[ParserIssue]:
    """The rows for this vLLM release and parser pair (a version that does not parse matches none)."""
    v = try_parse_version(vllm)
    if v is None:
        return []
    return [r for r in load_parser_issues() if tool_parser in r.tool_parser
            and (not r.reasoning_parser or reasoning_parser in r.reasoning_parser)
            and SpecifierSet(r.vllm).contains(v)]
