"""Per-device questions asked a few at a time, all bounded by one deadline.

An A3 has 16 NPU chips; asking `npu-smi info -t health -i N` or `hccn_tool -i N …` one after another costs 16 × the
tool's latency (about a second each on a loaded host), so the probe either takes many seconds or runs out of time
half-way. `bounded_map` asks them concurrently, at most `limit` in flight — the driver's tools serialise on the
device driver, and a host under load should not see dozens of them at once — and reports which items it never got to
before the deadline, so a check can say "not read for NPU 5, 6, 7" instead of passing on a partial look.

Daemon threads, like the engine's probes: every call carries its own timeout, and a stuck one cannot keep the
process alive at exit.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, Iterable, Optional, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# In flight per tool. npu-smi and hccn_tool talk to the NPU driver (DCMI); 8 is what the A3 bench needs to stay within
# its critical chain (bench/probe_latency.py) and what vendor scripts that fan out over 8 cards already do. Not
# measured on hardware here (no NPU in this workplace): lower it if a host shows DCMI busy errors (-8020) under it.
NPU_SMI_IN_FLIGHT = 8
HCCN_TOOL_IN_FLIGHT = 8


class Outcome(Generic[T, R]):
    """One item: its result, or why there is none (`started` False: the deadline came first)."""

    __slots__ = ("item", "result", "started", "error")

    def __init__(self, item: T):
        self.item = item
        self.result: Optional[R] = None
        self.started = False
        self.error: Optional[BaseException] = None

    @property
    def done(self) -> bool:
        return self.started and (self.result is not None or self.error is not None)


def bounded_map(fn: Callable[[T, float], R], items: Iterable[T], limit: int, deadline: float,
                min_time: float = 0.05) -> list[Outcome]:
    """`fn(item, deadline)` for every item, at most `limit` at once, in order of the items; returns at the deadline
    at the latest. An item is not started once less than `min_time` seconds remain. A raising `fn` is recorded in
    `error` (and re-raised by the caller if it wants)."""
    outcomes = [Outcome(i) for i in items]
    queue = list(outcomes)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not queue or deadline - time.monotonic() < min_time:
                    return
                o = queue.pop(0)
                o.started = True
            try:
                o.result = fn(o.item, deadline)
            except BaseException as exc:  # noqa: BLE001 — kept for the caller, never lost in a thread
                o.error = exc

    threads = [threading.Thread(target=worker, name="bounded-map", daemon=True)
               for _ in range(max(1, min(limit, len(outcomes))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(deadline - time.monotonic(), 0.0) + 0.2)
    with lock:
        queue.clear()  # a worker still running finishes its item; none starts another
    return outcomes
