"""What every vllm-ascend release's notes say it removed, renamed or stopped honouring, read from
docs/source/user_guide/release_notes.md (each release's notes carry the earlier releases' too) into
`serve/release-changes` rows: the bullets of the sections ascend_doctor.knowledge.release_changes.SECTION names,
verbatim (links reduced to their text, the URLs kept), with the names each retires (`retired_names`).

A row's id is its release and its own text (`RC-0.23.0-4f1c2a`), as the known issues' are: an edited bullet is a new
row. Nothing here is written by hand, so the table is exactly what sync reads from the newest sdist.
"""

from __future__ import annotations

import hashlib
from typing import Dict, List

from ascend_doctor.knowledge.release_changes import SECTION, retired_names
from ascend_doctor.sync.release_notes import section_bullets


def change_id(version: str, text: str) -> str:
    return f"RC-{version}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def read_release_changes(text: str) -> Dict[str, Dict[str, dict]]:
    """version -> id -> {section, text, links, old, new}: the bullets of every release's change sections."""
    out: Dict[str, Dict[str, dict]] = {}
    for version, head, plain, links in section_bullets(text, SECTION, every=True):
        old, new = retired_names(plain)
        out.setdefault(version, {})[change_id(version, plain)] = {
            "section": head[4:].strip(), "text": plain, "old": old, "new": new, "links": links}
    return out


def change_proposals(table, extracted: Dict[str, dict], source: Dict[str, str]) -> List:
    """A proposal for each bullet the table lacks, and for a row whose names the reader now reads otherwise."""
    from ascend_doctor.sync.diff import Proposal

    have = {r.id: r for r in (table.change if table is not None else [])}
    out = []
    for i, fields in sorted(extracted.items()):
        row = {"id": i, "release": fields["release"], "section": fields["section"], "text": fields["text"],
               "links": fields["links"], "old": fields["old"], "new": fields["new"], "source": source[i]}
        shipped = have.get(i)
        if shipped is None:
            out.append(Proposal(table="release_changes", id=i, change="new", row=row,
                                differences=[f"vllm-ascend {fields['release']}: a change the table does not record"]))
        elif (shipped.old, shipped.new) != (fields["old"], fields["new"]):
            out.append(Proposal(table="release_changes", id=i, change="changed", row=row,
                                differences=[f"old {shipped.old} -> {fields['old']}, new {shipped.new} -> "
                                             f"{fields['new']}"]))
    return out
