"""HCCL106: HCCL's fixed default ports are free in this network namespace."""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev

HOST_BASE = 60000     # HCCL_IF_BASE_PORT's default: the host NIC listens on 16 ports from it (#405: port[60000])
HOST_SPAN = 16
NPU_PORT = 16666      # the NPU socket port HCCL listens on (#4725: "specific port[16666]")


def _base(env: dict) -> Optional[int]:
    """HCCL_IF_BASE_PORT (its default when unset); None when it is not a port a 16-port range can start at."""
    try:
        base = int(str(env.get("HCCL_IF_BASE_PORT", HOST_BASE)).strip())
    except ValueError:
        return None
    return base if 1 <= base <= 65536 - HOST_SPAN else None


def _ranges(env: dict) -> tuple[list[int], list[str]]:
    """The fixed ports this server's HCCL would bind, and what decided them (the base is a valid port here)."""
    ports, why = [], []
    if env.get("HCCL_HOST_SOCKET_PORT_RANGE"):
        why.append(f"HCCL_HOST_SOCKET_PORT_RANGE={env['HCCL_HOST_SOCKET_PORT_RANGE']}")
    else:
        base = _base(env) or HOST_BASE
        ports += list(range(base, base + HOST_SPAN))
        why.append(f"host {base}-{base + HOST_SPAN - 1}" + ("" if "HCCL_IF_BASE_PORT" in env else " (default)"))
    if env.get("HCCL_NPU_SOCKET_PORT_RANGE"):
        why.append(f"HCCL_NPU_SOCKET_PORT_RANGE={env['HCCL_NPU_SOCKET_PORT_RANGE']}")
    else:
        ports.append(NPU_PORT)
        why.append(f"NPU socket {NPU_PORT}")
    return ports, why


@check("HCCL106", "hccl-ports-free", severity="warning", needs=["server_env", "npu_scope", "listening_ports"])
def hccl_ports_free(ctx):
    """HCCL's default ports are free: no other HCCL job listens on them in this network namespace

    What it checks: when more than one NPU will be used, the TCP ports something already listens on
    (`/proc/net/tcp`, `/proc/net/tcp6`) against the ports this server's HCCL would bind: 16 host ports from
    `HCCL_IF_BASE_PORT` (60000 by default) and the NPU socket port 16666, unless `HCCL_HOST_SOCKET_PORT_RANGE` /
    `HCCL_NPU_SOCKET_PORT_RANGE` let HCCL choose.

    Why it matters: a second HCCL job on the same host network (two servers on one node, two containers with
    `--net=host`, prefill and decode on one machine) finds them taken: `EJ0003: Failed to bind the IP port … host nic
    listen start failed, port[60000]` (vllm-ascend#405), `listen on ip[…] and specific port[16666] fail` (#4725,
    #11968); vllm-ascend's CI hit it as `Communication_Error_Bind_IP_Port(EI0019)` (PR #16205).

    How to fix: give each instance its own base port (`export HCCL_IF_BASE_PORT=60100`, PR #16205), or let HCCL pick
    (`export HCCL_HOST_SOCKET_PORT_RANGE=auto HCCL_NPU_SOCKET_PORT_RANGE=auto`, alibaba/ROLL#421).
    """
    env = ctx.fact("server_env") or {}
    scope = ctx.fact("npu_scope")
    if scope.single:
        return ctx.skip(T("HCCL is not used: {scope}", scope=scope.describe()))
    if not env.get("HCCL_HOST_SOCKET_PORT_RANGE") and _base(env) is None:
        return ctx.warn(T("HCCL_IF_BASE_PORT={value} is not a port a range of {span} can start at (1-{top})",
                          value=repr(env.get("HCCL_IF_BASE_PORT")), span=HOST_SPAN, top=65536 - HOST_SPAN),
                        [ev("env: HCCL_IF_BASE_PORT", str(env.get("HCCL_IF_BASE_PORT")))],
                        remediation=T("Give this instance its own ports: `export HCCL_IF_BASE_PORT=60100` (another "
                                      "base per instance), or `export HCCL_HOST_SOCKET_PORT_RANGE=auto "
                                      "HCCL_NPU_SOCKET_PORT_RANGE=auto`."))
    fact = ctx.fact("listening_ports")
    if fact.error:
        return ctx.unknown(T("the listening sockets cannot be read: {error}", error=fact.error))
    wanted, why = _ranges(env)
    taken = sorted(set(wanted) & set(fact.ports))
    evidence = [ev(", ".join(fact.read), T("{n} listening port(s); HCCL would bind: {why}", n=len(fact.ports),
                                          why="; ".join(why)))]
    if not wanted:
        return ctx.ok(T("HCCL chooses its ports ({why})", why="; ".join(why)), evidence)
    if taken:
        return ctx.warn(T("port(s) {ports} already listen in this network namespace: another HCCL job holds HCCL's "
                          "ports, and this server's communicator fails with `EJ0003: Failed to bind the IP port` "
                          "(or `listen on … port[16666] fail`)", ports=", ".join(map(str, taken))), evidence,
                        remediation=T("Give this instance its own ports: `export HCCL_IF_BASE_PORT=60100` (another "
                                      "base per instance), or `export HCCL_HOST_SOCKET_PORT_RANGE=auto "
                                      "HCCL_NPU_SOCKET_PORT_RANGE=auto`."), ports=taken)
    return ctx.ok(T("HCCL's ports are free ({why})", why="; ".join(why)), evidence)
