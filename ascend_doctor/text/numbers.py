"""Integers read from text (vendor output, /proc, /sys, environment values), bounded in length.

Python refuses `int()` on more than 4,300 digits with a ValueError, and converting a long run is quadratic anyway. No
real NPU id, counter, limit or version part has more than a handful of digits, so a longer run is garbage: parsers
raise their own ParseError for it (`to_int`), probes treat it as unreadable (`int_or_none`).
"""

from __future__ import annotations

import re
from typing import Optional

from ascend_doctor.core.errors import ParseError

MAX_DIGITS = 30  # a docker-tag build stamp has 14 (`_20260930220649`), a 64-bit counter 20


def to_int(text: str, base: int = 10) -> int:
    """`int(text, base)`, or ParseError (never ValueError) when it is not a number of at most MAX_DIGITS digits."""
    s = text.strip() if isinstance(text, str) else str(text)
    digits = len(s.lstrip("+-"))
    if base == 16 and s.lower().lstrip("+-").startswith("0x"):
        digits -= 2
    if digits > MAX_DIGITS:
        raise ParseError(f"a number of {digits} digits ({s[:12]}…) is not a value any tool prints")
    try:
        return int(s, base)
    except ValueError:
        raise ParseError(f"{s[:40]!r} is not a number") from None


def int_or_none(text: Optional[str], base: int = 10) -> Optional[int]:
    """Like `to_int`, but None for None, an empty string or anything that is not a bounded number."""
    if text is None:
        return None
    try:
        return to_int(text, base)
    except ParseError:
        return None


_DECIMAL = re.compile(r"[+-]?\d{1,%d}(?:\.\d{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))


def to_float(text: str) -> float:
    """A plain decimal (`12.5`, `-3`, `100.000`) as float, or ParseError (never ValueError).

    Tools print a time, a percentage or a link speed this way; `1.2.3`, `1e400`, `nan`, `inf` or a 5,000-digit run
    are not values any of them prints, and `float()` would raise on the first and pass the others through.
    """
    s = text.strip() if isinstance(text, str) else str(text)
    if not _DECIMAL.fullmatch(s):
        raise ParseError(f"{s[:40]!r} is not a decimal number")
    return float(s)  # at most 30 + 30 digits: always finite


def float_or_none(text: Optional[str]) -> Optional[float]:
    """Like `to_float`, but None for None or anything that is not a plain bounded decimal."""
    if text is None:
        return None
    try:
        return to_float(text)
    except ParseError:
        return None
