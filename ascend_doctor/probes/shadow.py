"""Directories that come before site-packages on the serving interpreter's sys.path — the working directory (for
`python -m …`, which puts it first) and PYTHONPATH — and whether they hold a `vllm`/`vllm_ascend` of their own, which
Python would import instead of the installed one (SERVE209)."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.probes import probe

NAMES = ("vllm", "vllm.py", "vllm_ascend", "vllm_ascend.py")


class Shadow(Model):
    where: str = Field(description="'working directory' or 'PYTHONPATH'")
    directory: str
    name: str = Field(description="The entry found: vllm, vllm.py, vllm_ascend, vllm_ascend.py")


class ShadowFact(Model):
    cwd: Optional[str] = Field(None, description="The working directory (PWD), None when the environment has none")
    looked: list[str] = Field(default_factory=list, description="Directories listed")
    unreadable: list[str] = Field(default_factory=list, description="Directories that could not be listed, and why")
    hits: list[Shadow] = Field(default_factory=list)


@probe("vllm_shadow")
def shadow_probe(host, ctx) -> ShadowFact:
    """Files that would shadow the installed vllm or vllm_ascend package (the working directory, PYTHONPATH)."""
    env = host.env()
    fact = ShadowFact(cwd=env.get("PWD") or None)
    dirs = ([("working directory", fact.cwd)] if fact.cwd else []) + [
        ("PYTHONPATH", p) for p in (env.get("PYTHONPATH") or "").split(":") if p]
    for where, d in dirs:
        listing = host.list_dir(d)
        if not listing.ok:
            fact.unreadable.append(f"{d}: {listing.error_message or listing.error}")
            continue
        fact.looked.append(d)
        fact.hits += [Shadow(where=where, directory=d, name=e) for e in sorted(listing.entries or []) if e in NAMES]
    return fact
