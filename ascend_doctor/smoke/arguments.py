"""Is a tool call's `arguments` what an OpenAI client can use? A JSON object string, schema-valid, clean bytes."""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from ascend_doctor.i18n import T
from ascend_doctor.text.jsonread import loads

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _controls_in(value: Any) -> list[str]:
    """Control characters inside decoded string values (e.g. an escaped \\u0000 in a city name)."""
    found: list[str] = []
    if isinstance(value, str):
        found += [repr(c) for c in _CONTROL.findall(value)]
    elif isinstance(value, dict):
        for k, v in value.items():
            found += _controls_in(k) + _controls_in(v)
    elif isinstance(value, list):
        for v in value:
            found += _controls_in(v)
    return found


def argument_problems(arguments: Any, schema: Optional[dict]) -> list[str]:
    """Problems with one call's arguments ([] when fine). The OpenAI contract: a string holding one JSON object."""
    if arguments is None:
        return [T("arguments are missing")]
    if isinstance(arguments, dict):
        raw = None
        problems = [T("arguments are a JSON object, not a string holding JSON (OpenAI clients call json.loads on it)")]
        value: Any = arguments
    elif not isinstance(arguments, str):
        return [T("arguments are a {name}, not a string holding a JSON object", name=type(arguments).__name__)]
    else:
        raw, problems = arguments, []
        bad = _CONTROL.findall(raw)
        if bad:
            kinds = sorted({repr(c) for c in bad})
            problems.append(T("raw arguments contain {n_bad} control character(s) {kinds}", n_bad=len(bad),
                              kinds=', '.join(kinds)))
        stripped = raw.strip()
        if not stripped:
            return problems + [T("arguments are an empty string")]
        try:
            value, end = json.JSONDecoder(strict=True).raw_decode(stripped)
        except ValueError as exc:
            return problems + [T("arguments are not JSON: {client_error}", client_error=_client_error(raw) or exc)]
        trailing = stripped[end:]
        if trailing.strip(" \t\r\n"):
            # Quote what the client's loads(arguments) says: the same words whichever path delivered the call.
            problems.append(T("{n_trailing} trailing byte(s) after the JSON ({client_error}): {trailing}",
                              n_trailing=len(trailing), client_error=_client_error(raw), trailing=repr(trailing[:40])))
    if not isinstance(value, dict):
        return problems + [T("arguments decode to a {name}, not a JSON object", name=type(value).__name__)]
    inner = _controls_in(value)
    if inner:
        problems.append(T("decoded values contain control character(s) {set}", set=', '.join(sorted(set(inner)))))
    if schema is not None:
        import jsonschema  # only the smoke stage validates arguments; keep `check` start-up light

        v = jsonschema.Draft202012Validator(schema)
        for err in sorted(v.iter_errors(value), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in err.path) or "(root)"
            problems.append(T("schema: {where}: {message}", where=where, message=err.message))
    return problems


def _client_error(raw: str) -> str:
    """The error an OpenAI client's `loads(arguments)` raises for `raw` ('' when it loads)."""
    try:
        loads(raw)
    except ValueError as exc:
        return str(exc)
    return ""


def decoded(arguments: Any) -> Any:
    """The arguments as a Python value when they parse (for comparing stream vs non-stream), else None."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            return loads(arguments)
        except ValueError:
            return None
    return None
