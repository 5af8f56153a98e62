"""Facts derived from other facts, never from the host: they exist in a host-less store too (triage, tests)."""

from __future__ import annotations

from ascend_doctor.facts.server_env import ServerEnv
from ascend_doctor.facts.stack import STACK_READS, StackFact, derive_stack
from ascend_doctor.probes import probe


@probe("stack", derived=True, reads=STACK_READS)
def stack_probe(host, ctx) -> StackFact:
    """The stack of the report header and of the checks that need the driver version (ascend_doctor.facts.stack)."""
    return derive_stack(ctx)


@probe("npu_scope", derived=True, reads=("server_env", "npu_smi", "serve_cmd", "devices"))
def npu_scope_probe(host, ctx):
    """Which NPUs will be used and whether other nodes take part (ascend_doctor.facts.scope)."""
    from ascend_doctor.facts.scope import derive_scope

    return derive_scope(ctx.try_fact("server_env"), ctx.try_fact("npu_smi"), ctx.try_fact("serve_cmd"),
                        ctx.try_fact("devices"))


@probe("server_env", derived=True, reads=("env", "serve_cmd"))
def server_env_probe(host, ctx) -> ServerEnv:
    """The environment `vllm serve` will see: the one it inherits (the doctor's, run the way the server runs, or the
    snapshot's or the paste's) with the command line's `env K=V` assignments over it. Every check about the server's
    environment reads this fact, so `check` (no command: the inherited environment) and `exec` judge one thing."""
    inherited = ctx.fact("env")  # unknown inherited environment: the server's is unknown too, never empty
    cmd = ctx.try_fact("serve_cmd")
    return ServerEnv.of(inherited, cmd.env if cmd is not None else None)
