"""FLEET101-106 on hand-made fleets (no Ray): pass, fail and unknown for each, the odd node and the exact difference."""

from __future__ import annotations

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.fleet.evaluate import fleet_nodes
from ascend_doctor.fleet.model import DEAD, FleetNode, NodeResult, clock_estimate
from ascend_doctor.report import Status
from ascend_doctor.seam.snapshot import Snapshot
from tests.fleet import nodes as N
from tests.helpers import run_check


def fleet(*snaps: dict, dead: tuple[str, ...] = (), clocks: dict = None) -> list[FleetNode]:
    results = [NodeResult(name=s["system"]["hostname"], snapshot=Snapshot.model_validate(s), source="test")
               for s in snaps]
    results += [NodeResult(name=d, error="the node died during the run (NodeDiedError)", error_kind=DEAD,
                           source="ray node x") for d in dead]
    for r in results:
        if clocks and r.name in clocks:
            r.clock_offset_s, r.clock_uncertainty_s = clocks[r.name]
    return fleet_nodes(results, RunOptions())[0]


def judge(code: str, nodes: list[FleetNode], name: str):
    return run_check(code, {"fleet_nodes": nodes, "fleet_node": name})


@pytest.fixture(scope="module")
def three():
    return [N.node("n1", 11), N.node("n2", 12), N.node("n3", 13)]


# FLEET101 -------------------------------------------------------------------------------------------------------
def test_reachable_pass_and_dead_node_fail(three):
    nodes = fleet(*three, dead=("n4",))
    assert judge("FLEET101", nodes, "n1").status.value == "pass"
    f = judge("FLEET101", nodes, "n4")
    assert f.status.value == "fail"
    assert f.message == "the node died during the run (NodeDiedError)"
    assert f.details["kind"] == "dead"
    # the other FLEET checks skip the dead node and say it was not compared
    assert judge("FLEET102", nodes, "n4").status.value == "skip"
    assert "1 node(s) not compared, no answer: n4" in judge("FLEET102", nodes, "n1").message


def test_fleet_checks_without_fleet_facts_are_unknown():
    for code in ("FLEET101", "FLEET102", "FLEET103", "FLEET104", "FLEET105", "FLEET106"):
        assert run_check(code, {}).status.value == "unknown", code


# FLEET102 -------------------------------------------------------------------------------------------------------
def test_versions_identical_pass(three):
    nodes = fleet(*three)
    f = judge("FLEET102", nodes, "n2")
    assert f.status.value == "pass", f.message


def test_versions_odd_cann_names_the_node_and_the_difference(three):
    nodes = fleet(three[0], N.other_cann(N.node("n2", 12)), three[2])
    f = judge("FLEET102", nodes, "n2")
    assert f.status.value == "fail"
    assert f.message == "CANN 8.3.RC1 on n2, but 8.5.0 on 2 other node(s) (n1, n3)"
    assert f.details["differences"][0]["majority"] == "8.5.0"
    ok = judge("FLEET102", nodes, "n1")
    assert ok.status.value == "pass" and "differing: n2 (CANN 8.3.RC1)" in ok.message


def test_versions_missing_package_and_python_difference(three):
    odd = N.node("n3", 13)
    odd["python_envs"]["default"]["distributions"] = [d for d in odd["python_envs"]["default"]["distributions"]
                                                      if d["name"] != "transformers"]
    odd["python_envs"]["default"]["version"] = "3.10.14"
    f = judge("FLEET102", fleet(three[0], three[1], odd), "n3")
    assert f.status.value == "fail"
    assert "Python 3.10.14 on n3, but 3.11.10 on 2 other node(s) (n1, n2)" in f.message
    assert "transformers not installed on n3, but 4.57.6 on 2 other node(s)" in f.message


def test_versions_two_nodes_that_differ_both_fail_without_a_majority():
    nodes = fleet(N.node("n1", 11), N.other_cann(N.node("n2", 12)))
    for n in ("n1", "n2"):
        f = judge("FLEET102", nodes, n)
        assert f.status.value == "fail"
        assert "CANN differs with no majority to tell which is right: 8.3.RC1 on n2; 8.5.0 on n1" in f.message


def test_versions_unknown_when_nothing_was_read(three):
    blank = FleetNode(name="n9", reachable=True)
    f = judge("FLEET102", fleet(*three) + [blank], "n9")
    assert f.status.value == "unknown"


# FLEET103 -------------------------------------------------------------------------------------------------------
def test_npu_inventory_pass_fail_unknown(three):
    nodes = fleet(*three)
    assert judge("FLEET103", nodes, "n1").status.value == "pass"
    few = N.node("n3", 13)
    ex = N._examples()
    N_chips = ex.a2_chips(7)
    few["commands"] = [c for c in few["commands"] if c["argv"] != ["npu-smi", "info"]]
    few["commands"].append(ex.cmd(["npu-smi", "info"], ex.npu_smi_info("25.5.0", N_chips, [])))
    f = judge("FLEET103", fleet(three[0], three[1], few), "n3")
    assert f.status.value == "fail"
    assert f.message == ("NPU chips 7 on n3, but 8 on 2 other node(s) (n1, n2); NPU model 7x 910B3 on n3, but "
                         "8x 910B3 on 2 other node(s) (n1, n2)")
    assert judge("FLEET103", nodes + [FleetNode(name="n9", reachable=True)], "n9").status.value == "unknown"


# FLEET104 -------------------------------------------------------------------------------------------------------
def test_hccl_ips_unique_pass_and_clone_fail(three):
    assert judge("FLEET104", fleet(*three), "n1").status.value == "pass"
    nodes = fleet(three[0], three[1], N.node("n3", 13, ips_from=12))
    f = judge("FLEET104", nodes, "n3")
    assert f.status.value == "fail"
    assert "8 device IPs (192.168.100.12 … 192.168.107.12, devices 0, 1, 2, 3, 4, 5, 6, 7) are also used by n2" \
        in f.message
    assert judge("FLEET104", nodes, "n1").status.value == "pass"


def test_hccl_ip_differs_from_hccn_conf(three):
    odd = N.node("n3", 13)
    ex = N._examples()
    conf = {i: f"192.168.{100 + i}.13" for i in range(8)}
    conf[5] = "192.168.105.99"
    odd["files"]["/etc/hccn.conf"] = ex.file(ex.hccn_conf(conf))
    f = judge("FLEET104", fleet(three[0], three[1], odd), "n3")
    assert f.status.value == "fail"
    assert f.message == "device 5 has IP 192.168.105.13 but /etc/hccn.conf says address_5=192.168.105.99"


def test_hccl_ips_unknown_without_hccn(three):
    bare = N.node("n3", 13)
    bare["commands"] = [c for c in bare["commands"] if "hccn_tool" not in c["argv"][0]]
    del bare["files"]["/etc/hccn.conf"]
    f = judge("FLEET104", fleet(three[0], three[1], bare), "n3")
    assert f.status.value == "unknown"
    assert "no RoCE device IPs known on n3" in f.message


# FLEET105 -------------------------------------------------------------------------------------------------------
def test_clock_skew_pass_fail_unknown_skip(three):
    clocks = {"n1": (0.002, 0.004), "n2": (-0.001, 0.003), "n3": (5.2, 0.01)}
    nodes = fleet(*three, clocks=clocks)
    assert judge("FLEET105", nodes, "n1").status.value == "pass"
    f = judge("FLEET105", nodes, "n3")
    assert f.status.value == "fail"
    assert f.message.startswith("n3 clock is +5.198 s (± 0.014 s) from the fleet median")
    coarse = fleet(*three, clocks={"n1": (0.0, 0.01), "n2": (0.0, 0.01), "n3": (1.2, 0.5)})
    assert judge("FLEET105", coarse, "n3").status.value == "unknown"
    partial = fleet(*three, clocks={"n1": (0.0, 0.01), "n2": (0.0, 0.01)})
    assert judge("FLEET105", partial, "n3").status.value == "unknown"
    assert judge("FLEET105", fleet(*three), "n1").status.value == "skip"  # snapshot files: no common clock


def test_clock_estimate_bounds():
    # sent at 100.0, received 100.5 (driver clock); the node (clock +10 s) ran from 110.1 to 110.3 (its clock)
    off, unc = clock_estimate(100.0, 110.1, 110.3, 100.5)
    assert off == pytest.approx(9.95) and unc == pytest.approx(0.15)
    assert off - unc <= 10.0 <= off + unc


# FLEET106 -------------------------------------------------------------------------------------------------------
def test_env_consistent_pass_and_odd_buffsize(three):
    assert judge("FLEET106", fleet(*three), "n1").status.value == "pass"
    odd = N.set_env(N.node("n3", 13), HCCL_BUFFSIZE="512")
    nodes = fleet(three[0], three[1], odd)
    f = judge("FLEET106", nodes, "n3")
    assert f.status.value == "fail"
    assert f.message == "HCCL_BUFFSIZE 512 on n3, but (not set) on 2 other node(s) (n1, n2)"
    assert judge("FLEET106", nodes, "n1").status.value == "pass"


def test_env_vllm_ascend_prefix_and_shared_address(three):
    a = N.set_env(N.node("n1", 11), VLLM_ASCEND_ENABLE_MLAPO="1", HCCL_IF_IP="10.0.0.5")
    b = N.set_env(N.node("n2", 12), VLLM_ASCEND_ENABLE_MLAPO="1", HCCL_IF_IP="10.0.0.6")
    c = N.set_env(N.node("n3", 13), VLLM_ASCEND_ENABLE_MLAPO="0", HCCL_IF_IP="10.0.0.5")
    nodes = fleet(a, b, c)
    f = judge("FLEET106", nodes, "n3")
    assert f.status.value == "fail"
    assert "VLLM_ASCEND_ENABLE_MLAPO 0 on n3, but 1 on 2 other node(s) (n1, n2)" in f.message
    assert "HCCL_IF_IP=10.0.0.5 on n3 is also set on n1" in f.message
    assert judge("FLEET106", nodes, "n2").status.value == "pass"
    assert judge("FLEET106", nodes, "n1").status.value == "fail"  # shares its HCCL_IF_IP with n3


def test_env_unknown_without_environment(three):
    blank = FleetNode(name="n9", reachable=True)
    assert judge("FLEET106", fleet(*three) + [blank], "n9").status.value == "unknown"


def test_nodes_that_judged_themselves_are_merged_with_the_config_applied_on_the_driver():
    """The Ray path: each node sends findings + summary (node_task.evaluate_host); the driver validates them, applies
    the waivers once, runs the FLEET checks — and a node whose findings it cannot read is a node that did not answer."""
    from ascend_doctor.core.config import Config, WaiverRule
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.fleet.evaluate import FleetEvaluator
    from ascend_doctor.fleet.model import NodeResult
    from ascend_doctor.fleet.node_task import evaluate_host
    from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
    from tests.fleet import nodes as N

    answers = [evaluate_host(ReplayHost(Snapshot.model_validate(N.node(f"n{i}", 10 + i)), label=f"n{i}"),
                             RunOptions()) for i in range(3)]
    answers[2] = {**answers[2], "summary": {**answers[0]["summary"]}}  # n2 claims n0's summary: cloned IPs
    results = [NodeResult(name=a["hostname"], evaluation={k: a[k] for k in ("findings", "summary", "notes")})
               for a in answers]
    results.append(NodeResult(name="broken", evaluation={"findings": '[{"code": 1}]', "summary": {}, "notes": []}))
    config = Config(waive=[WaiverRule(code="FLEET104", reason="known clone, OPS-9")])
    rep = FleetEvaluator(load_registry(entry_points=False), RunOptions(), config).report(results)
    by = {(f.node, f.code): f for f in rep.findings}
    assert by[("n0", "HOST101")].status == Status.PASS and by[("n1", "DRV101")].status == Status.PASS
    assert by[("n2", "FLEET104")].status == Status.FAIL and by[("n2", "FLEET104")].waived.reason == "known clone, OPS-9"
    assert by[("broken", "FLEET101")].status == Status.FAIL
    assert "cannot read" in by[("broken", "FLEET101")].message


def test_compute_ranks_are_numbered_by_node_name_whatever_rays_order():
    """fleet --compute: the same cluster gives the same ranks and rendezvous every run (Ray lists nodes in any
    order)."""
    from ascend_doctor.fleet.compute import number_ranks
    from ascend_doctor.fleet.model import NodeResult

    def plan(world):
        return {"cfg": {"world": world, "backend": "hccl", "budget": 180}, "port": 29500 + world, "python": "py"}

    b = NodeResult(name="node-b", ray_node_id="1", address="10.0.0.2")
    a = NodeResult(name="node-a", ray_node_id="2", address="10.0.0.1")
    c = NodeResult(name="node-c", ray_node_id="3", address="10.0.0.3")
    numbered, why = number_ranks([(b, plan(8)), (c, {"skipped_fact": "{}", "cfg": None}), (a, plan(4))])
    assert why == ""
    assert [(r.name, cfg["rank_offset"], cfg["global_world"], cfg["master_addr"], cfg["master_port"])
            for r, cfg in numbered] == [("node-a", 0, 12, "10.0.0.1", 29504), ("node-b", 4, 12, "10.0.0.1", 29504)]
    cpu = {"cfg": {"world": 2, "backend": "gloo", "budget": 60}, "port": 1, "python": "py"}
    assert number_ranks([(a, plan(8)), (b, cpu)]) == ([], "the nodes would use different backends: gloo, hccl")
