"""The base of the doctor's data types (facts, findings, reports, snapshots, matrix rows, config): a pydantic model
whose validator is built on first use (`defer_build`).

Why one base: a `check` defines about 150 models and uses a fraction of them in any one run; building every
validator at import cost 0.31 s of a 0.66 s replayed check (measured in-process on the healthy A2 example: import and
registry 0.58 s -> 0.27 s, the run itself 0.09 s -> 0.22 s), and that start-up sits in front of every probe.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)
