"""hccn_tool output and /etc/hccn.conf parsers: hand-written fixtures, then golden facts from the corpus."""

from __future__ import annotations

import pytest

from ascend_doctor.core.errors import ParseError
from ascend_doctor.parsers import parser_kinds
from ascend_doctor.parsers.hccn import parse_hccn_conf, parse_hccn_tool
from tests.helpers import DATA, corpus_files, corpus_params, read_corpus

D = DATA / "hccn"


def fixture(name: str) -> str:
    return (D / name).read_text(encoding="utf-8")


# --- single outputs -----------------------------------------------------------------------------------------------

def test_link_up_and_down_with_device_id_from_caller():
    up = parse_hccn_tool(fixture("link_up.txt"), device_id=0).device(0)
    down = parse_hccn_tool(fixture("link_down.txt"), device_id=1).device(1)
    assert (up.link_status, up.link_up) == ("UP", True)
    assert (down.link_status, down.link_up) == ("DOWN", False)


def test_output_without_device_id_is_unattributed():
    out = parse_hccn_tool(fixture("net_health_init.txt"))
    assert out.devices == {}
    assert out.unattributed.net_health == "Init"
    assert out.unattributed.net_health_ok is False


def test_ip_with_spaces_after_colon():
    dev = parse_hccn_tool(fixture("ip_g_spaced.txt"), device_id=3).device(3)
    assert (dev.ipaddr, dev.netmask) == ("10.20.0.11", "255.255.255.0")
    assert dev.link_up is None and dev.net_health is None


# --- collector bundles ----------------------------------------------------------------------------------------------

def test_collector_bundle_groups_by_device():
    out = parse_hccn_tool(fixture("collector_8dev_mixed.txt"))
    assert sorted(out.devices) == [0, 1, 2, 3]
    d0, d1, d2, d3 = (out.device(i) for i in range(4))
    assert (d0.link_up, d0.net_health_ok, d0.ipaddr) == (True, True, "10.20.0.10")
    assert (d1.link_up, d1.net_health, d1.ipaddr) == (False, "Fault", "10.20.1.10")
    assert (d2.link_up, d2.net_health, d2.ipaddr) == (True, "Receive timeout", None)
    assert d3.link_status is None and d3.empty == ["link"]
    assert d0.commands == ["link", "net_health", "ip"]
    assert out.unattributed is None  # the `for i in ...` prompt line is not output


def test_link_stat_device_prefix_splits_devices_and_finds_latest():
    out = parse_hccn_tool(fixture("link_stat_device_prefix_two_devices.txt"))
    assert sorted(out.devices) == [4, 5]
    ls4, ls5 = out.device(4).link_stat, out.device(5).link_stat
    assert ls4.link_up_count == 1 and ls4.latest.status == "UP"
    assert ls5.link_up_count == 3
    assert [r.status for r in ls5.records] == ["DOWN", "UP", "DOWN", "UP"]
    assert ls5.latest.status == "DOWN" and ls5.latest.time == "Mon Mar 10 09:02:44 2025"
    assert ls5.current_time == "Mon Mar 10 09:12:01 2025"


def test_link_stat_without_records_crlf():
    ls = parse_hccn_tool(fixture("link_stat_no_records_crlf.txt")).device(6).link_stat
    assert ls.link_up_count == 0
    assert ls.records == [] and ls.latest is None
    assert ls.current_time == "Sun Jan 5 03:00:00 2025"


def test_fec_stat_optical_after_dollar_prompts():
    dev = parse_hccn_tool(fixture("optical_fec_stat.txt")).device(2)
    assert dev.fec_mode == "RS FEC mode"
    assert dev.stat["roce_rx_err_pkt_num"] == "12"
    assert dev.stat["mac_tx_total_pkt_num"] == "9812331"
    assert dev.optical["present"] == "present"
    assert dev.optical["Rx Power0"] == "0.9952 mW"
    assert dev.commands == ["fec", "stat", "optical"]


def test_ping_with_loss():
    p = parse_hccn_tool(fixture("ping_loss.txt")).device(1).ping
    assert (p.target, p.transmitted, p.received, p.loss_percent) == ("10.20.0.10", 3, 1, 66.67)
    assert p.times_ms == [0.051]


def test_route_status_lldp():
    dev = parse_hccn_tool(fixture("route_status_lldp.txt")).device(0)
    assert [(r.destination, r.gateway, r.iface) for r in dev.routes] == [("default", "10.20.0.1", "eth0"),
                                                                          ("10.20.0.0", "*", "eth0")]
    assert dev.netdev_status["interface"] == "eth0"
    assert dev.netdev_status["Speed"] == "400000Mb/s"
    assert dev.netdev_status["Link detected"] == "yes"
    assert dev.lldp["Port ID TLV"] == "Ifname: 400GE1/0/7"
    assert dev.lldp["Maximum Frame Size TLV"] == "9216"


# --- hccn.conf ------------------------------------------------------------------------------------------------------

def test_hccn_conf():
    conf = parse_hccn_conf(fixture("hccn_conf_8dev.conf"))
    assert sorted(conf.devices) == [0, 1, 2, 3]
    assert conf.device(1).address == "10.20.1.10"
    assert conf.device(2).netdetect == "10.20.2.1"
    assert conf.device(3).netdetect is None and conf.device(3).gateway == "10.20.3.1"
    assert conf.device(0).other == {"send_arp_status": "1"}
    assert conf.settings == {"arp_send_interval": "1000"}
    assert conf.elided is False


# --- garbage --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n \n", "hello world", "NOT_HCCN", "Segmentation fault (core dumped)"],
                         ids=["empty", "blank", "words", "npu-smi", "segv"])
def test_garbage_raises_one_line_parse_error(text):
    if text == "NOT_HCCN":
        text = fixture("not_hccn.txt")
    for func in (parse_hccn_tool, parse_hccn_conf):
        with pytest.raises(ParseError) as exc:
            func(text)
        assert "\n" not in str(exc.value) and str(exc.value)


def test_hccn_tool_text_is_not_a_conf():
    with pytest.raises(ParseError):
        parse_hccn_conf(fixture("collector_8dev_mixed.txt"))


def test_kinds_registered():
    kinds = parser_kinds()
    assert "hccn-tool" in kinds and "hccn-conf" in kinds


# --- corpus golden facts --------------------------------------------------------------------------------------------

def corpus(name_part: str) -> str:
    files = [p for p in corpus_files("hccn_tool") if name_part in p.name]
    if not files:
        pytest.skip(f"corpus file *{name_part}* not present")
    return read_corpus(files[0])[1]


def test_corpus_hccn_conf_elided():
    conf = parse_hccn_conf(corpus("arthurchiao-910B1-hccn-conf"))
    assert sorted(conf.devices) == [0, 7]
    assert conf.elided is True
    assert (conf.device(0).address, conf.device(0).netmask, conf.device(0).gateway) == (
        "29.1.137.205", "255.255.0.0", "29.1.0.1")
    assert conf.device(7).address == "29.1.170.143"
    assert conf.device(7).netdetect == "29.1.0.1"
    assert conf.device(7).other["send_arp_status"] == "1"


def test_corpus_hw_stats_devid_prefix():
    dev = parse_hccn_tool(corpus("hccn-hw-stats-g")).device(3)
    assert dev.hw_stats["qp_alloc"] == 1 and dev.hw_stats["mr_alloc"] == 0
    assert len(dev.hw_stats) == 14


def test_corpus_ip_and_route():
    dev = parse_hccn_tool(corpus("hccn-ip-route-g")).device(3)
    assert (dev.ipaddr, dev.netmask) == ("29.1.112.213", "255.255.0.0")
    assert len(dev.routes) == 5
    assert (dev.routes[0].destination, dev.routes[0].gateway, dev.routes[0].iface) == ("default", "29.1.0.1", "eth3")
    assert dev.routes[-1].iface == "end3v0"


def test_corpus_lldp():
    dev = parse_hccn_tool(corpus("hccn-lldp-g")).device(3)
    assert dev.lldp["Port ID TLV"] == "Ifname: 400GE1/1/20:2"
    assert "DX511" in dev.lldp["System Description TLV"]
    assert dev.lldp["Maximum Frame Size TLV"] == "9216"
    assert "End of LLDPDU TLV" in dev.lldp


def test_corpus_ping():
    p = parse_hccn_tool(corpus("hccn-ping")).device(3).ping
    assert (p.target, p.transmitted, p.received, p.loss_percent) == ("29.1.137.205", 3, 3, 0.0)
    assert p.times_ms == [1.418, 0.034, 0.04]


def test_corpus_status_elided_and_annotated():
    st = parse_hccn_tool(corpus("hccn-status-g-elided")).device(3).netdev_status
    assert st["interface"] == "eth3"
    assert st["Speed"] == "200000Mb/s"  # the blog's '# <-- 200Gbps' annotation is dropped
    assert st["Supports auto-negotiation"] == "No"


@pytest.mark.parametrize("name,status,ok", [("net-health-Fault", "Fault", False),
                                            ("net-health-Success", "Success", True)])
def test_corpus_net_health(name, status, ok):
    out = parse_hccn_tool(corpus(name), device_id=5)
    assert out.device(5).net_health == status
    assert out.device(5).net_health_ok is ok


def test_corpus_ip_with_empty_result():
    out = parse_hccn_tool(corpus("910A-ip-g-with-empty-result"))
    assert sorted(out.devices) == [0, 1, 2]
    assert (out.device(0).ipaddr, out.device(0).netmask) == ("192.161.200.10", "255.255.255.0")
    assert out.device(1).ipaddr == "192.161.201.10"
    assert out.device(2).ipaddr is None and out.device(2).empty == ["ip"]


def test_corpus_linkstat_last_down():
    dev = parse_hccn_tool(corpus("910A-linkstat-last-down")).device(0)
    assert dev.link_stat.latest.status == "DOWN"
    assert dev.link_stat.latest.time == "Tue Aug 1 14:44:40 2022"
    assert dev.link_stat.link_up_count == 2 and len(dev.link_stat.records) == 4
    assert dev.stat == {"roce_rx_err_pkt_num": "0", "roce_tx_err_pkt_num": "0"}


def test_corpus_socket_failed_and_optical():
    dev = parse_hccn_tool(corpus("stat-linkstat-fec-nethealth-socketfailed-optical")).device(0)
    assert dev.net_health == "Socket failed" and dev.net_health_ok is False
    assert dev.fec_mode == "no FEC mode"
    assert dev.link_stat.latest.status == "UP"  # newest first: 14:43:40 UP is printed above 14:43:40 DOWN
    assert dev.optical["Rx Power1"] == "0.0054 mW"
    assert dev.optical["Media SNR Lane3"] == "23.2969 dB"
    assert dev.optical["Host SNR Lane0"] == "not supported"
    assert dev.commands == ["stat", "link_stat", "fec", "net_health", "optical"]


def test_corpus_modelarts_8dev_ips():
    out = parse_hccn_tool(corpus("modelarts-ip-g-8dev"))
    assert sorted(out.devices) == list(range(8))
    assert out.device(0).ipaddr == "192.1.45.172"
    assert out.device(7).ipaddr == "192.4.32.120"
    assert {d.netmask for d in out.devices.values()} == {"255.255.0.0"}


@pytest.mark.parametrize("path", corpus_params("hccn_tool"))
def test_corpus_every_capture_understood(path):
    _, text = read_corpus(path)
    out = parse_hccn_conf(text) if "hccn-conf" in path.name else parse_hccn_tool(text)
    assert out.devices or getattr(out, "unattributed", None)


def test_json_carries_derived_verdicts_and_round_trips():
    from ascend_doctor.parsers.hccn import HccnToolOutput

    data = parse_hccn_tool(fixture("collector_8dev_mixed.txt")).model_dump(mode="json")
    assert data["devices"]["1"]["link_up"] is False and data["devices"]["0"]["net_health_ok"] is True
    again = HccnToolOutput.model_validate(data)
    assert again.device(1).net_health == "Fault" and again.device(3).empty == ["link"]


def test_other_subcommands_keep_key_values():
    # Line formats written from memory of the vendor docs, not from a capture: the test only pins that
    # subcommands without a dedicated reader keep their `key: value` lines instead of failing.
    dev = parse_hccn_tool(fixture("tls_gateway.txt")).device(7)
    assert dev.other["gateway"] == {"default gateway": "10.20.7.1, ifname:eth7"}
    assert dev.other["tls"]["dev_id"].startswith("7, tls switch[0]")
    assert dev.commands == ["tls", "gateway"]
