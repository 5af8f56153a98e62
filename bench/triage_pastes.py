"""Measure `triage` and `diagnose` on labelled real pastes (docs/research/triage-2026-12/).

    python bench/triage_pastes.py DIR [--skip 477,5297]

DIR holds the pastes (one file each, the reporter's own text) and one or more `labels*.toml` with `[[paste]]` rows:
file, url, category, cause, fix, evidence, decisive_line. The pastes are third-party text and stay outside the
repository. Prints, per paste, the confirmed cause beside triage's first cause (its finding's message), the specific
and generic signatures `diagnose` matched and the failing checks — what a person needs to judge "same cause" (by
hand: the words differ) — and writes the same as JSON to DIR/measure.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--skip", default="", help="issue numbers to leave out (struck from a held-out set)")
    a = ap.parse_args()
    if not a.dir.is_dir():
        ap.error(f"{a.dir}: not a directory (the labelled pastes stay outside the repository)")

    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.knowledge.door import Knowledge
    from ascend_doctor.knowledge.signatures import diagnose
    from ascend_doctor.triage.run import triage_text

    reg, knowledge = load_registry(entry_points=False), Knowledge()
    skip = {s for s in a.skip.split(",") if s}
    rows = [r for f in sorted(a.dir.glob("labels*.toml")) for r in tomllib.loads(f.read_text())["paste"]]
    out = []
    for r in rows:
        num = r["url"].rsplit("/", 1)[1]
        if num in skip:
            continue
        text = (a.dir / r["file"]).read_text(errors="replace")
        report = triage_text(text, r["file"], reg)
        by = {f.code: f for f in report.findings}
        root = report.triage.root_cause
        found = [m for m in diagnose(text, knowledge.signatures) if m.signature.kind in ("error", "warning")]
        out.append({"url": r["url"], "category": r["category"], "cause": r["cause"], "root": root,
                    "why": str(report.triage.root_cause_why), "said": by[root].message if root in by else "",
                    "specific": [m.signature.id for m in found
                                 if m.signature.priority == "specific" and not m.also_seen],
                    "generic": [m.signature.id for m in found if m.signature.priority != "specific" or m.also_seen],
                    "fails": [f.code for f in report.findings if f.status.value == "fail"]})
        o = out[-1]
        print(f"{o['url']} [{o['category']}]\n  cause: {o['cause'][:200]}\n  triage: {o['root']}: "
              f"{(o['why'] or o['said'])[:220]}\n  signatures: {o['specific']} (generic {o['generic']})")
    (a.dir / "measure.json").write_text(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
