"""Finding a test's own processes on the real machine: `sleep` commands with lengths no one else uses."""

from __future__ import annotations

from pathlib import Path


def sleeping(*lengths: str) -> list[int]:
    """Pids of live (not zombie) `sleep LENGTH` processes for the given lengths."""
    wanted = [[length.encode()] for length in lengths]
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if cmd[:1] == [b"sleep"] and cmd[1:2] in wanted and state != "Z":
                out.append(int(d.name))
    return out
