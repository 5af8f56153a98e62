"""FLEET107 on hand-built fleets: Ray's NPU resource per node against the chips npu-smi lists there (the live test on
a real Ray cluster is in test_ray_fleet.py)."""

from __future__ import annotations

from ascend_doctor.core.options import RunOptions
from ascend_doctor.fleet.evaluate import fleet_nodes
from ascend_doctor.fleet.model import NodeResult
from ascend_doctor.report import Status
from ascend_doctor.seam.snapshot import Snapshot
from tests.fleet import nodes as N
from tests.helpers import parse_serve, run_check, shipped


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


# FLEET108: the placement vLLM's Ray executor asks for (vllm/v1/executor/ray_utils.py: one {"NPU": 1} bundle per
# worker, PACK; the driver's node needs one NPU itself).
HEAD = {"node:__internal_head__": 1.0}


def placement(resources: dict[str, dict], *serve: str) -> tuple:
    nodes = ray_fleet(resources)
    nodes.serve = parse_serve(["vllm", "serve", "/models/q", *serve], shipped().matrix) if serve else None
    return nodes, {n.name: run_check("FLEET108", {"fleet_nodes": nodes, "fleet_node": n.name}) for n in nodes}


RAY = ("--distributed-executor-backend", "ray")


def test_more_bundles_than_the_cluster_advertises_fail_on_the_head_only():
    _, out = placement({"a": {"NPU": 8.0, **HEAD}, "b": {"GPU": 16.0}, "c": {"NPU": 8.0}}, *RAY, "-tp", "8",
                       "--pipeline-parallel-size", "3")
    assert out["a"].status == Status.FAIL
    assert out["a"].message.startswith("The serve command needs 24 NPU(s) from Ray (TP 8 × PP 3), but the cluster "
                                       "advertises 16: a 8, b 0, c 8")
    assert "ray start --address=HEAD:6379 --resources='{\"NPU\": 8}'" in out["a"].remediation
    assert out["b"].status == out["c"].status == Status.SKIP and "judged once for the cluster, on a" in out["b"].message


def test_a_head_without_npus_fails_like_vllm_does():  # vllm-ascend#3114: "Current node has no NPU available"
    fleet = {"h": {"CPU": 8.0, **HEAD}, "w1": {"NPU": 8.0}, "w2": {"NPU": 8.0}}
    _, out = placement(fleet, *RAY, "-tp", "8", "-pp", "2")
    assert out["h"].status == Status.FAIL and "The Ray head h advertises no NPU" in out["h"].message
    assert "Current node has no NPU available" in out["h"].message


def test_a_tp_group_wider_than_any_node_is_a_warning_with_the_pp_layout():
    _, out = placement({"a": {"NPU": 8.0, **HEAD}, "b": {"NPU": 8.0}}, *RAY, "--tensor-parallel-size", "16")
    assert out["a"].status == Status.WARN and "Tensor parallel size 16 is larger than the most NPUs one node " \
                                              "advertises (8)" in out["a"].message
    assert "`--tensor-parallel-size 8 --pipeline-parallel-size 2`" in out["a"].remediation


def test_a_fitting_layout_passes_and_says_what_was_not_judged_for_ray_dp():
    _, out = placement({"a": {"NPU": 8.0, **HEAD}, "b": {"NPU": 8.0}}, *RAY, "-tp", "8", "-pp", "2")
    assert out["a"].status == Status.PASS and "The 16 NPU(s) the serve command asks Ray for (TP 8 × PP 2) fit the " \
                                              "16 the cluster advertises, and the head a has 8" in out["a"].message
    _, out = placement({"a": {"NPU": 8.0, **HEAD}, "b": {"NPU": 8.0}}, "--data-parallel-backend", "ray", "-tp", "4",
                       "--data-parallel-size", "4")
    assert out["a"].status == Status.PASS and "(TP 4 × PP 1 × DP 4)" in out["a"].message
    assert "VLLM_RAY_DP_PACK_STRATEGY, is not judged" in out["a"].message
    _, out = placement({"a": {"NPU": 8.0, **HEAD}}, "--data-parallel-backend", "ray", "-tp", "4", "-dp", "4")
    assert out["a"].status == Status.FAIL and "needs 16 NPU(s)" in out["a"].message


def test_commands_that_do_not_use_ray_or_no_command_are_skipped_and_bad_sizes_unknown():
    fleet = {"a": {"NPU": 8.0, **HEAD}}
    assert "no `vllm serve` command was given" in placement(fleet)[1]["a"].message
    out = placement(fleet, "-tp", "8")[1]["a"]
    assert out.status == Status.SKIP and "multiprocessing executor" in out.message
    out = placement(fleet, "--distributed-executor-backend", "mp", "-tp", "8")[1]["a"]
    assert out.status == Status.SKIP and "the `mp` executor" in out.message
    out = placement(fleet, *RAY, "-tp", "eight")[1]["a"]
    assert out.status == Status.UNKNOWN and "--tensor-parallel-size eight" in out.message


def test_without_a_head_marker_the_driver_node_is_unknown():
    _, out = placement({"a": {"NPU": 8.0}, "b": {"NPU": 8.0}}, *RAY, "-tp", "8")
    assert out["a"].status == Status.UNKNOWN and "Ray marks no head node" in out["a"].message
