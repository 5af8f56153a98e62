"""HCCL106 HCCL's default ports against the listening sockets of /proc/net/tcp (parser, probe and check)."""

from __future__ import annotations

from ascend_doctor.facts.scope import NpuScope
from ascend_doctor.parsers.proc_net import listening_ports
from ascend_doctor.probes.ports import ListeningPorts
from ascend_doctor.report import Status
from tests.helpers import run_check

HEADER = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


def row(i: int, port: int, state: str = "0A") -> str:
    return (f"  {i:>2}: C0A80A0B:{port:04X} 00000000:0000 {state} 00000000:00000000 00:00000000 00000000     0"
            f"        0 {88100 + i} 1 0000000000000000 100 0 0 10 0\n")


def test_the_parser_keeps_listening_ports_and_skips_garbage():
    text = HEADER + row(0, 22) + row(1, 60000) + row(2, 45678, state="01") + "garbage line\n" + "  3: zz:zz x 0A\n"
    assert listening_ports(text) == {22, 60000}
    assert listening_ports("") == set()


def judge(ports, env=None, count=4):
    return run_check("HCCL106", {"env": env or {}, "npu_scope": NpuScope(count=count),
                                 "listening_ports": ListeningPorts(ports=ports, read=["/proc/net/tcp"])})


def test_the_default_ports_taken_warn_with_the_fix():  # vllm-ascend#405, #4725
    f = judge([22, 60000, 16666])
    assert f.status == Status.WARN and "port(s) 16666, 60000 already listen" in f.message
    assert "HCCL_IF_BASE_PORT=60100" in f.remediation


def test_a_distinct_base_port_or_auto_ranges_pass():  # PR #16205, alibaba/ROLL#421
    assert judge([60000], env={"HCCL_IF_BASE_PORT": "60100", "HCCL_NPU_SOCKET_PORT_RANGE": "auto"}).status == \
        Status.PASS
    f = judge([60000, 16666], env={"HCCL_HOST_SOCKET_PORT_RANGE": "auto", "HCCL_NPU_SOCKET_PORT_RANGE": "auto"})
    assert f.status == Status.PASS and "HCCL chooses its ports" in f.message


def test_one_npu_skips_and_an_unreadable_proc_is_unknown():
    assert judge([60000], count=1).status == Status.SKIP
    f = run_check("HCCL106", {"env": {}, "npu_scope": NpuScope(count=8),
                              "listening_ports": ListeningPorts(error="/proc/net/tcp: permission denied")})
    assert f.status == Status.UNKNOWN and "permission denied" in f.message


def test_a_base_port_that_is_no_port_is_a_finding_not_a_silent_default():
    f = judge([22], env={"HCCL_IF_BASE_PORT": "6o100"})
    assert f.status == Status.WARN and "HCCL_IF_BASE_PORT='6o100' is not a port" in f.message
    assert judge([22], env={"HCCL_IF_BASE_PORT": "65530"}).status == Status.WARN  # 16 ports do not fit


def test_the_parser_reads_a_real_capture():
    """tests/data/proc_net: a real /proc/net/tcp (one listener, port 2024) and a tcp6 with its header only."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data" / "proc_net"
    assert listening_ports((data / "tcp.captured").read_text()) == {2024}
    assert listening_ports((data / "tcp6.captured").read_text()) == set()
