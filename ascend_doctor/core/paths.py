"""Where the built-in checks and data live: inside the wheel, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the ascend_doctor package


def builtin_dir(name: str) -> Path:
    """`checks` or `matrices`: ascend_doctor/_builtin/<name> in a wheel (pyproject force-include), <repo>/<name> in a
    source or editable install."""
    for candidate in (_PKG / "_builtin" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"built-in {name}/ not found next to {_PKG}")


def builtin_checks_dir() -> Path:
    """Directory of the built-in check modules."""
    return builtin_dir("checks")
