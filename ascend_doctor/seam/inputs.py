"""Every file a user hands the doctor is read through here, with a size cap per kind of input.

Without a cap, `--replay /dev/zero` or `diagnose /dev/urandom` grows to gigabytes and dies with MemoryError (#23);
with one, an oversized input is a one-line usage error (exit 2) after reading at most cap + 1 bytes. The caps are
generous for real inputs (a recorded 16-NPU host is a few MB; a day of `vllm serve` logs a few hundred) and are
documented in the README ("Input limits"). `-` reads standard input under the same cap.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import BinaryIO, Optional

from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import Msg, T
from ascend_doctor.text.units import MIB, human_bytes

LIMITS = {
    "snapshot": 64 * MIB,     # --replay, fleet --snapshots, diff: JSON of one host
    "report": 64 * MIB,       # diff of two reports
    "config": 4 * MIB,        # ascend-doctor.toml, --policy, --matrix layers
    "log": 256 * MIB,         # diagnose: a vllm serve / plog log
    "paste": 16 * MIB,        # triage: an issue body with its attachments
    "vendor output": 16 * MIB,  # parse KIND FILE: npu-smi, hccn_tool, version files
    "plugin": 4 * MIB,        # a --checks-dir module or a plugin's entry_points.txt
}


def _what(kind: str) -> Msg:
    return {"snapshot": T("a snapshot"), "report": T("a report"), "config": T("a TOML configuration or matrix file"),
            "log": T("a log (give its last part: tail -c 200M FILE)"),
            "paste": T("a paste (paste the issue text, not a dump)"),
            "vendor output": T("a tool's output"), "plugin": T("a check plugin")}[kind]


class NotRegular(OSError):
    """`open_regular_file` found a FIFO, device, directory or socket; `kind` says which (English, for a probe's
    error text; `open_regular` words it as a message)."""

    def __init__(self, path: str, kind: str):
        super().__init__(f"{kind}, not a regular file")
        self.path, self.kind = path, kind


def open_regular_file(path: str) -> BinaryIO:
    """`path` opened for reading only when it is a regular file (symlinks followed): a FIFO named
    `model.safetensors` or `config.json` would block the reader forever (#40 item 8), a device has no end. The open
    itself cannot block (O_NONBLOCK). OSError when it cannot be opened, NotRegular when it is not a file. The one
    place that knows how (`open_regular` for the CLI's inputs, LocalHost.read_file for the probes)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "a special file")
            raise NotRegular(path, kind)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


_KINDS = {"a FIFO": T("a FIFO"), "a directory": T("a directory"), "a device": T("a device"), "a socket": T("a socket"),
          "a special file": T("a special file")}


def open_regular(path: str, label: Optional[str] = None) -> BinaryIO:
    """`open_regular_file`, with what is not a regular file as an InputError naming what the path is."""
    try:
        return open_regular_file(path)
    except NotRegular as exc:
        raise InputError(T("cannot read {path}: it is {kind}, not a regular file", path=label or path,
                           kind=_KINDS[exc.kind])) from None


def read_bytes(path: str, kind: str, label: Optional[str] = None, regular_only: bool = False) -> bytes:
    """At most LIMITS[kind] bytes of `path` ('-': stdin); InputError when it cannot be read or is larger.
    `regular_only` for a file the doctor found rather than one the user named (a model folder's config.json): then a
    FIFO or device there is refused instead of read (`diagnose <(kubectl logs …)` names a pipe on purpose)."""
    limit = LIMITS[kind]
    name = label or ("<stdin>" if path == "-" else str(path))
    try:
        if path == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1).encode()
        else:
            with (open_regular(path, name) if regular_only else open(path, "rb")) as fh:
                data = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(T("cannot read {path}: {strerror}", path=name, strerror=exc.strerror or exc)) from None
    if len(data) > limit:
        raise too_large(name, kind)
    return data


def too_large(path: str, kind: str) -> InputError:
    """The error for an input of `kind` over its cap (for readers that must read the file themselves)."""
    return InputError(T("{path} is larger than {limit}, the most the doctor reads as {what}", path=path,
                        limit=human_bytes(LIMITS[kind]), what=_what(kind)))


def read_text(path: str, kind: str, label: Optional[str] = None, strict: bool = False,
              regular_only: bool = False) -> str:
    """The text of `path` under the cap of `kind`: undecodable bytes replaced (U+FFFD), or with `strict` an
    InputError saying the file is not UTF-8 (JSON and TOML, whose meaning a replaced byte would change)."""
    data = read_bytes(path, kind, label, regular_only)
    if not strict:
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(T("{path} is not UTF-8 text", path=label or path)) from None
