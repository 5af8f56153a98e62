"""`/proc/net/tcp` and `/proc/net/tcp6`: the TCP sockets of this network namespace, one per line after a header
(`sl local_address rem_address st …`, addresses as hex `IP:PORT`, state `0A` = LISTEN; see proc(5))."""

from __future__ import annotations

LISTEN = "0A"


def listening_ports(text: str) -> set[int]:
    """The local ports in LISTEN state. Lines that do not parse (a truncated read, garbage) are skipped."""
    ports: set[int] = set()
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 4 or parts[3].upper() != LISTEN or ":" not in parts[1]:
            continue
        try:
            ports.add(int(parts[1].rsplit(":", 1)[1], 16))
        except ValueError:
            continue
    return ports
