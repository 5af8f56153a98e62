"""Atomic file writes: a report, snapshot or diff either appears whole or leaves the previous file untouched.

A CI gate that reads last night's report must never find it truncated because tonight's run broke while writing
(an encoding error, a full disk, a kill). So every output file is written to a temporary file in the same directory,
flushed to disk, and renamed over the target (rename is atomic within one filesystem).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Union

from ascend_doctor.text.textsafe import printable


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# The process's own descriptors (`-o /dev/stdout`): links the kernel keeps, followed to wherever the caller pointed
# them (a pipe, a terminal, the file a shell redirected to).
_OWN_FDS = re.compile(r"^/(?:dev/std(?:in|out|err)|dev/fd/\d+|proc/self/fd/\d+)$")


def _write_through(path: Path, data: bytes, follow: bool = False) -> None:
    """Write to a FIFO, a terminal or /dev/null in place (they cannot be replaced). The open never blocks: a FIFO
    nobody reads is an error (ENXIO), not a hang; block devices and other character devices are refused. Without
    `follow`, a symbolic link swapped in after the caller looked is refused (O_NOFOLLOW), not followed."""
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        null = os.stat(os.devnull)
        ok = stat.S_ISFIFO(st.st_mode) or stat.S_ISREG(st.st_mode) or stat.S_ISSOCK(st.st_mode) or (
            stat.S_ISCHR(st.st_mode) and (os.isatty(fd) or st.st_rdev == null.st_rdev))
        if not ok:
            raise OSError(errno.EPERM, "not a file, pipe or terminal: refusing to write a report into it", str(path))
        os.set_blocking(fd, True)
        if stat.S_ISREG(st.st_mode):  # a regular file under /dev or /proc (/dev/termination-log): no stale tail
            os.ftruncate(fd, 0)
        with os.fdopen(fd, "wb", closefd=True) as fh:
            fd = -1
            fh.write(data)
    finally:
        if fd >= 0:
            os.close(fd)


def write_atomic(path: Union[str, Path], text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically; creates missing parent directories. Raises OSError.

    The bytes are encoded before anything is touched (control characters and undecodable bytes escaped by
    `textsafe.printable`: a report printed with `cat` cannot drive the terminal), so an encoding problem can no longer
    leave a 0-byte file. The file is written beside `path` and renamed over it, so a symlink at `path`
    is replaced by the report and its target is never written (in a shared /tmp, another user's link cannot redirect
    the report onto a file of ours). Paths under /dev and /proc (`/dev/stdout`) and FIFOs are written in place,
    without blocking when nobody reads; a read-only file is refused, not replaced.
    """
    data = printable(text).encode("utf-8")
    target = Path(path)
    try:
        lst = os.lstat(target)
    except FileNotFoundError:
        lst = None
    special = lst is not None and not stat.S_ISREG(lst.st_mode) and not stat.S_ISLNK(lst.st_mode)
    absolute = os.path.abspath(target)
    own = bool(_OWN_FDS.match(absolute))
    in_place = special or own or absolute.startswith(("/dev/", "/proc/"))
    if in_place and not own and lst is not None and stat.S_ISLNK(lst.st_mode):
        # A link under /dev that is not one of ours (#40 item 11: /dev/shm is world-writable, a link planted there
        # pointed the report at any file): followed only to a pipe, socket or terminal; to a regular file, a
        # directory or nothing it is replaced by the report like anywhere else, and its target is never written.
        try:
            st = os.stat(target)
        except OSError:
            st = None
        in_place = st is not None and (stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)
                                       or stat.S_ISCHR(st.st_mode))
        if in_place:
            _write_through(target, data, follow=True)
            return
    if in_place:
        _write_through(target, data, follow=own)
        return
    mode = None
    if lst is not None and stat.S_ISREG(lst.st_mode):
        if not os.access(target, os.W_OK):
            raise OSError(errno.EACCES, "the file is read-only (remove it or choose another path)", str(target))
        mode = stat.S_IMODE(lst.st_mode)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
