"""Where the built-in checks and matrices live: inside the wheel, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    # Wheel layout: ascend_doctor/_builtin/<name> (pyproject force-include). Source/editable: <repo>/<name>.
    for candidate in (_PKG / "_builtin" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"built-in {name}/ not found next to {_PKG}")


def builtin_checks_dir() -> Path:
    """Directory of the built-in check modules."""
    return _find("checks")


def builtin_matrices_dir() -> Path:
    """Directory of the shipped TOML data (compatibility matrix, advisories, host policy)."""
    return _find("matrices")
