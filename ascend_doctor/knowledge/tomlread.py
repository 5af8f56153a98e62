"""The one data loader: TOML read and validated with one-line, located InputErrors (tomllib on 3.11+, tomli before).

Every TOML the doctor reads — the matrix files, the host policy, the error signatures, the dependency allow-list,
the config file — goes through `read_toml` and, for its schema, `validate` / `load_model`, so every problem reads the
same way: `<what> <path>: <table>[<i>] (<row id>).<field>: <message>`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

from ascend_doctor.core.errors import InputError
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
    from ascend_doctor.seam.inputs import LIMITS, too_large

    tomllib = _tomllib()
    p = Path(path)
    limit = LIMITS["config"]
    try:
        with open(p, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read(limit + 1)  # capped: a config path pointing at /dev/zero is an error, not a MemoryError
        if len(data) > limit:
            raise too_large(str(p), "config")
        return tomllib.loads(data.decode("utf-8")), st
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


def _num(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


# pydantic's most common complaints, as messages (they read in Chinese too, #22); others keep pydantic's English.
_PYDANTIC = {
    "extra_forbidden": lambda c: T("unknown key"),
    "missing": lambda c: T("required key missing"),
    "greater_than": lambda c: T("must be greater than {gt}", gt=_num(c.get("gt"))),
    "greater_than_equal": lambda c: T("must be at least {ge}", ge=_num(c.get("ge"))),
    "less_than": lambda c: T("must be less than {lt}", lt=_num(c.get("lt"))),
    "less_than_equal": lambda c: T("must be at most {le}", le=_num(c.get("le"))),
    "finite_number": lambda c: T("must be a finite number"),
    "float_parsing": lambda c: T("must be a number"),
    "float_type": lambda c: T("must be a number"),
    "int_parsing": lambda c: T("must be a whole number"),
    "int_type": lambda c: T("must be a whole number"),
    "bool_parsing": lambda c: T("must be true or false"),
    "bool_type": lambda c: T("must be true or false"),
    "string_type": lambda c: T("must be a string"),
    "list_type": lambda c: T("must be a list"),
    "literal_error": lambda c: T("must be one of {expected}", expected=c.get("expected")),
    "enum": lambda c: T("must be one of {expected}", expected=c.get("expected")),
}


def located(exc: Exception, data: Any = None, ids: Optional[dict[str, str]] = None) -> str:
    """`table[i] (id).field: message` for the first pydantic error: a row is named by its position and, where `ids`
    says which field identifies rows of that table, by its id; pydantic's wording is shortened for people
    ("unknown key", "required key missing")."""
    err = exc.errors()[0]  # type: ignore[attr-defined]
    loc = list(err["loc"])
    parts: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int):
            label = f"[{part}]"
            if i == 1 and ids and loc[0] in ids:
                try:
                    ident = data[loc[0]][part].get(ids[loc[0]])
                except (KeyError, IndexError, TypeError, AttributeError):
                    ident = None
                if ident is not None:
                    label += f" ({ident})"
            parts.append(label)
        else:
            parts.append(("." if parts else "") + str(part))
    where = "".join(parts) or "(top level)"
    msg = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    msg = _PYDANTIC.get(err["type"], lambda ctx: msg)(err.get("ctx") or {})
    return T("{where}: {msg}", where=where, msg=msg)


def validate(model: Any, data: Any, what: str, path: Any, ids: Optional[dict[str, str]] = None) -> Any:
    """`model.model_validate(data)`, or one InputError `<what> <path>: <located error>`."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(T("{what} {path}: {where}", what=what, path=path, where=located(exc, data, ids))) from None


def load_model(path: Any, model: Any, what: str, ids: Optional[dict[str, str]] = None) -> Any:
    """Read the TOML file at `path` and validate it as `model`; every problem is one InputError naming the file."""
    return validate(model, read_toml(path, what), what, path, ids)
