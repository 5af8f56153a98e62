"""Test helpers: the shared corpus (../shared/corpus, skipped when absent) and running one check on given facts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"


def shipped():
    """The shipped tables with no user layer (ascend_doctor.knowledge.door.Knowledge), one object for the suite."""
    global _SHIPPED
    if _SHIPPED is None:
        from ascend_doctor.knowledge.door import Knowledge

        _SHIPPED = Knowledge()
    return _SHIPPED


_SHIPPED = None


def parse_serve(argv, matrix=None, **kw):
    """A `vllm serve` command line parsed with the shipped matrix's option syntax (unless `matrix` is given)."""
    from ascend_doctor.knowledge.serve_options import parse_serve as parse

    return parse(list(argv), matrix if matrix is not None else shipped().matrix, **kw)
CORPUS = Path(os.environ.get("ASCEND_DOCTOR_CORPUS", REPO.parent / "shared" / "corpus"))


def corpus_files(kind: str) -> list[Path]:
    """Files of one corpus KIND folder (empty when the corpus is absent, as on a plain clone)."""
    d = CORPUS / kind
    return sorted(p for p in d.glob("*") if p.is_file()) if d.is_dir() else []


def corpus_params(kind: str):
    """pytest.param per corpus file, or one skipped param when the corpus is absent."""
    files = corpus_files(kind)
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"../shared/corpus/{kind} not present"))]
    return [pytest.param(p, id=p.name) for p in files]


def read_corpus(path: Path) -> tuple[dict[str, str], str]:
    """(header fields, verbatim sample) of a corpus file: '# SOURCE/# KIND/# NOTES' lines, a blank line, the text."""
    text = path.read_text(encoding="utf-8")
    head, _, body = text.partition("\n\n")
    fields = {}
    for line in head.splitlines():
        if line.startswith("# ") and ":" in line:
            k, _, v = line[2:].partition(":")
            fields[k.strip()] = v.strip()
    return fields, body


def run_check(code: str, facts: dict[str, Any], options: Optional[dict] = None, registry=None):
    """Evaluate one check with facts given by hand (no probes, no host). Missing facts -> the unknown path; a fact
    read without being declared in `needs` raises (ascend_doctor.testing.run_check)."""
    from ascend_doctor.testing import run_check as shipped

    return shipped(code, facts, options, registry=registry)
