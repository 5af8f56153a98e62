"""How many NPUs a server here will use and whether it talks to other nodes: the `npu_scope` derived fact.

The container check (CTR103: is hccn_tool needed?) and the HCCL checks (does HCCL run at all, across nodes?) ask the
same question; it is answered here once. Multi-node signals: the variables vllm-ascend's multi-node docs set
(../shared/facts/matrix-facts.md §6.2), HCCL_INTRA_ROCE_ENABLE=1 (RoCE inside the node), and — when a `vllm serve`
command is known — `--nnodes` > 1 or `--headless` (vLLM's multi-node launch: a secondary node runs headless).
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


def derive_scope(env: Optional[dict], npu_smi: Any, serve_cmd: Any = None) -> NpuScope:
    """The scope from the environment, npu-smi and (when known) the `vllm serve` command line."""
    env = env or {}
    hints = [(v, env[v]) for v in MULTI_NODE_VARS if env.get(v)]
    if env.get("HCCL_INTRA_ROCE_ENABLE", "").strip() == "1":
        hints.append(("HCCL_INTRA_ROCE_ENABLE", "1"))
    if serve_cmd is not None and getattr(serve_cmd, "recognized", False):
        try:
            nnodes = serve_cmd.int_opt("nnodes")
        except ValueError:
            nnodes = None
        if nnodes is not None and nnodes > 1:
            hints.append(("--nnodes", str(nnodes)))
        if serve_cmd.flag("headless"):
            hints.append(("--headless", "true"))
    reason = npu_smi.reason() if npu_smi is not None and getattr(npu_smi, "reason", None) else ""
    return NpuScope(count=planned_device_count(env, npu_smi), hints=hints, smi_reason=reason or "")
