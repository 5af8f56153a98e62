"""`exec`'s process side: become the command (os.execvp) — or, with --smoke, supervise it.

`become()` replaces this process with the command: same PID, the command's own signal handling and exit code, the
same stdin/stdout/stderr. Our report goes to stderr only, so the server's stdout stays clean.

`Supervisor` (--smoke) starts the command as a child in its own session, forwards SIGTERM/SIGINT/SIGHUP/SIGQUIT to
it, waits (bounded) for `GET /health` or `/v1/models` on the command's --host/--port, and then waits for the child,
exiting with its exit code (128+N when a signal N ended it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Callable, Optional

from ascend_doctor.i18n import T
from ascend_doctor.seam.strays import own, release
from ascend_doctor.text.switches import is_on

FORWARDED_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"))
                          if s is not None)
SKIP_ENV = "ASCEND_DOCTOR_SKIP"


def skip_requested(env: Optional[dict] = None) -> bool:
    """True when ASCEND_DOCTOR_SKIP is set to a true-ish value (1, true, yes)."""
    v = (env if env is not None else os.environ).get(SKIP_ENV, "")
    return is_on(v)


def become(argv: list[str]) -> int:
    """Replace this process with `argv` (PATH lookup like a shell). Returns only on failure: 127 not found, 126 not
    executable (the shell's codes), after saying why on stderr."""
    sys.stdout.flush()
    sys.stderr.flush()
    release()  # the subreaper attribute survives execve: the server must not inherit it
    try:
        os.execvp(argv[0], argv)
    except FileNotFoundError:
        sys.stderr.write(f"ascend-doctor: {argv[0]}: command not found\n")
        return 127
    except PermissionError:
        sys.stderr.write(f"ascend-doctor: {argv[0]}: permission denied\n")
        return 126
    except OSError as exc:
        sys.stderr.write(f"ascend-doctor: cannot execute {argv[0]}: {exc.strerror or exc}\n")
        return 126
    return 126  # not reached


def exit_code_of(returncode: int) -> int:
    """A Popen returncode as a shell exit status: -N (killed by signal N) becomes 128+N."""
    return 128 - returncode if returncode < 0 else returncode


# Our own child, never through a proxy: urllib honours http_proxy/https_proxy, and a proxy that does not know this
# machine's loopback answers (or swallows) every probe, so the wait would run its full --health-timeout.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def port_holder(host: str, port: int) -> Optional[str]:
    """Who already accepts connections at host:port, before our command starts: `pid 4242 (python3)` when psutil can
    tell, `another process` when it cannot, None when nothing listens."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=1.0):
            pass
    except OSError:
        return None
    try:
        import psutil

        for c in psutil.net_connections(kind="tcp"):
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
                return f"pid {c.pid} ({psutil.Process(c.pid).name()})"
    except Exception:  # naming the holder is a courtesy: psutil may be unable to see another user's sockets
        pass
    return T("another process")


def probe_health(base: str, timeout: float = 2.0) -> Optional[str]:
    """The first of `{base}/health`, `{base}/v1/models` that answers 200, or None (asked directly, no proxy)."""
    for path in ("/health", "/v1/models"):
        try:
            with _DIRECT.open(base + path, timeout=timeout) as resp:  # noqa: S310 (http to our child)
                if resp.status == 200:
                    return path
        except (urllib.error.URLError, OSError, ValueError):
            continue
    return None


class ServerStopping(BaseException):
    """Raised in the main thread when SIGTERM/SIGINT/… arrives during the smoke: testing a server that is shutting
    down would only produce false failures, and the exit code must be the server's. A BaseException, like
    KeyboardInterrupt, so the smoke client's "transport trouble is a fact" handlers do not swallow it."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum


class Supervisor:
    """Run the command as a child with signals forwarded; wait for it to become healthy; wait for it to end."""

    def __init__(self, argv: list[str], log: Callable[[str], None]):
        self.argv = argv
        self.log = log
        self.child: Optional[subprocess.Popen] = None
        self._old: dict = {}
        self.received: list[int] = []
        self._interrupt = False

    def start(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        # Own session: a terminal's Ctrl-C reaches us once and we forward it once (no double SIGINT to vLLM).
        self.child = subprocess.Popen(self.argv, start_new_session=True)
        own(self.child.pid)  # started on purpose: never swept as a probe's orphan
        for s in FORWARDED_SIGNALS:
            self._old[s] = signal.signal(s, self._forward)

    def _forward(self, signum, frame) -> None:
        self.received.append(signum)
        if self.child is not None and self.child.poll() is None:
            try:
                self.child.send_signal(signum)
            except ProcessLookupError:
                pass
        if self._interrupt:
            self._interrupt = False  # once: the code that handles it must not be interrupted again
            raise ServerStopping(signum)

    @contextlib.contextmanager
    def stop_on_signal(self):
        """Within this block a forwarded signal also raises ServerStopping here (it still reaches the child)."""
        if self.received:
            raise ServerStopping(self.received[0])
        self._interrupt = True
        try:
            yield
        finally:
            self._interrupt = False

    def wait_healthy(self, base: str, deadline_s: float, interval: float = 0.5) -> tuple[bool, str]:
        """(healthy, what happened): polls until the server answers, the child exits or the deadline passes."""
        assert self.child is not None
        end = time.monotonic() + deadline_s
        while True:
            rc = self.child.poll()
            if rc is not None:
                return False, T("the command exited with status {status} before it became healthy",
                                status=exit_code_of(rc))
            if self.received:
                return False, T("signal {signal} received while waiting for the server", signal=self.received[0])
            hit = probe_health(base)
            if hit:
                return True, T("{url} answered 200", url=f"{base}{hit}")
            if time.monotonic() >= end:
                return False, T("{base} did not answer /health or /v1/models within {seconds}s", base=base,
                                seconds=format(deadline_s, "g"))
            time.sleep(interval)

    def stop(self, grace_s: float = 30.0) -> int:
        """SIGTERM the child, SIGKILL after `grace_s`; its exit status."""
        assert self.child is not None
        if self.child.poll() is None:
            self.child.terminate()
            try:
                self.child.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.child.kill()
        return exit_code_of(self.child.wait())

    def wait(self) -> int:
        """Wait for the child to end (signals keep being forwarded); its exit status."""
        assert self.child is not None
        while True:
            try:
                return exit_code_of(self.child.wait())
            except InterruptedError:  # pragma: no cover (PEP 475 retries for us)
                continue
