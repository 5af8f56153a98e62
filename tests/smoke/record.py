"""Write the exchanges of one smoke run as ScriptedServer transcripts: the real server's bytes, one response per
scenario, replayable in the fast tier (tests/data/smoke/recorded/<name>/).

The body is kept byte for byte except two run-specific values: the round trip's sentinel (a random report id the
smoke sends in the role:tool message, which the model quotes back) becomes `{{SENTINEL}}`, which ScriptedServer fills
in from the request it answers. Only the content-type header is kept (the others are per-run: date, ids).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def transcript(x: Any, sentinel: str, source: str) -> dict:
    body = x.body_text
    if sentinel and x.name.startswith("roundtrip"):
        body = body.replace(sentinel, "{{SENTINEL}}")
    return {"status": x.status, "headers": {"content-type": x.content_type or "application/json"}, "raw": body,
            "recorded_from": source}


def write_transcripts(facts: Any, out: Path, source: str) -> list[str]:
    """One `<scenario>.json` per exchange that got an HTTP answer; returns the names written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, x in facts.exchanges.items():
        if x.error or x.status is None:
            continue
        (out / f"{name}.json").write_text(json.dumps(transcript(x, facts.sentinel or "", source), indent=1,
                                                     ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(name)
    return written
