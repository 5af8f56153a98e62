"""Error-signature catalogue (the `signatures/error-signatures` table) and the log matcher of `diagnose`.

Each signature is a Python regex matched against single lines of a log (re.MULTILINE semantics: `^`/`$` are the
line's ends). Specific signatures decide the diagnosis; fallback signatures (generic decoders such as "NPU function
error, error code is N") are reported only when no specific error/warning signature matched.

Speed: running 179 regexes over a 10 MB log one after the other takes over half a minute (most patterns start with
`\\b` or an alternation, which defeats re's literal-prefix scan). So every pattern is reduced at load time to a set of
literal strings one of which any match must contain (each cut to its substring starting with the rarest character); a
few trie-shaped regexes of those literals find the candidate lines, and only those lines are matched against the
patterns whose literals they contain. Patterns without a usable literal get their own scanner. The result is the same
as matching every pattern on every line (tested); about 0.7 s per 10 MB (bench/diagnose_speed.py).
"""

from __future__ import annotations

import re
from typing import Annotated, Dict, FrozenSet, List, Literal, Optional, Tuple

from pydantic import AfterValidator, Field, PrivateAttr, model_validator

from ascend_doctor.core.model import Model

try:  # Python 3.11+
    from re import _constants as _sre_c  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.9/3.10
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

KINDS = ("error", "warning", "info", "positive")
_EXCERPT_MAX = 300
_MIN_LITERAL = 3  # shorter required literals ("E", "ret") would make almost every line a candidate


def _compiles(v: str) -> str:
    try:
        re.compile(v, re.MULTILINE)
    except re.error as exc:
        raise ValueError(f"pattern does not compile: {exc}") from None
    return v


def _source_not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("source must name where the signature comes from")
    return v


def _thread_url(url: str) -> str:
    if not re.match(r"^https://github\.com/[\w.-]+/[\w.-]+/(issues|pull|discussions)/\d+$", url):
        raise ValueError(f"not a GitHub thread URL: {url!r}")
    return url


class Signature(Model, extra="forbid", frozen=True):
    """One known log signature: what it means and what to change."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    family: str = Field(min_length=1)
    kind: Literal["error", "warning", "info", "positive"]
    priority: Literal["specific", "fallback"]
    component: str = Field(min_length=1)
    code: Optional[str] = None
    name: Optional[str] = None  # vendor symbol, e.g. ACL_ERROR_RT_INVALID_DEVICEID
    pattern: Annotated[str, AfterValidator(_compiles)] = Field(min_length=1)
    meaning: str = Field(min_length=1)
    fix: str = Field(min_length=1)
    source: Annotated[str, AfterValidator(_source_not_blank)] = Field(min_length=1)
    confidence: Literal["vendor-doc", "vendor-code", "issue", "inferred"]
    note: str = ""
    # Mined from the trackers: the threads that confirmed cause and fix, the releases it applies to, the check that
    # judges the cause before launch (triage makes that check's failure the root cause of this line), and lines that
    # must match (`example`, verbatim from a thread) and must not (`near_miss`): tests/signatures hold both to it.
    threads: List[Annotated[str, AfterValidator(_thread_url)]] = []
    applies_to: str = ""
    check: Optional[str] = Field(None, pattern=r"^[A-Z]+\d{3}$")
    example: List[str] = []
    near_miss: List[str] = []
    # The line only tags or wraps another error (torch_npu's ERR99999 on any Python exception, vLLM's "EngineCore
    # failed to start"): reported, but never triage's answer while a traceback in the paste names the error itself.
    wrapper: bool = False
    # Signatures that read the same line less precisely (the vendor facts' generic pattern, kept as it is): a line
    # this one matches is not theirs (EZ1001 "does not support opType" is no missing kernels package); their other
    # lines still are.
    supersedes: List[str] = []


class Match(Model, frozen=True):
    """A signature found in a log: the first line that matched (trimmed) and its 1-based line number."""

    signature: Signature
    excerpt: str
    line: int = 0
    also_seen: bool = False  # a generic (fallback) code beside a specific match: kept, but not the explanation


# ---------------------------------------------------------------------------------------------------- the table --
class SignatureFile(Model, extra="forbid"):
    """The catalogue as the knowledge door loads it (shipped rows and `--matrix` layers, or a `diagnose --catalogue`
    file), with its compiled matcher built on first use."""

    schema_version: Literal[1]
    updated: str
    signature: List[Signature] = Field(min_length=1)
    _compiled: Optional["_Compiled"] = PrivateAttr(None)

    @model_validator(mode="after")
    def _superseded_exist(self):
        ids = {s.id for s in self.signature}
        for s in self.signature:
            unknown = [x for x in s.supersedes if x not in ids]
            if unknown:
                raise ValueError(f"signature {s.id} supersedes unknown signature(s) {', '.join(unknown)}")
        return self

    def matcher(self) -> "_Compiled":
        if self._compiled is None:
            self._compiled = _Compiled(tuple(self.signature))
        return self._compiled


# --------------------------------------------------------------------------------------- literal prefilter --
# Characters that are rare in ordinary log text. re scans for a set of words fastest when their first characters are
# rare (it skips positions whose character cannot start any word), so each required literal is replaced by its
# substring (>= _MIN_LITERAL long) that starts with the rarest character: any substring of a required literal is
# itself required.
_RARE = frozenset("ABCDFGHJKLMNOQRSTUVXYZ_[](){}<>=:;.-/\\'\"!?#%&*+|~`@$^,")


def _rank(ch: str) -> int:
    return 0 if ch in _RARE else 1 if ch.isdigit() or ch.isupper() else 2


def _anchor(word: str) -> str:
    """The substring of `word` that is cheapest to scan for: rarest first character, then longest."""
    if len(word) <= _MIN_LITERAL:
        return word
    subs = [word[k:] for k in range(len(word) - _MIN_LITERAL + 1)]
    return min(subs, key=lambda s: (_rank(s[0]), -len(s)))


def _quality(cand: FrozenSet[str]) -> Tuple[int, int]:
    """Higher is better: every anchor long enough, rare first characters, then length."""
    anchors = [_anchor(w) for w in cand]
    return (-max(_rank(a[0]) for a in anchors), min(len(a) for a in anchors))


def _required_literals(items) -> Optional[FrozenSet[str]]:
    """A set of strings one of which every match of the parsed (sub)pattern contains, or None if none is known."""
    best: Optional[FrozenSet[str]] = None

    def consider(cand: Optional[FrozenSet[str]]) -> None:
        nonlocal best
        if not cand or min(map(len, cand)) < _MIN_LITERAL:
            return
        if best is None or _quality(cand) > _quality(best):
            best = cand

    run: List[str] = []
    for op, av in items:
        if op is _sre_c.LITERAL:
            run.append(chr(av))
            continue
        consider(frozenset({"".join(run)}) if run else None)
        run = []
        if op is _sre_c.SUBPATTERN:
            _group, add_flags, _del_flags, sub = av
            if not add_flags & _sre_c.SRE_FLAG_IGNORECASE:
                consider(_required_literals(sub))
        elif op is _sre_c.BRANCH:
            alts = [_required_literals(a) for a in av[1]]
            if all(alts):
                consider(frozenset().union(*alts))  # type: ignore[arg-type]
        elif op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT) or op is getattr(_sre_c, "POSSESSIVE_REPEAT", None):
            lo, _hi, sub = av
            if lo >= 1:
                consider(_required_literals(sub))
        elif op is getattr(_sre_c, "ATOMIC_GROUP", None):
            consider(_required_literals(av))
        # anything else (classes, anchors, lookarounds, backrefs) ends the literal run
    consider(frozenset({"".join(run)}) if run else None)
    return best


def _literals_for(pattern: str) -> Tuple[Optional[FrozenSet[str]], bool]:
    """(anchors one of which every match contains, or None; whether they are compared case-insensitively)."""
    parsed = _sre_parse.parse(pattern, re.MULTILINE)
    ci = bool(parsed.state.flags & _sre_c.SRE_FLAG_IGNORECASE)
    lits = _required_literals(parsed)
    if not lits:
        return None, ci
    anchors = frozenset(_anchor(w) for w in lits)
    return (frozenset(a.lower() for a in anchors) if ci else anchors), ci


def _trie_regex(words) -> str:
    """One regex matching any of `words`, shaped as a trie so re does not try every word at every position."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:  # a word ends here; the longest word at a position is preferred (greedy ?)
            return "(?:" + body + ")?"
        return body

    return build(trie)


_LEADING_ASSERTIONS = re.compile(r"^(?:\\b|\(\?<[!=][^()]*\))+")


class _Compiled:
    """The catalogue compiled for matching: per-signature regexes, literal sets and the candidate-line scanners."""

    def __init__(self, sigs: Tuple[Signature, ...]):
        self.sigs = sigs
        self.regex = [re.compile(s.pattern, re.MULTILINE) for s in sigs]
        index = {s.id: i for i, s in enumerate(sigs)}
        self.superseded_by: Dict[int, List[int]] = {}  # signature -> the signatures that read its lines better
        for i, s in enumerate(sigs):
            for other in s.supersedes:
                if other in index:
                    self.superseded_by.setdefault(index[other], []).append(i)
        self.unfiltered: List[int] = []  # signatures without a usable literal: tried on every candidate line
        self.by_literal: Dict[Tuple[bool, str], List[int]] = {}  # (case-insensitive?, literal) -> signatures
        self.scanners: List[Tuple[re.Pattern, bool]] = []  # (regex, run on the lower-cased text?)
        words: Dict[bool, set] = {False: set(), True: set()}
        for i, s in enumerate(sigs):
            lits, ci = _literals_for(s.pattern)
            if lits is None:
                self.unfiltered.append(i)
                # Scan with the pattern itself minus leading zero-width assertions: a looser pattern finds a
                # superset of lines, and re can then use its fast first-character scan.
                loose = _LEADING_ASSERTIONS.sub("", s.pattern) or s.pattern
                try:
                    self.scanners.append((re.compile(loose, re.MULTILINE), False))
                except re.error:
                    self.scanners.append((self.regex[i], False))
                continue
            for w in lits:
                self.by_literal.setdefault((ci, w), []).append(i)
            words[ci] |= lits
        # Which literals are present on a candidate line: a zero-width lookahead finds, at every position, the
        # longest literal starting there; the shorter literals starting there are its prefixes.
        self.present: Dict[bool, Optional[re.Pattern]] = {}
        self.prefixes: Dict[Tuple[bool, str], List[str]] = {}
        self.case_blind_literals = words[True]  # the case-insensitive literals (searched in the lower-cased text)
        self._blind_memo: Dict[re.Pattern, re.Pattern] = {}
        for ci in (False, True):
            ws = words[ci]
            if not ws:
                self.present[ci] = None
                continue
            # Case-insensitive literals are lower-cased; they are searched in the lower-cased text. Words starting
            # with a common character get one scanner per first character (re then runs its fast single-character
            # prefix scan) instead of widening the rare-character scanner to nearly every position.
            rare = {w for w in ws if _rank(w[0]) < 2}
            if rare:
                self.scanners.append((re.compile(_trie_regex(rare)), ci))
            for first in sorted({w[0] for w in ws - rare}):
                self.scanners.append((re.compile(_trie_regex({w for w in ws - rare if w[0] == first})), ci))
            self.present[ci] = re.compile("(?=(" + _trie_regex(ws) + "))")
            for w in ws:
                self.prefixes[(ci, w)] = [w[:k] for k in range(1, len(w) + 1) if w[:k] in ws]

    def candidate_lines(self, text: str) -> List[int]:
        """Sorted start offsets of the lines on which some signature may match."""
        starts: set = set()
        for sc, lower in self.scanners:
            if not lower:
                _scan(sc, text, text, 0, starts)
        case_blind = [sc for sc, lower in self.scanners if lower]
        if not case_blind:
            return sorted(starts)
        # The lower-cased text is searched a chunk of whole lines at a time: str.lower() first allocates three code
        # points per character (120 MB for a 10 MB paste holding one emoji), and a literal holding no newline never
        # crosses a line boundary.
        size = _LOWER_CHUNK if not any("\n" in w for w in self.case_blind_literals) else max(len(text), 1)
        for base, chunk in _line_chunks(text, size):
            low = chunk.lower()
            if len(low) != len(chunk):  # a few characters lower-case to two; offsets would shift: search case-blind
                for sc in case_blind:
                    _scan(self._blind(sc), chunk, chunk, base, starts)
                continue
            for sc in case_blind:
                _scan(sc, low, chunk, base, starts)
        return sorted(starts)

    def _blind(self, sc: re.Pattern) -> re.Pattern:
        if sc not in self._blind_memo:
            self._blind_memo[sc] = re.compile(sc.pattern, re.IGNORECASE)
        return self._blind_memo[sc]

    def _suspects(self, line: str) -> List[int]:
        """Signatures worth running on this line: those with a literal present, plus the unfiltered ones."""
        out = set(self.unfiltered)
        for ci in (False, True):
            rx = self.present[ci]
            if rx is None:
                continue
            seen = set()
            for m in rx.finditer(line.lower() if ci else line):
                w = m.group(1)
                if w in seen:
                    continue
                seen.add(w)
                for p in self.prefixes[(ci, w)]:
                    out.update(self.by_literal.get((ci, p), ()))
        return sorted(out)

    def first_matches(self, text: str) -> Dict[int, Tuple[int, str, int]]:
        """signature index -> (offset of its first matching line, that line, column of the match)."""
        found: Dict[int, Tuple[int, str, int]] = {}
        done: set = set()  # a line seen before matched then what it matches now: logs repeat their lines
        for start in self.candidate_lines(text):
            if len(found) == len(self.sigs):
                break
            end = text.find("\n", start)
            line = text[start:] if end == -1 else text[start:end]
            if line.endswith("\r"):
                line = line[:-1]
            if line in done:
                continue
            done.add(line)
            for i in self._suspects(line):
                if i not in found:
                    m = self.regex[i].search(line)
                    if m and not any(self.regex[k].search(line) for k in self.superseded_by.get(i, ())):
                        found[i] = (start, line, m.start())
        return found


_LOWER_CHUNK = 1 << 18  # characters of the paste lower-cased at once


def _line_chunks(text: str, size: int):
    """(offset, chunk) of `text` in pieces of about `size` characters that end after a newline (or at the end)."""
    i, n = 0, len(text)
    while i < n:
        j = min(n, i + size)
        if j < n:
            nl = text.rfind("\n", i, j)
            j = nl + 1 if nl >= i else (text.find("\n", j) + 1 or n)
        yield i, text[i:j]
        i = j


def _scan(sc: re.Pattern, hay: str, text: str, base: int, starts: set) -> None:
    """Add to `starts` (offsets in the whole paste, `text` beginning at `base`) the start of every line of `text`
    on which `sc` matches in `hay` (`text` itself or its lower-cased copy, the same length)."""
    pos, n = 0, len(hay)
    while pos <= n:
        m = sc.search(hay, pos)
        if m is None:
            break
        a, b = m.span()
        start = text.rfind("\n", 0, a) + 1
        while True:  # a match may span lines (\s* crosses '\n'): each spanned line is a candidate
            starts.add(base + start)
            nl = text.find("\n", start)
            if nl == -1 or nl >= b:
                break
            start = nl + 1
        end = text.find("\n", max(a, b - 1))
        pos = n + 1 if end == -1 else end + 1


def _trim(line: str, col: int) -> str:
    """The line without surrounding blanks; a long line is cut to a window that keeps the match in view."""
    s = line.strip()
    if len(s) <= _EXCERPT_MAX:
        return s
    col = max(0, col - (len(line) - len(line.lstrip())))
    a = max(0, min(col - _EXCERPT_MAX // 3, len(s) - _EXCERPT_MAX))
    b = a + _EXCERPT_MAX
    return ("…" if a else "") + s[a:b] + ("…" if b < len(s) else "")


def diagnose(text: str, catalogue: SignatureFile, kinds: Tuple[str, ...] = ("error", "warning")) -> List[Match]:
    """Signatures found in `text`, in order of first occurrence. A generic (fallback) signature beside a specific
    error/warning hit is kept with `also_seen` set: every code that appears is reported, the specific one explains."""
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"unknown signature kind {bad[0]!r} (expected one of {', '.join(KINDS)})")
    comp = catalogue.matcher()
    found = comp.first_matches(text)
    specific_hit = any(comp.sigs[i].priority == "specific" and comp.sigs[i].kind in ("error", "warning")
                       for i in found)
    keep = [i for i in found if comp.sigs[i].kind in kinds]
    keep.sort(key=lambda i: (found[i][0], found[i][2], i))
    out: List[Match] = []
    last_off, last_line = 0, 1
    for i in keep:  # line numbers counted incrementally: one pass over the text at most
        off, line, col = found[i]
        last_line += text.count("\n", last_off, off)
        last_off = off
        out.append(Match(signature=comp.sigs[i], excerpt=_trim(line, col), line=last_line,
                         also_seen=specific_hit and comp.sigs[i].priority == "fallback"))
    return out
