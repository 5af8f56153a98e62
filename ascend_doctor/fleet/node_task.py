"""What runs on each Ray node. Kept apart from the driver code and importing only the stdlib at module level: a
fresh Ray worker imports this module to unpickle the task, and on a busy node every import is start-up latency."""

from __future__ import annotations

import os
import time
from typing import Optional


def collect_on_node(options_json: str, fake: Optional[dict] = None) -> dict:
    """Collect this node's snapshot (or serve the test hook's file) and say when, by this node's clock."""
    offset = float((fake or {}).get("clock_offset_s", 0.0))
    started = time.time() + offset
    if fake:
        if fake.get("touch"):
            with open(fake["touch"], "w") as fh:
                fh.write(str(os.getpid()))
        if fake.get("delay_s"):
            time.sleep(float(fake["delay_s"]))
        with open(fake["snapshot"], encoding="utf-8") as fh:
            text = fh.read()
    else:
        from ascend_doctor.collect import collect_snapshot
        from ascend_doctor.localhost import LocalHost
        from ascend_doctor.options import RunOptions

        options = RunOptions.model_validate_json(options_json)
        text = collect_snapshot(LocalHost(), options, description="ascend-doctor fleet (Ray collect task)").dump()
    return {"snapshot": text, "started_at": started, "ended_at": time.time() + offset, "fake": bool(fake)}


def clock_on_node(offset: float = 0.0) -> float:
    """This node's wall clock (plus the test hook's offset)."""
    return time.time() + offset
