"""The `signatures/release-refusals` table: the messages with which each vllm-ascend release refuses a configuration
at start, as its source raises them (ascend_doctor.sync.refusals reads them; `matrix sync --vllm-ascend SDIST`
proposes the rows). TRIAGE106 matches a pasted exception line against them."""

from __future__ import annotations

import hashlib
import re
from datetime import date
from functools import cached_property
from typing import List, Optional

from pydantic import Field

from ascend_doctor.core.model import Model

_WS = re.compile(r"\s+")
MAX_LINE = 2000  # characters of a pasted exception line compared: every recorded message is far shorter


def normalize(text: str) -> str:
    """One line, single spaces (a triple-quoted message continued with backslashes keeps its indentation)."""
    return _WS.sub(" ", text).strip()


def refusal_id(text: str) -> str:
    return "RR-" + hashlib.sha256(text.encode()).hexdigest()[:10]


class Refusal(Model, extra="forbid"):
    id: str = Field(pattern=r"^RR-[0-9a-f]{10}$")
    text: str = Field(min_length=1, description="the message; `{}` where the release formats a value in")
    exception: str
    where: str = Field(description="module:function of the newest release that raises it")
    releases: List[str] = Field(min_length=1, description="every release read whose source raises it")
    source: str

    @cached_property
    def _pattern(self) -> re.Pattern:
        """The message, its later parts optional (a pasted exception line may stop at the message's first line)."""
        parts = [re.escape(p.strip()) for p in self.text.split("{}")]
        rx = ""
        for p in reversed(parts[1:]):
            rx = f"(?:.{{0,300}}?{p}{rx})?"
        return re.compile(parts[0] + rx)

    @cached_property
    def longest(self) -> str:
        return max((p.strip() for p in self.text.split("{}")), key=len)

    def fixed_length(self) -> int:
        return sum(len(p.strip()) for p in self.text.split("{}"))

    def matches(self, message: str) -> bool:
        """`message` (one line, single spaces) is this refusal's, perhaps cut where the pasted line ends."""
        head = self.text.split("{}")[0].strip()
        if len(head) >= 14:  # a message that starts with fixed text: the pasted line starts with it too
            if len(message) <= len(head):  # the line stops inside it (a message printed over several lines)
                return len(message) >= 24 and head.startswith(message)
            return message.startswith(head) and bool(self._pattern.match(message))
        return self.longest in message and bool(self._pattern.search(message))


class ReleaseRefusals(Model, extra="forbid"):
    schema_version: int
    updated: date
    refusal: List[Refusal] = Field(min_length=1)

    def match(self, line: str) -> Optional[Refusal]:
        """The refusal a pasted exception line (`ValueError: …`, `AssertionError: …`) carries, or None; the one with
        the most fixed text when several do."""
        m = re.match(r"^\s*(?:[\w.]+\.)?(\w+)(?::\s*(.*))?$", line[:MAX_LINE])  # a refusal is a short line
        if m is None or not m.group(2):
            return None
        exc, message = m.group(1), normalize(m.group(2))
        hits = [r for r in self.refusal if (r.exception == exc or exc.endswith("Error")) and r.matches(message)]
        return max(hits, key=lambda r: r.fixed_length(), default=None)
