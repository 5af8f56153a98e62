"""TOML reading with one-line InputErrors (tomllib on 3.11+, tomli before)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ascend_doctor.errors import InputError


def read_toml(path: str | Path, what: str = "file") -> dict[str, Any]:
    # Imported here: with the shipped data files cached (ascend_doctor.diskcache), a static check reads no TOML.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{what} {p} is not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{what} {p} is not UTF-8 text") from None


def error_line(exc: Exception) -> str:
    """'key.sub: message' for the first error of a records.ValidationError."""
    err = exc.errors()[0]  # type: ignore[attr-defined]
    loc = ".".join(str(x) for x in err["loc"])
    return f"{loc}: {err['msg']}"
