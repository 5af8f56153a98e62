"""What each vllm-ascend release's notes say it removed, renamed or stopped honouring (the `serve/release-changes`
table): the bullets of the "Deprecation & Breaking Changes", "Deprecation and Configuration Changes", "Breaking
Changes and Migration Notes" and "Upgrade Note(s)" sections, verbatim, with the names each one retires.

The names are read from the bullet, never written by hand (`retired_names`): the code spans and bold spans that look
like something a deployment sets — an environment variable (`ASCEND_BUFFER_POOL`), a command-line option
(`--task`), a `--additional-config` key (`dump_config`, `additional_config.enable_dsa_cp`) or a KV connector
(`CPUOffloadingConnector`) — split at the first word that introduces the replacement ("use", "instead", "renamed
to", "split into", "now controlled by", "migrate … to"): the names before it are retired (`old`), the ones after it
are what to use (`new`). Only a bullet that says the thing is gone or does nothing — removed, dropped, renamed,
split, moved, cleaned up, replaced, "no longer", "do not work" — retires names: "deprecated" alone still works.

SERVE325 warns when a deployment sets a name a release up to the installed one retired, quoting the bullet; a name
a later bullet brings back (`enable_sp`, "renamed back") is not held against it.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model

# The headings of the sections read, as the notes of 0.11.0-0.30.0rc2 spell them (`### Deprecation & Breaking
# Changes`, `### Upgrade notice`); "Ready to Deprecate" and "Deprecation announcement" name what still works.
SECTION = re.compile(r"^###\s+(?:Deprecation\s*(?:&|and)\s*(?:Breaking|Configuration)\s+Changes|Breaking\s+Changes"
                     r"(?:\s+and\s+Migration\s+Notes?)?|Upgrade\s+(?:Notes?|notice))\s*$", re.IGNORECASE | re.MULTILINE)
_GONE = re.compile(r"\b(?:remov\w*|dropped|drop|renamed|split|moved|cleaned up|replaced|no longer|do(?:es)? not work"
                   r"|not supported|unavailable)\b", re.IGNORECASE)
_INSTEAD = re.compile(r"\b(?:use|using|instead|replaced? by|replace[sd]? (?:it|them)? ?(?:with|by)|renamed(?: back)? "
                      r"to|moved to|split into|now controlled|controlled via|in favou?r of|recommended|migrat\w*"
                      r"(?: [\w-]+){0,4} to)\b", re.IGNORECASE)
_RECOMMENDED = re.compile(r"(?:is|are)\s+(?:now\s+)?recommend(?:ed)?|(?:as|is)\s+(?:a|the)\s+replacement",
                          re.IGNORECASE)
_SPAN = re.compile(r"`([^`]{2,80})`|\*\*([^*]{2,80})\*\*")
_ENV = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*\b")
_KEY = re.compile(r"\b(?:additional[_-]config\.)?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")
_CONNECTOR = re.compile(r"\b[A-Z][A-Za-z0-9]+Connector(?:V\d)?\b")
CONTAINERS = {"additional_config", "additional-config", "--additional-config", "kv_transfer_config"}


class ReleaseChange(Model, extra="forbid"):
    id: str = Field(pattern=r"^RC-[0-9][0-9a-z.]*-[0-9a-f]{6}$")
    release: str  # the release whose notes list it
    section: str  # the heading it sits under, verbatim
    text: str
    links: list[str] = []
    old: list[str] = []  # the names it retires (read from `text` by retired_names)
    new: list[str] = []  # the names it says to use instead
    source: str


class ReleaseChanges(Model, extra="forbid"):
    schema_version: int
    updated: date
    change: list[ReleaseChange] = []


def _spans(sentence: str) -> list[tuple[int, int, list[str]]]:
    """(start, end, deployment names) of each code or bold span of a sentence: an env var, a `--flag`, a config
    key, a connector."""
    out = []
    for span in _SPAN.finditer(sentence):
        text = span.group(1) or span.group(2)
        found = _ENV.findall(text) + _FLAG.findall(text) + _CONNECTOR.findall(text)
        if not found:
            found = [m.group(1) for m in _KEY.finditer(text) if not text.startswith("-")]
        out.append((span.start(), span.end(), [n for n in found if n not in CONTAINERS]))
    return out


def retired_names(text: str) -> tuple[list[str], list[str]]:
    """(old, new): the names a bullet retires and the ones it says to use, sentence by sentence. A name is new
    after a word that introduces the replacement (`use`, `renamed to`, `split into`, …) or right before "is
    recommended"/"as a replacement"; the others are old only in a sentence that says the thing is gone."""
    old: list[str] = []
    new: list[str] = []
    for sentence in re.split(r"(?<=[.;])\s+", text):
        cut = _INSTEAD.search(sentence)
        gone = _GONE.search(sentence)
        for start, end, names in _spans(sentence):
            if (cut and start >= cut.start()) or _RECOMMENDED.match(sentence[end:end + 40].lstrip()):
                new += names
            elif gone:
                old += names
    new = list(dict.fromkeys(new))
    return [n for n in dict.fromkeys(old) if n not in new], new


def flag_dest(name: str) -> Optional[str]:
    """`--kv-quant-dtype` -> kv_quant_dtype (the dest vLLM's argparse gives it); None for another kind of name."""
    return name[2:].replace("-", "_") if name.startswith("--") else None
