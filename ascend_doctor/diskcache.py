"""On-disk cache for work that depends only on file contents: the validated shipped matrix, host policy, allow-list.

Why: reading and validating the shipped matrix (five TOML files, ~1,300 version strings) is ~50 ms of a ~0.3 s static
`check` once pydantic is gone; its result depends only on those files and on the code that validates them. The cache
key covers the bytes of both, so an edited matrix, a new release or a changed schema simply misses.

Where: `$ASCEND_DOCTOR_CACHE_DIR`, else `$XDG_CACHE_HOME/ascend-doctor`, else `~/.cache/ascend-doctor`.
`ASCEND_DOCTOR_CACHE_DIR=off` disables it. Everything here fails soft: an unwritable directory, a corrupt or
foreign entry only costs the time of doing the work again. Entries are pickles: one is read only when this user owns
it and nobody else can write it (see `_trusted`), and one whose stored key differs is ignored. Each kind keeps its
KEEP newest entries.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
import zlib
from typing import Any, Callable, Iterable, Optional

ENV = "ASCEND_DOCTOR_CACHE_DIR"


def cache_dir() -> Optional[Path]:
    """The cache directory, or None when caching is off (or no home directory can be found)."""
    env = os.environ.get(ENV)
    if env:
        return None if env.strip().lower() in ("off", "0", "none") else Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(xdg) if xdg else Path.home() / ".cache"
    except (RuntimeError, KeyError, OSError):  # no HOME and no passwd entry (some containers)
        return None
    return base / "ascend-doctor"


def _trusted(fh) -> bool:
    """Only unpickle an entry this user wrote and nobody else can rewrite (a shared ASCEND_DOCTOR_CACHE_DIR such as
    /tmp must not let another user plant a pickle)."""
    if not hasattr(os, "getuid"):
        return True
    st = os.fstat(fh.fileno())
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def content_key(paths: Iterable[Path], salt: str = "") -> Optional[str]:
    """A key over `salt` and each file's name, size and CRC-32 + Adler-32 of its bytes; None when a file cannot be
    read (no caching then). Not a cryptographic hash, on purpose: the files are our own (an accidental edit must miss,
    nobody forges a collision in their own cache), and importing hashlib alone would cost more than the key."""
    parts = [salt]
    for p in paths:
        try:
            data = Path(p).read_bytes()
        except OSError:
            return None
        parts.append(f"{Path(p).name}:{len(data)}:{zlib.crc32(data):08x}{zlib.adler32(data):08x}")
    return "|".join(parts)


def _entry(d: Path, kind: str, key: str) -> Path:
    return d / f"{kind}-{zlib.crc32(key.encode()):08x}{zlib.adler32(key.encode()):08x}.pickle"


def memo(kind: str, files: Iterable[Path], code: Iterable[str], build: Callable[[], Any]) -> Any:
    """`build()`, or its cached result while `files` and the `code` that reads them (module files) are unchanged.
    Exceptions from `build()` propagate and nothing is stored."""
    salt = f"{sys.version}|" + "|".join(code)
    key = content_key([Path(f) for f in files] + [Path(c) for c in code], salt)
    hit = load(kind, key)
    if hit is not None:
        return hit
    value = build()
    store(kind, key, value)
    return value


def load(kind: str, key: Optional[str]) -> Any:
    """The cached value for (`kind`, `key`), or None."""
    d = cache_dir()
    if d is None or key is None:
        return None
    try:
        with open(_entry(d, kind, key), "rb") as fh:
            if not _trusted(fh):
                return None
            stored_key, value = pickle.load(fh)
    except Exception:  # missing, unreadable, truncated, from another Python: all just a miss
        return None
    return value if stored_key == key else None


KEEP = 4  # entries per kind: a few ascend-doctor or Python versions sharing one home do not evict each other


def _prune(d: Path, kind: str) -> None:
    """Drop all but the KEEP newest entries of `kind` (older ones are for files or code that have since changed)."""
    entries = []
    for path in d.glob(f"{kind}-*.pickle"):
        try:
            entries.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(entries, reverse=True)[KEEP:]:
        try:
            path.unlink()
        except OSError:
            pass


def store(kind: str, key: Optional[str], value: Any) -> None:
    """Write atomically (temp file + rename); any failure is ignored."""
    d = cache_dir()
    if d is None or key is None:
        return
    import tempfile  # only on a miss

    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{kind}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((key, value), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, _entry(d, kind, key))
            _prune(d, kind)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except Exception:
        return
