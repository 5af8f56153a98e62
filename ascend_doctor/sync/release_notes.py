"""The "Known issues" of every vllm-ascend release, read from docs/source/user_guide/release_notes.md of a release's
sdist or tag (each release's notes carry every earlier release's too; `matrix sync` takes the union over the trees
it reads) into `serve/known-issues` rows.

A row is one bullet, verbatim (links reduced to their text, the URLs kept in `links`), under the release whose
section lists it, with an id made of that release and the bullet's own text (`KI-0.21.0rc1-3f9a2c`): an edited
bullet is a new row, an unchanged one keeps its id however the notes are reordered. What the bullet says about
*when* it bites (the model, the features, the CANN or driver) is prose; a maintainer writes it as the row's `when`
(the vocabulary of ascend_doctor.knowledge.serve_features), and sync keeps those fields when it re-reads the text.
"""

from __future__ import annotations

import hashlib
import re
from typing import Dict, Iterator, List, Tuple

import re2

NOTES = "docs/source/user_guide/release_notes.md"
_SECTION = re.compile(r"^##\s+v?(\d+\.\d+\.\d+[0-9a-z.]*)\s*(?:-|–|$)", re.MULTILINE)
_KNOWN = re.compile(r"^###\s+Known\s+issues?\s*$", re.IGNORECASE | re.MULTILINE)
_LINK = re2.compile(r"\[([^\]]*)\]\(([^)]*)\)")  # RE2: linear on a line of a thousand `[`
_TICKED = re.compile(r"`([^`]{12,})`")


def _bullets(block: str) -> List[str]:
    """Top-level `- ` items of a markdown block, continuation lines joined."""
    out: List[str] = []
    for line in block.splitlines():
        if re.match(r"^[-*]\s+", line):
            out.append(line[2:].strip())
        elif out and line.startswith((" ", "\t")) and line.strip():
            out[-1] += " " + line.strip()
    return [b for b in out if b]


def issue_id(version: str, text: str) -> str:
    return f"KI-{version}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def section_bullets(text: str, heading, every: bool = False) -> Iterator[Tuple[str, str, str, List[str]]]:
    """(release, heading line, bullet as plain text, its http links) of each bullet under `heading` in every
    release's section of the notes: the first such heading of a section, or with `every` each of them."""
    sections = list(_SECTION.finditer(text))
    for i, m in enumerate(sections):
        body = text[m.end(): sections[i + 1].start() if i + 1 < len(sections) else len(text)]
        heads = list(heading.finditer(body)) if every else [h for h in (heading.search(body),) if h is not None]
        for head in heads:
            block = body[head.end():]
            nxt = re.search(r"^#{2,3}\s", block, re.MULTILINE)
            for raw in _bullets(block[: nxt.start()] if nxt else block):
                plain = " ".join(_LINK.sub(lambda x: x.group(1), raw).split())
                yield m.group(1), head.group(0), plain, [u for _, u in _LINK.findall(raw) if u.startswith("http")]


def read_known_issues(text: str) -> Dict[str, Dict[str, dict]]:
    """version -> id -> {text, links, quoted}: the Known issues bullets of every release section in the notes."""
    out: Dict[str, Dict[str, dict]] = {}
    for version, _, plain, links in section_bullets(text, _KNOWN):
        out.setdefault(version, {})[issue_id(version, plain)] = {
            "text": plain, "links": links, "quoted": sorted(set(_TICKED.findall(plain)))}
    return out


def merge(per_tree: List[Dict[str, Dict[str, dict]]]) -> Dict[str, dict]:
    """id -> row fields over several trees' notes, newest tree first: a bullet an older tree words slightly
    differently (a later typo fix) is the same issue, and the newest wording is kept."""
    import difflib

    out: Dict[str, dict] = {}
    by_release: Dict[str, List[str]] = {}
    for notes in per_tree:
        for version, items in notes.items():
            for i, fields in items.items():
                same = [o for o in by_release.get(version, [])
                        if difflib.SequenceMatcher(None, out[o]["text"], fields["text"]).ratio() > 0.9]
                if i in out or same:
                    continue
                out[i] = {"release": version, **fields}
                by_release.setdefault(version, []).append(i)
    return out


def known_issue_proposals(table, extracted: Dict[str, dict], source: Dict[str, str]) -> List:
    """A proposal for each bullet the table has no row for (by id, or by a near-identical text of the same
    release); a maintainer adds its conditions."""
    import difflib

    from ascend_doctor.sync.diff import Proposal

    rows = table.known_issue if table is not None else []
    have = {r.id for r in rows}
    out = []
    for i, fields in extracted.items():
        if i in have or any(r.release == fields["release"] and difflib.SequenceMatcher(
                None, r.text, fields["text"]).ratio() > 0.9 for r in rows):
            continue
        row = {"id": i, "release": fields["release"], "text": fields["text"], "links": fields["links"],
               "quoted": fields["quoted"], "source": source[i]}
        out.append(Proposal(table="known_issues", id=i, change="new", row=row,
                            differences=[f"vllm-ascend {fields['release']}: a known issue the table does not record"]))
    return out
