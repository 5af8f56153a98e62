"""`npu-smi info` (the boxed device table) -> NpuSmiInfo, and the dcmi errors npu-smi prints instead of a table.

Layouts read (all seen in public captures, see tests/data/npu_smi/):

* 20.x: 80 columns, `Chip    Device` second header, no Hugepages and no HBM column (Atlas 300I / Ascend 310).
* 21.x: Hugepages column appears, still no HBM column on 310 cards.
* 22.x-25.x: 98 columns, `Chip` second header, `Memory-Usage(MB)  HBM-Usage(MB)` (910A/910B, A2).
* A3 (24.1.rc3.7+ on Atlas A3): `Chip  Phy-ID`, name `Ascend910`, two chip row-pairs per NPU, power `-` on chip 1.
* 310P/310B: `Chip    Device`, power `NA`, Bus-Id `NA` on 310B boards, NPU ids like 8, 9 or 32768.
* 26.x: wide (116 columns) and a 6th process column `Process id in container`.

Rows come in pairs (NPU/Name/Health/Power/Temp/Hugepages, then Chip/Bus-Id/AICore/Memory/HBM); blank-outs such as
an author's `...` line between pairs are skipped. Separator lines differ across versions and are ignored.
The failure lines come from the driver's npu_smi.c (`handle_dcmi_initialization`): `dcmi model initialized failed,
because the device is used. ret is -8020` for -8020, `dcmi module initialize failed. ret is N` for anything else.
"""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field

from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.parsers import clean_paste, parser_kind
from ascend_doctor.text.numbers import float_or_none, int_or_none, to_int

EXPECTS = "`npu-smi info` output (a table or a dcmi error)"

# The header row: `| npu-smi 23.0.6   Version: 23.0.6 |`. A field left blank (a paste, a container without the
# driver's version file) is None, never the table's border (`Version:   |` once read `|` as the driver version).
_HEADER = re.compile(r"npu-smi[ \t]+(?:([^\s|]+)[ \t]+)?Version:[ \t]*([^\s|]*)", re.I)


def header_versions(line: str) -> Optional[tuple[Optional[str], Optional[str]]]:
    """(npu-smi's version, the driver's `Version:`) of a table's header row, a blank field as None; None when the
    line is no header. The one reading of that row (the table parser, triage's paste reader)."""
    m = _HEADER.search(line)
    return (m.group(1) or None, m.group(2) or None) if m else None


_RET = re.compile(r"\bret(?:\s+is|\s*=|\s*:)?\s*(-?\d+)", re.I)
_FRACTION = re.compile(r"(?<!\d)(\d+)\s*/\s*(\d+)")  # starts only where a number does: linear
_BUS = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_NO_PROC = re.compile(r"No running processes found in NPU\s+(\d+)", re.I)
# Lines npu-smi prints instead of a table. Each is the complete reason a check needs; see the module docstring.
_ERROR_MARKERS = [
    re.compile(p, re.I)
    for p in (
        r"dcmi\s+mod\w*\s+initiali[sz]\w*\s+failed",
        r"\bret is -?\d+",
        r"Invalid (?:card|chip|device) id",
        r"error while loading shared libraries",
        r"Error parameter of",
        r"npu-smi.*Permission denied",
        r"can ?not (?:open|find) .*(?:davinci|dcmi|driver)",
    )
]


class NpuSmiError(Model):
    """What npu-smi printed instead of a table; `code` is the dcmi/npu-smi return code when one is printed."""

    code: Optional[int] = None
    message: str


class NpuChip(Model):
    """One chip's two table rows. None where this layout has no such column or prints `NA`/`-`."""

    npu_id: int
    chip_id: int
    phy_id: Optional[int] = Field(None, description="A3 `Chip  Phy-ID` column")
    device_id: Optional[int] = Field(None, description="`Chip  Device` column (310/310B/310P logical device)")
    name: str
    health: str
    power_w: Optional[float] = None
    temp_c: Optional[int] = None
    hugepages_used: Optional[int] = None
    hugepages_total: Optional[int] = None
    aicore_pct: Optional[int] = None
    memory_used_mb: Optional[int] = None
    memory_total_mb: Optional[int] = None
    hbm_used_mb: Optional[int] = None
    hbm_total_mb: Optional[int] = None
    bus_id: Optional[str] = None


class NpuProcess(Model):
    npu_id: int
    chip_id: Optional[int] = None
    pid: int
    name: str = Field(description="As printed; npu-smi truncates long names and may print nothing")
    memory_mb: Optional[int] = None
    container_pid: Optional[int] = Field(None, description="26.x `Process id in container`")


class NpuSmiInfo(Model):
    tool_version: Optional[str] = None
    driver_version: Optional[str] = Field(None, description="The `Version:` field (preferred over tool_version)")
    error: Optional[NpuSmiError] = None
    chips: list[NpuChip] = Field(default_factory=list)
    processes: list[NpuProcess] = Field(default_factory=list)
    layout: Optional[str] = Field(None, description="chip | chip-phy-id | chip-device (the second header row) | "
                                                    "fragment (rows without the headers: the column not known)")
    has_process_table: bool = False
    idle_npus: list[int] = Field(default_factory=list, description="`No running processes found in NPU N`")
    elided: bool = Field(False, description="The paste skipped rows (`...`), so chip counts are a lower bound")
    warnings: list[str] = Field(default_factory=list, description="Process rows that could not be read")

    def unhealthy(self) -> list[NpuChip]:
        """Chips whose Health column is not `OK` (Warning, Alarm, Critical, ...)."""
        return [c for c in self.chips if c.health.upper() != "OK"]

    def pids(self) -> list[int]:
        """Distinct process ids holding an NPU, in table order (one tensor-parallel engine shows on many chips)."""
        seen: list[int] = []
        for p in self.processes:
            if p.pid not in seen:
                seen.append(p.pid)
        return seen

    def npu_ids(self) -> list[int]:
        """Distinct NPU ids in table order (what `-i N` takes)."""
        seen: list[int] = []
        for c in self.chips:
            if c.npu_id not in seen:
                seen.append(c.npu_id)
        return seen


def find_npu_smi_error(text: str) -> Optional[NpuSmiError]:
    """The first npu-smi/dcmi failure line in `text` (with its `ret is N` code), or None."""
    code = None
    m = _RET.search(text)
    if m:
        code = int_or_none(m.group(1))
    for line in text.splitlines():
        line = line.strip()
        if line and any(p.search(line) for p in _ERROR_MARKERS):
            return NpuSmiError(code=code, message=line)
    return None


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def _num(tok: str) -> Optional[float]:
    return float_or_none(tok)  # a 400-digit run was float('inf')


def _int(tok: str) -> Optional[int]:
    return int_or_none(tok) if re.fullmatch(r"-?\d+", tok) else None


def _fraction(cell: str) -> tuple:
    """All `used / total` pairs in a cell, left to right, and the cell with them removed."""
    pairs = [(to_int(a), to_int(b)) for a, b in _FRACTION.findall(cell)]
    return pairs, _FRACTION.sub(" ", cell).split()


def _bad(line: str, what: str) -> ParseError:
    return ParseError(f"expected {EXPECTS}; {what}: {line.strip()[:120]!r}")


# The two rows of one chip in the table, what a paste that leaves the headers out still shows (h38s, generically):
# `| 0     910B3 | OK | 93.4  38  0 / 0 |` then `| 0 | 0000:C1:00.0 | 0  0 / 0  3381 / 65536 |`.
CHIP_FIRST_ROW = re.compile(
    r"^\|\s*\d+\s+[^|\s][^|]*\|\s*(?:OK|Warning|Alarm|Critical|Abnormal|Unknown)\s*\|[^|]*\|\s*$", re.I)
CHIP_SECOND_ROW = re.compile(
    r"^\|\s*\d+(?:\s+\d+)?\s*\|\s*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]\s*\|")


@parser_kind("npu-smi-info", expects=EXPECTS)
def parse_npu_smi_info(text: str, fragment: bool = False) -> NpuSmiInfo:
    """Parse `npu-smi info`; a dcmi/driver error instead of a table gives `error` and no chips. `fragment`: the text
    is rows of the table without its headers (a paste's excerpt): the chips and processes are read from the rows'
    own shapes, which chip id column the second row holds is not known, and the counts are a lower bound
    (`elided`)."""
    lines = [ln.strip() for ln in clean_paste(text).split("\n")]
    info = NpuSmiInfo()
    header_at = None
    for i, ln in enumerate(lines):
        m = header_versions(ln)
        if m and ln.startswith("|"):
            info.tool_version, info.driver_version = m
            header_at = i
            break
    if header_at is None and fragment:
        return _fragment(info, lines)
    if header_at is None:
        err = find_npu_smi_error(text)
        if err is None:
            first = next((ln for ln in lines if ln), "")
            raise ParseError(
                f"expected {EXPECTS}: no '| npu-smi <version>  Version: <version> |' header and no dcmi error"
                + (f" (first line: {first[:80]!r})" if first else " (input is empty)")
            )
        info.error = err
        return info

    section = "pre"  # pre -> chips (after the column headers) -> procs (after the process header)
    pending: Optional[dict] = None
    proc_cols = 0
    last_proc: Optional[tuple] = None
    for ln in lines[header_at + 1:]:
        if not ln:
            continue
        if ln in ("...", "…") or re.fullmatch(r"[.…\s]+", ln):
            info.elided = True
            continue
        if ln.startswith("+"):
            continue  # separators: +----+, +====+, full-width +-----+ between A3 chips
        if not ln.startswith("|") or _HEADER.search(ln):
            break  # the table is over: a doc URL, a prompt, the rest of a collect_env, a second capture
        cells = _cells(ln)
        joined = " ".join(cells)
        if re.match(r"^NPU\s+Name\b", cells[0]) and len(cells) >= 3:
            section = "chips"
            continue
        if re.match(r"^Chip\b", cells[0]) and section == "chips" and ("Bus-Id" in joined or "Bus" in joined):
            second = cells[0].split()
            info.layout = "chip-phy-id" if "Phy-ID" in second else "chip-device" if "Device" in second else "chip"
            continue
        if re.match(r"^NPU\s+Chip\b", cells[0]) and "Process" in joined:
            if pending is not None:
                raise _bad(ln, "the last chip has only its first row")
            section = "procs"
            info.has_process_table = True
            proc_cols = len(cells)
            continue
        m = _NO_PROC.search(joined)
        if m:
            info.idle_npus.append(to_int(m.group(1)))
            info.has_process_table = True
            section = "procs"
            continue
        if section == "chips":
            pending = _chip_row(info, cells, pending, ln)
        elif section == "procs":
            # a process row we cannot read must not cost the chip table, which is what checks need most
            try:
                last_proc = _proc_row(info, cells, proc_cols, last_proc, ln)
            except ParseError as exc:
                info.warnings.append(str(exc))
        else:
            raise _bad(ln, "a table row before the column headers")
    if pending is not None and not info.chips:
        raise ParseError(f"expected {EXPECTS}; the table ends after the first row of NPU {pending['npu_id']}")
    if pending is not None:  # cut inside a chip's rows: the chips above are whole, the rest not shown
        info.elided = True
        info.warnings.append(f"the table ends after the first row of NPU {pending['npu_id']}: the chips before it "
                             "are read, the rest is not shown")
    if section == "pre":
        raise ParseError(f"expected {EXPECTS}; found the version header but no '| NPU  Name | Health |' columns")
    return info


def _fragment(info: NpuSmiInfo, lines: list) -> NpuSmiInfo:
    """The chips and processes of table rows pasted without the headers: a chip is a first row and the second row
    right after it (CHIP_FIRST_ROW, CHIP_SECOND_ROW); a row of four or more cells that starts with NPU and chip ids
    is a process. Anything else is skipped; no chip read is a ParseError."""
    info.layout, info.elided = "fragment", True
    pending: Optional[dict] = None
    for ln in lines:
        if not ln.startswith("|"):
            continue
        if pending is not None and CHIP_SECOND_ROW.match(ln):
            pending = _chip_row(info, _cells(ln), pending, ln)
            continue
        pending = None
        cells = _cells(ln)
        m = _NO_PROC.search(" ".join(cells))
        if m:
            info.idle_npus.append(to_int(m.group(1)))
            info.has_process_table = True
        elif CHIP_FIRST_ROW.match(ln):
            pending = _chip_row(info, cells, None, ln)
        elif len(cells) >= 4 and re.fullmatch(r"\d+\s+\d+", cells[0]) and _int(cells[1]) is not None:
            info.has_process_table = True
            _proc_row(info, cells, len(cells), None, ln)
    if not info.chips:
        raise ParseError(f"expected {EXPECTS}: rows without the table's headers, but no chip's two rows among them")
    return info


def _chip_row(info: NpuSmiInfo, cells: list, pending: Optional[dict], ln: str) -> Optional[dict]:
    """Consume one chip-table row: the first of a pair is remembered, the second completes a NpuChip."""
    if len(cells) < 3:
        raise _bad(ln, "a chip row without Health/Bus-Id and metric columns")
    head = cells[0].split()
    if pending is None:
        npu = _int(head[0]) if head else None
        if npu is None:
            raise _bad(ln, "a chip row that does not start with an NPU id")
        pairs, rest = _fraction(cells[2])
        power = rest[0] if rest else ""
        temp = rest[1] if len(rest) > 1 else ""
        return {
            "npu_id": npu,
            "name": " ".join(head[1:]),
            "health": cells[1],
            "power_w": _num(power),
            "temp_c": _int(temp),
            "hugepages_used": pairs[0][0] if pairs else None,
            "hugepages_total": pairs[0][1] if pairs else None,
        }
    ids = [_int(t) for t in head]
    if not ids or any(x is None for x in ids) or len(ids) > 2:
        raise _bad(ln, f"the second row of NPU {pending['npu_id']} does not start with a chip id")
    pairs, rest = _fraction(cells[2])
    bus = cells[1]
    chip = NpuChip(
        **pending,
        chip_id=ids[0],
        phy_id=ids[1] if len(ids) == 2 and info.layout == "chip-phy-id" else None,
        device_id=ids[1] if len(ids) == 2 and info.layout not in ("chip-phy-id", "fragment") else None,
        bus_id=bus if _BUS.match(bus) else None,
        aicore_pct=_int(rest[0]) if rest else None,
        memory_used_mb=pairs[0][0] if pairs else None,
        memory_total_mb=pairs[0][1] if pairs else None,
        hbm_used_mb=pairs[1][0] if len(pairs) > 1 else None,
        hbm_total_mb=pairs[1][1] if len(pairs) > 1 else None,
    )
    info.chips.append(chip)
    return None


def _proc_row(info: NpuSmiInfo, cells: list, ncols: int, last: Optional[tuple], ln: str) -> Optional[tuple]:
    """One process row: `NPU Chip | pid | name | memory [| pid in container]`; a blank NPU cell repeats the last."""
    if len(cells) < 4:
        raise _bad(ln, "a process row with fewer than 4 columns")
    head = cells[0].split()
    ids = [_int(t) for t in head]
    if any(x is None for x in ids):
        raise _bad(ln, "a process row that does not start with NPU and chip ids")
    if not ids:
        if last is None:
            raise _bad(ln, "a process row without an NPU id")
        npu, chip = last
    else:
        npu, chip = ids[0], ids[1] if len(ids) > 1 else None
    pid = _int(cells[1])
    if pid is None:
        raise _bad(ln, "a process row without a numeric process id")
    mem = re.match(r"\d+", cells[3])
    container = _int(cells[4]) if len(cells) > 4 and ncols > 4 else None
    info.processes.append(
        NpuProcess(npu_id=npu, chip_id=chip, pid=pid, name=cells[2],
                   memory_mb=int_or_none(mem.group()) if mem else None,
                   container_pid=container)
    )
    return npu, chip
