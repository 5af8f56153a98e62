"""`fleet --snapshots`: nodes from snapshot files gathered by any other means (ssh, pdsh, Ansible, a k8s DaemonSet)."""

from __future__ import annotations

import glob
from pathlib import Path

from ascend_doctor.core.errors import InputError
from ascend_doctor.fleet.model import UNREADABLE, NodeResult, node_label
from ascend_doctor.i18n import T
from ascend_doctor.seam.snapshot import load_snapshot


def expand(patterns: list[str]) -> list[Path]:
    """Every file the glob patterns match (a plain path too), in order, without duplicates."""
    out: list[Path] = []
    for pat in patterns:
        hits = sorted(glob.glob(pat)) or ([pat] if Path(pat).exists() else [])
        if not hits:
            raise InputError(T("--snapshots {pat} matches no file", pat=repr(pat)))
        out.extend(Path(h) for h in hits)
    return list(dict.fromkeys(out))


def results_from_files(patterns: list[str]) -> list[NodeResult]:
    """One node per snapshot file, named by the hostname it recorded (else the file name). An unreadable file is a
    node that did not answer (FLEET101), not the end of the run."""
    results = []
    for path in expand(patterns):
        stem = path.name[: -len(".snapshot.json")] if path.name.endswith(".snapshot.json") else path.stem
        try:
            snap = load_snapshot(path)
        except InputError as exc:
            results.append(NodeResult(name=stem, error=str(exc), error_kind=UNREADABLE, source=str(path)))
            continue
        results.append(NodeResult(name=node_label(snap.system.hostname, stem), snapshot=snap, source=str(path)))
    return results
