"""One place for parsing and ordering every version string an Ascend stack shows, and for version specifiers.

Ascend strings are not PEP 440, so `packaging` alone cannot order them. Every string is turned into one sort key
(a token list) so that CANN, HDK driver, firmware, torch_npu and vLLM versions all live in the same algebra.
PEP 440 strings are read with `packaging` (so `2.7.1.dev20250724`, `2.9.0.post1+git4c901a4`, `0.11.0rc3`,
`0.1.dev1+gbdb2cdd` mean exactly what pip thinks); Ascend strings (`8.0.RC3`, `24.1.rc3.7`, `8.1.RC1.alpha001`,
`8.1.T6`, `24.1.rc1.b030`) are tokenized here into the same key.

Ordering (tags are case-insensitive; a leading `v` is dropped):

* release numbers compare numerically and trailing zeros do not count: `8.0 == 8.0.0` (PEP 440).
* after the release, tags rank  dev < T (internal test build) < alpha < beta < RC < (final) < post.
  So `8.0.RC3 < 8.0.0 < 8.0.1 < 8.1.T6 < 8.1.RC1.alpha001 < 8.1.RC1 < 8.1.RC2 < 8.1.0`, and
  `9.2.0-beta.2 < 9.2.0`, `2.7.1.dev20250724 < 2.7.1 < 2.7.1.post1`.
* a number after a tag is a patch of that tag: `24.1.rc3 < 24.1.rc3.7 < 24.1.rc4 < 24.1.0`.
* a tag after a tag qualifies the first: `8.1.RC1.alpha001` is an alpha build of 8.1.RC1, so it sorts below it.
* a build suffix `.BNNN` (upper-case B, or lower-case b with 3+ digits: `24.1.rc1.b030`, `21.0.4.B030`) and a
  docker-tag suffix `_NNNN` (`9.2.0_20260930220649`) are builds *of the version before them*: they sort right after
  it (by build number) and `==24.1.rc1` matches them. (`1.0b2` stays a PEP 440 beta.)
* local labels (`+cpu`, `+git4c901a4`, `+empty`) only break ties, as in PEP 440; `==2.5.1` matches `2.5.1+cpu`.
* `version.cfg` pairs `7.6.0.1.220:8.0.0` order by the public CANN part after the colon (the internal
  number before it is kept as `.internal` and only breaks ties).
* innerversions `V100R001C19SPC001B124` order by their numbers (V, R, C, SPC, B; an absent part is 0);
  compare them only with each other.

Specifiers (`SpecifierSet`) follow PEP 440 with these deliberate differences, because they check installed versions,
not pick ones to install:

* pre-releases are never excluded by default (an installed `8.0.RC3` is what it is).
* a final lower bound with fewer components than the version names a *line*: `>=8.0` admits `8.0.RC2` and
  `8.0.T6` (Ascend puts RCs in the patch slot, before `8.0.0`; a matrix author writing `>=8.0` means "CANN 8.0 or
  newer"), whereas `>=8.0.0` does not admit `8.0.RC2`, and `>=9.2.0` does not admit `9.2.0-beta.2`. Symmetrically
  `<8.1` excludes `8.1.RC1` and `<3.13` excludes `3.13.0rc1` (PEP 440 also does the latter).
  A tag written as its own dotted segment (`8.0.RC2`, `24.1.rc3`) takes a component slot; `-beta.2`, `rc1`
  glued to a number and `.devN` qualify the release before them and take none.
* `==X.Y.*` matches on release numbers (`==8.5.*` admits 8.5.0, 8.5.1, 8.5.RC1); `==26.0.RC1.*` (a tagged prefix)
  admits that RC and its patches and builds (26.0.rc1, 26.0.rc1.1, 26.0.RC1.B020), not 26.0.RC10 or 26.0.0.
"""

from __future__ import annotations

import re
from typing import Optional, Union

from packaging.version import InvalidVersion
from packaging.version import Version as _PepVersion

from ascend_doctor.core.errors import ParseError
from ascend_doctor.text.numbers import MAX_DIGITS

__all__ = [
    "Version",
    "SpecifierSet",
    "parse_version",
    "try_parse_version",
    "version_in",
    "cann_version_from_cfg_value",
    "split_cfg_value",
    "parse_innerversion",
    "build_of",
]

# token ranks: the order of tags relative to each other, to the end of a version and to a further number
_DEV, _T, _ALPHA, _BETA, _RC, _END, _POST, _NUM = range(8)
_PRE_RANKS = {_DEV, _T, _ALPHA, _BETA, _RC}
_WORDS = {
    "dev": _DEV,
    "t": _T,
    "a": _ALPHA,
    "alpha": _ALPHA,
    "b": _BETA,
    "beta": _BETA,
    "c": _RC,
    "rc": _RC,
    "pre": _RC,
    "preview": _RC,
    "post": _POST,
    "rev": _POST,
    "r": _POST,
}
_PEP_PRE = {"a": _ALPHA, "b": _BETA, "rc": _RC}

_INNER_RE = re.compile(r"^V(\d+)R(\d+)(?:C(\d+))?(?:SPC(\d+))?(?:B(\d+))?$", re.I)
_BUILD_RE = re.compile(r"[.\-](B\d+|b\d{3,})$")
_LOCAL_RE = re.compile(r"^[A-Za-z0-9]+(?:[.\-_][A-Za-z0-9]+)*$")
# a tag that is its own dotted segment right after the release numbers: 8.0.RC3, 24.1.rc3.7, 8.1.T6
_SLOT_RE = re.compile(r"^\d+(?:\.\d+)*\.(?:rc|t|alpha|beta|a|b|c|pre|preview)(?:\d|\.|$)", re.I)
_PART_RE = re.compile(r"\d+|[A-Za-z]+")
# No version part has this many digits (a docker-tag build stamp has 14); int() of 4,301+ digits even raises.
_LONG_NUMBER = re.compile(r"\d{%d}" % (MAX_DIGITS + 1))


class Version:
    """A parsed version: immutable, hashable, totally ordered; `str(v)` is the original (stripped) text."""

    __slots__ = ("raw", "release", "internal", "local", "build", "_tokens", "_slot", "_key")

    raw: str
    release: tuple
    internal: Optional[str]
    local: Optional[str]
    build: Optional[str]

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise ParseError(f"expected a version string, got {type(text).__name__}")
        raw = text.strip()
        if not raw:
            raise ParseError("expected a version string, got an empty one")
        if _LONG_NUMBER.search(raw):
            raise ParseError(f"expected a version string, got {raw[:40]!r}… (a number of more than {MAX_DIGITS} "
                             "digits)")
        internal = local = build = None
        inner = _INNER_RE.match(raw)
        if inner:
            # fixed positions (V, R, C, SPC, B); an absent part counts as 0 so C13B222 < C13SPC005B246
            release = tuple(int(g or 0) for g in inner.groups())
            tokens: list = []
            slot = False
        else:
            core = raw
            if ":" in core:
                internal, _, core = core.rpartition(":")
                if not internal or not core:
                    raise ParseError(f"expected 'internal:version' (version.cfg), got {raw!r}")
            release, tokens, slot, local, build = _parse_core(core, raw)
        set_ = object.__setattr__
        set_(self, "raw", raw)
        set_(self, "release", release)
        set_(self, "internal", internal)
        set_(self, "local", local)
        set_(self, "build", build)
        set_(self, "_tokens", tuple(tokens))
        set_(self, "_slot", slot)
        stripped = list(release)
        while stripped and stripped[-1] == 0:
            stripped.pop()
        main = tuple((_NUM, n) for n in stripped) + tuple(tokens) + ((_END, 0),)
        build_key = (int(re.sub(r"\D", "", build) or 0),) if build else ()
        internal_key = _safe_key(internal) if internal else ()
        set_(self, "_key", (main, build_key, _local_key(local), internal_key))

    def __setattr__(self, name, value):
        raise AttributeError("Version is immutable")

    def __reduce__(self):
        # immutable slots object: rebuild from the text (pickle, copy, multiprocessing)
        return (Version, (self.raw,))

    def base(self) -> tuple:
        """Numeric release part: `8.0.RC3` -> (8, 0), `24.1.rc3.7` -> (24, 1), `8.0.0` -> (8, 0, 0)."""
        return self.release

    def is_prerelease(self) -> bool:
        """True for RC, alpha/beta, T (internal test) and dev builds, including patches of them (`24.1.rc3.7`)."""
        return any(rank in _PRE_RANKS for rank, _ in self._tokens)

    def is_devrelease(self) -> bool:
        """True for a development build (`0.19.1rc2.dev1265+g…`, as setuptools-scm names a commit past a tag)."""
        return any(rank == _DEV for rank, _ in self._tokens)

    def components(self) -> int:
        """Release numbers, plus one when a tag sits in its own dotted slot (`8.0.RC2` has 3, `2.7.1rc1` has 3)."""
        return len(self.release) + (1 if self._slot else 0)

    @property
    def main_key(self) -> tuple:
        """Ordering key without build, local label and internal number (what `==` compares)."""
        return self._key[0]

    def __str__(self) -> str:
        return self.raw

    def __repr__(self) -> str:
        return f"Version({self.raw!r})"

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key == other._key

    def __ne__(self, other) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key != other._key

    def __lt__(self, other) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key < other._key

    def __le__(self, other) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key <= other._key

    def __gt__(self, other) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key > other._key

    def __ge__(self, other) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key >= other._key


def _safe_key(text: str) -> tuple:
    """The key of `text` as a version, or — for an internal number that is no version (`V:8.0.0`) — a key of the same
    shape that sorts below every version and then by its text, so any two keys compare without a TypeError."""
    try:
        return parse_version(text)._key
    except ParseError:
        return (((-1, 0),), (), ((0, 0, text),), ())


def _local_key(local: Optional[str]) -> tuple:
    # PEP 440: no label < any label; numeric segments sort above alphanumeric ones.
    if not local:
        return ()
    out = []
    for seg in re.split(r"[.\-_]", local.lower()):
        out.append((1, int(seg), "") if seg.isdigit() else (0, 0, seg))
    return tuple(out)


def _parse_core(core: str, raw: str):
    """(release, tokens, slot, local, build) of a version without innerversion/colon forms."""
    if core[:1] in "vV" and core[1:2].isdigit():
        core = core[1:]
    local = build = None
    if "+" in core:
        core, _, local = core.partition("+")
        if not _LOCAL_RE.match(local):
            raise ParseError(f"expected a version like 8.0.RC3 or 2.5.1+cpu, got {raw!r} (bad local label)")
    if "_" in core:
        core, _, build = core.partition("_")
        if not re.fullmatch(r"[A-Za-z0-9.]+", build):
            raise ParseError(f"expected a version like 8.0.RC3, got {raw!r} (bad build suffix)")
    m = _BUILD_RE.search(core)
    if m:
        build = m.group(1) if build is None else f"{m.group(1)}_{build}"
        core = core[: m.start()]
    if not core or not core[0].isdigit():
        raise ParseError(f"expected a version starting with a number (like 8.0.RC3 or 2.5.1), got {raw!r}")
    slot = bool(_SLOT_RE.match(core))
    try:
        pv = _PepVersion(core)
    except InvalidVersion:
        pv = None
    if pv is not None and pv.epoch == 0:
        tokens = []
        if pv.pre:
            tokens.append((_PEP_PRE[pv.pre[0]], pv.pre[1]))
        if pv.post is not None:
            tokens.append((_POST, pv.post))
        if pv.dev is not None:
            tokens.append((_DEV, pv.dev))
        return tuple(pv.release), tokens, slot, local, build
    return _tokenize(core, raw) + (slot, local, build)


def _tokenize(core: str, raw: str):
    """Ascend forms PEP 440 rejects: `24.1.rc3.7`, `8.1.RC1.alpha001`, `8.1.T6`, `7.6.T13.0`."""
    parts: list = []
    for seg in re.split(r"[.\-]", core):
        pieces = _PART_RE.findall(seg)
        if not seg or "".join(pieces) != seg:
            raise ParseError(f"expected a version like 8.0.RC3 or 24.1.rc3.7, got {raw!r}")
        parts.extend(pieces)
    release = []
    i = 0
    while i < len(parts) and parts[i].isdigit():
        release.append(int(parts[i]))
        i += 1
    if not release:
        raise ParseError(f"expected a version starting with a number, got {raw!r}")
    tokens = []
    while i < len(parts):
        p = parts[i]
        if p.isdigit():
            tokens.append((_NUM, int(p)))
            i += 1
            continue
        rank = _WORDS.get(p.lower())
        if rank is None:
            raise ParseError(f"expected a version like 8.0.RC3 or 24.1.rc3.7, got {raw!r} (unknown tag {p!r})")
        num = 0
        if i + 1 < len(parts) and parts[i + 1].isdigit():
            num = int(parts[i + 1])
            i += 1
        tokens.append((rank, num))
        i += 1
    return tuple(release), tokens


_PARSED: dict = {}  # text -> Version; a static check parses the same few hundred strings ~1,500 times


def parse_version(text: str) -> Version:
    """Parse any version string this tool meets; raises ParseError on garbage. Memoised (Versions are immutable)."""
    v = _PARSED.get(text) if isinstance(text, str) else None
    if v is None:
        v = Version(text)
        if len(_PARSED) > 20000:
            _PARSED.clear()
        _PARSED[text] = v
    return v


def try_parse_version(text: Optional[str]) -> Optional[Version]:
    """Like parse_version, but None for None, empty or unparseable text."""
    if text is None:
        return None
    try:
        return parse_version(text)
    except ParseError:
        return None


def build_of(installed: Union[str, Version], release: Union[str, Version]) -> bool:
    """True when `installed` is a build of the final `release` that official images ship under another name: the
    same release numbers with only dev/post segments or a local label added (`3.2.0.dev20260322` and
    `2.9.0.post1+git4c901a4` are builds of 3.2.0 and 2.9.0; `3.2.0rc1` and `3.2.1` are not)."""
    v, r = _as_version(installed), _as_version(release)
    if r._tokens or r.build or r.local:
        return False
    if _stripped(v.release) != _stripped(r.release):
        return False
    return all(rank in (_DEV, _POST) for rank, _ in v._tokens)


def final_of(installed: Union[str, Version], release: Union[str, Version]) -> bool:
    """True when `installed` is the final release the pre-release `release` previews: CANN 9.1.0 for 9.1.0-beta.1
    (the -310p image of vllm-ascend 0.20.2rc1 ships the beta; a host upgraded to the final runs what it previewed)."""
    v, r = _as_version(installed), _as_version(release)
    return r.is_prerelease() and not v.is_prerelease() and _stripped(v.release) == _stripped(r.release) \
        and not v._tokens


def _as_version(v: Union[str, Version]) -> Version:
    return v if isinstance(v, Version) else parse_version(v)


def _padded(rel: tuple, n: int) -> tuple:
    return tuple(rel[:n]) + (0,) * max(0, n - len(rel))


def _stripped(rel: tuple) -> tuple:
    out = list(rel)
    while out and out[-1] == 0:
        out.pop()
    return tuple(out)


def _is_final(v: Version) -> bool:
    return not v._tokens and v.build is None and v.local is None


def _in_line(v: Version, bound: Version) -> bool:
    """`v` is a pre-release inside the line a shorter final bound names (8.0.RC2 in the 8.0 line)."""
    n = len(bound.release)
    return (
        _is_final(bound)
        and v.is_prerelease()
        and len(v.release) >= n
        and v.release[:n] == bound.release
        and v.components() > n
    )


def _pre_of(v: Version, bound: Version) -> bool:
    """`v` is a pre-release of exactly `bound` (PEP 440's rule for `<`)."""
    if not v.is_prerelease() or bound.is_prerelease():
        return False
    n = max(len(v.release), len(bound.release))
    return _padded(v.release, n) == _padded(bound.release, n)


_CLAUSE_RE = re.compile(r"^(===|==|!=|~=|>=|<=|>|<)?\s*(\S+)$")


class _Clause:
    __slots__ = ("op", "text", "bound", "prefix", "tag_prefix")

    def __init__(self, text: str, whole: str):
        m = _CLAUSE_RE.match(text)
        if not m:
            raise ParseError(f"expected a version specifier like '>=8.0.RC1' or '==8.5.*', got {whole!r}")
        self.op = m.group(1) or "=="
        vtext = m.group(2)
        self.text = text
        self.prefix: Optional[tuple] = None
        self.tag_prefix: Optional[Version] = None
        self.bound: Optional[Version] = None
        if self.op == "===":
            return
        if vtext.endswith(".*"):
            if self.op not in ("==", "!="):
                raise ParseError(f"expected '.*' only after == or != in a specifier, got {whole!r}")
            head = vtext[:-2]
            if head[:1] in "vV":
                head = head[1:]
            if re.fullmatch(r"\d+(?:\.\d+)*", head):
                self.prefix = tuple(int(x) for x in head.split("."))
                return
            # `==26.0.RC1.*`: that RC and every patch/build of it (26.0.rc1.1), not 26.0.RC10 or 26.0.0
            try:
                self.tag_prefix = parse_version(head)
            except ParseError:
                raise ParseError(f"expected a version before '.*' in a specifier, got {whole!r}") from None
            if not self.tag_prefix._tokens or self.tag_prefix.local or self.tag_prefix.build or \
                    self.tag_prefix.internal:
                raise ParseError(f"expected numbers or a tagged version (8.5.RC1) before '.*', got {whole!r}")
            return
        try:
            self.bound = parse_version(vtext)
        except ParseError as exc:
            raise ParseError(f"expected a version specifier like '>=8.0.RC1', got {whole!r}: {exc}") from None
        if self.op == "~=" and len(self.bound.release) < 2:
            raise ParseError(f"expected at least two release numbers after '~=', got {whole!r}")

    def contains(self, v: Version) -> bool:
        op = self.op
        if op == "===":
            return v.raw == self.text[3:].strip()
        if self.prefix is not None:
            hit = _padded(v.release, len(self.prefix)) == self.prefix
            return hit if op == "==" else not hit
        if self.tag_prefix is not None:
            t = self.tag_prefix
            n = len(t._tokens)
            hit = _stripped(v.release) == _stripped(t.release) and v._tokens[:n] == t._tokens
            return hit if op == "==" else not hit
        b = self.bound
        assert b is not None
        if op in ("==", "!="):
            if b.local is not None or b.build is not None:
                hit = v.main_key == b.main_key and (b.local is None or v.local == b.local) and (
                    b.build is None or v.build == b.build
                )
            else:
                hit = v.main_key == b.main_key
            return hit if op == "==" else not hit
        if op == ">=":
            return v.main_key >= b.main_key or _in_line(v, b)
        if op == ">":
            return v.main_key > b.main_key
        if op == "<=":
            return v.main_key <= b.main_key
        if op == "<":
            return v.main_key < b.main_key and not _in_line(v, b) and not _pre_of(v, b)
        if op == "~=":
            n = len(b.release) - 1
            return (v.main_key >= b.main_key or _in_line(v, b)) and _padded(v.release, n) == b.release[:n]
        raise AssertionError(op)

    def __str__(self) -> str:
        return self.text


class SpecifierSet:
    """Comma-joined version clauses, all of which must hold ("" or "*" matches everything); see module docstring.

    `a || b` holds when either comma-joined group does: a fix shipped in a development build of the version a release
    pins (`triton-ascend==3.2.0.dev20260322` after the release pinned the final 3.2.0, built before the fix) leaves
    `<3.2.0.dev20260322 || ==3.2.0` affected, which no single PEP 440 range says (a .dev build sorts before its final).
    """

    def __init__(self, spec: str):
        if spec is None:
            spec = ""
        self.spec = spec.strip()
        self.clauses: list = []
        self.alternatives: list = []
        if self.spec in ("", "*"):
            return
        if "||" in self.spec:
            parts = self.spec.split("||")
            if any(not p.strip() or p.strip() == "*" for p in parts):
                raise ParseError(f"expected a version specifier on each side of '||', got {spec!r}")
            self.alternatives = [SpecifierSet(p) for p in parts]
            return
        for part in self.spec.split(","):
            part = part.strip()
            if not part:
                raise ParseError(f"expected a version specifier like '>=3.10,<3.13', got {spec!r} (empty clause)")
            self.clauses.append(_Clause(part, spec))

    def contains(self, version: Union[str, Version]) -> bool:
        """Whether `version` satisfies every clause; an unparseable version string raises ParseError."""
        v = _as_version(version)
        if self.alternatives:
            return any(a.contains(v) for a in self.alternatives)
        return all(c.contains(v) for c in self.clauses)

    def __contains__(self, version) -> bool:
        return self.contains(version)

    def release_line(self) -> Optional[tuple]:
        """The major.minor its first clause names (`==8.2.RC1` -> (8, 2), `>=24.1.rc2,<24.1.1` -> (24, 1),
        `==25.0.*` -> (25, 0)); None for an empty or `===` set."""
        clauses = self.alternatives[0].clauses if self.alternatives else self.clauses
        if not clauses:
            return None
        c = clauses[0]
        if c.prefix is not None:
            return tuple(c.prefix[:2])
        named = c.tag_prefix or c.bound
        return tuple(named.release[:2]) if named is not None else None

    def __str__(self) -> str:
        if self.alternatives:
            return " || ".join(str(a) for a in self.alternatives)
        return ",".join(str(c) for c in self.clauses) if self.clauses else self.spec

    def __repr__(self) -> str:
        return f"SpecifierSet({str(self)!r})"


def version_in(version: Union[str, Version], spec: str) -> bool:
    """Shorthand for SpecifierSet(spec).contains(version)."""
    return SpecifierSet(spec).contains(version)


def release_row(rows, version: str, *, older: bool = True, paired: Optional[str] = None):
    """(row, how) of a table whose rows each record one release (`row.version`): the release's own row ("exact"),
    else the row of `paired` ("paired": the release that stands for a development build named after a stale tag,
    ascend_doctor.knowledge.release_names.paired_release), else with `older` the nearest older recorded one
    ("nearest older"); (None, "") when there is none or `version` is not a version."""
    v = try_parse_version(version)
    if v is None:
        return None, ""
    ordered = sorted(rows, key=lambda r: parse_version(r.version))
    for r in ordered:
        if parse_version(r.version).main_key == v.main_key:
            return r, "exact"
    p = try_parse_version(paired) if paired else None
    for r in ordered if p is not None else ():
        if parse_version(r.version).main_key == p.main_key:
            return r, "paired"
    before = [r for r in ordered if parse_version(r.version) < v] if older else []
    return (before[-1], "nearest older") if before else (None, "")


def split_cfg_value(value: str) -> tuple[Optional[str], Optional[str]]:
    """(internal build, CANN version) of a version.cfg value: `[7.6.0.1.220:8.0.0]` -> ("7.6.0.1.220", "8.0.0").

    The CANN version is the text after the last `:` inside the brackets (matrix-facts §3.2b); the old form
    `[1.84.15.1.310:6.0.1]` reads the same way; a value without `:` is all CANN version. Nothing is validated here.
    """
    text = (value or "").strip()
    start = text.find("[")
    end = text.find("]", start + 1) if start >= 0 else -1
    if end >= 0:
        text = text[start + 1:end].strip()
    internal, sep, cann = text.rpartition(":")
    return (internal.strip() or None) if sep else None, cann.strip() or None


def cann_version_from_cfg_value(value: str) -> str:
    """The CANN version in a version.cfg value: `[7.6.0.1.220:8.0.0]` or `7.6.0.1.220:8.0.0` -> `8.0.0`."""
    cann = split_cfg_value(value)[1]
    if not cann:
        raise ParseError(f"expected a version.cfg value like '[7.6.0.1.220:8.0.0]', got {value!r}")
    Version(cann)  # validate
    return cann


def parse_innerversion(text: str) -> dict:
    """`V100R001C19SPC001B124` -> {"V":100,"R":1,"C":19,"SPC":1,"B":124}; absent parts are left out."""
    m = _INNER_RE.match((text or "").strip())
    if not m:
        raise ParseError(f"expected an innerversion like 'V100R001C19SPC001B124', got {text!r}")
    return {k: int(g) for k, g in zip(("V", "R", "C", "SPC", "B"), m.groups()) if g is not None}
