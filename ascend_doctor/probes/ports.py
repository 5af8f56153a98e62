"""The TCP ports something already listens on in this network namespace (`/proc/net/tcp`, `/proc/net/tcp6`): HCCL
binds fixed default ports (HCCL106), and a second job on the same host network finds them taken."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.parsers.proc_net import listening_ports
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import NOT_FOUND

SOURCES = ("/proc/net/tcp", "/proc/net/tcp6")


class ListeningPorts(Model):
    ports: list[int] = Field(default_factory=list, description="Local ports in LISTEN state, sorted")
    read: list[str] = Field(default_factory=list, description="The /proc/net files that were read")
    error: Optional[str] = Field(None, description="Why neither file could be read")


@probe("listening_ports")
def listening_ports_probe(host, ctx) -> ListeningPorts:
    """The TCP ports something listens on, from /proc/net/tcp and tcp6."""
    fact = ListeningPorts()
    ports: set[int] = set()
    errors = []
    for path in SOURCES:
        r = host.read_file(path, max_bytes=4 * 1024 * 1024)
        if r.ok:
            fact.read.append(path)
            ports |= listening_ports(r.content or "")
        elif r.error != NOT_FOUND or path == SOURCES[0]:
            errors.append(f"{path}: {r.error_message or r.error}")
    fact.ports = sorted(ports)
    if not fact.read:
        fact.error = "; ".join(errors) or "no /proc/net/tcp"
    return fact
