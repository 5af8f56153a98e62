"""Turn the nodes' answers into one fleet Report: every static check node by node, then the FLEET checks.

A Ray node judges itself (fleet/node_task.py) and sends its findings and facts summary: the driver validates them,
applies the config (severity lowering, waivers) and runs the FLEET checks across all nodes. A node given as a
snapshot (`--snapshots`, or Ray with `--checks-dir`) is evaluated here: the probes read its facts over a ReplayHost
and `run_static` runs the per-node checks. The FLEET checks get every node through the preset facts `fleet_nodes` /
`fleet_node`.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Iterable, Optional

from pydantic import TypeAdapter, ValidationError

from ascend_doctor import __version__
from ascend_doctor.core.config import Config
from ascend_doctor.core.engine import run_static
from ascend_doctor.core.evaluator import apply_config, evaluate
from ascend_doctor.core.model import first_error
from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import Registry
from ascend_doctor.facts import FactStore
from ascend_doctor.fleet.facts import FLEET_FACTS, available, gather, summarize
from ascend_doctor.fleet.model import TASK_ERROR, FleetNode, FleetNodes, NodeResult, node_label
from ascend_doctor.report import Finding, HostSummary, Report, build_report
from ascend_doctor.seam.snapshot import ReplayHost


def unique_names(results: list[NodeResult]) -> None:
    """Make node names unique in place (two nodes reporting one hostname get `#2`, `#3` suffixes), each bounded
    (`node_label`) whichever runner made it."""
    seen: dict[str, int] = {}
    for r in results:
        base = node_label(r.name, "node")
        seen[base] = seen.get(base, 0) + 1
        r.name = f"{base}#{seen[base]}" if seen[base] > 1 else base


def _timing(r: NodeResult) -> dict:
    t: dict = {}
    if r.ray_node_id:
        t["ray_node_id"] = r.ray_node_id
    if r.address:
        t["address"] = r.address
    if r.sent_at is not None and r.received_at is not None:
        t["round_trip_s"] = round(r.received_at - r.sent_at, 4)
    if r.started_at is not None and r.ended_at is not None:
        t["collect_s"] = round(r.ended_at - r.started_at, 4)
    if r.clock_offset_s is not None:
        t["clock_offset_s"] = round(r.clock_offset_s, 6)
        t["clock_uncertainty_s"] = round(r.clock_uncertainty_s or 0.0, 6)
    return t


def fleet_nodes(results: list[NodeResult], options: RunOptions) -> tuple[list[FleetNode], dict[str, ReplayHost]]:
    """The FLEET checks' view of every node, and a ReplayHost per reachable node."""
    nodes, hosts = FleetNodes(), {}
    for r in results:
        node = FleetNode(name=r.name, reachable=r.reachable, error=r.error, error_kind=r.error_kind, source=r.source,
                         clock_offset_s=r.clock_offset_s, clock_uncertainty_s=r.clock_uncertainty_s,
                         timing=_timing(r), fake=r.fake, ray_resources=r.ray_resources)
        if r.snapshot is not None:
            host = ReplayHost(r.snapshot, label=r.name)
            hosts[r.name] = host
            node.facts = gather(host, options, FLEET_FACTS)
            node.summary = summarize(node.facts)
        nodes.append(node)
    return nodes, hosts


_FINDINGS = TypeAdapter(list[Finding])


class FleetEvaluator:
    """Evaluates nodes one by one as their answers arrive (the Ray runner calls `prepare` from its wait loop, so the
    driver's per-node work overlaps the slower nodes), then builds the report with the FLEET checks."""

    def __init__(self, registry: Registry, options: RunOptions, config: Optional[Config] = None,
                 serve: Any = None):
        self.registry, self.options, self.config = registry, options, config or Config()
        self.serve = serve  # the parsed `vllm serve` command the cluster is meant to run (FLEET108), or None
        self._ready: dict[int, tuple] = {}  # id(NodeResult) -> (facts, summary, static findings, notes)
        self._fleet_checks = registry.select(options.select, options.ignore, stage="fleet")

    def prepare(self, r: NodeResult) -> None:
        """Take in one node's findings and summary (idempotent; nothing for a silent node)."""
        if id(r) in self._ready:
            return
        if r.evaluation is not None:
            try:
                findings = _FINDINGS.validate_json(r.evaluation["findings"])
            except ValidationError as exc:  # another ascend-doctor version on that node, or a broken answer
                r.evaluation, r.error_kind = None, TASK_ERROR
                r.error = f"the node sent findings this ascend-doctor cannot read: {first_error(exc)}"
                return
            self._ready[id(r)] = ({}, r.evaluation["summary"], findings, r.evaluation["notes"])
        elif r.snapshot is not None:
            host = ReplayHost(r.snapshot, label=r.name)
            facts = gather(host, self.options, FLEET_FACTS)
            rep = run_static(host, self.registry, self.options, preset_facts=available(facts))
            self._ready[id(r)] = (facts, summarize(facts), rep.findings, rep.notes)

    def add(self, r: NodeResult, findings: list[Finding], notes: Iterable[str] = ()) -> None:
        """More findings of one node (the compute stage, which runs after every node has answered)."""
        self.prepare(r)
        if id(r) in self._ready:
            facts, summary, static, old = self._ready[id(r)]
            self._ready[id(r)] = (facts, summary, [*static, *findings], [*old, *notes])

    def _fleet(self, nodes: FleetNodes, name: str) -> list[Finding]:
        """The FLEET checks for one node: pure functions of every node's summary (no probe, no thread)."""
        store = FactStore.given({"fleet_nodes": nodes, "fleet_node": name}, options=self.options)
        return evaluate(self._fleet_checks, store, self.options)

    def report(self, results: list[NodeResult], source: str = "fleet", notes: Iterable[str] = (),
               started: Optional[tuple[datetime, float]] = None) -> Report:
        """One Report (command "fleet") with `node` set on every finding: static checks per node, then FLEET."""
        started_at, t0 = started or (datetime.now(timezone.utc), time.monotonic())
        unique_names(results)
        nodes = FleetNodes(serve=self.serve)
        for r in results:
            self.prepare(r)
            node = FleetNode(name=r.name, reachable=r.reachable, error=r.error, error_kind=r.error_kind,
                             source=r.source, clock_offset_s=r.clock_offset_s,
                             clock_uncertainty_s=r.clock_uncertainty_s, timing=_timing(r), fake=r.fake,
                             ray_resources=r.ray_resources)
            if id(r) in self._ready:
                node.facts, node.summary, _, _ = self._ready[id(r)]
            nodes.append(node)
        findings: list[Finding] = []
        run_notes = list(notes)
        for r, node in zip(results, nodes):
            if id(r) in self._ready:
                _, _, static, static_notes = self._ready[id(r)]
                for f in static:
                    f.node = node.name
                findings.extend(static)
                run_notes.extend(f"{node.name}: {n}" for n in static_notes)
            for f in self._fleet(nodes, node.name):
                f.node = node.name
                findings.append(f)
        run_notes.extend(apply_config(findings, self.config))
        fakes = [n.name for n in nodes if n.fake]
        if fakes:
            run_notes.append(f"test/demo hook: {', '.join(fakes)} served replayed snapshots instead of collecting "
                             "(ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS)")
        reachable = sum(1 for n in nodes if n.reachable)
        summary = HostSummary(hostname=f"{len(nodes)} node(s), {reachable} answered", source=source,
                              nodes=len(nodes), answered=reachable)
        return build_report(tool_version=__version__, host=summary, started_at=started_at,
                            duration_s=time.monotonic() - t0, fail_on=self.options.fail_on, findings=findings,
                            command="fleet", notes=list(dict.fromkeys(run_notes)),
                            fail_on_unknown=self.options.fail_on_unknown)
