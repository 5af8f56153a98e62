"""Sizes as people write them: 64 MiB, 1.5 GiB, 128 GiB — never 0.1 GiB for a 64 MiB /dev/shm."""

from __future__ import annotations

import re
from typing import Optional

from ascend_doctor.text.numbers import float_or_none

KIB, MIB, GIB, TIB = 1024, 1024 ** 2, 1024 ** 3, 1024 ** 4


def human_bytes(n: Optional[float]) -> str:
    """Bytes in the largest binary unit that keeps the number >= 1: '64 MiB', '1.5 GiB', '128 GiB', '2.0 TiB'."""
    if n is None:
        return "?"
    n = float(n)
    for unit, size in (("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v >= 100 or v == int(v) else f"{v:.1f} {unit}"
    return f"{n:.0f} B"


def speed_gts(s: str) -> Optional[float]:
    """A PCIe link speed as sysfs writes it ('16.0 GT/s PCIe') in GT/s; None for anything else ('Unknown')."""
    m = re.match(r"\s*([\d.]+)\s*GT/s", s)
    return float_or_none(m.group(1)) if m else None
