"""Probes: turn host answers into typed facts.

A probe is `fn(host, ctx) -> fact` registered with `@probe("name")`. It may ask for other facts with
`ctx.fact("other")`. When it cannot establish its fact it raises `FactUnavailable(name, why)`; checks that need
that fact then report `unknown` with the reason. Parsing lives in `ascend_doctor.parsers` as pure functions.
Every module in this package is imported by `load_probes()`, so a new probe module needs no registration.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable

PROBES: dict[str, Callable[..., Any]] = {}


def probe(name: str, min_timeout: "float | Callable[[Any], float]" = 0.0, derived: bool = False,
          collected: bool = True, reads: tuple[str, ...] = ()):
    """Register a probe function under the fact name it produces.

    `min_timeout`: seconds this probe may take even when --probe-timeout is lower (e.g. importing torch_npu in a
    child process legitimately takes several seconds); a callable gets the fact store (its `options` and
    `knowledge`: a minimum set by a flag or a table).
    `derived`: the fact is computed from other facts only, never from the host (`host` is None in a host-less
    store), so `FactStore.given` derives it too — the stack from a paste's versions, the serve command from options.
    `collected`: `collect` runs it (False: a probe that acts on the machine — the compute smoke allocates HBM — runs
    only when a check that needs it is selected).
    `reads`: the other facts it asks the store for — the probe graph. The registry refuses an unknown name or a cycle
    when it loads (ascend_doctor.facts.graph), and the store refuses a read the probe did not declare.
    """

    def deco(func):
        if name in PROBES and PROBES[name] is not func:
            raise RuntimeError(f"duplicate probe {name!r}")
        func.min_timeout = min_timeout
        func.derived = derived
        func.collected = collected
        func.reads = tuple(reads)
        PROBES[name] = func
        return func

    return deco


def derived_probes() -> dict[str, Callable[..., Any]]:
    """The probes that never touch the host (see `probe(derived=True)`)."""
    return {n: f for n, f in load_probes().items() if getattr(f, "derived", False)}


_loaded = False


def load_probes() -> dict[str, Callable[..., Any]]:
    global _loaded
    if not _loaded:
        for mod in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{mod.name}")
        _loaded = True
    return PROBES
