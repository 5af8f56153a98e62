"""For an error raised inside vllm-ascend: the fixes of the raising function that the pasted release lacks, from the
project's history (the `signatures/release-fixes` table) — a lead for whoever reads the answer, never the answer.

Why: most errors users paste from inside vllm-ascend are bugs of their release that a later one fixed
(docs/research/triage-2026-12/). The innermost vllm-ascend frame is where the error was raised; the fixes made to that
function after the user's release are where a maintainer looks first (`git log -L`), and the release that carries them
is one to try. Taken as the answer they were measured wrong (0 of 38 labelled pastes, the same README): a function
changes for many reasons, so they are listed apart from the cause, said to be possibly unrelated. Only frames of
vllm_ascend's own files are looked up, innermost first, at most MAX_LOOKED of them; the fixes are ordered by the words
their subject shares with the exception line and the serve command, then by release, and beyond MAX_NAMED only
counted.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.text.versions import try_parse_version

MAX_LOOKED = 3  # vllm-ascend frames looked up, innermost first
MAX_NAMED = 3  # fixes quoted by subject
_FRAME = re.compile(r"(?:^|/)(vllm_ascend/[\w/.-]+\.py):\d+ in ([A-Za-z_]\w*)$")


def ascend_frames(tb: Any) -> list[tuple[str, str]]:
    """(vllm_ascend/path.py, function) of a traceback's frames inside vllm-ascend, innermost first."""
    out = []
    for frame in reversed(getattr(tb, "frames", None) or ([tb.frame] if getattr(tb, "frame", "") else [])):
        m = _FRAME.search(frame.replace("\\", "/"))
        if m and (m.group(1), m.group(2)) not in out:
            out.append((m.group(1), m.group(2)))
    return out


def later_fixes(paste: Any, table: Any) -> Optional[Any]:
    """What to say of the fixes the paste's vllm-ascend lacks for the function that raised its first traceback with
    vllm-ascend frames; None when the paste names no vllm-ascend version, the version is outside the history read,
    or no looked-up function was fixed later."""
    seen = paste.first("vllm_ascend")
    if seen is None or table is None:
        return None
    for tb in paste.tracebacks:
        frames = ascend_frames(tb)[:MAX_LOOKED]
        for path, function in frames:
            found = table.after(seen.value, path, function)
            if found is None:
                return None  # a release the history cannot judge
            if found:
                return _said(seen.value, path, function, _by_relevance(found, tb, paste), table.newest)
        if frames:
            return None  # the first traceback that went through vllm-ascend is the one explained
    return None


_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
# words of every fix subject or every paste: they tell no fix from another
_COMMON = frozenset("""fix fixes fixed bug bugfix hotfix the and for with when not from into error issue issues
support model models add use using case cases some which that this are was can cannot should""".split())


def _words(text: str) -> set:
    """The distinctive words of a text (lowercase, three characters or more, minus those every fix or error has)."""
    return set(_WORD.findall(text.lower().replace("_", " ").replace("-", " "))) - _COMMON


def _by_relevance(found: list, tb: Any, paste: Any) -> list:
    """The fixes whose subject shares the most words with the exception line and the serve command first (a
    `torchair_graph_config` command and "Fix … chunked-prefill with torchair"), then the earliest release."""
    context = _words((tb.label or "") + " " + " ".join(getattr(paste, "serve_argv", None) or []))
    return sorted(found, key=lambda f: -len(_words(f.subject) & context))  # stable: the table's order within


def _said(version: str, path: str, function: str, found: list, newest: str):
    named = [T("\"{subject}\" ({where})", subject=f.subject,
               where=T("in vllm-ascend {release}", release=f.first) if f.first
               else T("on main after vllm-ascend {newest}", newest=newest)) for f in found[:MAX_NAMED]]
    more = T(" and {n} more", n=len(found) - MAX_NAMED) if len(found) > MAX_NAMED else ""
    shown = found[:MAX_NAMED]  # the release to try carries every fix named: the highest of theirs
    release = "" if any(not f.first for f in shown) else max((f.first for f in shown), key=try_parse_version)
    step = (T("try vllm-ascend {release} or later (`ascend-doctor matrix pins --vllm-ascend {release}` prints its "
              "stack)", release=release) if release else
            T("the fix is on main only (newer than vllm-ascend {newest}): try the newest release", newest=newest))
    return T("{function} ({path}), where the error was raised, was changed after vllm-ascend {version} by {n} "
             "fix(es) — read them against the error, they may be unrelated: {fixes}{more}; {step}",
             function=function, path=path, version=version, n=len(found), fixes=join("; ", named), more=more,
             step=step)
