"""HCCL checks: the NPU RoCE ports (hccn_tool), /etc/hccn.conf, and the HCCL timeouts.

vllm-ascend's multi-node checklist (docs/source/installation.md; ../shared/facts/matrix-facts.md §6.3) is:
`hccn_tool -i N -link -g` UP, `-net_health -g` success, `-ip -g` configured, `cat /etc/hccn.conf`, on every device.

Which rule applies when (documented here because the checks share it):
* One NPU, and no multi-node variable set: HCCL does not run; every check here skips.
* The RoCE ports carry HCCL traffic *between* nodes (and inside a node only with HCCL_INTRA_ROCE_ENABLE=1): an
  Atlas 800 A2/A3 node talks to its own cards over HCCS. So a port problem *fails* when a multi-node variable is set
  (HCCL_IF_IP, HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME, RAY_ADDRESS, HCCL_INTRA_ROCE_ENABLE=1) and
  *warns* otherwise: real, but it will not stop a single-node tensor-parallel server.
* No hccn_tool: HCCL101 warns on the host (multi-card HCCL cannot be verified); in a container it is unknown and
  CTR103 asks for the mount. The other port checks are unknown.
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev

TOOL_PATH = "/usr/local/Ascend/driver/tools/hccn_tool"


class Scope:
    """The `npu_scope` fact (how many NPUs, which multi-node signals) as the HCCL checks present it; the hccn_tool
    device ids count the NPUs when nothing else can."""

    def __init__(self, env: dict, fact, hccn):
        self.env = env
        if fact.count is None and hccn is not None and hccn.device_ids:
            fact = fact.model_copy(update={"count": len(hccn.device_ids)})
        self.fact = fact
        self.count: Optional[int] = fact.count
        self.hints = fact.hints
        self.single = fact.single
        self.multi_node = fact.multi_node

    def no_count_cause(self) -> str:
        """Why the NPU count is unknown, as the root cause the console groups by (npu-smi's own reason)."""
        return self.fact.smi_reason or "no npu-smi table and no ASCEND_RT_VISIBLE_DEVICES"

    def describe(self) -> str:
        return self.fact.describe()  # the fact with the hccn_tool count filled in


def _scope(ctx, hccn=None) -> Scope:
    return Scope(ctx.fact("server_env") or {}, ctx.fact("npu_scope"), hccn)


def _scoped(ctx):
    """(the hccn fact limited to the ports of the NPUs this server will use, its Scope): a port of another server's
    NPU is not this server's to fail (the `npu_scope` fact's one rule)."""
    hccn = ctx.fact("hccn")
    scope = _scope(ctx, hccn)
    mine = scope.fact.devices
    if mine is None:
        return hccn, scope
    keep = set(mine)
    return hccn.model_copy(update={
        "devices": {d: v for d, v in hccn.devices.items() if d in keep},
        "device_ids": [d for d in hccn.device_ids if d in keep],
        "errors": {d: v for d, v in hccn.errors.items() if d in keep}}), scope


def _port_gate(ctx, hccn, scope: Scope, warn_missing_tool: bool = False):
    """The outcome when there is nothing (or nothing readable) to judge, else None."""
    if scope.single:
        return ctx.skip(T("HCCL is not used: {scope}", scope=scope.describe()))
    if scope.count is None and not scope.hints:
        return ctx.unknown(T("cannot tell how many NPUs will be used (no npu-smi table, no ASCEND_RT_VISIBLE_DEVICES, "
                             "no device ids for hccn_tool)"), [ev("hccn_tool", hccn.tool_error or "no device ids")],
                           cause=scope.no_count_cause(), see=["DRV101", "CTR102", "NPU102"])
    if not hccn.tool_found:
        why = hccn.tool_error or T("hccn_tool not found")
        evidence = [ev(f"cmd: {TOOL_PATH}", why)]
        ctr = ctx.try_fact("container")
        if ctr is not None and ctr.in_container:
            return ctx.unknown(T("{why}: not mounted into this container (CTR103); check the ports on the host",
                                 why=why),
                               evidence)
        if warn_missing_tool:
            return ctx.warn(T("{why} with {scope}: multi-card HCCL (RoCE links, IPs, network health) cannot be "
                              "verified", why=why, scope=scope.describe()), evidence,
                            remediation=T("hccn_tool ships with the NPU driver at {tool_path}: reinstall the full "
                                          "driver package (Ascend-hdk-*-npu-driver_*.run --full), then `{tool_path} "
                                          "-i 0 -link -g`.",
                                          tool_path=TOOL_PATH))
        return ctx.unknown(T("{why}: cannot read the NPU network ports (HCCL101 reports it)", why=why), evidence)
    if not hccn.devices:
        errs = "; ".join(f"device {d}: {', '.join(e)}" for d, e in sorted(hccn.errors.items())) or \
            "no device answered"
        return ctx.unknown(T("hccn_tool gave no usable answer: {errs}", errs=errs), [ev(f"cmd: {hccn.tool}", errs)])
    return None


def _bad(ctx, scope: Scope, message: str, evidence, remediation: Optional[str] = None, **details):
    """Fail when other nodes are involved, warn when the RoCE ports are not on the path of a single-node server."""
    if scope.multi_node:
        return ctx.fail(message, evidence, remediation=remediation, **details)
    return ctx.warn(message + " (warning only: no multi-node variable is set, and a single node's NPUs talk over "
                              "HCCS; it fails a multi-node or HCCL_INTRA_ROCE_ENABLE=1 deployment)",
                    evidence, remediation=remediation, **details)


def _unanswered(hccn, field_cmd: str) -> list[int]:
    """Devices hccn_tool gave no answer for on this subcommand (errors, skipped or absent)."""
    return [d for d in hccn.device_ids if d not in hccn.devices or field_cmd not in hccn.devices[d].commands]


def _partial_note(hccn, cmd: str) -> str:
    missing = _unanswered(hccn, cmd)
    return T("; no answer for device(s) {missing}", missing=','.join(map(str, missing))) if missing else ""


def _ok_unless_partial(ctx, hccn, cmd: str, message: str, evidence):
    """A pass only when every device answered: a partial look is `unknown`, naming the devices not read and why."""
    missing = _unanswered(hccn, cmd)
    if not missing:
        return ctx.ok(message, evidence)
    why = []
    for d in missing:
        errs = hccn.errors.get(d) or []
        skipped = any(s.startswith(f"-i {d} -{cmd} ") for s in hccn.skipped)
        why.append(f"device {d}: " + ("not asked (out of time)" if skipped else "; ".join(errs) or "no answer"))
    return ctx.unknown(T("{message}, but no answer for device(s) {missing}: those ports were not looked at",
                         message=message, missing=','.join(map(str, missing))),
                       [*evidence, ev(f"cmd: {hccn.tool} -i N -{cmd} -g", "\n".join(why), ok=False)],
                       not_read=missing)


@check("HCCL101", "hccn-link-up", severity="error", needs=["hccn", "server_env", "npu_scope", "container"])
def hccn_link_up(ctx):
    """Every NPU network port is UP and not flapping

    What it checks: `hccn_tool -i N -link -g` for every NPU (link status UP), and the flap history
    (`-link_stat -g`, newest record) where the probe read it: a port not DOWN now whose latest record is LINK DOWN
    warns (it flapped). When more than one NPU will be used and hccn_tool is missing on the host, it warns that
    multi-card HCCL cannot be verified. Skips with one NPU. A DOWN port fails when a multi-node variable is set
    (HCCL_IF_IP, HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME, RAY_ADDRESS, HCCL_INTRA_ROCE_ENABLE=1) and
    only warns otherwise: the NPUs of one Atlas 800 node talk over HCCS, not over these ports.

    Why it matters: HCCL between nodes runs over these RoCE ports; a DOWN port makes the communicator set-up time
    out (`EI0006` socket timeout, vllm-ascend#486) minutes into start-up, and a flapping one breaks a running server.

    How to fix: check the cable/optics and the switch port of the device named (`hccn_tool -i N -optical -g`,
    `hccn_tool -i N -link_stat -g`), then bring the port up and re-test `hccn_tool -i N -link -g`; re-seat or replace
    the optical module of a port that keeps flapping.
    """
    hccn, scope = _scoped(ctx)
    gated = _port_gate(ctx, hccn, scope, warn_missing_tool=True)
    if gated is not None:
        return gated
    src = f"cmd: {hccn.tool} -i N -link -g"
    lines, down, flapping = [], [], []
    for d, dev in sorted(hccn.devices.items()):
        ls = dev.link_stat
        hist = ""
        if ls is not None and ls.latest is not None:
            hist = f", latest event {ls.latest.status} at {ls.latest.time}" + (
                f", link up count {ls.link_up_count}" if ls.link_up_count is not None else "")
        lines.append(f"device {d}: link {dev.link_status or '?'}{hist}")
        if dev.link_up is False:
            down.append((d, f"device {d}" + (f" ({hist[2:]})" if hist else "")))
        elif ls is not None and ls.latest is not None and ls.latest.status == "DOWN":
            now = "UP now" if dev.link_up else "current status not read"
            flapping.append(T("device {d} (LINK DOWN at {time}, {now})", d=d, time=ls.latest.time, now=now))
    evidence = [ev(src, "\n".join(lines)), ev(T("scope"), scope.describe())]
    note = _partial_note(hccn, "link")
    if down:
        return _bad(ctx, scope, T("NPU network link DOWN on {n_down} device(s): {down}{note}", n_down=len(down),
                                  down='; '.join((t for _, t in down)), note=note), evidence, down=[d for d, _ in down])
    if flapping:
        return ctx.warn(T("the latest link_stat record is LINK DOWN (the port flapped): {flapping}{note}",
                          flapping=join('; ', flapping), note=note),
                        evidence)
    if not any(dev.link_up for dev in hccn.devices.values()):
        return ctx.unknown(T("hccn_tool printed no link status{note}", note=note), evidence)
    up = sum(1 for dev in hccn.devices.values() if dev.link_up)
    return _ok_unless_partial(ctx, hccn, "link", T("link UP on {up} device(s)", up=up), evidence)


@check("HCCL102", "hccn-net-health", severity="error", needs=["hccn", "server_env", "npu_scope", "container"])
def hccn_net_health(ctx):
    """Every NPU network port reports net health Success

    What it checks: `hccn_tool -i N -net_health -g` for every NPU: anything but `Success` (Fault, Socket failed,
    Init, Unknown, ...) is reported with the device and the value. Skips with one NPU. Fails when a multi-node
    variable is set (as HCCL101), warns otherwise.

    Why it matters: net_health is the driver's probe of the detect address (netdetect) through the RoCE port; a
    Fault or Socket failed port cannot reach the network HCCL needs between nodes.

    How to fix: check the detect address and gateway (`hccn_tool -i N -netdetect -g`, `-gateway -g`; set with
    `hccn_tool -i N -netdetect -s address <gateway-ip>`), ping a peer over RoCE (`hccn_tool -i N -ping -g address
    <peer-ip>`), and the link/optics (`-link -g`, `-optical -g`).
    """
    hccn, scope = _scoped(ctx)
    gated = _port_gate(ctx, hccn, scope)
    if gated is not None:
        return gated
    lines = [f"device {d}: {dev.net_health or '?'}" for d, dev in sorted(hccn.devices.items())]
    evidence = [ev(f"cmd: {hccn.tool} -i N -net_health -g", "\n".join(lines)), ev(T("scope"), scope.describe())]
    bad = [f"device {d}: {dev.net_health}" for d, dev in sorted(hccn.devices.items()) if dev.net_health_ok is False]
    note = _partial_note(hccn, "net_health")
    if bad:
        return _bad(ctx, scope, T("net health not Success on {n_bad} device(s): {bad}{note}", n_bad=len(bad),
                                  bad=join('; ', bad), note=note), evidence)
    ok = sum(1 for dev in hccn.devices.values() if dev.net_health_ok)
    if not ok:
        return ctx.unknown(T("hccn_tool printed no net health status{note}", note=note), evidence)
    return _ok_unless_partial(ctx, hccn, "net_health", T("net health Success on {ok} device(s)", ok=ok), evidence)


@check("HCCL103", "hccn-ip-config", severity="error", needs=["hccn", "server_env", "npu_scope", "container"])
def hccn_ip_config(ctx):
    """Every NPU network port has an IP address, and no two share one

    What it checks: `hccn_tool -i N -ip -g` for every NPU: an address and netmask are set (an empty answer means
    none), and no address appears on two devices. Skips with one NPU. Fails when a multi-node variable is set (as
    HCCL101), warns otherwise.

    Why it matters: HCCL addresses each rank's NPU by this IP (the cluster's rank table is built from it); a port
    without one cannot join, and a duplicate makes two ranks answer for the same address — connections hang or go to
    the wrong card.

    How to fix: set a unique address per device: `hccn_tool -i N -ip -s address 10.0.0.N netmask 255.255.255.0`
    (it also writes /etc/hccn.conf), check with `hccn_tool -i N -ip -g`; keep the plan in one place (/etc/hccn.conf on
    every node).
    """
    hccn, scope = _scoped(ctx)
    gated = _port_gate(ctx, hccn, scope)
    if gated is not None:
        return gated
    lines, unset, owners = [], [], {}
    for d, dev in sorted(hccn.devices.items()):
        lines.append(f"device {d}: ipaddr {dev.ipaddr or '-'} netmask {dev.netmask or '-'}")
        if dev.ipaddr:
            owners.setdefault(dev.ipaddr, []).append(d)
        elif "ip" in dev.empty or "ip" in dev.commands:
            unset.append(d)
    evidence = [ev(f"cmd: {hccn.tool} -i N -ip -g", "\n".join(lines)), ev(T("scope"), scope.describe())]
    dups = {ip: ds for ip, ds in owners.items() if len(ds) > 1}
    problems = []
    if unset:
        problems.append(T("no IP on device(s) {unset}", unset=','.join(map(str, unset))))
    if dups:
        problems.append(T("duplicate IP {items}",
                          items='; '.join(f"{ip} on devices {','.join(map(str, ds))}"
                                          for ip, ds in sorted(dups.items()))))
    note = _partial_note(hccn, "ip")
    if problems:
        return _bad(ctx, scope, T("{problems}{note}", problems=join("; ", problems), note=note), evidence, unset=unset,
                    duplicates={ip: ds for ip, ds in dups.items()})
    if not owners:
        return ctx.unknown(T("hccn_tool printed no IP answer{note}", note=note), evidence)
    return _ok_unless_partial(ctx, hccn, "ip", T("{n_owners} device(s) with distinct IPs", n_owners=len(owners)),
                              evidence)


@check("HCCL104", "hccn-conf-consistent", severity="warning", needs=["hccn", "server_env", "container", "npu_scope"])
def hccn_conf_consistent(ctx):
    """/etc/hccn.conf matches the live NPU port addresses

    What it checks: for every device hccn_tool answered, `address_N` / `netmask_N` in /etc/hccn.conf against the live
    `hccn_tool -i N -ip -g`; a device configured live but absent from the file, and a file entry that differs, are
    reported. On the host a missing /etc/hccn.conf while the ports have IPs warns; in a container (where the file is
    rarely mounted) that skips. Skips with one NPU.

    Why it matters: the driver re-applies /etc/hccn.conf at boot and MindCluster/rank-table tooling reads it; a live
    address set by hand that the file does not know disappears at the next reboot, and a rank table generated from the
    file points HCCL at addresses the ports no longer have.

    How to fix: set addresses with `hccn_tool -i N -ip -s address <ip> netmask <mask>` (which writes the file) rather
    than by other means, or correct `address_N=` / `netmask_N=` in /etc/hccn.conf to the live values (or the other way
    round), then compare `cat /etc/hccn.conf` with `hccn_tool -i N -ip -g`.
    """
    hccn, scope = _scoped(ctx)
    gated = _port_gate(ctx, hccn, scope)
    if gated is not None:
        return gated
    live = {d: dev for d, dev in hccn.devices.items() if dev.ipaddr}
    if hccn.conf_error:
        return ctx.unknown(T("/etc/hccn.conf could not be read: {conf_error}", conf_error=hccn.conf_error),
                           [ev("file: /etc/hccn.conf", hccn.conf_error)])
    if not hccn.conf_found or hccn.conf is None:
        ctr = ctx.try_fact("container")
        if ctr is not None and ctr.in_container:
            return ctx.skip(T("/etc/hccn.conf is not in this container: compare it on the host"))
        if not live:
            return ctx.skip(T("no /etc/hccn.conf and no live port addresses: nothing to compare"))
        return ctx.warn(T("/etc/hccn.conf is missing although {n_live} device(s) have live IPs: they are not persisted",
                          n_live=len(live)), [ev("file: /etc/hccn.conf", T("not found"))])
    conf = hccn.conf
    lines, diffs = [], []
    for d, dev in sorted(live.items()):
        c = conf.device(d)
        lines.append(f"device {d}: live {dev.ipaddr}/{dev.netmask or '-'}; hccn.conf "
                     + (f"{c.address or '-'}/{c.netmask or '-'}" if c else "no entry"))
        if c is None:
            diffs.append(T("device {d}: live {ipaddr} has no address_{d} in /etc/hccn.conf", d=d, ipaddr=dev.ipaddr))
            continue
        if c.address and c.address != dev.ipaddr:
            diffs.append(T("device {d}: address_{d}={address} but live ipaddr {ipaddr}", d=d, address=c.address,
                           ipaddr=dev.ipaddr))
        if c.netmask and dev.netmask and c.netmask != dev.netmask:
            diffs.append(T("device {d}: netmask_{d}={netmask} but live netmask {netmask2}", d=d, netmask=c.netmask,
                           netmask2=dev.netmask))
    evidence = [ev(f"file: /etc/hccn.conf vs cmd: {hccn.tool} -i N -ip -g", "\n".join(lines) or "no live IPs")]
    if diffs:
        return ctx.fail(T("/etc/hccn.conf disagrees with the live port configuration: {diffs}",
                          diffs=join('; ', diffs)),
                        evidence)
    if not live:
        return ctx.unknown(T("no live port addresses to compare with /etc/hccn.conf"), evidence)
    return ctx.ok(T("/etc/hccn.conf matches the live address/netmask of {n_live} device(s)", n_live=len(live)),
                  evidence)


@check("HCCL105", "hccl-timeouts", severity="warning", needs=["server_env", "npu_scope"])
def hccl_timeouts(ctx):
    """HCCL timeouts are set for a multi-NPU server

    What it checks: when more than one NPU will be used (ASCEND_RT_VISIBLE_DEVICES, else the chips npu-smi lists) or
    a multi-node variable is set: HCCL_CONNECT_TIMEOUT and HCCL_EXEC_TIMEOUT are set (warn when not, with the values
    vllm-ascend's docs use: 1200 and 3600), are integers, HCCL_CONNECT_TIMEOUT lies in the vendor range [120, 7200],
    and is smaller than a non-zero HCCL_EXEC_TIMEOUT. Skips with one NPU.

    Why it matters: HCCL_CONNECT_TIMEOUT defaults to 120 s: when ranks reach communicator set-up at different times
    (a large model loading unevenly, graph compilation, a slow node) the first collective fails with EI0006/EI0015
    socket timeouts. The vendor asks for CONNECT < EXEC so that the first error reported is the real one.

    How to fix: `export HCCL_CONNECT_TIMEOUT=1200 HCCL_EXEC_TIMEOUT=3600` in the environment of `vllm serve` (every
    node, every container: `docker run -e HCCL_CONNECT_TIMEOUT=1200 -e HCCL_EXEC_TIMEOUT=3600`).
    """
    scope = _scope(ctx)
    env = scope.env
    if scope.single:
        return ctx.skip(T("HCCL is not used: {scope}", scope=scope.describe()))
    if scope.count is None and not scope.hints:
        return ctx.unknown(T("cannot tell how many NPUs will be used (no npu-smi table, no ASCEND_RT_VISIBLE_DEVICES)"),
                           cause=scope.no_count_cause(), see=["DRV101", "CTR102", "NPU102"])
    names = ("HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT")
    evidence = [ev("env", "\n".join(f"{n}={env[n]!r}" if n in env else f"{n}: unset" for n in names)),
                ev(T("scope"), scope.describe())]
    values, bad = {}, []
    for n in names:
        raw = env.get(n)
        if raw is None:
            continue
        try:
            values[n] = int(raw.strip())
        except ValueError:
            bad.append(T("{n}={raw} is not an integer number of seconds", n=n, raw=repr(raw)))
    conn, exe = values.get("HCCL_CONNECT_TIMEOUT"), values.get("HCCL_EXEC_TIMEOUT")
    pol_c, pol_e = ctx.policy.hccl_connect_timeout_s, ctx.policy.hccl_exec_timeout_s  # the vendor range, as data
    lo, hi = int(pol_c.minimum), int(pol_c.maximum if pol_c.maximum is not None else pol_c.minimum)
    if conn is not None and not lo <= conn <= hi:
        bad.append(T("HCCL_CONNECT_TIMEOUT={conn} is outside [{connect_range}, {connect_range2}]", conn=conn,
                     connect_range=lo, connect_range2=hi))
    if exe is not None and exe < pol_e.minimum:
        bad.append(T("HCCL_EXEC_TIMEOUT={exe} is negative", exe=exe))
    recommended = {"HCCL_CONNECT_TIMEOUT": f"{pol_c.recommended or lo:g}",
                   "HCCL_EXEC_TIMEOUT": f"{pol_e.recommended or pol_e.minimum:g}"}
    fix = T("export {items}", items=' '.join((f'{k}={v}' for k, v in recommended.items())))
    if bad:
        return ctx.fail(join("; ", bad), evidence, remediation=fix)
    unset = [n for n in names if n not in env]
    if unset:
        return ctx.warn(T("{unset} not set with {scope} (defaults: connect 120 s, exec 1836 s)",
                          unset=' and '.join(unset), scope=scope.describe()),
                        evidence, remediation=fix + " (values used in vllm-ascend's docs)")
    if exe and conn >= exe:
        return ctx.warn(T("HCCL_CONNECT_TIMEOUT={conn} is not smaller than HCCL_EXEC_TIMEOUT={exe}", conn=conn,
                          exe=exe), evidence,
                        remediation=fix)
    return ctx.ok(T("HCCL_CONNECT_TIMEOUT={conn}, HCCL_EXEC_TIMEOUT={exe}", conn=conn, exe=exe), evidence)
