"""FLEET107 on hand-built fleets: Ray's NPU resource per node against the chips npu-smi lists there (the live test on
a real Ray cluster is in test_ray_fleet.py)."""

from __future__ import annotations

from ascend_doctor.fleet.evaluate import fleet_nodes
from ascend_doctor.fleet.model import NodeResult
from ascend_doctor.options import RunOptions
from ascend_doctor.report import Status
from ascend_doctor.snapshot import Snapshot
from tests.fleet import nodes as N
from tests.helpers import run_check


def ray_fleet(resources: dict[str, dict]) -> list:
    results = [NodeResult(name=name, snapshot=Snapshot.model_validate(N.node(name, 11 + i)), source="ray node x",
                          ray_resources=res) for i, (name, res) in enumerate(resources.items())]
    return fleet_nodes(results, RunOptions())[0]


def judge(nodes, name):
    return run_check("FLEET107", {"fleet_nodes": nodes, "fleet_node": name})


def test_each_node_is_judged_by_its_own_ray_resources():
    nodes = ray_fleet({"a": {"CPU": 192.0, "NPU": 8.0}, "b": {"CPU": 192.0, "GPU": 16.0}, "c": {"CPU": 8.0, "NPU": 4.0},
                       "d": {"CPU": 8.0, "NPU": 16.0}})
    assert judge(nodes, "a").status == Status.PASS
    b = judge(nodes, "b")  # vllm-ascend#3114: `ray status` showed 16 GPU and no NPU
    assert b.status == Status.FAIL and "advertises no NPU resource (it advertises 16 GPU instead)" in b.message
    assert "ray start --address=HEAD:6379 --resources='{\"NPU\": 8}'" in b.remediation
    c = judge(nodes, "c")
    assert c.status == Status.WARN and "4 of the 8 NPU chip(s)" in c.message
    d = judge(nodes, "d")
    assert d.status == Status.FAIL and "devices that do not exist" in d.message


def test_a_fleet_of_snapshots_has_no_ray_resources_to_judge():
    results = [NodeResult(name="a", snapshot=Snapshot.model_validate(N.node("a", 11)), source="test")]
    out = judge(fleet_nodes(results, RunOptions())[0], "a")
    assert out.status == Status.SKIP and "not a Ray fleet" in out.message


def test_without_npu_smi_chips_the_comparison_is_unknown():
    nodes = ray_fleet({"a": {"CPU": 8.0, "NPU": 8.0}})
    nodes[0].summary.setdefault("devices", {})["NPU chips"] = None  # npu-smi gave no table on this node
    out = judge(nodes, "a")
    assert out.status == Status.UNKNOWN and "how many chips npu-smi lists there is not known" in out.message
