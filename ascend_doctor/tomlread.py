"""TOML reading with one-line InputErrors (tomllib on 3.11+, tomli before)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

from ascend_doctor.errors import InputError
from ascend_doctor.i18n import T


def _tomllib():
    # Imported here: a run that reads no TOML does not pay for it.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def read_toml_with_stat(path: str | Path, what: str = "file") -> tuple[dict[str, Any], Optional[os.stat_result]]:
    """The parsed TOML and the `fstat` of the very file descriptor it was read from (no check-then-read race)."""
    tomllib = _tomllib()
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            st = os.fstat(fh.fileno())
            return tomllib.load(fh), st
    except OSError as exc:
        raise InputError(T("cannot read {what} {p}: {strerror}", what=what, p=p,
                           strerror=exc.strerror or exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(T("{what} {p} is not valid TOML: {exc}", what=what, p=p, exc=exc)) from None
    except UnicodeDecodeError:
        raise InputError(T("{what} {p} is not UTF-8 text", what=what, p=p)) from None
    except RecursionError:
        raise InputError(T("{what} {p} is nested too deeply to read", what=what, p=p)) from None
    except ValueError as exc:  # an integer of more than 4,300 digits (tomllib hands it to int())
        raise InputError(T("{what} {p} is not valid TOML: {exc}", what=what, p=p, exc=exc)) from None


def read_toml(path: str | Path, what: str = "file") -> dict[str, Any]:
    """The parsed TOML of `path`; every problem is one InputError naming the file."""
    return read_toml_with_stat(path, what)[0]


def loads_toml(text: str, what: str = "text") -> dict[str, Any]:
    """Parsed TOML from a string; InputError naming `what` when it is not valid."""
    tomllib = _tomllib()
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        raise InputError(T("{what} is not valid TOML: {exc}", what=what, exc=exc)) from None


def error_line(exc: Exception) -> str:
    """'key.sub: message' for the first error of a pydantic ValidationError."""
    err = exc.errors()[0]  # type: ignore[attr-defined]
    loc = ".".join(str(x) for x in err["loc"])
    return f"{loc}: {err['msg']}"
