"""What a check module imports — the built-in ones and third-party plugins alike (README "Writing checks").

    from ascend_doctor.plugin import T, check, ev, step

`check` declares a check (its docstring is its doc), `ev` builds an evidence item (trimmed, secrets masked), `T`
marks a message for translation, `step` proposes a change the fix script may render (`ctx.fail(…, fix=[step(…)])`:
a kind of ascend_doctor.core.fixsteps with typed arguments, never a command line). The context a check receives
(`ctx.fact`, `ctx.knowledge`, `ctx.fail`, …) is documented in `ascend_doctor.core.evaluator.CheckContext`;
`ascend_doctor.testing.run_check` evaluates one check on facts given by hand.
"""

from __future__ import annotations

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.evaluator import ev
from ascend_doctor.core.fixsteps import step
from ascend_doctor.core.registry import check
from ascend_doctor.i18n import T

__all__ = ["FactUnavailable", "T", "check", "ev", "step"]
