"""The base of the doctor's data types (facts, findings, reports, snapshots, matrix rows, config): a pydantic model
whose validator is built on first use (`defer_build`).

Why one base: a `check` defines about 150 models and uses a fraction of them in any one run; building every
validator at import cost 0.31 s of a 0.66 s replayed check (measured in-process on the healthy A2 example: import and
registry 0.58 s -> 0.27 s, the run itself 0.09 s -> 0.22 s), and that start-up sits in front of every probe.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
