"""`fleet --ray-address … --compute`: one all-reduce across the NPUs of every node, after the per-node checks.

Step 1 asks each node for its own orders (ascend_doctor.probes.compute.plan_run on that node: its NPUs, its serving
interpreter) and a free port. The driver then numbers the ranks — node 1's ranks are 0..n1-1, node 2's follow — and
names the first taking part as the rendezvous (its Ray address and port). Step 2 starts every node's launcher at
once with those numbers: each node's ranks do their own memory, matmul and operator steps and then join the one
all-reduce across the nodes. Each node's NPU201-NPU206 come from its own record; NPU206 is the cross-node collective.

Every wait is bounded (the compute budget plus a margin); a node that does not answer is that node's NPU201. The
compute smoke always runs on the node itself: a node served from a snapshot (the test hook) still computes for real.
"""

from __future__ import annotations

import time
from typing import Any

from ascend_doctor.compute.facts import ComputeFact
from ascend_doctor.core.options import RunOptions
from ascend_doctor.fleet.model import NodeResult
from ascend_doctor.fleet.node_task import compute_on_node, plan_compute_on_node
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.probes.compute import LAUNCHER_MARGIN_S, compute_budget

PLAN_TIMEOUT_S = 60.0  # step 1 reads the serving interpreter's packages on each node (seconds)


def number_ranks(plans: list[tuple[NodeResult, dict]]) -> tuple[list[tuple[NodeResult, dict]], str]:
    """The orders of every node taking part, numbered across nodes and pointed at one rendezvous; or ([], why not)
    when the nodes cannot form one collective (different paths: an NPU node and a CPU rehearsal)."""
    # Numbered in the order of the node names, not of Ray's node list (which changes from run to run): the same
    # cluster gives the same ranks and the same rendezvous every time.
    taking = sorted(((r, p) for r, p in plans if p.get("cfg")), key=lambda rp: (rp[0].name or "", rp[0].ray_node_id))
    if not taking:
        return [], ""
    kinds = sorted({p["cfg"]["backend"] for _, p in taking})
    if len(kinds) > 1:
        return [], "the nodes would use different backends: " + ", ".join(kinds)
    world = sum(p["cfg"]["world"] for _, p in taking)
    first, first_plan = taking[0]
    master = first.address or "127.0.0.1"
    out, offset = [], 0
    for r, p in taking:
        cfg = dict(p["cfg"], rank_offset=offset, global_world=world, master_addr=master,
                   master_port=first_plan["port"])
        out.append((r, cfg))
        offset += p["cfg"]["world"]
    return out, ""


def _wait(ray, refs: dict, timeout: float) -> dict:
    """{ref: result or the exception} for what answered within `timeout`; the rest are missing."""
    ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
    out: dict = {}
    for ref in ready:
        try:
            out[ref] = ray.get(ref, timeout=0)
        except Exception as exc:  # the node's finding
            out[ref] = exc
    return out


def compute_on_ray(ray, results: list[NodeResult], options: RunOptions) -> tuple[dict[int, Any], bool, list[str]]:
    """({id(NodeResult): (ComputeFact, notes)}, whether a task never answered, run notes)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    def pinned(fn, r):
        return ray.remote(num_cpus=0, max_retries=0)(fn).options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=r.ray_node_id, soft=False))

    answered = [r for r in results if r.reachable and r.ray_node_id]
    options_json = options.model_dump_json()
    t0 = time.monotonic()
    refs = {pinned(plan_compute_on_node, r).remote(options_json): r for r in answered}
    got = _wait(ray, refs, PLAN_TIMEOUT_S)
    stuck = len(got) < len(refs)
    facts: dict[int, Any] = {}
    plans = []
    for ref, r in refs.items():
        out = got.get(ref)
        if out is None or isinstance(out, Exception) or out.get("error"):
            why = out.get("error") if isinstance(out, dict) else (
                f"{type(out).__name__}: {out}" if out is not None else f"no answer within {PLAN_TIMEOUT_S:g} s")
            facts[id(r)] = (ComputeFact(ran=True, launcher_error=f"the node could not plan its ranks: {why}"), [])
            continue
        plans.append((r, out))
        if out.get("skipped_fact"):
            facts[id(r)] = (ComputeFact.model_validate_json(out["skipped_fact"]), [])
    numbered, why_not = number_ranks(plans)
    if why_not:
        for r, _ in plans:
            facts[id(r)] = (ComputeFact(ran=True, launcher_error=why_not), [])
        return facts, stuck, []
    fallback = compute_budget(options, Knowledge.for_options(options).compute, "cpu")
    budget = max((cfg["budget"] for _, cfg in numbered), default=fallback)
    python = {id(r): p["python"] for r, p in plans}
    refs = {pinned(compute_on_node, r).remote(python[id(r)], cfg): (r, cfg) for r, cfg in numbered}
    got = _wait(ray, refs, budget + LAUNCHER_MARGIN_S + 30)
    stuck = stuck or len(got) < len(refs)
    for ref, (r, cfg) in refs.items():
        out = got.get(ref)
        if isinstance(out, dict) and out.get("fact"):
            facts[id(r)] = (ComputeFact.model_validate_json(out["fact"]), list(out.get("notes") or []))
        else:
            why = f"{type(out).__name__}: {out}" if out is not None else "no answer within the compute budget"
            facts[id(r)] = (ComputeFact(ran=True, world=cfg["world"], global_world=cfg["global_world"],
                                        launcher_error=f"the node's compute task failed: {why}"), [])
    world = numbered[0][1]["global_world"] if numbered else 0
    note = (f"compute: {world} rank(s) on {len(numbered)} node(s), one all-reduce across them, in "
            f"{time.monotonic() - t0:.1f} s")
    return facts, stuck, [note]


def judge_compute(registry, options: RunOptions, evaluator, results: list[NodeResult], facts: dict[int, Any]) -> None:
    """Each node's NPU201-NPU206 from its own record, added to that node's findings."""
    from ascend_doctor.core.evaluator import evaluate
    from ascend_doctor.facts import FactStore

    checks = registry.select(options.select, options.ignore, stage="compute")
    for r in results:
        if id(r) not in facts:
            continue
        fact, notes = facts[id(r)]
        findings = evaluate(checks, FactStore.given({"npu_compute": fact}, options=options), options)
        evaluator.add(r, findings, notes)
