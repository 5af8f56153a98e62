"""A Ray node's answer is whatever that node's Python returned: another ascend-doctor version, a broken install or a
hostile node. Each malformed answer must cost only that node (FLEET101 "cannot read"), never the run (exit 3), and a
name no host can have is shown cut. The driver code is the real one (`ray_runner._accept`, `FleetEvaluator`, every
report writer); only Ray's transport is left out (tests/fleet/test_ray_fleet.py covers it)."""

from __future__ import annotations

import importlib
import io
import math
import time

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.fleet.evaluate import FleetEvaluator
from ascend_doctor.fleet.model import TASK_ERROR, NodeResult
from ascend_doctor.fleet.node_task import evaluate_host
from ascend_doctor.fleet.ray_runner import _accept, answer_problem
from ascend_doctor.fleet.render import render_fleet
from ascend_doctor.render.formats import FORMATS
from ascend_doctor.report import Status
from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
from tests.fleet import nodes as N

REGISTRY = load_registry(entry_points=False)


@pytest.fixture(scope="module")
def good() -> dict:
    t = time.time()
    out = evaluate_host(ReplayHost(Snapshot.model_validate(N.node("n0", 10)), label="n0"), RunOptions())
    return {**out, "fake": False, "started_at": t, "ended_at": t + 1.0}


def _hostile(good: dict) -> dict[str, object]:
    snap = Snapshot.model_validate(N.node("n1", 11)).dump()
    good = {**good, "hostname": "n1"}
    return {
        "none": None,
        "a list": [good],
        "a string": "garbage",
        "an int": 7,
        "empty mapping": {},
        "started_at text": {**good, "started_at": "yesterday"},
        "started_at NaN": {**good, "started_at": math.nan},
        "ended_at inf": {**good, "ended_at": math.inf},
        "started_at a bool": {**good, "started_at": True},
        "fake a string": {**good, "fake": "no"},
        "hostname a list": {**good, "hostname": ["n1"]},
        "findings a list": {**good, "findings": []},
        "findings not JSON": {**good, "findings": "[{"},
        "findings deep JSON": {**good, "findings": "[" * 100_000 + "]" * 100_000},
        "findings of another shape": {**good, "findings": '[{"code": 1}]'},
        "summary a list": {**good, "summary": ["x"]},
        "summary of numbers": {**good, "summary": {"packages": {"vllm": 13}}},
        "summary groups not mappings": {**good, "summary": {"packages": "vllm"}},
        "notes a string": {**good, "notes": "note"},
        "notes of numbers": {**good, "notes": [1, 2]},
        "findings without summary": {k: v for k, v in good.items() if k != "summary"},
        "snapshot not JSON": {"fake": False, "snapshot": "{"},
        "snapshot a dict": {"fake": False, "snapshot": {"system": {}}},
        "snapshot of another shape": {"fake": False, "snapshot": '{"format": 1}'},
        "a 1 MB hostname": {**good, "hostname": "n" * 1_000_000},
        "a 1 MB hostname in a snapshot": {"fake": False, "snapshot": snap.replace('"n1"', '"' + "m" * 1_000_000 + '"')},
    }


def _report(good: dict, out: object):
    results = []
    for name, answer in (("n0", good), ("n1", out)):
        res = NodeResult(name=name, ray_node_id=name, sent_at=time.time() - 2, received_at=time.time())
        _accept(res, answer)
        results.append(res)
    ev = FleetEvaluator(REGISTRY, RunOptions())
    for r in results:
        ev.prepare(r)
    return ev.report(results), results[1]


def test_the_real_answer_is_accepted(good):
    assert answer_problem(good) is None
    rep, _ = _report(good, {**good, "hostname": "n1"})
    assert {f.node for f in rep.findings} == {"n0", "n1"}
    assert not [f for f in rep.findings if f.code == "FLEET101" and f.status == Status.FAIL]


@pytest.mark.parametrize("kind", sorted(_hostile({"findings": "[]", "summary": {}})))
def test_a_hostile_answer_costs_only_its_node(good, kind):
    out = _hostile(good)[kind]
    t0 = time.monotonic()
    rep, res = _report(good, out)
    by = {(f.node, f.code): f for f in rep.findings}
    names = {f.node for f in rep.findings}
    assert len(names) == 2 and all(len(n) < 100 for n in names), names
    if kind.startswith("a 1 MB hostname"):  # readable otherwise: the name is shown cut, its length said
        (long,) = names - {"n0"}
        assert long.endswith("…(1,000,000 characters)")
    else:
        assert res.error_kind == TASK_ERROR and "cannot read" in res.error
        assert by[("n1", "FLEET101")].status == Status.FAIL
        assert by[("n0", "DRV101")].status == Status.PASS  # the good node is judged as before
    for fmt in FORMATS.values():
        if fmt.renders and fmt.choosable:
            module, func = fmt.renders
            getattr(importlib.import_module(f"ascend_doctor.render.{module}"), func)(rep)
    render_fleet(rep, file=io.StringIO(), verbose=True)
    assert time.monotonic() - t0 < 20
