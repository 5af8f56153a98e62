"""Atomic file writes: a report, snapshot or diff either appears whole or leaves the previous file untouched.

A CI gate that reads last night's report must never find it truncated because tonight's run broke while writing
(an encoding error, a full disk, a kill). So every output file is written to a temporary file in the same directory,
flushed to disk, and renamed over the target (rename is atomic within one filesystem).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Union

from ascend_doctor.textsafe import escape_text


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Union[str, Path], text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically; creates missing parent directories. Raises OSError.

    The bytes are encoded before anything is touched (undecodable bytes escaped, see textsafe), so an encoding problem
    can no longer leave a 0-byte file. A symlink is followed (the link stays, its target is replaced); a target that is
    not a regular file (`/dev/stdout`, a FIFO) is written directly, since it cannot be replaced.
    """
    data = escape_text(text).encode("utf-8")
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, "wb") as fh:
            fh.write(data)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
