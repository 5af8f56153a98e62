"""Facts derived from other facts, never from the host: they exist in a host-less store too (triage, tests)."""

from __future__ import annotations

from ascend_doctor.probes import probe
from ascend_doctor.stack import StackFact, derive_stack


@probe("stack", derived=True)
def stack_probe(host, ctx) -> StackFact:
    """The stack of the report header and of the checks that need the driver version (ascend_doctor.stack)."""
    return derive_stack(ctx)
