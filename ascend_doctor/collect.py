"""`collect`: run every probe through a RecordingHost and return the snapshot of what the machine answered."""

from __future__ import annotations

from ascend_doctor.engine import FactStore
from ascend_doctor.errors import FactUnavailable
from ascend_doctor.host import Host
from ascend_doctor.options import RunOptions
from ascend_doctor.probes import load_probes
from ascend_doctor.snapshot import RecordingHost, Snapshot


def collect_snapshot(host: Host, options: RunOptions, description: str = "") -> Snapshot:
    """Record every probe's questions and the host's answers (secrets redacted as they are recorded)."""
    rec = RecordingHost(host)
    rec.system()
    rec.env()
    store = FactStore(rec, options)
    names = sorted(load_probes())
    store.start_all(names)
    for name in names:
        try:
            store.fact(name)
        except FactUnavailable:
            pass  # the snapshot holds the failed answers themselves; replay reproduces the same unavailability
    snap = rec.snapshot
    snap.description = description
    return snap
