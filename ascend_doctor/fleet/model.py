"""What a fleet run knows about each node: the snapshot it sent (or why it sent none), and when.

`NodeResult` is what a runner (Ray, or a glob of snapshot files) hands over; `FleetNode` is what the FLEET checks see
(preset fact `fleet_nodes`, with `fleet_node` naming the node being judged).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ascend_doctor.seam.snapshot import Snapshot

# How a node failed to answer (FLEET101's details.kind).
DEAD = "dead"            # Ray reported the node dead (or the task died with it)
TIMEOUT = "timeout"      # no answer within the per-node timeout
TASK_ERROR = "task_error"  # the collect task raised
UNREADABLE = "unreadable"  # a snapshot file that could not be read

# A hostname has at most 64 bytes on Linux (HOST_NAME_MAX) and a DNS name 253 characters. A longer "name" came from a
# broken or hostile snapshot or node: it is shown cut (its length said), so one node cannot make every finding, line
# and redaction pass of the report carry a megabyte (a 1 MB name took 11 s of redaction and printed 2 MB).
NAME_MAX = 253
NAME_SHOWN = 64


def node_label(name: object, fallback: str) -> str:
    """The name a node is reported under: `name` when it is a plausible host name, `fallback` when it is empty or
    not text, and the first NAME_SHOWN characters plus its length when it is longer than any host name can be."""
    if not isinstance(name, str) or not name.strip():
        return fallback
    if len(name) <= NAME_MAX:
        return name
    return f"{name[:NAME_SHOWN]}…({len(name):,} characters)"


@dataclass
class NodeResult:
    """One node's answer as the runner got it. Times are wall-clock epoch seconds. `name` is bounded (`node_label`)
    wherever a runner sets it from what a node or a file says."""

    name: str
    snapshot: Optional[Snapshot] = None
    error: Optional[str] = None
    error_kind: Optional[str] = None
    source: str = ""                      # "ray node <id>" or the snapshot path
    ray_node_id: Optional[str] = None
    address: Optional[str] = None
    ray_resources: Optional[dict] = None  # what Ray advertises for the node (ray.nodes() "Resources")
    sent_at: Optional[float] = None       # driver clock: task submitted
    received_at: Optional[float] = None   # driver clock: result in hand
    started_at: Optional[float] = None    # node clock: task began
    ended_at: Optional[float] = None      # node clock: task ended
    clock_offset_s: Optional[float] = None       # node clock minus driver clock (best estimate)
    clock_uncertainty_s: Optional[float] = None  # the offset is within ± this
    fake: bool = False                    # served by the test/demo hook, not collected
    evaluation: Optional[dict] = None     # what a node that judged itself sent: findings (JSON), summary, notes

    @property
    def reachable(self) -> bool:
        return self.snapshot is not None or self.evaluation is not None


@dataclass
class FleetNode:
    """A node as the FLEET checks see it: its facts (probes run on the driver over its snapshot) and summary."""

    name: str
    reachable: bool
    error: Optional[str] = None
    error_kind: Optional[str] = None
    source: str = ""
    facts: dict[str, Any] = field(default_factory=dict)       # fact name -> value or facts.Unavailable
    summary: dict[str, dict[str, Optional[str]]] = field(default_factory=dict)  # facts.summarize()
    clock_offset_s: Optional[float] = None
    clock_uncertainty_s: Optional[float] = None
    timing: dict[str, Any] = field(default_factory=dict)
    fake: bool = False
    ray_resources: Optional[dict] = None  # None: not a Ray fleet (snapshots)

    def item(self, group: str, key: str) -> Optional[str]:
        return self.summary.get(group, {}).get(key)

    def unavailable(self, fact: str) -> Optional[str]:
        """Why `fact` could not be read on this node (summarize() records it as `(fact)`), else None."""
        for items in self.summary.values():
            if f"({fact})" in items:
                return items[f"({fact})"]
        return None

    def _ips(self) -> tuple[dict[int, str], dict[int, str]]:
        """(live, planned) device IPs from the summary, read once per node (the FLEET checks ask several times)."""
        if "_ips_memo" not in self.__dict__:
            live: dict[int, str] = {}
            planned: dict[int, str] = {}
            for key, value in self.summary.get("devices", {}).items():
                if not value:
                    continue
                if key.startswith("RoCE dev ") and key.endswith(" ip") and key[9:-3].isdigit():
                    live[int(key[9:-3])] = value
                elif key.startswith("hccn.conf address_") and key[18:].isdigit():
                    planned[int(key[18:])] = value
            self.__dict__["_ips_memo"] = (live, planned)
        return self.__dict__["_ips_memo"]

    def live_ips(self) -> dict[int, str]:
        """Device id -> RoCE IP as hccn_tool reported it (summary items `RoCE dev N ip`)."""
        return dict(self._ips()[0])

    def planned_ips(self) -> dict[int, str]:
        """Device id -> address_N of /etc/hccn.conf (summary items `hccn.conf address_N`)."""
        return dict(self._ips()[1])


class FleetNodes(list):
    """The `fleet_nodes` fact: a list of FleetNode plus a cache the FLEET checks share across the per-node runs (each
    node is judged against the same per-item values, computed once per fleet instead of once per node)."""

    def __init__(self, nodes=(), serve: Any = None):
        super().__init__(nodes)
        self.cache: dict = {}
        self.serve = serve  # the `vllm serve` command given after `fleet … --` (a ServeCommand), or None


def clock_estimate(sent_at: float, started_at: float, ended_at: float, received_at: float) -> tuple[float, float]:
    """(offset, uncertainty) of a node clock against the driver's, NTP-style, from one round trip.

    The node read `started_at` and `ended_at` (its clock) at real moments inside [sent_at, received_at] (driver
    clock), `ended_at - started_at` apart. So offset = node - driver lies in [ended_at - received_at,
    started_at - sent_at]; the midpoint is the estimate and half the width (round trip minus the task's own time,
    halved) the uncertainty. No assumption about symmetric network delay is needed for the bound.
    """
    lo = ended_at - received_at
    hi = started_at - sent_at
    if hi < lo:  # clocks stepped during the task, or a rate difference: keep a valid (tiny) interval
        lo, hi = hi, lo
    return (lo + hi) / 2.0, (hi - lo) / 2.0
