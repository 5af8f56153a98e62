"""HW109: a family that serves on one server only (hardware-rules.toml, kind `single_node`) is not deployed across
nodes. The signs are the `npu_scope` fact's (ascend_doctor.facts.scope): the command's own (`--nnodes`,
`--headless`, `--data-parallel-start-rank`, a `--data-parallel-size-local` below `--data-parallel-size`) and the
variables vllm-ascend's multi-node guides set."""

from __future__ import annotations

from ascend_doctor.facts.scope import command_spans_nodes
from ascend_doctor.i18n import T, known
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.textsafe import clipped

from ._hardware import serve_rules, violated


@check("HW109", "hw-single-node", severity="error", stage="serve",
       needs=["serve_cmd", "python", "npu_smi", "npu_family", "npu_scope"])
def single_node(ctx):
    """The deployment stays on one server where the hardware serves on one server only

    What it checks: on a family whose rule says it serves on one server only (Atlas 300I Duo / 310P), the signs that
    the deployment spans nodes: in the command `--nnodes` above 1, `--headless`, a `--data-parallel-start-rank` above
    0 or a `--data-parallel-size-local` below `--data-parallel-size`; in the environment the multi-node variables
    (HCCL_IF_IP, HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME, RAY_ADDRESS), which alone only warn.

    Why it matters: the 300I Duo has no multi-node path. Served across two servers, vLLM's data parallel fails on a
    wrong device id and Ray's executor fails in HCCL; the maintainers answered that the card supports only the
    single-server case and that multi-node is not planned (vllm-project/vllm-ascend#7184).

    How to fix: serve on one server: drop the multi-node options, and size the parallelism to the server's own
    cards (`ascend-doctor plan` sizes it).
    """
    cmd, rules, evidence, out = serve_rules(ctx, "single_node")
    if out:
        return out
    signs = command_spans_nodes(cmd)
    scope = ctx.try_fact("npu_scope")
    env_hints = [h for h in (scope.hints if scope is not None else []) if not h[0].startswith("--")]
    said = ", ".join(f"{k} {v}" if k.startswith("--") else f"{k}={clipped(v, 60)}" for k, v in signs + env_hints)
    hw = ", ".join(sorted({h for r in rules for h in r.hardware}))
    if signs:
        evidence.insert(0, ev(T("command line"), said))
        return violated(ctx, rules, T("{hw} serves on one server only, and the command spans nodes ({said})", hw=hw,
                                      said=said), evidence, remediation=known(rules[0].fix))
    if env_hints:
        evidence.insert(0, ev(T("environment"), said))
        return ctx.warn(T("{hw} serves on one server only, and the environment sets multi-node variables ({said}); "
                          "the command itself stays on one node", hw=hw, said=said), evidence,
                        remediation=known(rules[0].fix), rules=[r.id for r in rules])
    return ctx.ok(T("{hw} serves on one server only, and nothing in the command or environment spans nodes", hw=hw),
                  evidence)
