"""Whose files may steer the doctor: the rule for anything that can load code or weaken the gate.

A file may do so when it belongs to the invoking user (or root) and nobody else can write it (git's safe.directory
idea) — and, for a symbolic link, when the link itself passes too: in a shared directory another user's link to a
root-owned file is that user's choice of file, not root's (#23 item 9).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional


def _owner(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def untrusted_reason(st: os.stat_result) -> Optional[str]:
    """Why a file or directory with this `os.stat` result may not steer the doctor, or None when it may."""
    if not hasattr(os, "getuid"):
        return None
    if st.st_uid not in (os.getuid(), 0):
        return f"it belongs to {_owner(st.st_uid)} (uid {st.st_uid}), not to you (uid {os.getuid()}) or root"
    if st.st_mode & 0o022 and not stat.S_ISLNK(st.st_mode):  # a link's own mode bits mean nothing
        who = "group- and world-" if st.st_mode & 0o022 == 0o022 else ("group-" if st.st_mode & 0o020 else "world-")
        return f"it is {who}writable (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def path_untrusted_reason(path: str | Path) -> Optional[str]:
    """`untrusted_reason` for `path` itself (not followed) and, when it is a link, for what it points to."""
    p = Path(path)
    try:
        lst = os.lstat(p)
        why = untrusted_reason(lst)
        if why is None and stat.S_ISLNK(lst.st_mode):
            why = untrusted_reason(os.stat(p))
            if why is not None:
                why = f"its target {os.path.realpath(p)}: {why}"
        elif why is not None and stat.S_ISLNK(lst.st_mode):
            why = f"it is a symbolic link that {why[3:]}"
    except OSError as exc:
        return f"it cannot be examined ({exc.strerror or exc})"
    return why


def code_dir_untrusted_reason(directory: str | Path) -> Optional[str]:
    """Why the check plugins of `directory` may not be loaded: the directory or one of its `*.py` files fails the
    rule (a world-writable directory lets anyone add a file; a world-writable file lets anyone change it)."""
    why = path_untrusted_reason(directory)
    if why is not None:
        return f"{directory}: {why}"
    for f in sorted(Path(directory).glob("*.py")):
        why = path_untrusted_reason(f)
        if why is not None:
            return f"{f}: {why}"
    return None
