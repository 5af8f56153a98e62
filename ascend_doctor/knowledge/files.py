"""Where the shipped tables live: matrices/ inside the wheel (ascend_doctor/_builtin/matrices), or at the top of a
source checkout. Only the knowledge package reads them (tests/knowledge/test_door.py holds every other module to it).
"""

from __future__ import annotations

from pathlib import Path

from ascend_doctor.core.paths import builtin_dir


def builtin_matrices_dir() -> Path:
    """Directory of the shipped TOML data (compatibility matrix, advisories, host policy, the tables in subfolders)."""
    return builtin_dir("matrices")


def shipped_file(table: str) -> Path:
    """The shipped file of a table (`serve/lora` -> matrices/serve/lora.toml)."""
    return builtin_matrices_dir() / f"{table}.toml"


def matrix_files() -> list[Path]:
    """The shipped files of the compatibility matrix: every top-level matrices/*.toml but the host policy."""
    return sorted(p for p in builtin_matrices_dir().glob("*.toml") if p.name != "host-policy.toml")


def shown(relpath: str) -> str:
    """A shipped file as a person finds it in a source checkout (`vllm-ascend.toml` -> matrices/vllm-ascend.toml)."""
    return f"matrices/{relpath}"
