"""SERVE319: one vLLM instance over several nodes — what each node's own command must say."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check

from ._serve import cmd_evidence, cmd_or_skip, int_opt


@check("SERVE319", "serve-secondary-node-headless", severity="error", stage="serve", needs=["serve_cmd"])
def secondary_node_headless(ctx):
    """A secondary node of a multi-node instance runs headless

    What it checks: a command with `--nnodes` above 1 and `--node-rank` above 0 (a node that is not the head of a
    tensor/pipeline-parallel instance spread over nodes with vLLM's multiprocessing backend) gives `--headless` (or
    `--api-server-count 0`, which vLLM runs the same way). The head node (`--node-rank 0`) and single-node commands
    pass.

    Why it matters: vLLM's multi-node guide starts every node but the head with `--headless` ("On the other worker
    node, run: … --nnodes 2 --node-rank 1 --master-addr <HEAD_NODE_IP> --headless", docs/serving/
    parallelism_scaling.md, vLLM 0.13.0): only the head node's executor schedules and collects the workers' results
    (multiproc_executor.py: the message queues exist where `node_rank_within_dp == 0`). Without it the secondary node
    opens an API server of its own that cannot answer, and a proxy that sends it requests gets errors: vllm-ascend's
    0.23.0 GLM-5.2 guide left `--headless` off its second prefill node of PP 2, and its P/D proxy answered
    `Internal Server Error` (vllm-ascend#15116; the 0.26.0rc1 guide has `--headless` there).

    How to fix: add `--headless` to the command of every node whose `--node-rank` is not 0, and point clients or the
    P/D proxy at the head node only.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    try:
        nnodes, rank = int_opt(cmd, "nnodes", 1), int_opt(cmd, "node_rank", 0)
        servers = int_opt(cmd, "api_server_count", 1)
    except ValueError as exc:
        return ctx.unknown(T("a node count or rank is not an integer: {exc}", exc=exc), [cmd_evidence(cmd)])
    if not cmd.has("nnodes") or nnodes <= 1:
        return ctx.ok(T("one node: the command gives no --nnodes above 1"))
    if rank == 0:
        return ctx.ok(T("the head node (--node-rank {rank}) of {nnodes}", rank="0" if cmd.has("node_rank") else
                        T("0, the default"), nnodes=nnodes))
    if cmd.flag("headless") or servers < 1:
        return ctx.ok(T("node {rank} of {nnodes} runs headless", rank=rank, nnodes=nnodes), [cmd_evidence(cmd)])
    return ctx.fail(T("node {rank} of {nnodes} (--node-rank {rank}) starts without --headless: it opens an API server "
                      "of its own that cannot answer, while only the head node (rank 0) schedules the instance "
                      "(vllm-ascend#15116: the proxy got Internal Server Error)", rank=rank, nnodes=nnodes),
                    [cmd_evidence(cmd)],
                    remediation=T("Add `--headless` to this node's `vllm serve` command and send requests (or the "
                                  "P/D proxy) to the head node only."))
