"""Helpers for testing checks — the doctor's own and third-party plugins' — without a host.

    from ascend_doctor.testing import run_check

    def test_my_check_fails_on_a_small_shm():
        finding = run_check("SITE101", {"shm": ShmFact(size_bytes=64 << 20)}, checks_dirs=["site_checks"])
        assert finding.status == "fail"

The check runs through the same evaluator as `ascend-doctor check`, against `FactStore.given` facts: a fact not in
`facts` is missing (the check's unknown path, with `missing[name]` as the reason when given), and a fact the check
reads without declaring it in `needs` raises `UndeclaredFact` instead of turning into an error finding.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from ascend_doctor.core.evaluator import UndeclaredFact, evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.report import Finding

__all__ = ["run_check", "UndeclaredFact"]


def run_check(code: str, facts: Mapping[str, Any], options: Optional[Mapping[str, Any]] = None, registry=None,
              checks_dirs: Iterable[str] = (), missing: Optional[Mapping[str, str]] = None) -> Finding:
    """Evaluate one check (built-in, or from `checks_dirs`) on facts given by hand; returns its Finding."""
    from ascend_doctor.core.registry import load_registry

    opts = RunOptions(**dict(options or {}))
    reg = registry or load_registry(checks_dirs=list(checks_dirs), entry_points=False)
    c = reg.get(code)
    if c is None:
        raise LookupError(f"no check {code!r} is loaded")
    (finding,) = evaluate([c], FactStore.given(facts, missing=missing, options=opts), opts, strict=True)
    return finding
