"""Which NPUs a server here will use and whether it talks to other nodes: the `npu_scope` derived fact.

The container check (CTR103: is hccn_tool needed?), the HCCL checks (does HCCL run at all, across nodes? which ports
carry it?), the per-NPU checks (health, memory in use) and the serve lint (the NPUs a layout lands on) ask the same
question; it is answered here once, by one rule: the chips `npu-smi info` lists, less those whose /dev/davinciN is not
in this container, then the server's ASCEND_RT_VISIBLE_DEVICES (logical ids, counted over what is left). A chip
outside the set belongs to someone else: a finding about it is information, not a verdict on this server.

Multi-node signals: the variables vllm-ascend's multi-node docs set (../shared/facts/matrix-facts.md §6.2),
HCCL_INTRA_ROCE_ENABLE=1 (RoCE inside the node), and — when a `vllm serve` command is known — `--nnodes` > 1 or
`--headless` (vLLM's multi-node launch: a secondary node runs headless).
"""

from __future__ import annotations

from typing import Any, Optional

from ascend_doctor.core.model import Model
from ascend_doctor.parsers.device_ids import parse_device_ids

MULTI_NODE_VARS = ("HCCL_IF_IP", "HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "RAY_ADDRESS")


class NpuScope(Model):
    """The NPUs a server here will use (None: unknown) and the signals that say other nodes take part."""

    count: Optional[int] = None
    # (name, value) of each multi-node signal: an environment variable, or a serve option written `--nnodes`.
    hints: list[tuple[str, str]] = []
    smi_reason: str = ""  # npu-smi's own reason when it gave no table (the root cause of an unknown count)
    # (npu_id, chip_id) of the npu-smi chips the server will use, in logical order; None: every chip listed (nothing
    # restricts them) or no table to choose from.
    chips: Optional[list[tuple[int, int]]] = None
    restricted_by: list[str] = []  # what narrowed the set: "/dev/davinci4, /dev/davinci5 mounted", "ASCEND_RT_…=…"
    # The device ids of those chips as hccn_tool and /dev/davinciN number them (A3: the chip's Phy-ID; one chip per
    # NPU elsewhere: the NPU id); None when `chips` is None.
    devices: Optional[list[int]] = None

    def uses(self, npu_id: int, chip_id: int = 0) -> bool:
        """Whether the server will use this chip (every chip when nothing restricts the set)."""
        return self.chips is None or (npu_id, chip_id) in self.chips

    def outside(self) -> str:
        """The restriction, for a finding about chips outside it ('' when nothing restricts)."""
        return "; ".join(self.restricted_by)

    @property
    def single(self) -> bool:
        return self.count is not None and self.count <= 1 and not self.hints

    @property
    def multi_node(self) -> bool:
        return bool(self.hints)

    def describe(self):
        """How many NPUs and which multi-node signals, for a finding (the HCCL checks' scope line)."""
        from ascend_doctor.i18n import T, join

        parts = [T("{count} NPU(s) in use", count=self.count) if self.count is not None else T("NPU count unknown")]
        if self.restricted_by:
            parts.append(self.outside())
        if self.hints:
            parts.append(T("multi-node/RoCE variables: {variables}",
                           variables=", ".join(f"{name}={value}" for name, value in self.hints)))
        return join("; ", parts)


def planned_device_count(env: Optional[dict], npu_smi) -> Optional[int]:
    """ASCEND_RT_VISIBLE_DEVICES when set and readable, else the chips `npu-smi info` lists (None when neither)."""
    rt = (env or {}).get("ASCEND_RT_VISIBLE_DEVICES")
    if rt is not None and rt.strip():
        ids, bad = parse_device_ids(rt, ranges=False)
        if not bad:
            return len(set(ids))
    if npu_smi is not None and getattr(npu_smi, "usable", False):
        return len(npu_smi.info.chips)
    return None


def used_chips(env: Optional[dict], npu_smi: Any, devices: Any = None) -> tuple[Optional[list], list[str]]:
    """(the npu-smi chip objects the server will use, in logical order — None when there is no table —, what
    narrowed them): the one rule of the module docstring. An unreadable ASCEND_RT_VISIBLE_DEVICES narrows nothing
    here (NPU104 judges the value)."""
    if npu_smi is None or not getattr(npu_smi, "usable", False):
        return None, []
    chips = list(npu_smi.info.chips)
    how: list[str] = []
    davinci = getattr(devices, "davinci", None) if getattr(devices, "dev_listed", False) else None
    if davinci and len(davinci) < len(chips):
        # /dev/davinciN is the physical id (A3: `Chip Phy-ID`; one chip per NPU elsewhere: the NPU id)
        mounted = [c for c in chips if (c.phy_id if c.phy_id is not None else c.npu_id) in set(davinci)]
        chips = mounted if len(mounted) == len(davinci) else chips[:len(davinci)]
        how.append("mounted: " + ", ".join(f"/dev/davinci{n}" for n in davinci))
    rt = (env or {}).get("ASCEND_RT_VISIBLE_DEVICES")
    if rt is not None and rt.strip():
        ids, bad = parse_device_ids(rt, ranges=False)
        if not bad and ids:
            chips = [chips[i] for i in dict.fromkeys(ids) if 0 <= i < len(chips)]
            how.append(f"ASCEND_RT_VISIBLE_DEVICES={rt}")
    return chips, how


def _int(cmd, name: str) -> Optional[int]:
    try:
        return cmd.int_opt(name)
    except ValueError:
        return None


def command_spans_nodes(cmd) -> list[tuple[str, str]]:
    """(option, value) of each sign in a `vllm serve` command that its deployment spans nodes: `--nnodes` > 1,
    `--headless` (a secondary node), `--data-parallel-start-rank` > 0 (a node after the first), and
    `--data-parallel-size-local` below `--data-parallel-size` (the other ranks run elsewhere: vLLM's multi-node data
    parallel launch, docs/serving/data_parallel_deployment.md)."""
    out = []
    nnodes = _int(cmd, "nnodes")
    if nnodes is not None and nnodes > 1:
        out.append(("--nnodes", str(nnodes)))
    if cmd.flag("headless"):
        out.append(("--headless", "true"))
    start = _int(cmd, "data_parallel_start_rank")
    if start is not None and start > 0:
        out.append(("--data-parallel-start-rank", str(start)))
    local, dp = _int(cmd, "data_parallel_size_local"), _int(cmd, "data_parallel_size")
    if local is not None and dp is not None and 0 < local < dp:
        out.append(("--data-parallel-size-local", f"{local} of --data-parallel-size {dp}"))
    return out


def derive_scope(env: Optional[dict], npu_smi: Any, serve_cmd: Any = None, devices: Any = None) -> NpuScope:
    """The scope from the environment, npu-smi, the container's device nodes and (when known) the `vllm serve`
    command line."""
    env = env or {}
    # A hint is read where shown; a listing that does not print it (a paste's collect_env) gives no hint, which may
    # only make a multi-node check skip, never judge.
    peek = getattr(env, "peek", env.get)
    hints = [(v, peek(v)) for v in MULTI_NODE_VARS if peek(v)]
    if (peek("HCCL_INTRA_ROCE_ENABLE") or "").strip() == "1":
        hints.append(("HCCL_INTRA_ROCE_ENABLE", "1"))
    if serve_cmd is not None and getattr(serve_cmd, "recognized", False):
        hints.extend(command_spans_nodes(serve_cmd))
    reason = npu_smi.reason() if npu_smi is not None and getattr(npu_smi, "reason", None) else ""
    chips, how = used_chips(env, npu_smi, devices)
    restricted = chips is not None and bool(how)
    used = [(c.npu_id, c.chip_id) for c in chips] if restricted else None
    devices = [c.phy_id if c.phy_id is not None else c.npu_id for c in chips] if restricted else None
    return NpuScope(count=planned_device_count(env, npu_smi), hints=hints, smi_reason=reason or "", chips=used,
                    restricted_by=how, devices=devices)
