"""HCCN: per-NPU RoCE link state, IP and network health from `hccn_tool`, and the `/etc/hccn.conf` plan.

vllm-ascend's multi-node checklist (docs/source/installation.md) is exactly this: `hccn_tool -i N -link -g` must say
UP and `-net_health -g` success on every device (A2 0..7, A3 0..15). When it does not, HCCL fails later with socket
timeouts (EI0006, vllm-ascend#486, whose CANN solution text also points at hccn_tool). `hccn_tool` ships with the
driver (`/usr/local/Ascend/driver/tools/hccn_tool`); vllm-ascend's all-cards `docker run` mounts it, and a container
started without that mount has none — then that is the fact.
"""

from __future__ import annotations

import re
import time
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.concurrency import HCCN_TOOL_IN_FLIGHT, bounded_map
from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.parsers.hccn import HccnConf, HccnDevice, parse_hccn_conf, parse_hccn_tool
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import NOT_FOUND, TIMEOUT
from ascend_doctor.text.numbers import int_or_none

HCCN_TOOL_PATHS = ("/usr/local/Ascend/driver/tools/hccn_tool", "hccn_tool")
HCCN_CONF = "/etc/hccn.conf"
BASE_COMMANDS = ("link", "ip", "net_health")
PER_COMMAND_TIMEOUT = 5.0
MIN_CALL_TIME = 0.5  # a call is not started with less time than this left: it could only time out


class HccnFact(Model):
    tool: Optional[str] = Field(None, description="The hccn_tool that answered (absolute path or bare name)")
    tool_found: bool = False
    tool_error: Optional[str] = Field(None, description="Why hccn_tool gave nothing, when it did not")
    device_ids: list[int] = Field(default_factory=list)
    device_id_source: str = Field("none", description="npu_smi | hccn.conf | /dev/davinciN | none")
    devices: dict[int, HccnDevice] = Field(default_factory=dict, description="Parsed hccn_tool answers per device")
    errors: dict[int, list[str]] = Field(default_factory=dict, description="Per device: commands that failed, why")
    skipped: list[str] = Field(default_factory=list, description="Commands not run: the probe ran out of time")
    conf_found: bool = False
    conf: Optional[HccnConf] = None
    conf_error: Optional[str] = None

    def device(self, device_id: int) -> Optional[HccnDevice]:
        return self.devices.get(device_id)


def _ids_from_npu_smi(fact: Any) -> list[int]:
    """Device ids hccn_tool -i takes: the chip Phy-ID (A3 shows 0..15), else the NPU id (910B: one chip each)."""
    info = getattr(fact, "info", fact)
    chips = getattr(info, "chips", None) or []
    ids: list[int] = []
    for chip in chips:
        for attr in ("phy_id", "npu_id"):
            v = getattr(chip, attr, None)
            n = v if isinstance(v, int) else int_or_none(v) if isinstance(v, str) else None
            if n is not None:
                ids.append(n)
                break
    return sorted(set(ids))


def _device_ids(host, ctx, conf: Optional[HccnConf]) -> tuple[list[int], str]:
    """The devices to ask, from the source known soonest: /dev/davinciN (what this host or container was given, at
    once), else the npu-smi table (waits for `npu-smi info`), else /etc/hccn.conf (the plan, which in a container may
    name devices it was not given)."""
    dev = host.list_dir("/dev")
    ids = sorted({n for e in (dev.entries or []) for m in [re.fullmatch(r"davinci(\d+)", e)] if m
                  for n in [int_or_none(m.group(1))] if n is not None})
    if ids:
        return ids, "/dev/davinciN"
    ids = _ids_from_npu_smi(ctx.try_fact("npu_smi"))
    if ids:
        return ids, "npu_smi"
    if conf and conf.devices:
        return sorted(conf.devices), "hccn.conf"
    return [], "none"


def _argv(tool: str, dev_id: int, cmd: str) -> list[str]:
    return [tool, "-i", str(dev_id), f"-{cmd}", "-g"]


def _find_tool(host, dev_id: int, deadline: float):
    """(tool, first result) — the first hccn_tool that exists, found by asking device `dev_id` its link — or
    (None, None) when none is installed."""
    for tool in HCCN_TOOL_PATHS:
        result = host.run(_argv(tool, dev_id, BASE_COMMANDS[0]),
                          timeout=min(PER_COMMAND_TIMEOUT, max(deadline - time.monotonic(), 0.05)))
        if result.error != NOT_FOUND:
            return tool, result
    return None, None


def _ask_all(host, tool: str, calls: list[tuple[int, str]], deadline: float) -> dict[tuple[int, str], object]:
    """Every (device, subcommand) at most HCCN_TOOL_IN_FLIGHT at once; None for a call the deadline cut."""
    def ask(call: tuple[int, str], until: float):
        return host.run(_argv(tool, *call), timeout=min(PER_COMMAND_TIMEOUT, max(until - time.monotonic(), 0.05)))

    out: dict[tuple[int, str], object] = {}
    for o in bounded_map(ask, calls, HCCN_TOOL_IN_FLIGHT, deadline, min_time=MIN_CALL_TIME):
        if o.error is not None:
            raise o.error
        out[o.item] = o.result if o.started else None
    return out


@probe("hccn", reads=("npu_smi",))
def hccn_probe(host, ctx) -> HccnFact:
    """`hccn_tool -i N -link/-ip/-net_health -g` for every device, HCCN_TOOL_IN_FLIGHT calls at a time, then
    `-link_stat` for unhealthy ports; and /etc/hccn.conf. Bounded by the probe timeout; what was not asked or not
    answered is in `skipped` / `errors`, never silently missing."""
    deadline = time.monotonic() + ctx.options.probe_timeout * 0.8  # leave the engine time to collect the result
    fact = HccnFact()
    res = host.read_file(HCCN_CONF)
    if res.ok:
        fact.conf_found = True
        try:
            fact.conf = parse_hccn_conf(res.content)
        except ParseError as exc:
            fact.conf_error = str(exc)
    elif res.error != NOT_FOUND:
        fact.conf_error = res.error_message or res.error
    fact.device_ids, fact.device_id_source = _device_ids(host, ctx, fact.conf)
    if not fact.device_ids:
        fact.tool_error = "no NPU device ids known (/dev/davinciN, npu-smi, /etc/hccn.conf all silent)"
        return fact
    if deadline - time.monotonic() < MIN_CALL_TIME:  # no time left to ask anything: say so, do not overrun
        fact.skipped = [" ".join(_argv("", d, c)).strip() for d in fact.device_ids for c in BASE_COMMANDS]
        return fact
    tool, first = _find_tool(host, fact.device_ids[0], deadline)
    if tool is None:
        fact.tool_error = f"hccn_tool not found (tried {', '.join(HCCN_TOOL_PATHS)})"
        return fact
    fact.tool_found, fact.tool = True, tool
    calls = [(d, c) for d in fact.device_ids for c in BASE_COMMANDS][1:]
    results = {(fact.device_ids[0], BASE_COMMANDS[0]): first, **_ask_all(host, tool, calls, deadline)}
    outputs: dict[int, list[str]] = {d: [] for d in fact.device_ids}

    def keep(dev_id: int, cmd: str) -> None:
        result = results.get((dev_id, cmd))
        if result is None:  # never started, or still waiting on hccn_tool at the deadline
            fact.skipped.append(" ".join(_argv("", dev_id, cmd)).strip())
            return
        if not result.ok:
            fact.errors.setdefault(dev_id, []).append(result.why_not())
        if result.ok or (result.error != TIMEOUT and result.stdout.strip()):
            # An empty answer is kept too: the parser records it under `empty`.
            outputs[dev_id].append(f"hccn_tool -i {dev_id} -{cmd} -g\n{result.stdout}\n")

    for d in fact.device_ids:
        for c in BASE_COMMANDS:
            keep(d, c)
    # A DOWN link or unhealthy network: the flap history says since when.
    unhealthy = [d for d in fact.device_ids for dev in [_parse(outputs[d], d)]
                 if dev and (dev.link_up is False or dev.net_health_ok is False)]
    if unhealthy:
        results.update(_ask_all(host, tool, [(d, "link_stat") for d in unhealthy], deadline))
        for d in unhealthy:
            keep(d, "link_stat")
    for d in fact.device_ids:
        if outputs[d]:
            try:
                dev = parse_hccn_tool("".join(outputs[d]), device_id=d).device(d)
                if dev is not None:
                    fact.devices[d] = dev
            except ParseError as exc:
                fact.errors.setdefault(d, []).append(f"unparseable hccn_tool output: {exc}")
    return fact


def _parse(outputs: list[str], dev_id: int) -> Optional[HccnDevice]:
    try:
        return parse_hccn_tool("".join(outputs), device_id=dev_id).device(dev_id)
    except ParseError:
        return None
