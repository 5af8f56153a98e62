"""The base of the doctor's data types (facts, findings, reports, snapshots, matrix rows, config): a pydantic model
whose validator is built on first use (`defer_build`).

Why one base: a `check` defines about 150 models and uses a fraction of them in any one run; building every
validator at import cost 0.31 s of a 0.66 s replayed check (measured in-process on the healthy A2 example: import and
registry 0.58 s -> 0.27 s, the run itself 0.09 s -> 0.22 s), and that start-up sits in front of every probe.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


def _plain(value: Any) -> Any:
    """A str subclass holding an undecodable byte (a lone surrogate) as an exact str, else `value` unchanged."""
    if type(value) is str or not isinstance(value, str) or value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return str.__str__(value)
    return value


def first_error(exc: ValueError) -> str:
    """One line for a refused document: where and what pydantic's first error says (`format: Input should be a valid
    string`), or the first line of any other ValueError, at most 200 characters."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            e = errors(include_url=False)[0]
            where = ".".join(str(x) for x in e.get("loc", ()))
            return f"{where}: {e['msg']}"[:200] if where else str(e["msg"])[:200]
        except (IndexError, KeyError, TypeError):
            pass
    return (str(exc).splitlines() or [""])[0][:200]


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _surrogates_in_messages(cls, data: Any) -> Any:
        """Let a message (`i18n.Msg`, a str subclass) that quotes an undecodable byte from the host in.

        pydantic-core accepts a lone surrogate in an exact str but refuses it in a str subclass
        (`string_unicode`), so `ServeEntry(how=T("… {program}", program=argv0))` with byte 0xff in argv[0] crashed the
        probe. Such a message is kept as its English text (the byte stays a lone surrogate, shown `\\xff` by the
        writers); every other value, and every message without such a byte, passes untouched.
        """
        if isinstance(data, dict):
            for k, v in data.items():
                if isinstance(v, str):
                    p = _plain(v)
                    if p is not v:
                        data = {**data, k: p}
                elif isinstance(v, (list, tuple)) and any(isinstance(x, str) and type(x) is not str for x in v):
                    data = {**data, k: type(v)(_plain(x) for x in v)}
        return data
