"""The `serve/kv-pool-env` table: the host versions each vllm-ascend release's KV-pool guide requires for the
transfer variables it tells you to export, per chip family (`ASCEND_ENABLE_USE_FABRIC_MEM=1` on A3: HDK >= 26.0, or
HDK >= 25.5 with mooncake >= 0.3.11, and CANN >= 9.0.0). `ascend_doctor.sync.kv_pool_env` reads the guide's table
from each sdist; `matrix sync --vllm-ascend SDIST` proposes the rows; SERVE407 judges a server's environment with
them.

A requirement is a few words of a small grammar, `name>=X` or `name<X` with name `hdk`, `cann` or `mooncake`, joined
by `,` within one alternative: `hdk_any` holds the alternatives (one must hold), `all_of` the rest (each must
hold). Versions compare on their numbers only: Huawei's `26.0.RC1` is a release of 26.0, not a pre-release of it."""

from __future__ import annotations

import hashlib
import re
from datetime import date
from typing import Dict, List, Optional, Tuple

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import parse_version, try_parse_version

TERM = re.compile(r"^(hdk|cann|mooncake)(>=|<)(\d+(?:\.\d+)*)$")
WHAT = {"hdk": "HDK", "cann": "CANN", "mooncake": "mooncake"}


def numbers(version: Optional[str]) -> Optional[Tuple[int, ...]]:
    """The release numbers of a version, padded to three: (26, 0, 0) for '26.0.RC1', (0, 3, 11) for 'v0.3.11.post1';
    None when it is not a version the project's parser reads."""
    v = try_parse_version(version)
    if v is None:
        return None
    t = tuple(v.release)
    return t + (0,) * (3 - len(t)) if len(t) < 3 else t


def term_name(term: str) -> str:
    """'hdk' of 'hdk>=26.0'."""
    m = TERM.match(term)
    if m is None:
        raise ValueError(f"not a requirement term: {term!r}")
    return m.group(1)


def holds(term: str, have: Dict[str, Optional[str]]) -> Optional[bool]:
    """Whether one `name>=X` / `name<X` term holds for the versions `have` (name -> version), None when not known."""
    m = TERM.match(term)
    if m is None:
        raise ValueError(f"not a requirement term: {term!r}")
    got = numbers(have.get(m.group(1)))
    if got is None:
        return None
    want = numbers(m.group(3))
    return got >= want if m.group(2) == ">=" else got < want


def spoken(terms: str) -> str:
    """'hdk>=25.5,mooncake>=0.3.11' -> 'HDK >= 25.5 with mooncake >= 0.3.11'."""
    parts = []
    for t in terms.split(","):
        m = TERM.match(t)
        parts.append(f"{WHAT[m.group(1)]} {m.group(2)} {m.group(3)}" if m else t)
    return " with ".join(parts)


def requirement_id(variable: str, value: str, hardware: str, says: str) -> str:
    return "KV-" + hashlib.sha256(f"{variable}={value}|{hardware}|{says}".encode()).hexdigest()[:10]


class KvPoolRequirement(Model, extra="forbid"):
    id: str = Field(pattern=r"^KV-[0-9a-f]{10}$")
    variable: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    value: str
    hardware: str = Field(description="chip family (ascend_doctor.knowledge.hardware): A2, A3, A5")
    hdk_any: List[str] = Field(default_factory=list, description="alternatives, one must hold")
    all_of: List[str] = Field(default_factory=list, description="terms that must all hold")
    unchecked: List[str] = Field(default_factory=list, description="what the guide requires that no probe reads")
    recommended: bool = Field(False, description="the guide only recommends the HDK (a warning, not a failure)")
    says: str = Field(description="the guide's requirement cell, one line")
    releases: List[str] = Field(min_length=1)
    source: str

    def model_post_init(self, _ctx) -> None:
        for alt in self.hdk_any + self.all_of:
            for t in alt.split(","):
                if TERM.match(t) is None:
                    raise ValueError(f"{self.id}: not a requirement term: {t!r}")


class KvPoolEnv(Model, extra="forbid"):
    schema_version: int
    updated: date
    requirement: List[KvPoolRequirement] = Field(min_length=1)

    def for_release(self, version: str) -> Tuple[List[KvPoolRequirement], Optional[str]]:
        """(the rows of `version`'s guide, the recorded release they were read from): the release itself, else the
        newest recorded one before it; ([], None) before the first."""
        v = parse_version(version)
        recorded = sorted({r for row in self.requirement for r in row.releases}, key=parse_version)
        older = [r for r in recorded if parse_version(r) <= v]
        if not older:
            return [], None
        at = older[-1]
        return [row for row in self.requirement if at in row.releases], at
