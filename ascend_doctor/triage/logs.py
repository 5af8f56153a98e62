"""The known error signatures in a paste, with the line numbers of the paste as the user gave it."""

from __future__ import annotations

from typing import Any


def log_matches(paste: Any, catalogue: Any) -> list[dict]:
    """Every error/warning signature of `catalogue` in the paste's cleaned text (generic ones beside a specific match
    flagged `also_seen`), each with its original line number."""
    from ascend_doctor.knowledge import signatures

    memo = paste._matches  # the answer and TRIAGE102 both ask; a 10 MB paste is scanned once
    if memo is not None and memo[0] is catalogue:
        return memo[1]
    out = []
    for m in signatures.diagnose(paste.text, catalogue):
        s = m.signature
        idx = m.line - 1
        line = paste.line_numbers[idx] if 0 <= idx < len(paste.line_numbers) else m.line
        out.append({"id": s.id, "kind": s.kind, "code": s.code, "line": line, "excerpt": m.excerpt,
                    "meaning": s.meaning, "fix": s.fix, "source": s.source, "also_seen": m.also_seen, "check": s.check,
                    "wrapper": s.wrapper})
    paste._matches = (catalogue, out)
    return out
