"""LocalHost: the real machine behind the host seam, and the one subprocess chokepoint of the tool."""

from __future__ import annotations

import errno
import os
import platform
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Optional

from ascend_doctor.seam.host import (
    DEFAULT_MAX_OUTPUT,
    NOT_FOUND,
    OS_ERROR,
    PERMISSION_DENIED,
    TIMEOUT,
    CommandResult,
    DirResult,
    DiskResult,
    FileResult,
    LinkResult,
    PythonEnv,
    SystemInfo,
)
from ascend_doctor.seam.strays import Strays, describe, own
from ascend_doctor.text.jsonread import loads
from ascend_doctor.text.redact import register_env_secrets

# Vendor tools live in sbin dirs that a non-root PATH often lacks (npu-smi is installed to /usr/local/sbin).
EXTRA_BIN_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/sbin", "/usr/local/Ascend/driver/tools")

FORBID_ENV = "ASCEND_DOCTOR_FORBID_LOCALHOST"  # set by the test suite: unit tests must not touch the real machine

# Runs inside the *target* interpreter (the serving environment, maybe not ours): stdlib only, imports nothing
# heavy. importlib.metadata reads dist-info files; torch/torch_npu/vllm are never imported. Not `-I`: the server
# runs with the environment's PYTHONPATH and user site, so the dump must see the same distributions.
PYINFO_SCRIPT = r"""
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]  # never pick up modules from the cwd
import json, platform, struct, sys, sysconfig
try:
    from importlib import metadata as md
except ImportError:
    md = None
def headers(d):
    # Only the header block of METADATA/PKG-INFO: `d.metadata` runs the email parser over the whole file (the long
    # description included) and `d.version`/`d.requires` parse it again, 3 parses of ~130 files in a vLLM env.
    text = None
    for fname in ("METADATA", "PKG-INFO"):
        try:
            text = d.read_text(fname)
        except Exception:
            text = None
        if text:
            break
    out = {}
    key = None
    for line in (text or "").replace("\r\n", "\n").split("\n"):
        if not line.strip():
            break
        if line[0] in " \t" and key:
            out[key][-1] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if not sep:
            key = None
            continue
        key = key.strip().lower()
        out.setdefault(key, []).append(value.strip())
    return out
dists = []
seen = set()
if md is not None:
    for d in md.distributions():
        h = headers(d)
        name = (h.get("name") or [None])[0]
        if not name or name.lower() in seen:
            continue
        seen.add(name.lower())
        requires = h.get("requires-dist")
        if requires is None:
            try:
                requires = list(d.requires or [])  # egg-info keeps them in requires.txt
            except Exception:
                requires = []
        try:
            loc = str(d.locate_file(""))
        except Exception:
            loc = None
        dists.append({"name": name, "version": (h.get("version") or [""])[0], "requires": requires, "location": loc})
libc, libc_ver = platform.libc_ver()
paths = sysconfig.get_paths()
print(json.dumps({
    "executable": sys.executable,
    "version": platform.python_version(),
    "implementation": platform.python_implementation(),
    "soabi": sysconfig.get_config_var("SOABI"),
    "abiflags": getattr(sys, "abiflags", ""),
    "pointer_bits": struct.calcsize("P") * 8,
    "machine": platform.machine(),
    "libc": libc,
    "libc_version": libc_ver,
    "purelib": paths.get("purelib", ""),
    "platlib": paths.get("platlib", ""),
    "distributions": dists,
}))
"""


def _errkind(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOENT:
        return NOT_FOUND
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return PERMISSION_DENIED
    return OS_ERROR


def _decode(data: bytes) -> str:
    # Vendor tools print GBK on some images, paths and values may hold any byte: never fail on bytes, and lose none.
    # surrogateescape keeps each undecodable byte as a lone surrogate (os.fsencode gives it back); the writers show it
    # as \xNN and snapshots keep it as a JSON escape (ascend_doctor.text.textsafe).
    return data.decode("utf-8", errors="surrogateescape")


class _Drain:
    """Reads one pipe without blocking, keeping at most `cap` bytes (a chatty child can neither block nor eat
    memory)."""

    def __init__(self, fd: int, cap: int):
        self.fd = fd
        self.cap = cap
        self.chunks: list[bytes] = []
        self.kept = 0
        self.truncated = False
        self.eof = False

    def read(self) -> None:
        try:
            chunk = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            return
        room = self.cap - self.kept
        if room > 0:
            self.chunks.append(chunk[:room])
            self.kept += min(room, len(chunk))
        if len(chunk) > room:
            self.truncated = True

    def text(self) -> str:
        return _decode(b"".join(self.chunks))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:  # already gone (ESRCH), or not ours
        pass


# The process groups of the commands running right now (each `run` starts its command in its own session), so that
# a doctor told to stop (Ctrl-C, SIGTERM) ends them at once instead of waiting out their deadlines, and no new one
# starts. SIGKILL leaves nothing to run: the commands that matter most (the compute smoke's launcher and ranks) ask
# the kernel for a parent-death signal themselves.
_live_lock = threading.Lock()
_live: set[int] = set()
_stopping = False


def stop_children() -> int:
    """Kill the process group of every command running now and refuse new ones; how many groups were killed."""
    global _stopping
    with _live_lock:
        _stopping = True
        groups = list(_live)
    for pgid in groups:
        _kill_group(pgid)
    return len(groups)


class LocalHost:
    """The machine this process runs on."""

    def __init__(self, max_output: int = DEFAULT_MAX_OUTPUT):
        if os.environ.get(FORBID_ENV):
            raise RuntimeError("LocalHost is forbidden here (tests must use a ReplayHost or a fake root)")
        self.max_output = max_output
        self.strays = Strays()
        register_env_secrets(os.environ)  # before any probe: their values are masked wherever they appear

    def describe(self) -> str:
        return "local"

    def _which(self, name: str) -> Optional[str]:
        if os.sep in name:
            return name
        path = os.environ.get("PATH", os.defpath) + os.pathsep + os.pathsep.join(EXTRA_BIN_DIRS)
        return shutil.which(name, path=path)

    def run(self, argv: list[str], timeout: float = 10.0) -> CommandResult:
        """Run argv (never through a shell) in its own session; at most `timeout` seconds, whatever it forks.

        The deadline covers the child *and* its pipes: a grandchild that keeps stdout open (a daemon forked by a
        vendor tool, `cmd & sleep`) cannot hold us past it. At the deadline the whole process group is killed and the
        result says "timed out"; when the child ends on time, whatever it left behind in its group is killed too, so
        no process of ours outlives the call.
        """
        argv = [str(a) for a in argv]
        start = time.monotonic()
        deadline = start + timeout
        exe = self._which(argv[0])
        if exe is None:
            return CommandResult(argv=argv, error=NOT_FOUND, error_message=f"{argv[0]}: command not found")
        # What a note will call the command: an inline `-c` script of ours shown as <script>, not its 100 lines.
        tag_name, tag = self.strays.begin(" ".join("<script>" if "\n" in a or len(a) > 200 else a for a in argv))
        try:
            return self._run(argv, exe, start, deadline, timeout, {tag_name: tag})
        finally:
            self.strays.end(tag)

    def reap_strays(self) -> list[str]:
        """Kill what finished commands left running outside their process group; one line per command (notes)."""
        return describe(self.strays.sweep())

    def _run(self, argv: list[str], exe: str, start: float, deadline: float, timeout: float,
             tag: dict[str, str]) -> CommandResult:
        if _stopping:
            return CommandResult(argv=argv, error=TIMEOUT, error_message="not started: the doctor is stopping",
                                 duration_s=0.0)
        try:
            proc = subprocess.Popen(
                [exe, *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # own session and process group: a timeout kills grandchildren too
                env={**os.environ, "LC_ALL": "C", "LANG": "C", **tag},  # the tag finds what escapes the group
            )
        except OSError as exc:
            return CommandResult(argv=argv, error=_errkind(exc), error_message=str(exc),
                                 duration_s=time.monotonic() - start)
        own(proc.pid)
        with _live_lock:
            _live.add(proc.pid)
            late = _stopping  # stop_children ran between the check above and now
        if late:
            _kill_group(proc.pid)
        drains = {}
        sel = selectors.DefaultSelector()
        for stream in (proc.stdout, proc.stderr):
            fd = stream.fileno()
            os.set_blocking(fd, False)
            drains[fd] = _Drain(fd, self.max_output)
            sel.register(fd, selectors.EVENT_READ)
        out, err = drains[proc.stdout.fileno()], drains[proc.stderr.fileno()]
        timed_out = False
        try:
            while not (out.eof and err.eof):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                for key, _ in sel.select(timeout=remaining):
                    d = drains[key.fd]
                    d.read()
                    if d.eof:
                        sel.unregister(key.fd)
            if not timed_out:
                try:
                    proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
                except subprocess.TimeoutExpired:
                    timed_out = True
        finally:
            _kill_group(proc.pid)  # on time or not: nothing we started stays behind
            if proc.poll() is None:
                proc.wait()
            with _live_lock:
                _live.discard(proc.pid)
            sel.close()
            for stream in (proc.stdout, proc.stderr):
                try:
                    stream.close()
                except OSError:
                    pass
        duration = time.monotonic() - start
        result = CommandResult(
            argv=argv,
            returncode=None if timed_out else proc.returncode,
            stdout=out.text(),
            stderr=err.text(),
            truncated=out.truncated or err.truncated,
            duration_s=round(duration, 4),
        )
        if timed_out:
            result.error = TIMEOUT
            held = proc.returncode is not None and proc.returncode >= 0 and not (out.eof and err.eof)
            result.error_message = (f"killed after {timeout:g}s" if not held else
                                    f"exited {proc.returncode}, but a process it started kept its output open; "
                                    f"killed after {timeout:g}s")
        elif proc.returncode is not None and proc.returncode < 0:
            result.error_message = f"killed by signal {signal.Signals(-proc.returncode).name}" \
                if -proc.returncode in signal.valid_signals() else f"killed by signal {-proc.returncode}"
        return result

    def read_file(self, path: str, max_bytes: int = DEFAULT_MAX_OUTPUT) -> FileResult:
        # Only regular files (procfs and sysfs entries are): a FIFO planted where a probe reads (a model folder's
        # config.json) would block the probe forever, a device never ends (#40 item 8). The open cannot block.
        from ascend_doctor.seam.inputs import NotRegular, open_regular_file

        try:
            with open_regular_file(path) as fh:
                data = fh.read(max_bytes + 1)
        except NotRegular as exc:
            return FileResult(path=path, error=OS_ERROR, error_message=f"{exc.kind}, not a regular file: not read")
        except OSError as exc:
            return FileResult(path=path, error=_errkind(exc), error_message=exc.strerror or str(exc))
        truncated = len(data) > max_bytes
        return FileResult(path=path, content=_decode(data[:max_bytes]), truncated=truncated)

    def list_dir(self, path: str) -> DirResult:
        try:
            return DirResult(path=path, entries=sorted(os.listdir(path)))
        except OSError as exc:
            return DirResult(path=path, error=_errkind(exc), error_message=exc.strerror or str(exc))

    def readlink(self, path: str) -> LinkResult:
        if not os.path.lexists(path):
            return LinkResult(path=path, error=NOT_FOUND)
        target = os.readlink(path) if os.path.islink(path) else None
        return LinkResult(path=path, target=target, resolved=os.path.realpath(path))

    def disk_usage(self, path: str) -> DiskResult:
        try:
            st = os.statvfs(path)
        except OSError as exc:
            return DiskResult(path=path, error=_errkind(exc), error_message=exc.strerror or str(exc))
        return DiskResult(path=path, total_bytes=st.f_blocks * st.f_frsize, free_bytes=st.f_bavail * st.f_frsize)

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    def python_env(self, python: Optional[str] = None, timeout: float = 20.0) -> PythonEnv:
        """Dump interpreter facts and installed distributions by running a stdlib-only script in `python`."""
        exe = python or sys.executable
        res = self.run([exe, "-c", PYINFO_SCRIPT], timeout=timeout)
        if not res.ok:
            return PythonEnv(executable=exe, error=res.error or "exit", error_message=str(res.why_not()))
        try:
            data = loads(res.stdout.strip().splitlines()[-1])
            return PythonEnv.model_validate(data)
        except (ValueError, IndexError) as exc:
            return PythonEnv(executable=exe, error=OS_ERROR, error_message=f"unreadable metadata dump: {exc}")

    def system(self) -> SystemInfo:
        u = platform.uname()
        return SystemInfo(hostname=socket.gethostname(), os=_os_name(self), kernel=u.release, machine=u.machine,
                          cpu_count=os.cpu_count())


def _os_name(host: LocalHost) -> str:
    res = host.read_file("/etc/os-release")
    if res.ok:
        for line in res.content.splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    return platform.system()
