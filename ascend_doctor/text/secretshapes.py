"""Secret shapes from a maintained detector: gitleaks' default rule set, read as data, matched the way gitleaks does.

Why not a hand list: a growing list of token shapes in this package always trails the field (#40 item 12 found 21 of
50 planted kinds leaking: Google API keys, Slack webhooks, PEM private keys …). gitleaks (MIT) keeps 200+ rules for
providers' keys, private keys and generic `key = value` assignments, each with the keywords that must be present, an
entropy floor and allowlists; `gitleaks.toml` beside this module is its `config/gitleaks.toml`, unchanged (its
provenance and licence are in `gitleaks.LICENSE`). To update: copy the newer file over it; the test in
tests/security/test_secret_shapes.py checks every rule still compiles and fires on its own kind.

How a rule is applied, as in gitleaks' detector (detect/detect.go):
- it runs only when one of its keywords occurs in the lower-cased text (one scan finds them all);
- the secret is its `secretGroup`, else the first non-empty capture group, else the whole match;
- a rule with an `entropy` keeps a secret only above that Shannon entropy (bits per character), and a `generic-*`
  rule only when the secret holds a digit;
- global and per-rule allowlists (regexes against the secret, the match or its line; stopwords in the secret) drop a
  candidate; criteria about file paths and commits do not apply to text and are not used;
- rules that only apply to file paths are skipped (there is no path here).

The rules are written for Go's RE2: google-re2 runs them as written (Python's `re` rejects 25 of them and, being a
backtracking engine, could take exponential time on the others — every string the doctor prints passes here).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

import re2

RULES_FILE = Path(__file__).with_name("gitleaks.toml")
LINE_WINDOW = 4096  # characters of a match's line an allowlist sees on each side
_SURROGATE = re.compile("[\ud800-\udfff]")


def shannon_entropy(text: str) -> float:
    """Bits per character of `text` (gitleaks' shannonEntropy)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


@dataclass(frozen=True)
class Allow:
    """One allowlist: a candidate it matches is not a secret."""

    regexes: tuple
    stopwords: tuple
    target: str  # secret | match | line
    all_of: bool  # condition = "AND": every criterion given must hold

    def matches(self, secret: str, match: str, line: str) -> bool:
        text = {"match": match, "line": line}.get(self.target, secret)
        tests = []
        if self.regexes:
            tests.append(any(r.search(text) for r in self.regexes))
        if self.stopwords:
            low = secret.lower()
            tests.append(any(w in low for w in self.stopwords))
        if not tests:
            return False
        return all(tests) if self.all_of else any(tests)


@dataclass(frozen=True)
class Rule:
    id: str
    regex: object
    keywords: tuple
    entropy: float
    secret_group: int
    allows: tuple

    def secret_span(self, m) -> Optional[tuple[int, int]]:
        if self.secret_group:
            return m.span(self.secret_group) if m.group(self.secret_group) else None
        for i in range(1, (m.re.groups or 0) + 1):
            if m.group(i):
                return m.span(i)
        return m.span()


def _allow(spec: dict, what: str) -> Optional[Allow]:
    """An allowlist of the file, or None when it only names paths or commits (nothing a text can match)."""
    regexes = tuple(re2.compile(r) for r in spec.get("regexes", []))
    stopwords = tuple(w.lower() for w in spec.get("stopwords", []))
    all_of = str(spec.get("condition", "OR")).upper() == "AND"
    if all_of and (spec.get("paths") or spec.get("commits")):
        return None  # an AND with a path or commit criterion cannot hold for text
    if not regexes and not stopwords:
        return None
    target = spec.get("regexTarget", "secret")
    if target not in ("secret", "match", "line"):
        raise ValueError(f"{what}: unknown regexTarget {target!r}")
    return Allow(regexes, stopwords, target, all_of)


class SecretShapes:
    """The rule set: `spans(text)` gives where its secrets are."""

    def __init__(self, doc: dict):
        self.rules: list[Rule] = []
        for spec in doc.get("rules", []):
            if "regex" not in spec or "path" in spec:
                continue  # a file-name rule, or one that applies to certain paths only
            allows = tuple(a for i, s in enumerate(spec.get("allowlists", []))
                           if (a := _allow(s, f"rule {spec['id']} allowlist {i}")) is not None)
            self.rules.append(Rule(spec["id"], re2.compile(spec["regex"]),
                                   tuple(k.lower() for k in spec.get("keywords", [])),
                                   float(spec.get("entropy", 0.0)), int(spec.get("secretGroup", 0)), allows))
        glob = doc.get("allowlist", {})
        self.allow = _allow({k: v for k, v in glob.items() if k in ("regexes", "stopwords")}, "global allowlist")
        self._words = sorted({k for r in self.rules for k in r.keywords})
        self._keywords = None
        if self._words:
            self._keywords = re2.Set.SearchSet(re2.Options())
            for k in self._words:
                self._keywords.Add(re2.escape(k))
            self._keywords.Compile()
        self._by_keyword: dict[str, list[int]] = {}  # keyword -> indexes of its rules
        self._always: list[Rule] = [r for r in self.rules if not r.keywords]
        self._always_idx = frozenset(i for i, r in enumerate(self.rules) if not r.keywords)
        for i, r in enumerate(self.rules):
            for k in r.keywords:
                self._by_keyword.setdefault(k, []).append(i)

    def candidates(self, low: str) -> list[Rule]:
        """The rules whose keywords occur in `low` (lower-cased text), in file order: one pass of an RE2 set, which
        reports every keyword present, overlapping ones too ("apikey" holds "api" and "key")."""
        words = self._keywords.Match(low) if self._keywords is not None else None  # None: no keyword there
        if not words:  # most text: only the rules without keywords (by index: comparing Rules field by field cost
            return self._always  # 16 us a call, 11.7 s over a 10 MB paste's lines)
        hit = set(self._always_idx)
        for i in words:
            hit.update(self._by_keyword[self._words[i]])
        return [self.rules[i] for i in sorted(hit)]

    def spans(self, text: str, generic: bool = True) -> list[tuple[int, int, str]]:
        """[(start, end, rule id)] of the secrets in `text`, in order, overlaps merged; `generic=False` leaves out
        the `generic-*` rules (`name = value` assignments: in source code those are code)."""
        if not text:
            return []
        # RE2 takes UTF-8: an undecodable byte (a lone surrogate) is swapped for U+FFFD, one character for one, so
        # the offsets still point into `text`.
        scan = _SURROGATE.sub("\ufffd", text)
        found = []
        for rule in self.candidates(scan.lower()):
            if not generic and rule.id.startswith("generic"):
                continue
            for m in rule.regex.finditer(scan):
                span = rule.secret_span(m)
                if span is None or span[0] == span[1]:
                    continue
                secret = scan[span[0]:span[1]]
                if rule.entropy:
                    if shannon_entropy(secret) <= rule.entropy:
                        continue
                    if rule.id.startswith("generic") and not any(c.isdigit() for c in secret):
                        continue
                # The match's line, at most LINE_WINDOW characters each side: a 1 MB line with many matches must not
                # be scanned once per match.
                lo, hi = max(0, m.start() - LINE_WINDOW), min(len(scan), m.end() + LINE_WINDOW)
                line_start = scan.rfind("\n", lo, m.start()) + 1 or lo
                line_end = scan.find("\n", m.end(), hi)
                line = scan[line_start:line_end if line_end >= 0 else hi]
                if self.allow is not None and self.allow.matches(secret, m.group(0), line):
                    continue
                if any(a.matches(secret, m.group(0), line) for a in rule.allows):
                    continue
                found.append((span[0], span[1], rule.id))
        found.sort()
        merged: list[tuple[int, int, str]] = []
        for s, e, rid in found:
            if merged and s <= merged[-1][1]:
                ps, pe, prid = merged[-1]
                merged[-1] = (ps, max(pe, e), prid)
            else:
                merged.append((s, e, rid))
        return merged

    def mask(self, text: str, replacement: str, generic: bool = True) -> str:
        """`text` with each secret span replaced."""
        spans = self.spans(text, generic)
        if not spans:
            return text
        out, last = [], 0
        for s, e, _ in spans:
            out.append(text[last:s])
            out.append(replacement)
            last = e
        out.append(text[last:])
        return "".join(out)


@lru_cache(maxsize=1)
def shapes() -> SecretShapes:
    """The shipped rule set (read once)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    with open(RULES_FILE, "rb") as fh:
        return SecretShapes(tomllib.load(fh))
