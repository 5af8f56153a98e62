"""`fleet --snapshots` and `diff` through the CLI (no Ray): example-derived nodes, JSON contract, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.report import Report
from tests.fleet import nodes as N

EXAMPLES = N.REPO / "examples"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture()
def fleet_dir(tmp_path: Path) -> Path:
    N.write(N.node("n1", 11), tmp_path / "n1.snapshot.json")
    N.write(N.other_cann(N.node("n2", 12)), tmp_path / "n2.snapshot.json")
    N.write(N.node("n3", 13, ips_from=11), tmp_path / "n3.snapshot.json")
    N.write(N.node("n4", 14), tmp_path / "n4.snapshot.json")
    return tmp_path


def test_fleet_snapshots_json_report(fleet_dir: Path):
    out = fleet_dir / "report.json"
    r = invoke("fleet", "--snapshots", str(fleet_dir / "*.snapshot.json"), "--format", "json", "-o", str(out))
    assert r.exit_code == 1, r.output
    rep = Report.model_validate_json(out.read_text())
    assert rep.command == "fleet" and rep.exit_code == 1
    assert {f.node for f in rep.findings} == {"n1", "n2", "n3", "n4"}
    bad = {(f.node, f.code) for f in rep.findings if f.status.value == "fail"}
    assert ("n2", "FLEET102") in bad and ("n1", "FLEET104") in bad and ("n3", "FLEET104") in bad
    assert ("n4", "FLEET102") not in bad and ("n4", "FLEET104") not in bad
    # every static check ran on every node
    per_node = {n: sum(1 for f in rep.findings if f.node == n and f.family != "FLEET") for n in ("n1", "n4")}
    assert per_node["n1"] == per_node["n4"] > 30
    # the console view: one row per node, the odd node's cell shows the difference
    assert "n2" in r.output and "CANN 8.3.RC1" in r.output and "FLEET102" in r.output


def test_fleet_snapshots_healthy_fleet_exits_0(tmp_path: Path):
    for i in range(3):
        N.write(N.node(f"ok{i}", 20 + i), tmp_path / f"ok{i}.json")
    r = invoke("fleet", "--snapshots", str(tmp_path / "*.json"), "--format", "json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert {f["status"] for f in rep["findings"] if f["family"] == "FLEET"} == {"pass", "skip"}


def test_fleet_unreadable_snapshot_is_a_node_finding(fleet_dir: Path):
    (fleet_dir / "n5.snapshot.json").write_text("{ truncated")
    r = invoke("fleet", "--snapshots", str(fleet_dir / "*.snapshot.json"), "--format", "json", "--select", "FLEET")
    rep = json.loads(r.output)
    f = next(f for f in rep["findings"] if f["node"] == "n5" and f["code"] == "FLEET101")
    assert f["status"] == "fail" and f["details"]["kind"] == "unreadable"
    assert "not valid JSON" in f["message"]
    assert {x["family"] for x in rep["findings"]} == {"FLEET"}


@pytest.mark.parametrize("args, text", [
    ((), "give exactly one of --ray-address"),
    (("--snapshots", "/nonexistent/*.json"), "matches no file"),
    (("--snapshots", "x.json", "--ray-address", "auto"), "give exactly one of"),
])
def test_fleet_usage_errors_exit_2(args, text):
    r = invoke("fleet", *args)
    assert r.exit_code == 2
    assert text in r.output


def test_fleet_ray_fake_hook_needs_json(monkeypatch):
    from ascend_doctor.core.errors import InputError
    from ascend_doctor.fleet.ray_runner import _fake_for, fake_from_env

    assert fake_from_env({}) == {}
    with pytest.raises(InputError):
        fake_from_env({"ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS": "not json"})
    fake = fake_from_env({"ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS": json.dumps({"node_b": "/s/b.json"})})
    node = {"NodeID": "abc", "NodeManagerHostname": "h", "Resources": {"CPU": 1.0, "node_b": 1.0}}
    assert _fake_for(node, fake) == {"snapshot": "/s/b.json"}
    assert _fake_for({"NodeID": "zzz", "Resources": {"CPU": 1.0}}, fake) is None


# diff ------------------------------------------------------------------------------------------------------------
def test_diff_example_hosts_lists_their_real_differences():
    a = str(EXAMPLES / "healthy-a2.snapshot.json")
    b = str(EXAMPLES / "vllm-ascend-0.14-on-vllm-0.13.snapshot.json")
    r = invoke("diff", a, b, "--format", "json")
    assert r.exit_code == 1
    d = json.loads(r.output)
    assert d["kind"] == "snapshot" and d["a"]["hostname"] == "a2-node-03" and d["b"]["hostname"] == "a2-node-21"
    assert list(d["groups"]) == ["packages"]
    assert {c["item"]: (c["a"], c["b"]) for c in d["groups"]["packages"]} == {
        "vllm-ascend": ("0.13.0", "0.14.0rc1"), "torch": ("2.8.0+cpu", "2.9.0+cpu"),
        "torch-npu": ("2.8.0.post2", "2.9.0")}
    console = invoke("diff", a, b)
    assert "vllm-ascend" in console.output and "0.14.0rc1" in console.output and "3 difference(s)" in console.output


def test_diff_broken_host_groups_host_knobs():
    r = invoke("diff", str(EXAMPLES / "healthy-a2.snapshot.json"), str(EXAMPLES / "broken-host.snapshot.json"),
               "--format", "json")
    d = json.loads(r.output)
    host = {c["item"]: (c["a"], c["b"]) for c in d["groups"]["host"]}
    assert host["SELinux"] == ("disabled", "enforcing")
    assert host["ulimit -n"] == ("1048576/1048576", "1024/1024")
    assert host["/dev/shm"] == ("128 GiB", "64 MiB")
    assert host["PCIe 0000:81:00.0"] == ("x16 32.0 GT/s PCIe", "x8 32.0 GT/s PCIe")
    assert set(d["groups"]) == {"host"}


def test_diff_devices_and_env(tmp_path: Path):
    a = N.write(N.node("n1", 11), tmp_path / "a.json")
    b = N.write(N.set_env(N.node("n1", 12), HCCL_BUFFSIZE="512"), tmp_path / "b.json")
    d = json.loads(invoke("diff", str(a), str(b), "--format", "json").output)
    assert {"item": "HCCL_BUFFSIZE", "a": None, "b": "512", "change": "added"} in d["groups"]["env"]
    dev = {c["item"]: (c["a"], c["b"]) for c in d["groups"]["devices"]}
    assert dev["RoCE dev 3 ip"] == ("192.168.103.11", "192.168.103.12")


def test_diff_same_snapshot_exits_0():
    a = str(EXAMPLES / "healthy-a2.snapshot.json")
    r = invoke("diff", a, a)
    assert r.exit_code == 0 and "no difference" in r.output


def test_diff_two_reports(tmp_path: Path):
    for name in ("healthy-a2", "broken-host"):
        r = invoke("check", "--replay", str(EXAMPLES / f"{name}.snapshot.json"), "--format", "json", "-o",
                   str(tmp_path / f"{name}.json"))
        assert r.exit_code in (0, 1)
    r = invoke("diff", str(tmp_path / "healthy-a2.json"), str(tmp_path / "broken-host.json"), "--format", "json")
    assert r.exit_code == 1
    d = json.loads(r.output)
    assert d["kind"] == "report"
    changed = {c["item"].split()[0]: (c["a"].split(":")[0], c["b"].split(":")[0]) for c in d["groups"]["findings"]}
    assert changed == {"HOST102": ("pass", "fail"), "HOST103": ("pass", "fail"), "HOST104": ("pass", "fail"),
                       "HOST107": ("pass", "fail"), "HOST110": ("pass", "fail")}


def test_diff_mixed_or_unreadable_inputs_exit_2(tmp_path: Path):
    snap = str(EXAMPLES / "healthy-a2.snapshot.json")
    rep = tmp_path / "r.json"
    invoke("check", "--replay", snap, "--format", "json", "-o", str(rep))
    assert invoke("diff", snap, str(rep)).exit_code == 2
    (tmp_path / "x.json").write_text("[]")
    r = invoke("diff", snap, str(tmp_path / "x.json"))
    assert r.exit_code == 2 and "neither an ascend-doctor snapshot nor a JSON report" in r.output
