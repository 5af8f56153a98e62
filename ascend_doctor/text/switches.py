"""One reading of an on/off switch given as text — an environment variable, a boolean option spelled out in a
command line or a YAML file: `1`, `true`, `yes` and `on` (any case, surrounding blanks ignored) are on, anything
else, unset included, is off. A program's own stricter reading (vllm-ascend's `bool(int(value))`) is modelled where
that program's rule is (ascend_doctor.knowledge.sequence_parallel), not here."""

from __future__ import annotations

from typing import Any

ON = ("1", "true", "yes", "on")


def is_on(value: Any) -> bool:
    """True for a switch set to 1, true, yes or on."""
    return value is not None and str(value).strip().lower() in ON
