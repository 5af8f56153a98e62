"""Reading the markdown tables of ../shared/facts/matrix-facts.md (skipped when the file is absent, as on a clone)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List

import pytest

from tests.helpers import REPO

FACTS = Path(os.environ.get("ASCEND_DOCTOR_FACTS", REPO.parent / "shared" / "facts" / "matrix-facts.md"))


def facts_text() -> str:
    if not FACTS.is_file():
        pytest.skip(f"{FACTS} not present")
    return FACTS.read_text(encoding="utf-8")


def tables_after(heading: str, count: int = 1) -> List[List[List[str]]]:
    """The first `count` markdown tables after the line starting with `heading`, each without header/separator."""
    text = facts_text()
    start = next(i for i, ln in enumerate(text.splitlines()) if ln.startswith(heading))
    out: List[List[List[str]]] = []
    cur: List[List[str]] = []
    for ln in text.splitlines()[start + 1:]:
        if ln.startswith("|"):
            cur.append([c.strip() for c in ln.strip().strip("|").split("|")])
        elif cur:
            out.append(cur[2:])
            cur = []
            if len(out) == count:
                break
    if cur and len(out) < count:
        out.append(cur[2:])
    assert len(out) == count, f"expected {count} tables after {heading!r}"
    return out


def expand_shorthand(text: str) -> List[str]:
    """'2.7.1.post4/6/8' -> 2.7.1.post4, 2.7.1.post6, 2.7.1.post8; '2.10.0rc1/rc2' -> 2.10.0rc1, 2.10.0rc2."""
    first, *rest = [p.strip() for p in text.split("/")]
    out = [first]
    for part in rest:
        if part.isdigit():
            out.append(re.sub(r"\d+$", "", first) + part)
        else:
            out.append(re.sub(r"[a-z]+\d+$", "", first) + part)
    return out


def cp_range(text: str) -> List[str]:
    """'39, 310, 311' or '39–313' or '310, 311 (both arches), 312 (aarch64 only)' -> ['cp39', ...]."""
    text = re.sub(r"\([^)]*\)", "", text)
    tags: List[str] = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"3(\d+)\s*[–-]\s*3(\d+)", part)
        if m:
            tags += [f"cp3{i}" for i in range(int(m.group(1)), int(m.group(2)) + 1)]
        elif part:
            tags.append("cp" + part)
    return tags
