"""HCCL checks on hccn facts built from hand-written hccn_tool outputs (parsed by the real parser), plus the corpus."""

from __future__ import annotations

from typing import Optional

import pytest

from ascend_doctor.parsers.hccn import parse_hccn_conf, parse_hccn_tool
from ascend_doctor.parsers.npu_smi import NpuChip, NpuSmiInfo
from ascend_doctor.probes.hccn import HccnFact
from ascend_doctor.probes.host_facts import ContainerFact
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.report import Status
from tests.helpers import corpus_params, read_corpus, run_check

TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
MULTI = {"HCCL_IF_IP": "10.10.0.11", "GLOO_SOCKET_IFNAME": "enp189s0f0"}
HOST = ContainerFact(in_container=False)
DOCKER = ContainerFact(in_container=True, runtime="docker", signals=["/.dockerenv exists"])


def output(d: int, link: str = "UP", ip: Optional[str] = "auto", mask: str = "255.255.255.0",
           health: str = "Success", link_stat: str = "") -> str:
    """What `hccn_tool -i d -link/-ip/-net_health -g` print on an Atlas 800 A2 (and -link_stat when asked)."""
    ip = f"10.20.{d}.10" if ip == "auto" else ip
    text = (f"{TOOL} -i {d} -link -g\nlink status: {link}\n\n"
            f"{TOOL} -i {d} -ip -g\n" + (f"ipaddr:{ip}\nnetmask:{mask}\n" if ip else "") + "\n"
            f"{TOOL} -i {d} -net_health -g\nnet health status: {health}\n\n")
    if link_stat:
        text += f"{TOOL} -i {d} -link_stat -g\n{link_stat}\n"
    return text


def hccn(n: int = 8, conf: Optional[str] = "match", **per_device) -> HccnFact:
    """An hccn fact for n devices; per_device={3: dict(link="DOWN"), ...} changes single devices."""
    fact = HccnFact(tool=TOOL, tool_found=True, device_ids=list(range(n)), device_id_source="npu_smi")
    for d in range(n):
        kw = per_device.get(f"d{d}", {})
        fact.devices[d] = parse_hccn_tool(output(d, **kw), device_id=d).device(d)
    if conf == "match":
        conf = "".join(f"address_{d}=10.20.{d}.10\nnetmask_{d}=255.255.255.0\nnetdetect_{d}=10.20.{d}.1\n"
                       for d in range(n))
    if conf is not None:
        fact.conf_found, fact.conf = True, parse_hccn_conf(conf)
    return fact


def npus(n: int) -> NpuSmiFact:
    chips = [NpuChip(npu_id=i, chip_id=0, name="910B3", health="OK") for i in range(n)]
    return NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0),
                      info=NpuSmiInfo(chips=chips))


def run(code, fact, env=None, n_npus=8, **facts):
    base = {"hccn": fact, "env": {} if env is None else env, "npu_smi": npus(n_npus), "container": HOST}
    base.update(facts)
    return run_check(code, base)


PORT_CHECKS = ["HCCL101", "HCCL102", "HCCL103", "HCCL104"]


@pytest.mark.parametrize("code", PORT_CHECKS)
def test_port_checks_pass_on_a_healthy_8_card_node(code):
    assert run(code, hccn(), MULTI).status == Status.PASS


@pytest.mark.parametrize("code", PORT_CHECKS + ["HCCL105"])
def test_unknown_without_facts_and_skip_with_one_npu(code):
    assert run_check(code, {}).status == Status.UNKNOWN
    f = run(code, hccn(1), {"ASCEND_RT_VISIBLE_DEVICES": "0"})
    assert f.status == Status.SKIP and "HCCL is not used" in f.message


@pytest.mark.parametrize("code", PORT_CHECKS)
def test_port_checks_unknown_when_the_npu_count_is_unknown(code):
    fact = HccnFact(tool_error="no NPU device ids known (npu-smi, /etc/hccn.conf, /dev/davinciN all silent)")
    f = run_check(code, {"hccn": fact, "env": {}})
    assert f.status == Status.UNKNOWN


# HCCL101 ------------------------------------------------------------------------------------------------------------
def test_link_down_fails_multi_node_and_warns_single_node():
    fact = hccn(d3={"link": "DOWN", "health": "Init"})
    f = run("HCCL101", fact, MULTI)
    assert f.status == Status.FAIL and "link DOWN on 1 device(s): device 3" in f.message and f.details["down"] == [3]
    f = run("HCCL101", fact, {})
    assert f.status == Status.WARN and "HCCS" in f.message


def test_link_down_with_flap_history_names_the_last_event():
    stat = ("[devid 5]current time        : Wed Aug  2 03:36:43 2022\n[devid 5]link up count       : 2\n"
            "[devid 5]link change records :\n[devid 5]    Tue Aug  1 14:44:40 2022    LINK DOWN\n"
            "[devid 5]    Tue Aug  1 14:43:26 2022    LINK UP\n")
    f = run("HCCL101", hccn(d5={"link": "DOWN", "link_stat": stat}), MULTI)
    assert f.status == Status.FAIL and "latest event DOWN at Tue Aug 1 14:44:40 2022, link up count 2" in f.message


def test_link_up_but_latest_record_down_warns_flapping():
    stat = ("[devid 2]link up count       : 7\n[devid 2]link change records :\n"
            "[devid 2]    Tue Aug  1 14:44:40 2022    LINK DOWN\n[devid 2]    Tue Aug  1 14:43:26 2022    LINK UP\n")
    f = run("HCCL101", hccn(d2={"link_stat": stat}), MULTI)
    assert f.status == Status.WARN and "flapped" in f.message
    assert "device 2 (LINK DOWN at Tue Aug 1 14:44:40 2022, UP now)" in f.message


def test_missing_hccn_tool_host_warns_container_unknown():
    fact = HccnFact(tool_error=f"hccn_tool not found (tried {TOOL}, hccn_tool)", device_ids=list(range(8)))
    f = run("HCCL101", fact)
    assert f.status == Status.WARN and "cannot be verified" in f.message and "driver" in f.remediation
    assert run("HCCL101", fact, container=DOCKER).status == Status.UNKNOWN
    assert run("HCCL102", fact).status == Status.UNKNOWN  # only HCCL101 carries the warning


def test_no_device_answered_is_unknown():
    fact = HccnFact(tool=TOOL, tool_found=True, device_ids=[0, 1], errors={0: ["timed out"], 1: ["timed out"]})
    f = run("HCCL101", fact, MULTI)
    assert f.status == Status.UNKNOWN and "timed out" in f.message


def test_partial_answers_are_never_a_pass():
    fact = hccn(4)
    del fact.devices[3]
    fact.device_ids = [0, 1, 2, 3]
    fact.skipped = ["-i 3 -link -g", "-i 3 -ip -g", "-i 3 -net_health -g"]
    for code in ("HCCL101", "HCCL102", "HCCL103"):
        f = run(code, fact, MULTI, n_npus=4)
        assert f.status == Status.UNKNOWN and "no answer for device(s) 3" in f.message, code
        assert f.details["not_read"] == [3] and any("device 3: not asked (out of time)" in e.excerpt
                                                    for e in f.evidence)


# HCCL102 ------------------------------------------------------------------------------------------------------------
def test_net_health_fault_fails_with_value():
    f = run("HCCL102", hccn(d1={"health": "Socket failed"}, d6={"health": "Fault"}), MULTI)
    assert f.status == Status.FAIL
    assert "device 1: Socket failed" in f.message and "device 6: Fault" in f.message
    assert "-netdetect" in f.remediation
    assert run("HCCL102", hccn(d1={"health": "Fault"}), {}).status == Status.WARN


# HCCL103 ------------------------------------------------------------------------------------------------------------
def test_ip_missing_and_duplicate():
    fact = hccn(d2={"ip": None}, d5={"ip": "10.20.4.10"}, conf=None)
    f = run("HCCL103", fact, MULTI)
    assert f.status == Status.FAIL
    assert "no IP on device(s) 2" in f.message and "duplicate IP 10.20.4.10 on devices 4,5" in f.message
    assert run("HCCL103", fact, {}).status == Status.WARN


# HCCL104 ------------------------------------------------------------------------------------------------------------
def test_conf_disagrees_with_live():
    conf = "address_0=10.20.0.10\nnetmask_0=255.255.0.0\naddress_1=10.20.1.99\nnetmask_1=255.255.255.0\n"
    f = run("HCCL104", hccn(3, conf=conf), MULTI, n_npus=3)
    assert f.status == Status.FAIL
    assert "netmask_0=255.255.0.0 but live netmask 255.255.255.0" in f.message
    assert "address_1=10.20.1.99 but live ipaddr 10.20.1.10" in f.message
    assert "device 2: live 10.20.2.10 has no address_2" in f.message


def test_conf_missing_host_warns_container_skips_unreadable_unknown():
    fact = hccn(conf=None)
    assert run("HCCL104", fact, MULTI).status == Status.WARN
    assert run("HCCL104", fact, MULTI, container=DOCKER).status == Status.SKIP
    bad = hccn(conf=None)
    bad.conf_error = "Permission denied"
    assert run("HCCL104", bad, MULTI).status == Status.UNKNOWN


# HCCL105 ------------------------------------------------------------------------------------------------------------
def t(env, n=8):
    return run_check("HCCL105", {"env": env, "npu_smi": npus(n)})


def test_timeouts_set_pass():
    f = t({"HCCL_CONNECT_TIMEOUT": "1200", "HCCL_EXEC_TIMEOUT": "3600"})
    assert f.status == Status.PASS


def test_timeouts_unset_warn_with_recommended_values():
    f = t({"HCCL_CONNECT_TIMEOUT": "1200"})
    assert f.status == Status.WARN and "HCCL_EXEC_TIMEOUT not set" in f.message
    assert "HCCL_CONNECT_TIMEOUT=1200 HCCL_EXEC_TIMEOUT=3600" in f.remediation


def test_timeouts_visible_devices_decide_the_count():
    env = {"ASCEND_RT_VISIBLE_DEVICES": "4"}
    assert t(env).status == Status.SKIP  # 8 NPUs on the box, the server uses one
    assert t({"ASCEND_RT_VISIBLE_DEVICES": "0,1"}, n=8).status == Status.WARN
    assert t({"HCCL_IF_IP": "10.10.0.11"}, n=1).status == Status.WARN  # one NPU per node, several nodes


@pytest.mark.parametrize("env, words", [
    ({"HCCL_CONNECT_TIMEOUT": "20m", "HCCL_EXEC_TIMEOUT": "3600"}, "not an integer"),
    ({"HCCL_CONNECT_TIMEOUT": "60", "HCCL_EXEC_TIMEOUT": "3600"}, "outside [120, 7200]"),
])
def test_timeouts_invalid_fail(env, words):
    f = t(env)
    assert f.status == Status.FAIL and words in f.message


def test_timeouts_connect_not_below_exec_warns():
    f = t({"HCCL_CONNECT_TIMEOUT": "3600", "HCCL_EXEC_TIMEOUT": "1800"})
    assert f.status == Status.WARN and "not smaller" in f.message


def test_timeouts_unknown_count():
    assert run_check("HCCL105", {"env": {}}).status == Status.UNKNOWN


# Real hccn_tool outputs from the shared corpus (skipped on a plain clone) -------------------------------------------
def _corpus_fact(path) -> Optional[HccnFact]:
    _, text = read_corpus(path)
    try:
        out = parse_hccn_tool(text)
    except Exception:
        return None
    if not out.devices:
        return None
    return HccnFact(tool=TOOL, tool_found=True, device_ids=sorted(out.devices), devices=out.devices)


@pytest.mark.parametrize("path", corpus_params("hccn_tool"))
def test_corpus_outputs_through_the_port_checks(path):
    fact = _corpus_fact(path)
    if fact is None:
        pytest.skip("not a per-device hccn_tool output (hccn.conf or a capture without device ids)")
    statuses = {code: run(code, fact, MULTI).status for code in ("HCCL101", "HCCL102", "HCCL103")}
    assert Status.ERROR not in statuses.values()
    devs = fact.devices.values()
    if any(d.link_up is False for d in devs):
        assert statuses["HCCL101"] == Status.FAIL
    elif any(d.link_stat and d.link_stat.latest and d.link_stat.latest.status == "DOWN" for d in devs):
        assert statuses["HCCL101"] == Status.WARN  # e.g. the MindCluster fixture whose last record is LINK DOWN
    if any(d.net_health_ok is False for d in devs):
        assert statuses["HCCL102"] == Status.FAIL
    if "ip-g-8dev" in path.name:  # ModelArts node: 8 distinct /16 addresses
        assert statuses["HCCL103"] == Status.PASS
    if "with-empty-result" in path.name:  # device 2 printed nothing for -ip -g
        assert statuses["HCCL103"] == Status.FAIL


def test_nnodes_on_the_serve_command_makes_hccl_multi_node():
    """`vllm serve … --nnodes 2` is a multi-node launch even with no multi-node variable set: HCCL105 judges the
    timeouts (it skipped before, as for one NPU) and names the option among the signals."""
    from tests.helpers import parse_serve as parse_serve_command

    cmd = parse_serve_command(["vllm", "serve", "/m", "--nnodes", "2", "--node-rank", "0"])
    f = run_check("HCCL105", {"env": {"ASCEND_RT_VISIBLE_DEVICES": "0"}, "serve_cmd": cmd})
    assert f.status == Status.WARN and "--nnodes=2" in " ".join(e.excerpt for e in f.evidence)
    single = run_check("HCCL105", {"env": {"ASCEND_RT_VISIBLE_DEVICES": "0"}})
    assert single.status == Status.SKIP
