"""Parsers for `hccn_tool` (the Ascend RoCE NIC tool) outputs and `/etc/hccn.conf`.

One parser reads any mix of `hccn_tool -i N -<cmd> -g` outputs: a single output, or a collector's file where each
`.../hccn_tool -i N -ip -g` command line is followed by its output (MindCluster faultdiag), with `[devid N]` /
`[device N]` line prefixes, and with EMPTY results for a device. Results are grouped per device id so a check can
ask "is device 3's link up, what is its IP, what does net_health say, what was the latest link event".
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Optional

from pydantic import Field, computed_field

from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.parsers import clean_paste, parser_kind, split_kv
from ascend_doctor.text.numbers import to_float, to_int

# `hccn_tool -i 3 -ip -g`, possibly behind a prompt or a full path; `-ping -g address X` too: the first `-i N -cmd`
# after the first `hccn_tool` (found in two linear steps: one pattern with a lazy gap between them was quadratic).
_TOOL = re.compile(r"hccn_tool(?=\s)")
_CMD = re.compile(r"(?<=\s)-i\s+(\d+)\s+-(\w+)")
_DEV_PREFIX = re.compile(r"^\s*\[(?:devid|device)\s*(\d+)\]\s?")
_LINK_RECORD = re.compile(r"^\s*(\w{3}\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2}\s+\d{4})\s+LINK\s+(\w+)\s*$", re.I)


class LinkEvent(Model):
    time: str = Field(description="As printed, e.g. 'Tue Aug  1 14:44:40 2022' (whitespace collapsed)")
    status: str = Field(description="UP or DOWN")


class LinkStat(Model):
    """`hccn_tool -i N -link_stat -g`: link flap history (printed newest first)."""

    current_time: Optional[str] = None
    link_up_count: Optional[int] = None
    records: list[LinkEvent] = Field(default_factory=list, description="In printed order")
    latest: Optional[LinkEvent] = Field(None, description="The most recent record (by timestamp, else the first)")


class Route(Model):
    destination: str
    gateway: str
    genmask: str
    flags: str = ""
    iface: str = ""


class PingResult(Model):
    """`hccn_tool -i N -ping -g address X`."""

    target: Optional[str] = None
    transmitted: Optional[int] = None
    received: Optional[int] = None
    loss_percent: Optional[float] = None
    times_ms: list[float] = Field(default_factory=list)


class HccnDevice(Model):
    """Everything read about one NPU's RoCE port."""

    device_id: Optional[int] = None
    link_status: Optional[str] = Field(None, description="`-link -g`: UP or DOWN")
    ipaddr: Optional[str] = None
    netmask: Optional[str] = None
    net_health: Optional[str] = Field(None, description="`-net_health -g`: Success, Init, Fault, Socket failed, ...")
    link_stat: Optional[LinkStat] = None
    stat: dict[str, str] = Field(default_factory=dict, description="`-stat -g` counters")
    fec_mode: Optional[str] = None
    optical: dict[str, str] = Field(default_factory=dict, description="`-optical -g` fields verbatim")
    netdev_status: dict[str, str] = Field(default_factory=dict, description="`-status -g` (ethtool-like) fields")
    lldp: dict[str, str] = Field(default_factory=dict, description="`-lldp -g`: TLV name -> value lines")
    routes: list[Route] = Field(default_factory=list)
    hw_stats: dict[str, int] = Field(default_factory=dict)
    ping: Optional[PingResult] = None
    other: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="Other subcommands (`-tls -g`, `-mac -g`, ...): `key: value` lines verbatim")
    commands: list[str] = Field(default_factory=list, description="Subcommands whose output was seen (link, ip, ...)")
    empty: list[str] = Field(default_factory=list, description="Subcommands that printed nothing for this device")
    unparsed: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def link_up(self) -> Optional[bool]:
        return None if self.link_status is None else self.link_status == "UP"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def net_health_ok(self) -> Optional[bool]:
        return None if self.net_health is None else self.net_health.lower() == "success"


class HccnToolOutput(Model):
    devices: dict[int, HccnDevice] = Field(default_factory=dict)
    unattributed: Optional[HccnDevice] = Field(None, description="Output that named no device (`-i` not seen)")

    def device(self, device_id: int) -> Optional[HccnDevice]:
        return self.devices.get(device_id)


def _detect(lines: list[str]) -> Optional[str]:
    """Which subcommand produced these lines, when no command line said so."""
    joined = "\n".join(lines).lower()
    markers = [("link status", "link"), ("net health status", "net_health"), ("ipaddr", "ip"),
               ("link change records", "link_stat"), ("link up count", "link_stat"), ("packet statistics", "stat"),
               ("fec mode", "fec"), ("optical info", "optical"), ("routing table", "route"),
               ("netdev status", "status"), ("settings for", "status"), (" tlv", "lldp"),
               ("packets transmitted", "ping"), (" ping ", "ping"), ("qp_alloc", "hw_stats"),
               ("pd_alloc", "hw_stats")]
    for marker, cmd in markers:
        if marker in joined:
            return cmd
    return None


def _kv(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    out: dict[str, str] = {}
    bad: list[str] = []
    for ln in lines:
        kv = split_kv(ln)
        if kv:
            out.setdefault(*kv)
        elif ln.strip() != "...":
            bad.append(ln.strip())
    return out, bad


def _latest(records: list[LinkEvent]) -> Optional[LinkEvent]:
    if not records:
        return None
    try:
        times = [datetime.strptime(r.time, "%a %b %d %H:%M:%S %Y") for r in records]
    except ValueError:
        return records[0]
    best = 0
    for i, t in enumerate(times):
        if t > times[best]:
            best = i
    return records[best]


def _apply(dev: HccnDevice, cmd: Optional[str], lines: list[str]) -> bool:
    """Fold one subcommand's output into `dev`; False when nothing in it was understood.

    Long by design: one branch per hccn_tool subcommand, each a few lines of that subcommand's own format, read
    top to bottom like the vendor's manual; split apart they would hide which output shape each branch reads."""
    understood = False
    if cmd in ("stat", "optical", "status", "hw_stats", "fec", "link", "ip", "net_health"):
        kv, bad = _kv(lines)
        if cmd == "stat":
            dev.stat.update({k: v for k, v in kv.items() if v})
            understood = bool(dev.stat) or any("statistics" in k.lower() for k in kv)
        elif cmd == "optical":
            dev.optical.update({k: v for k, v in kv.items() if v})
            understood = bool(dev.optical)
        elif cmd == "status":
            for k, v in kv.items():
                if k.startswith("Netdev status"):  # "Netdev status:Settings for eth3:"
                    m = re.search(r"Settings for (\S+)", v)
                    if m:
                        dev.netdev_status["interface"] = m.group(1).rstrip(":")
                elif v:
                    dev.netdev_status[k] = re.sub(r"(?<!\s)\s+#.*$", "", v)  # drop pasted annotations
            understood = bool(dev.netdev_status)
        elif cmd == "hw_stats":
            for k, v in kv.items():
                if re.fullmatch(r"-?\d+", v):
                    dev.hw_stats[k] = to_int(v)
            understood = bool(dev.hw_stats)
        else:
            for k, v in kv.items():
                kl = k.lower()
                if kl == "link status":
                    dev.link_status = v.upper()
                elif kl in ("ipaddr", "ip addr", "ip address"):
                    dev.ipaddr = v
                elif kl == "netmask":
                    dev.netmask = v
                elif kl == "net health status":
                    dev.net_health = v
                elif kl == "fec mode":
                    dev.fec_mode = v
                else:
                    continue
                understood = True
        dev.unparsed.extend(b for b in bad if cmd not in ("status",))
    elif cmd == "link_stat":
        ls = dev.link_stat or LinkStat()
        for ln in lines:
            rec = _LINK_RECORD.match(ln)
            if rec:
                ls.records.append(LinkEvent(time=" ".join(rec.group(1).split()), status=rec.group(2).upper()))
                continue
            kv = split_kv(ln)
            if kv and kv[0].lower() == "current time":
                ls.current_time = " ".join(kv[1].split())
            elif kv and kv[0].lower() == "link up count" and kv[1].isdigit():
                ls.link_up_count = to_int(kv[1])
            elif not (kv and kv[0].lower() == "link change records"):
                dev.unparsed.append(ln.strip())
        ls.latest = _latest(ls.records)
        dev.link_stat = ls
        understood = bool(ls.records) or ls.current_time is not None or ls.link_up_count is not None
    elif cmd == "route":
        for ln in lines:
            parts = ln.split()
            if len(parts) >= 3 and re.match(r"^(default|\d+\.\d+\.\d+\.\d+)$", parts[0]):
                dev.routes.append(Route(destination=parts[0], gateway=parts[1], genmask=parts[2],
                                        flags=parts[3] if len(parts) > 3 else "",
                                        iface=parts[-1] if len(parts) > 4 else ""))
                understood = True
    elif cmd == "lldp":
        name: Optional[str] = None
        for ln in lines:
            if ln.strip() == "...":
                continue
            if not ln.startswith((" ", "\t")) and ln.strip().endswith("TLV"):
                name = ln.strip()
                dev.lldp.setdefault(name, "")
                understood = True
            elif name is not None:
                dev.lldp[name] = (dev.lldp[name] + "\n" + ln.strip()).strip("\n")
    elif cmd == "ping":
        p = dev.ping or PingResult()
        for ln in lines:
            m = re.search(r"PING\s+(\S+)", ln)
            if m:
                p.target = m.group(1)
            m = re.search(r"time=([\d.]+)\s*ms", ln)
            if m:
                p.times_ms.append(to_float(m.group(1)))
            m = re.search(r"(?<!\d)(\d+) packets transmitted,\s*(\d+) received,\s*([\d.]+)% packet loss", ln)
            if m:
                p.transmitted, p.received, p.loss_percent = to_int(m.group(1)), to_int(m.group(2)), to_float(m.group(3))
        dev.ping = p
        understood = p.target is not None or p.transmitted is not None
    elif cmd is not None:  # a subcommand without a dedicated reader: keep its `key: value` lines
        kv, bad = _kv(lines)
        if kv:
            dev.other.setdefault(cmd, {}).update(kv)
            understood = True
        dev.unparsed.extend(bad)
    else:
        dev.unparsed.extend(ln.strip() for ln in lines)
    return understood


class _Section:
    def __init__(self, device_id: Optional[int], cmd: Optional[str], from_command: bool):
        self.device_id = device_id
        self.cmd = cmd
        self.from_command = from_command
        self.lines: list[str] = []


def _sections(text: str) -> list[_Section]:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    sections: list[_Section] = [_Section(None, None, False)]
    for raw in text.split("\n"):
        tool = _TOOL.search(raw)
        m = _CMD.search(raw, tool.end()) if tool else None
        if m:
            sections.append(_Section(to_int(m.group(1)), m.group(2), True))
            continue
        line = raw
        d = _DEV_PREFIX.match(line)
        if d:
            dev_id = to_int(d.group(1))
            line = line[d.end():]
            cur = sections[-1]
            if cur.device_id is None and not cur.from_command:
                cur.device_id = dev_id
            elif cur.device_id != dev_id:  # several devices' outputs pasted back to back
                sections.append(_Section(dev_id, cur.cmd if cur.from_command else None, False))
        sections[-1].lines.append(line)
    for s in sections:
        s.lines = [ln for ln in clean_paste("\n".join(s.lines)).split("\n") if ln.strip()]
        # Re-indent-safe for lldp: clean_paste keeps leading spaces, nothing else to do.
        if s.cmd is None and s.lines:
            s.cmd = _detect(s.lines)
        m = None if s.device_id is not None else re.search(r"device\s+(\d+)\s+PING", "\n".join(s.lines))
        if m:
            s.device_id = to_int(m.group(1))
    return sections


@parser_kind("hccn-tool", expects="output of `hccn_tool -i N -<link|ip|net_health|link_stat|...> -g`")
def parse_hccn_tool(text: str, device_id: Optional[int] = None) -> HccnToolOutput:
    """Parse one or many `hccn_tool` outputs; `device_id` names the device when the text itself does not."""
    if not isinstance(text, str):
        raise ParseError("input is not text")
    out = HccnToolOutput()
    understood_any = False
    for s in _sections(text):
        if not s.lines and not s.from_command:
            continue
        dev_id = s.device_id if s.device_id is not None else device_id
        if dev_id is None:
            dev = out.unattributed = out.unattributed or HccnDevice()
        else:
            dev = out.devices.setdefault(dev_id, HccnDevice(device_id=dev_id))
        if s.cmd and s.cmd not in dev.commands:
            dev.commands.append(s.cmd)
        if not s.lines:
            if s.cmd and s.cmd not in dev.empty:
                dev.empty.append(s.cmd)
            understood_any = True
            continue
        if _apply(dev, s.cmd, s.lines):
            understood_any = True
    if not understood_any:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        raise ParseError(f"no hccn_tool output recognised (first line: {first[:80]!r})")
    return out


# --- /etc/hccn.conf -------------------------------------------------------------------------------------------------

class HccnConfDevice(Model):
    device_id: int
    address: Optional[str] = None
    netmask: Optional[str] = None
    gateway: Optional[str] = None
    netdetect: Optional[str] = None
    other: dict[str, str] = Field(default_factory=dict, description="send_arp_status, arp_*, ... verbatim")


class HccnConf(Model):
    """`/etc/hccn.conf`: the RoCE IP configuration `hccn_tool -cfg` wrote, per device id."""

    devices: dict[int, HccnConfDevice] = Field(default_factory=dict)
    settings: dict[str, str] = Field(default_factory=dict, description="Keys without a `_N` device suffix")
    elided: bool = Field(False, description="A `...` line: someone cut devices out of this copy")
    ignored: list[str] = Field(default_factory=list)

    def device(self, device_id: int) -> Optional[HccnConfDevice]:
        return self.devices.get(device_id)


@parser_kind("hccn-conf", expects="/etc/hccn.conf (`address_0=29.1.137.205`, `netmask_0=` ... lines)")
def parse_hccn_conf(text: str) -> HccnConf:
    """Parse `/etc/hccn.conf`."""
    if not isinstance(text, str):
        raise ParseError("input is not text")
    conf = HccnConf()
    for ln in clean_paste(text).split("\n"):
        s = ln.strip()
        if not s or s.startswith("#"):
            continue
        if s in ("...", "…"):
            conf.elided = True
            continue
        m = re.match(r"^([A-Za-z][\w]*?)_(\d+)\s*=\s*(.*?)\s*$", s)
        if m:
            key, dev_id, value = m.group(1), to_int(m.group(2)), m.group(3)
            dev = conf.devices.setdefault(dev_id, HccnConfDevice(device_id=dev_id))
            if key in ("address", "netmask", "gateway", "netdetect"):
                setattr(dev, key, value)
            else:
                dev.other[key] = value
            continue
        m = re.match(r"^([A-Za-z][\w.-]*)\s*=", s)  # the value by slicing: `(.*?)\s*$` is quadratic on blanks
        if m:
            conf.settings[m.group(1)] = s[m.end():].strip()
        else:
            conf.ignored.append(s)
    if not conf.devices:
        raise ParseError("no `address_N=`/`netmask_N=` lines: not an /etc/hccn.conf")
    return conf
