"""Device id lists as Ascend's environment variables and the device plugin write them (pure)."""

from __future__ import annotations

import re

from ascend_doctor.text.numbers import int_or_none

# No host has more NPUs than this; a range wider than that (`0-99999999`) is a typo, not a device list.
MAX_RANGE = 1024


def parse_device_ids(value: str, ranges: bool) -> tuple[list[int], list[str]]:
    """Ids in a comma list ('0,1'; with `ranges` also '0-3' and the device-plugin form 'Ascend910-2'), and the
    items that are not ids. ASCEND_RT_VISIBLE_DEVICES takes plain numbers; ASCEND_VISIBLE_DEVICES all three forms."""
    ids: list[int] = []
    bad: list[str] = []
    for tok in (t.strip() for t in value.split(",")):
        r = re.fullmatch(r"(\d+)-(\d+)", tok) if ranges else None
        m = re.fullmatch(r"(?:Ascend[0-9A-Za-z]*-)?(\d+)" if ranges else r"(\d+)", tok)
        lo, hi = (int_or_none(r.group(1)), int_or_none(r.group(2))) if r else (None, None)
        if lo is not None and hi is not None and lo <= hi <= lo + MAX_RANGE:
            ids.extend(range(lo, hi + 1))
        elif m and not r and int_or_none(m.group(1)) is not None:
            ids.append(int_or_none(m.group(1)))
        else:
            bad.append(tok or "(empty item)")
    return ids, bad
