"""Processes the probes left behind, found and killed — including those that escaped the process group.

`LocalHost.run` starts every command in its own session and kills that session's process group when the command
ends or times out. A vendor tool that calls `setsid()` (hccn_tool's daemons, a double-forked helper) or a serving
interpreter whose probe forks a detached child leaves that group, so the group kill misses it (#23 item 8: 24
hccn_tool daemons and 2 python children were left after one `check --probe-timeout 3`).

Two nets catch them. Every command carries a tag in its environment (`ASCEND_DOCTOR_PROBE=<run>:<n>`), which every
descendant inherits whatever session or parent it ends up with. And the doctor's process asks the kernel to be a
*child subreaper* (`PR_SET_CHILD_SUBREAPER`, Linux 3.4+; `contain()`): an orphan of any descendant — a daemon that
double-forked, called setsid() and cleared its environment (`env -i setsid …`), which the tag cannot find — is
re-parented to the doctor instead of init. After the probes, `Strays.sweep()` kills what carries the tag of a finished
command, and every child of the doctor it did not start itself (`own`) that was born while a command ran, with its
descendants, and says which command left them.

Only the CLI process (and a Ray node's task, for its duration) becomes a subreaper: a library caller or a test
process keeps its own children's parentage. `release()` ends it before `exec` becomes `vllm serve`, since the
attribute survives execve.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Optional

from ascend_doctor.i18n import Msg, T

TAG_ENV = "ASCEND_DOCTOR_PROBE"
PR_SET_CHILD_SUBREAPER = 36
WINDOW_SLACK_S = 0.05  # a process's start time has clock-tick (10 ms) resolution


def _boot_clock() -> float:
    """Seconds since boot on the clock /proc/PID/stat's start times count in (psutil's create_time adds the boot
    time, which /proc/stat gives in whole seconds: up to 1 s off, too coarse to tell which command a process was
    born under)."""
    return time.clock_gettime(time.CLOCK_BOOTTIME) if hasattr(time, "CLOCK_BOOTTIME") else time.monotonic()


def _born(pid: int) -> Optional[float]:
    """When `pid` started, in `_boot_clock` seconds; None when /proc cannot say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


_own: set[int] = set()  # children this process started itself (probe commands, the supervised server)
_subreaper = False


def own(pid: int) -> None:
    """Say that `pid` is a child this process started on purpose: never swept as an orphan."""
    _own.add(pid)


def _prctl_subreaper(on: bool) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux, or no prctl
        return False


def contain() -> bool:
    """Make this process the child subreaper of everything it starts (idempotent); False where the kernel cannot."""
    global _subreaper
    if not _subreaper:
        _subreaper = _prctl_subreaper(True)
    return _subreaper


def release() -> None:
    """Stop being a subreaper (before execve, or at the end of a Ray task in a long-lived worker)."""
    global _subreaper
    if _subreaper:
        _prctl_subreaper(False)
        _subreaper = False


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
    _windows: dict[str, list] = field(default_factory=dict)  # tag -> [started, ended or None] (_boot_clock)
    _zombies: list[int] = field(default_factory=list)  # dead orphans found by a sweep, to reap
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, display: str) -> tuple[str, str]:
        """(env name, tag) for a command about to start."""
        with self._lock:
            tag = f"{self.run_id}:{len(self._commands)}"
            self._commands[tag] = display
            self._running.add(tag)
            self._windows[tag] = [_boot_clock(), None]
        return TAG_ENV, tag

    def end(self, tag: str) -> None:
        with self._lock:
            self._running.discard(tag)
            self._windows[tag][1] = _boot_clock()

    def sweep(self) -> list[Stray]:
        """Kill (SIGKILL) every live process carrying the tag of a finished command, and, as the subreaper, every
        orphan born while a finished command ran (with its descendants); what was killed. Dead orphans are reaped."""
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
        orphans = self._orphans(psutil, me) if _subreaper else []
        seen = {s.pid for s in found}
        found.extend(o for o in orphans if o.pid not in seen)
        for s in found:
            try:
                os.kill(s.pid, signal.SIGKILL)
            except OSError:
                pass
        if orphans or self._zombies:
            time.sleep(0.05)
            for pid in [o.pid for o in orphans] + self._zombies:  # re-parented to us: reap them, or they stay
                try:                                                # zombies until the doctor exits
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            self._zombies.clear()
        return found

    def _command_born_in(self, created: float) -> Optional[str]:
        """The finished command during which a process started at `created` was born, else None."""
        with self._lock:
            for tag, (start, end) in self._windows.items():
                if end is not None and start - WINDOW_SLACK_S <= created <= end + WINDOW_SLACK_S:
                    return self._commands[tag]
        return None

    def _orphans(self, psutil, me: int) -> list[Stray]:
        """Children of this process (re-parented to it as the subreaper) that it did not start, born while a finished
        command ran, and their descendants."""
        out: list[Stray] = []
        try:
            children = psutil.Process(me).children()
        except psutil.Error:
            return out
        for c in children:
            if c.pid in _own:
                continue
            born = _born(c.pid)
            command = self._command_born_in(born) if born is not None else None
            if command is None:
                continue
            try:
                tree = [c, *c.children(recursive=True)]
            except psutil.Error:
                continue
            for p in tree:
                try:
                    if p.status() == psutil.STATUS_ZOMBIE:  # already dead: only reaped, not reported
                        self._zombies.append(p.pid)
                    else:
                        out.append(Stray(pid=p.pid, name=p.name() or "?", command=command))
                except psutil.Error:
                    continue
        return out


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
