"""HCCN: per-NPU RoCE link state, IP and network health from `hccn_tool`, and the `/etc/hccn.conf` plan.

vllm-ascend's multi-node checklist (docs/source/installation.md) is exactly this: `hccn_tool -i N -link -g` must say
UP and `-net_health -g` success on every device (A2 0..7, A3 0..15). When it does not, HCCL fails later with socket
timeouts (EI0006, vllm-ascend#486, whose CANN solution text also points at hccn_tool). `hccn_tool` ships with the
driver (`/usr/local/Ascend/driver/tools/hccn_tool`); vllm-ascend's all-cards `docker run` mounts it, and a container
started without that mount has none — then that is the fact.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Optional

from pydantic import BaseModel, Field

from ascend_doctor.errors import ParseError
from ascend_doctor.host import NOT_FOUND, TIMEOUT
from ascend_doctor.numbers import int_or_none
from ascend_doctor.parsers.hccn import HccnConf, HccnDevice, parse_hccn_conf, parse_hccn_tool
from ascend_doctor.probes import probe

HCCN_TOOL_PATHS = ("/usr/local/Ascend/driver/tools/hccn_tool", "hccn_tool")
HCCN_CONF = "/etc/hccn.conf"
BASE_COMMANDS = ("link", "ip", "net_health")
PER_COMMAND_TIMEOUT = 5.0
PARALLEL_DEVICES = 4


class HccnFact(BaseModel):
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
    ids = _ids_from_npu_smi(ctx.try_fact("npu_smi"))
    if ids:
        return ids, "npu_smi"
    if conf and conf.devices:
        return sorted(conf.devices), "hccn.conf"
    dev = host.list_dir("/dev")
    ids = sorted({n for e in (dev.entries or []) for m in [re.fullmatch(r"davinci(\d+)", e)] if m
                  for n in [int_or_none(m.group(1))] if n is not None})
    if ids:
        return ids, "/dev/davinciN"
    return [], "none"


class _DeviceRun(BaseModel):
    """What asking hccn_tool about one device produced."""

    outputs: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    tool: Optional[str] = None
    tool_missing: bool = False


def _ask_device(host, dev_id: int, tools: list[str], deadline: float) -> _DeviceRun:
    """Run the base commands for one device (plus -link_stat when its port is unhealthy)."""
    run = _DeviceRun()
    commands = list(BASE_COMMANDS)
    for cmd in commands:  # may grow by link_stat while iterating
        remaining = deadline - time.monotonic()
        if remaining <= 0.5:
            run.skipped.append(f"-i {dev_id} -{cmd} -g")
            continue
        for tool in tools:
            result = host.run([tool, "-i", str(dev_id), f"-{cmd}", "-g"], timeout=min(PER_COMMAND_TIMEOUT, remaining))
            if result.error != NOT_FOUND:
                tools = [tool]  # this one exists: use it from now on
                break
        if result.error == NOT_FOUND:
            run.tool_missing = True
            return run
        run.tool = tools[0]
        if not result.ok:
            run.errors.append(result.why_not())
        if result.ok or (result.error != TIMEOUT and result.stdout.strip()):
            # An empty answer is kept too: the parser records it under `empty`.
            run.outputs.append(f"hccn_tool -i {dev_id} -{cmd} -g\n{result.stdout}\n")
        if cmd == BASE_COMMANDS[-1]:
            dev = _parse(run.outputs, dev_id)
            # A DOWN link or unhealthy network: the flap history says since when.
            if dev and (dev.link_up is False or dev.net_health_ok is False):
                commands.append("link_stat")
    return run


@probe("hccn")
def hccn_probe(host, ctx) -> HccnFact:
    """Run `hccn_tool -i N -link/-ip/-net_health -g` per device (bounded by the probe timeout) and read hccn.conf."""
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
        fact.tool_error = "no NPU device ids known (npu-smi, /etc/hccn.conf, /dev/davinciN all silent)"
        return fact

    # The first device finds out which hccn_tool exists; an A3 has 16 devices, so the rest are asked a few at a
    # time (daemon threads, like the engine's: every host.run carries its own timeout anyway).
    first = _ask_device(host, fact.device_ids[0], list(HCCN_TOOL_PATHS), deadline)
    if first.tool_missing:
        fact.tool_error = f"hccn_tool not found (tried {', '.join(HCCN_TOOL_PATHS)})"
        return fact
    runs: dict[int, _DeviceRun] = {fact.device_ids[0]: first}
    pending = list(fact.device_ids[1:])
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not pending:
                    return
                dev_id = pending.pop(0)
            result = _ask_device(host, dev_id, [first.tool] if first.tool else list(HCCN_TOOL_PATHS), deadline)
            with lock:
                runs[dev_id] = result

    threads = [threading.Thread(target=worker, name="hccn-tool", daemon=True)
               for _ in range(min(PARALLEL_DEVICES, len(pending)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(deadline - time.monotonic(), 0.0) + 0.2)

    fact.tool_found, fact.tool = first.tool is not None, first.tool
    with lock:
        runs = dict(runs)
    for dev_id in fact.device_ids:
        run = runs.get(dev_id)
        if run is None:  # never started, or still waiting on hccn_tool at the deadline
            fact.skipped.extend(f"-i {dev_id} -{c} -g" for c in BASE_COMMANDS)
            continue
        fact.skipped.extend(run.skipped)
        if run.errors:
            fact.errors[dev_id] = list(run.errors)
        if run.outputs:
            try:
                dev = parse_hccn_tool("".join(run.outputs), device_id=dev_id).device(dev_id)
                if dev is not None:
                    fact.devices[dev_id] = dev
            except ParseError as exc:
                fact.errors.setdefault(dev_id, []).append(f"unparseable hccn_tool output: {exc}")
    return fact


def _parse(outputs: list[str], dev_id: int) -> Optional[HccnDevice]:
    try:
        return parse_hccn_tool("".join(outputs), device_id=dev_id).device(dev_id)
    except ParseError:
        return None
