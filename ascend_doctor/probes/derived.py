"""Facts derived from other facts, never from the host: they exist in a host-less store too (triage, tests)."""

from __future__ import annotations

from ascend_doctor.probes import probe
from ascend_doctor.stack import StackFact, derive_stack


@probe("stack", derived=True)
def stack_probe(host, ctx) -> StackFact:
    """The stack of the report header and of the checks that need the driver version (ascend_doctor.stack)."""
    return derive_stack(ctx)


@probe("npu_scope", derived=True)
def npu_scope_probe(host, ctx):
    """How many NPUs will be used and whether other nodes take part (ascend_doctor.scope)."""
    from ascend_doctor.scope import derive_scope

    return derive_scope(ctx.try_fact("env"), ctx.try_fact("npu_smi"), ctx.try_fact("serve_cmd"))
