"""What a check module imports — the built-in ones and third-party plugins alike (README "Writing checks").

    from ascend_doctor.plugin import T, check, ev, step

`check` declares a check (its docstring is its doc), `ev` builds an evidence item (trimmed, secrets masked), `T`
marks a message for translation, `step` proposes a change the fix script may render (`ctx.fail(…, fix=[step(…)])`:
a kind of ascend_doctor.core.fixsteps with typed arguments, never a command line). The context a check receives
(`ctx.fact`, `ctx.knowledge`, `ctx.fail`, …) is documented in `ascend_doctor.core.evaluator.CheckContext`;
`ascend_doctor.testing.run_check` evaluates one check on facts given by hand. `if_shown(lambda: fact.field)` reads a
part of a fact for evidence when a paste may not show it (None then); a verdict reads the fact directly, so an
unshown part makes the check unknown ("not in the paste" in triage), never a guess.
"""

from __future__ import annotations

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.evaluator import ev
from ascend_doctor.core.fixsteps import step
from ascend_doctor.core.registry import check
from ascend_doctor.facts.partial import if_shown
from ascend_doctor.i18n import T

__all__ = ["FactUnavailable", "T", "check", "ev", "if_shown", "step"]
