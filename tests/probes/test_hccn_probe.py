"""The `hccn` probe over hand-built snapshots: device ids, hccn_tool answers, hccn.conf, missing tool."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Optional

from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes import load_probes
from ascend_doctor.probes.hccn import HccnFact, hccn_probe
from ascend_doctor.seam.snapshot import ReplayHost, Snapshot
from tests.helpers import DATA

TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"


def conf() -> str:
    return (DATA / "hccn" / "hccn_conf_8dev.conf").read_text(encoding="utf-8")


def cmd(dev: int, sub: str, stdout: str, tool: str = TOOL, returncode: int = 0, **kw) -> dict:
    return {"argv": [tool, "-i", str(dev), f"-{sub}", "-g"], "stdout": stdout, "returncode": returncode, **kw}


def healthy(dev: int, tool: str = TOOL) -> list[dict]:
    return [cmd(dev, "link", "link status: UP\n", tool),
            cmd(dev, "ip", f"ipaddr:10.20.{dev}.10\nnetmask:255.255.255.0\n", tool),
            cmd(dev, "net_health", "net health status: Success\n", tool)]


def run(snap: Snapshot, npu_smi=None, timeout: float = 10.0) -> HccnFact:
    preset = {"npu_smi": npu_smi} if npu_smi is not None else None
    store = FactStore(ReplayHost(snap), RunOptions(probe_timeout=timeout), probes={}, preset=preset)
    return hccn_probe(ReplayHost(snap), store)


def chips(*pairs: tuple[int, Optional[int]]):
    """A stand-in for the npu_smi fact: `.info.chips[*]` with npu_id and phy_id."""
    return SimpleNamespace(info=SimpleNamespace(chips=[SimpleNamespace(npu_id=n, chip_id=0, phy_id=p)
                                                       for n, p in pairs]))


def test_registered():
    assert load_probes()["hccn"] is hccn_probe


def test_ids_from_hccn_conf_all_healthy():
    commands = [c for d in range(4) for c in healthy(d)]
    fact = run(Snapshot.model_validate(dict(files={"/etc/hccn.conf": {"content": conf()}}, commands=commands)))
    assert fact.device_id_source == "hccn.conf" and fact.device_ids == [0, 1, 2, 3]
    assert fact.tool_found and fact.tool == TOOL
    assert all(fact.device(d).link_up and fact.device(d).net_health_ok for d in range(4))
    assert fact.device(2).ipaddr == "10.20.2.10"
    assert fact.conf.device(2).address == "10.20.2.10"
    assert fact.errors == {} and fact.skipped == []
    assert all(fact.device(d).link_stat is None for d in range(4))  # no flap history asked for healthy ports


def test_link_down_and_fault_fetch_link_stat():
    link_stat = ("[devid 1]current time        : Mon Mar 10 09:12:01 2025\n[devid 1]link up count       : 2\n"
                 "[devid 1]link change records :\n[devid 1]    Mon Mar 10 09:02:44 2025    LINK DOWN\n"
                 "[devid 1]    Mon Mar 10 08:00:13 2025    LINK UP\n")
    commands = healthy(0) + [cmd(1, "link", "link status: DOWN\n"),
                             cmd(1, "ip", "ipaddr:10.20.1.10\nnetmask:255.255.255.0\n"),
                             cmd(1, "net_health", "net health status: Fault\n"),
                             cmd(1, "link_stat", link_stat)]
    fact = run(Snapshot.model_validate(dict(commands=commands)), npu_smi=chips((0, None), (1, None)))
    assert fact.device_id_source == "npu_smi" and fact.device_ids == [0, 1]
    d1 = fact.device(1)
    assert d1.link_up is False and d1.net_health == "Fault" and d1.net_health_ok is False
    assert d1.link_stat.latest.status == "DOWN" and d1.link_stat.latest.time == "Mon Mar 10 09:02:44 2025"
    assert fact.device(0).link_up is True and fact.device(0).link_stat is None


def test_a3_uses_phy_ids():
    commands = healthy(4) + healthy(5)
    fact = run(Snapshot.model_validate(dict(commands=commands)), npu_smi=chips((2, 4), (2, 5)))
    assert fact.device_ids == [4, 5]
    assert sorted(fact.devices) == [4, 5]


def test_hccn_tool_on_path_only():
    dev = {"entries": ["davinci0", "davinci_manager", "devmm_svm", "hisi_hdc"]}
    fact = run(Snapshot.model_validate(dict(commands=healthy(0, tool="hccn_tool"), dirs={"/dev": dev})))
    assert fact.device_id_source == "/dev/davinciN" and fact.device_ids == [0]
    assert fact.tool == "hccn_tool" and fact.device(0).link_up is True


def test_hccn_tool_missing_is_a_fact():
    fact = run(Snapshot.model_validate(dict(files={"/etc/hccn.conf": {"content": conf()}})))
    assert fact.tool_found is False and fact.tool is None
    assert "not found" in fact.tool_error
    assert fact.devices == {}
    assert fact.conf_found and fact.conf.device(0).address == "10.20.0.10"  # the plan is still read


def test_no_device_ids_at_all():
    fact = run(Snapshot())
    assert fact.device_ids == [] and fact.device_id_source == "none"
    assert fact.tool_found is False and "no NPU device ids" in fact.tool_error
    assert fact.conf_found is False and fact.conf is None


def test_failing_and_empty_commands_are_recorded():
    commands = [cmd(0, "link", "link status: UP\n"),
                cmd(0, "ip", ""),  # EMPTY answer: no IP configured
                cmd(0, "net_health", "", returncode=255, stderr="Device ID is invalid\n")]
    fact = run(Snapshot.model_validate(dict(commands=commands, dirs={"/dev": {"entries": ["davinci0"]}})))
    d0 = fact.device(0)
    assert d0.link_up is True and d0.ipaddr is None and "ip" in d0.empty
    assert d0.net_health is None
    assert fact.errors[0] == ["`/usr/local/Ascend/driver/tools/hccn_tool -i 0 -net_health -g` exited 255: "
                              "Device ID is invalid"]


def test_timed_out_command_is_an_error_not_a_result():
    commands = [cmd(0, "link", "", returncode=None, error="timeout", duration_s=5.0)] + healthy(0)[1:]
    fact = run(Snapshot.model_validate(dict(commands=commands, dirs={"/dev": {"entries": ["davinci0"]}})))
    assert "timed out" in fact.errors[0][0]
    assert fact.device(0).link_status is None and fact.device(0).ipaddr == "10.20.0.10"


def test_tiny_budget_skips_commands_instead_of_overrunning():
    snap = Snapshot.model_validate(dict(commands=healthy(0), dirs={"/dev": {"entries": ["davinci0"]}}))
    fact = run(snap, timeout=0.1)
    assert fact.skipped == ["-i 0 -link -g", "-i 0 -ip -g", "-i 0 -net_health -g"]
    assert fact.devices == {}


def test_garbage_hccn_conf():
    fact = run(Snapshot.model_validate(dict(files={"/etc/hccn.conf": {"content": "this is not a config\n"}})))
    assert fact.conf_found and fact.conf is None and "hccn.conf" in fact.conf_error


def test_a3_sixteen_devices_on_path_tool_one_down():
    commands = [c for d in range(16) if d != 9 for c in healthy(d, tool="hccn_tool")]
    commands += [cmd(9, "link", "link status: DOWN\n", "hccn_tool"), cmd(9, "ip", "", "hccn_tool"),
                 cmd(9, "net_health", "net health status: Init\n", "hccn_tool"),
                 cmd(9, "link_stat", "[devid 9]link up count       : 0\n", "hccn_tool")]
    fact = run(Snapshot.model_validate(dict(commands=commands)), npu_smi=chips(*[(d // 2, d) for d in range(16)]))
    assert fact.device_ids == list(range(16)) and fact.tool == "hccn_tool"
    assert sorted(fact.devices) == list(range(16))
    down = [d for d, dev in fact.devices.items() if not dev.link_up]
    assert down == [9]
    assert fact.device(9).net_health == "Init" and fact.device(9).link_stat.link_up_count == 0
    assert fact.device(15).ipaddr == "10.20.15.10"
    assert fact.errors == {} and fact.skipped == []


def test_tiny_budget_with_many_devices_skips_all_in_order():
    commands = [c for d in range(3) for c in healthy(d)]
    dev = {"entries": ["davinci0", "davinci1", "davinci2"]}
    fact = run(Snapshot.model_validate(dict(commands=commands, dirs={"/dev": dev})), timeout=0.1)
    assert fact.skipped == [f"-i {d} -{c} -g" for d in range(3) for c in ("link", "ip", "net_health")]
    assert fact.devices == {}
