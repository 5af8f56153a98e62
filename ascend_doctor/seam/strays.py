"""Processes the probes left behind, found and killed — including those that escaped the process group.

`LocalHost.run` starts every command in its own session and kills that session's process group when the command
ends or times out. A vendor tool that calls `setsid()` (hccn_tool's daemons, a double-forked helper) or a serving
interpreter whose probe forks a detached child leaves that group, so the group kill misses it (#23 item 8: 24
hccn_tool daemons and 2 python children were left after one `check --probe-timeout 3`).

Every command therefore carries a tag in its environment (`ASCEND_DOCTOR_PROBE=<run>:<n>`), which every descendant
inherits whatever session or parent it ends up with. After the probes, `Strays.sweep()` looks at the processes
started since the run began, reads the tag from each one's environment, kills those of finished commands and says
which command left them. A process that cleared its environment cannot be found this way; none seen so far does.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field

from ascend_doctor.i18n import Msg, T

TAG_ENV = "ASCEND_DOCTOR_PROBE"


@dataclass
class Stray:
    pid: int
    name: str
    command: str  # the probe command that left it


@dataclass
class Strays:
    """The tags of one LocalHost's commands and the sweep that kills what they left behind."""

    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started: float = field(default_factory=time.time)
    _commands: dict[str, str] = field(default_factory=dict)
    _running: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, display: str) -> tuple[str, str]:
        """(env name, tag) for a command about to start."""
        with self._lock:
            tag = f"{self.run_id}:{len(self._commands)}"
            self._commands[tag] = display
            self._running.add(tag)
        return TAG_ENV, tag

    def end(self, tag: str) -> None:
        with self._lock:
            self._running.discard(tag)

    def sweep(self) -> list[Stray]:
        """Kill (SIGKILL) every live process carrying the tag of a finished command; what was killed."""
        try:
            import psutil
        except ImportError:  # a core dependency; without it there is nothing to sweep with
            return []
        found: list[Stray] = []
        me = os.getpid()
        with self._lock:
            finished = {t: c for t, c in self._commands.items() if t not in self._running}
        if not finished:
            return []
        for p in psutil.process_iter(["pid", "create_time", "name"]):
            try:
                if p.info["pid"] == me or (p.info["create_time"] or 0) < self.started - 1:
                    continue
                tag = p.environ().get(TAG_ENV, "")
            except (psutil.Error, OSError):  # gone, or another user's: not ours either way
                continue
            if tag in finished:
                found.append(Stray(pid=p.info["pid"], name=p.info["name"] or "?", command=finished[tag]))
        for s in found:
            try:
                os.kill(s.pid, signal.SIGKILL)
            except OSError:
                pass
        return found


def describe(strays: list[Stray]) -> list[Msg]:
    """One line per command: how many processes it left and which, e.g.
    `3 processes left running by \\`hccn_tool -i 0 -link -g\\` were killed (hccn_tool pid 812, 813, 814)`."""
    by: dict[str, list[Stray]] = {}
    for s in strays:
        by.setdefault(s.command, []).append(s)
    out = []
    for cmd, items in sorted(by.items()):
        pids = ", ".join(f"{s.name} pid {s.pid}" for s in items[:8]) + (" …" if len(items) > 8 else "")
        out.append(T("{n} process(es) left running by `{command}` after it ended were killed ({pids}): they had "
                     "left its process group (setsid), which a timeout alone does not stop", n=len(items), command=cmd,
                     pids=pids))
    return out
