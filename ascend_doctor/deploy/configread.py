"""Reading counts out of a config.json: a JSON integer is a count, a bool (`True` is an int in Python), a float or a
string is not — one rule for the architecture and the vision towers."""

from __future__ import annotations

from typing import Optional


def first_int(cfg: dict, *keys: str, default: int = 0) -> int:
    """The first of `keys` whose value is an integer, else `default`."""
    for k in keys:
        v = cfg.get(k)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return default


def opt_int(cfg: dict, key: str) -> Optional[int]:
    """`key`'s value when it is an integer, else None."""
    v = cfg.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None
