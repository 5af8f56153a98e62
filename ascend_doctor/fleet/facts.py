"""Facts of one host, gathered through the probes and flattened into comparable items.

`gather` runs the probes on a host (a ReplayHost over a node's snapshot); `summarize` turns the facts into
`{group: {item: value}}` with short string values, so that two hosts (`diff`) or N nodes (`fleet`) are compared item
by item — facts, not raw JSON text. Groups: packages, ascend, host, devices, env.
"""

from __future__ import annotations

from typing import Any, Optional

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.facts.stack import npu_models
from ascend_doctor.i18n import T
from ascend_doctor.seam.host import normalize_name
from ascend_doctor.text.units import human_bytes

GROUPS = ("packages", "ascend", "host", "devices", "env")

# Facts the FLEET checks and the fleet table read.
FLEET_FACTS = ("system", "env", "python", "driver", "cann", "npu_smi", "hccn")
# Everything `diff` compares.
DIFF_FACTS = FLEET_FACTS + ("selinux", "limits", "shm", "memory", "timesync", "gcc", "container", "pcie",
                            "npu_health", "import_probe")


class Unavailable:
    """A fact its probe could not establish, and why."""

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Unavailable({self.reason!r})"


def gather(host, options: Optional[RunOptions] = None, names: tuple[str, ...] = FLEET_FACTS) -> dict[str, Any]:
    """Each named fact's value, or an `Unavailable` saying why not."""
    store = FactStore(host, options or RunOptions())
    store.start_all(names)
    out: dict[str, Any] = {}
    for n in names:
        try:
            out[n] = store.fact(n)
        except FactUnavailable as exc:
            out[n] = Unavailable(exc.reason)
    return out


def available(facts: dict[str, Any]) -> dict[str, Any]:
    """Only the facts that were established (what can be preset into another FactStore)."""
    return {k: v for k, v in facts.items() if not isinstance(v, Unavailable)}


def _v(x: Any) -> Optional[str]:
    if x is None:
        return None
    return str(x)


def _gib(n: Optional[int]) -> Optional[str]:
    return None if n is None else human_bytes(n)


def summarize(facts: dict[str, Any]) -> dict[str, dict[str, Optional[str]]]:
    """{group: {item: value}}; a fact that could not be read shows as `unavailable: <why>` under its own name.

    Long by design: a flat list of items, one or two lines per compared value, in the order `diff` and `fleet`
    print them."""
    out: dict[str, dict[str, Optional[str]]] = {g: {} for g in GROUPS}

    def get(name: str, group: str) -> Any:
        val = facts.get(name)
        if isinstance(val, Unavailable):
            out[group][f"({name})"] = T("unavailable: {reason}", reason=val.reason)
            return None
        return val

    py = get("python", "packages")
    if py is not None:
        out["packages"]["Python"] = py.version or None
        for d in py.distributions:
            out["packages"][normalize_name(d.name)] = d.version

    drv = get("driver", "ascend")
    if drv is not None:
        out["ascend"]["driver"] = drv.version if drv.found else T("not found")
        out["ascend"]["firmware"] = drv.firmware_version
    cann = get("cann", "ascend")
    if cann is not None:
        out["ascend"]["CANN"] = cann.version if cann.found else T("not found")
        out["ascend"]["CANN root"] = cann.active.root if cann.active else None
        out["ascend"]["NNAL/ATB"] = cann.nnal.version if cann.nnal.found else T("not found")
    smi = get("npu_smi", "devices")
    if smi is not None:
        if smi.usable:
            out["ascend"]["npu-smi driver"] = smi.info.driver_version or smi.info.tool_version
            out["devices"]["NPU chips"] = str(len(smi.info.chips))
            out["devices"]["NPU model"] = npu_models(smi)
            for c in smi.info.chips:
                out["devices"][f"NPU {c.npu_id} chip {c.chip_id} health"] = c.health
        else:
            out["devices"]["NPU chips"] = T("none ({reason})", reason=smi.reason())  # a message: it reads in zh too
    hccn = get("hccn", "devices")
    if hccn is not None:
        if hccn.tool_error:
            out["devices"]["hccn_tool"] = hccn.tool_error
        for dev_id, dev in sorted(hccn.devices.items()):
            out["devices"][f"RoCE dev {dev_id} ip"] = dev.ipaddr
            out["devices"][f"RoCE dev {dev_id} link"] = dev.link_status
            out["devices"][f"RoCE dev {dev_id} net_health"] = dev.net_health
        if hccn.conf:
            for dev_id, d in sorted(hccn.conf.devices.items()):
                out["devices"][f"hccn.conf address_{dev_id}"] = d.address
    health = get("npu_health", "devices")
    if health is not None:
        for r in health.results:
            if r.health is not None:
                out["devices"][f"NPU {r.npu_id} -t health"] = " ".join([r.health.health or "?"]
                                                                        + list(r.health.error_codes))
    imp = get("import_probe", "packages")
    if imp is not None and imp.ran:
        out["packages"]["import torch_npu"] = "ok" if imp.stage == "done" and not imp.error else \
            f"failed at {imp.stage}: {imp.error_type or ''} {imp.error or ''}".strip()

    system = get("system", "host")
    if system is not None:
        out["host"].update({"os": system.os or None, "kernel": system.kernel or None,
                            "machine": system.machine or None, "cpus": _v(system.cpu_count)})
    sel = get("selinux", "host")
    if sel is not None:
        out["host"]["SELinux"] = sel.mode
    lim = get("limits", "host")
    if lim is not None:
        out["host"]["ulimit -n"] = f"{lim.nofile_soft or 'unlimited'}/{lim.nofile_hard or 'unlimited'}"
    shm = get("shm", "host")
    if shm is not None:
        out["host"]["/dev/shm"] = _gib(shm.total_bytes) if shm.mounted else "not mounted"
    mem = get("memory", "host")
    if mem is not None:
        out["host"]["memory"] = _gib(mem.total_kib * 1024)
    ts = get("timesync", "host")
    if ts is not None:
        out["host"]["time sync"] = None if ts.synchronized is None else (
            f"{'yes' if ts.synchronized else 'no'} ({ts.via})" if ts.via else ("yes" if ts.synchronized else "no"))
    gcc = get("gcc", "host")
    if gcc is not None:
        out["host"]["gcc"] = gcc.version if gcc.found else T("not found")
    ctr = get("container", "host")
    if ctr is not None:
        out["host"]["container"] = (ctr.runtime or "yes") if ctr.in_container else "no"
    pcie = get("pcie", "host")
    if pcie is not None:
        for link in pcie.devices:
            out["host"][f"PCIe {link.slot}"] = f"x{link.current_width} {link.current_speed}".strip()

    env = get("env", "env")
    if env is not None:
        for k, val in sorted(env.items()):
            out["env"][k] = val
    return out
