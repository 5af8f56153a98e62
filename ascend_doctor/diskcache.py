"""On-disk cache for work that depends only on file contents: the validated shipped matrix.

Why: reading and validating the shipped matrix (five TOML files, ~1,300 version strings) is a third of a static
`check` once pydantic is gone; its result depends only on those files and on the code that validates them. The cache
key is a SHA-256 over both, so an edited matrix, a new release or a changed schema simply misses.

Where: `$ASCEND_DOCTOR_CACHE_DIR`, else `$XDG_CACHE_HOME/ascend-doctor`, else `~/.cache/ascend-doctor`.
`ASCEND_DOCTOR_CACHE_DIR=off` disables it. Everything here fails soft: an unwritable directory, a corrupt or
foreign entry only costs the time of doing the work again. Entries are pickles, so the directory must be the
user's own (it is by default); a file that does not unpickle to what the caller expects is ignored.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path
from typing import Any, Iterable, Optional

ENV = "ASCEND_DOCTOR_CACHE_DIR"


def cache_dir() -> Optional[Path]:
    """The cache directory, or None when caching is off."""
    env = os.environ.get(ENV)
    if env:
        return None if env.strip().lower() in ("off", "0", "none", "") else Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "ascend-doctor"


def content_key(paths: Iterable[Path], salt: str = "") -> Optional[str]:
    """SHA-256 over `salt` and each file's name and bytes; None when a file cannot be read (no caching then)."""
    h = hashlib.sha256(salt.encode())
    for p in paths:
        try:
            data = Path(p).read_bytes()
        except OSError:
            return None
        h.update(b"\0" + str(Path(p).name).encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def load(kind: str, key: Optional[str]) -> Any:
    """The cached value for (`kind`, `key`), or None."""
    d = cache_dir()
    if d is None or key is None:
        return None
    try:
        with open(d / f"{kind}-{key[:40]}.pickle", "rb") as fh:
            stored_key, value = pickle.load(fh)
    except Exception:  # missing, unreadable, truncated, from another Python: all just a miss
        return None
    return value if stored_key == key else None


def store(kind: str, key: Optional[str], value: Any) -> None:
    """Write atomically (temp file + rename); any failure is ignored."""
    d = cache_dir()
    if d is None or key is None:
        return
    import tempfile  # only on a miss

    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{kind}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((key, value), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, d / f"{kind}-{key[:40]}.pickle")
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except Exception:
        return
