"""The other `npu-smi info` views: `-t health`, `-t board`, `-t common`, `-t usages`, `-t ecc`, `-m`, `-t topo`.

The `-t` views are `Key   : value` blocks, indented by a TAB or spaces depending on who captured them. Collector
files (MindCluster faultdiag) hold several commands, each line `/usr/local/bin/npu-smi info -i 0 -t board` followed
by its output; each parser keeps only the sections of its own `-t` type, so one capture file can feed all of them.
A failing card prints `Invalid card id.` / `Error parameter of -i` instead of the block; that becomes `error`.
"""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field

from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.parsers import clean_paste, parser_kind
from ascend_doctor.parsers.npu_smi import NpuSmiError, find_npu_smi_error
from ascend_doctor.text.numbers import int_or_none, to_int

_CMD = re.compile(r"npu-smi\s+info\b(.*)$")
# The key runs to the first `:` and is stripped by the caller (a lazy key before `\s*:` was quadratic, #23).
_KV = re.compile(r"^([A-Za-z][^:]*):\s?(.*)$")
_CONT = re.compile(r"^:\s?(.*)$")  # `-t health` continuation of Error Information


class _Section(Model):
    command: Optional[str] = None
    type: Optional[str] = None
    npu_id: Optional[int] = None
    chip_id: Optional[int] = None
    lines: list[str] = Field(default_factory=list)


def _sections(text: str) -> list[_Section]:
    """Split a capture at `npu-smi info ...` command lines; text before any command is one anonymous section."""
    out = [_Section()]
    for raw in clean_paste(text).split("\n"):
        line = raw.strip()
        m = _CMD.search(line)
        if m and not _KV.match(line):
            args = m.group(1)
            t = re.search(r"-t\s+(\S+)", args)
            i = re.search(r"-i\s+(\d+)", args)
            c = re.search(r"-c\s+(\d+)", args)
            out.append(_Section(command=line, type=t.group(1) if t else ("-m" if re.search(r"\s-m\b", " " + args)
                                                                         else None),
                                npu_id=int_or_none(i.group(1)) if i else None,
                                chip_id=int_or_none(c.group(1)) if c else None))
            continue
        out[-1].lines.append(line)
    return [s for s in out if s.command or any(s.lines)]


def _pick(text: str, kind: str) -> list[_Section]:
    """Sections of `-t kind`; the whole text when the capture carries no command lines."""
    secs = _sections(text)
    with_cmd = [s for s in secs if s.command]
    if not with_cmd:
        return secs
    return [s for s in with_cmd if s.type == kind]


def _int(v: Optional[str]) -> Optional[int]:
    if v is None:
        return None
    v = v.strip()
    if re.fullmatch(r"-?\d+", v):
        return int_or_none(v)
    if re.fullmatch(r"0x[0-9A-Fa-f]+", v):
        return int_or_none(v, 16)
    return None


# -t health ---------------------------------------------------------------------------------------------------------
class NpuHealth(Model):
    """`npu-smi info -t health -i N [-c C]`: `health` is OK / Warning / Alarm / Critical as printed."""

    npu_id: Optional[int] = Field(None, description="From the command line when the capture shows it")
    chip_id: Optional[int] = None
    health: Optional[str] = None
    error_codes: list[str] = Field(default_factory=list, description="Hex fault codes; empty for NA")
    error_information: list[str] = Field(default_factory=list, description="One entry per printed line")
    error: Optional[NpuSmiError] = None


HEALTH_EXPECTS = "`npu-smi info -t health -i N` output (Health Status / Error Code / Error Information)"


@parser_kind("npu-smi-health", expects=HEALTH_EXPECTS)
def parse_npu_smi_health(text: str) -> NpuHealth:
    """Parse one card's health block (or the error npu-smi printed instead)."""
    secs = _pick(text, "health")
    for sec in secs:
        out = NpuHealth(npu_id=sec.npu_id, chip_id=sec.chip_id)
        field = None
        for line in sec.lines:
            if not line:
                continue
            cont = _CONT.match(line)
            if cont and field == "info":
                if cont.group(1).strip():
                    out.error_information.append(cont.group(1).strip())
                continue
            m = _KV.match(line)
            if not m:
                continue
            key, val = m.group(1).strip().lower(), m.group(2).strip()
            if key == "health status":
                out.health, field = val, "status"
            elif key == "error code":
                out.error_codes = [] if val.upper() in ("NA", "") else val.split()
                field = "code"
            elif key in ("error information", "error info"):
                field = "info"
                if val and val.upper() != "NA":
                    out.error_information.append(val)
        if out.health is not None:
            return out
        err = find_npu_smi_error("\n".join(sec.lines))
        if err is not None:
            out.error = err
            return out
    raise ParseError(f"expected {HEALTH_EXPECTS}: no 'Health Status : ...' line and no npu-smi error")


# key/value views: -t board, -t common, -t usages, -t ecc -----------------------------------------------------------
class NpuKvChip(Model):
    """One chip paragraph (`Chip ID : N` leads it in `-t common` and trails it in `-t usages` / `-t ecc`)."""

    chip_id: Optional[int] = None
    name: Optional[str] = Field(None, description="`Chip Name` (e.g. `mcu` sub-block in `-t common`)")
    fields: dict[str, str] = Field(default_factory=dict)


class NpuKeyValues(Model):
    """A `Key : value` view of one card: card-level fields, then per-chip paragraphs."""

    type: str
    npu_id: Optional[int] = None
    chip_count: Optional[int] = None
    fields: dict[str, str] = Field(default_factory=dict, description="Card-level keys as printed")
    chips: list[NpuKvChip] = Field(default_factory=list)
    error: Optional[NpuSmiError] = None

    def get(self, key: str, chip_id: Optional[int] = None) -> Optional[str]:
        """A value by key (case-insensitive): from the chip paragraph when `chip_id` is given, else card then chips."""
        want = key.lower()
        pools = [c.fields for c in self.chips if c.chip_id == chip_id] if chip_id is not None else (
            [self.fields] + [c.fields for c in self.chips])
        for pool in pools:
            for k, v in pool.items():
                if k.lower() == want:
                    return v
        return None

    def get_int(self, key: str, chip_id: Optional[int] = None) -> Optional[int]:
        return _int(self.get(key, chip_id))


# Keys that identify each view: a capture with `Key : value` lines but none of these is some other text (a config file,
# a log, random bytes), and the parser says so instead of returning its lines as fields.
_CARD_KEYS = r"npu id|chip id|chip count|chip name"
_VIEW_KEYS = {
    "board": re.compile(_CARD_KEYS + r"|software version|firmware version|board id|pcie bus info|serial number", re.I),
    "common": re.compile(_CARD_KEYS + r"|usage rate|temperature|aicore|power dissipation", re.I),
    "usages": re.compile(_CARD_KEYS + r"|usage rate|capacity\(mb\)", re.I),
    "ecc": re.compile(_CARD_KEYS + r"|error count|isolated pages|err cnt", re.I),
}


def _kv_view(text: str, kind: str, expects: str) -> NpuKeyValues:
    secs = _pick(text, kind)
    out = NpuKeyValues(type=kind)
    found = False
    for sec in secs:
        if sec.npu_id is not None and out.npu_id is None:
            out.npu_id = sec.npu_id
        paragraphs: list[list[tuple]] = [[]]
        for line in sec.lines:
            if not line:
                paragraphs.append([])
                continue
            m = _KV.match(line)
            # `Usage: npu-smi info ...` follows an `Invalid card id.` failure; it is help text, not a field
            if m and m.group(1).strip().lower() != "usage":
                paragraphs[-1].append((m.group(1).strip(), m.group(2).strip()))
        for para in paragraphs:
            if not para:
                continue
            found = True
            keys = [k.lower() for k, _ in para]
            if "chip id" in keys or "chip name" in keys:
                if sec.chip_id is not None and "chip id" not in keys:
                    para = para + [("Chip ID", str(sec.chip_id))]
                chip = NpuKvChip(fields=dict(para))
                chip.chip_id = _int(chip.fields.get("Chip ID"))
                chip.name = chip.fields.get("Chip Name")
                if "npu id" in keys and len(out.chips) == 0 and not out.fields:
                    out.fields["NPU ID"] = chip.fields["NPU ID"]
                out.chips.append(chip)
            else:
                for k, v in para:
                    out.fields.setdefault(k, v)
        if not found and out.error is None:
            out.error = find_npu_smi_error("\n".join(sec.lines))
    if out.fields.get("NPU ID") is not None:
        out.npu_id = _int(out.fields["NPU ID"])
    out.chip_count = _int(out.fields.get("Chip Count"))
    known = _VIEW_KEYS[kind]
    if found and not any(known.search(k) for k in
                         [*out.fields, *(k for c in out.chips for k in c.fields)]):
        if out.error is not None:
            return out.model_copy(update={"fields": {}, "chips": []})
        raise ParseError(f"expected {expects}: none of the {kind} view's keys (NPU ID, Chip ID, …) among "
                         f"{len(out.fields) + sum(len(c.fields) for c in out.chips)} 'Key : value' lines")
    if not found and out.error is None:
        raise ParseError(f"expected {expects}: no 'Key : value' lines and no npu-smi error")
    if found:
        out.error = None
    return out


BOARD_EXPECTS = "`npu-smi info -t board -i N [-c C]` output (Key : value lines)"
COMMON_EXPECTS = "`npu-smi info -t common -i N` output (Key : value lines)"
USAGES_EXPECTS = "`npu-smi info -t usages -i N` output (Key : value lines)"
ECC_EXPECTS = "`npu-smi info -t ecc -i N` output (Key : value lines)"


class NpuBoard(NpuKeyValues):
    """`-t board`: the card-level view carries the driver (`Software Version`) and firmware the card reports."""

    software_version: Optional[str] = None
    firmware_version: Optional[str] = None
    compatibility: Optional[str] = Field(None, description="`OK` when driver and firmware match")
    chip_name: Optional[str] = None
    pcie_bus_info: Optional[str] = None


@parser_kind("npu-smi-board", expects=BOARD_EXPECTS)
def parse_npu_smi_board(text: str) -> NpuBoard:
    """Card and chip board info; card-level and chip-level (`-c`) captures are merged."""
    kv = _kv_view(text, "board", BOARD_EXPECTS)
    b = NpuBoard(**{name: getattr(kv, name) for name in type(kv).model_fields})
    b.software_version = kv.get("Software Version")
    b.firmware_version = kv.get("Firmware Version")
    b.compatibility = kv.get("Compatibility")
    b.chip_name = kv.get("Chip Name")
    b.pcie_bus_info = kv.get("PCIe Bus Info")
    return b


@parser_kind("npu-smi-common", expects=COMMON_EXPECTS)
def parse_npu_smi_common(text: str) -> NpuKeyValues:
    return _kv_view(text, "common", COMMON_EXPECTS)


@parser_kind("npu-smi-usages", expects=USAGES_EXPECTS)
def parse_npu_smi_usages(text: str) -> NpuKeyValues:
    return _kv_view(text, "usages", USAGES_EXPECTS)


class NpuEcc(NpuKeyValues):
    """`-t ecc`: the counters a check reads; None when the card does not report them."""

    hbm_double_bit_errors: Optional[int] = None
    hbm_single_bit_errors: Optional[int] = None
    ddr_double_bit_errors: Optional[int] = None
    isolated_pages: Optional[int] = Field(None, description="Sum of every `... Isolated Pages Count`")


@parser_kind("npu-smi-ecc", expects=ECC_EXPECTS)
def parse_npu_smi_ecc(text: str) -> NpuEcc:
    kv = _kv_view(text, "ecc", ECC_EXPECTS)
    e = NpuEcc(**{name: getattr(kv, name) for name in type(kv).model_fields})
    e.hbm_double_bit_errors = kv.get_int("HBM Double Bit Error Count")
    e.hbm_single_bit_errors = kv.get_int("HBM Single Bit Error Count")
    e.ddr_double_bit_errors = kv.get_int("DDR Double Bit Error Count")
    pages = [kv.get_int(k) for pools in [kv.fields] + [c.fields for c in kv.chips] for k in pools
             if k.lower().endswith("isolated pages count")]
    if any(p is not None for p in pages):
        e.isolated_pages = sum(p for p in pages if p is not None)
    return e


# -m ----------------------------------------------------------------------------------------------------------------
class NpuMapEntry(Model):
    npu_id: int
    chip_id: int
    logic_id: Optional[int] = Field(None, description="`-` for the Mcu pseudo-chip")
    name: str


class NpuMap(Model):
    """`npu-smi info -m`: NPU id / chip id -> logical id (what ASCEND_RT_VISIBLE_DEVICES indexes) and chip name."""

    entries: list[NpuMapEntry] = Field(default_factory=list)

    def compute_chips(self) -> list[NpuMapEntry]:
        """Entries that are real chips (a logic id), not the board MCU."""
        return [e for e in self.entries if e.logic_id is not None]


MAP_EXPECTS = "`npu-smi info -m` output (NPU ID / Chip ID / Chip Logic ID / Chip Name rows)"
_MAP_ROW = re.compile(r"^(\d+)\s+(\d+)\s+(\d+|-)\s+(\S.*?)\s*$")


@parser_kind("npu-smi-map", expects=MAP_EXPECTS)
def parse_npu_smi_map(text: str) -> NpuMap:
    out = NpuMap()
    header = False
    for raw in clean_paste(text).split("\n"):
        line = raw.strip()
        if re.match(r"^NPU ID\s+Chip ID\s+Chip Logic ID", line):
            header = True
            continue
        m = _MAP_ROW.match(line)
        if m:
            out.entries.append(NpuMapEntry(npu_id=to_int(m.group(1)), chip_id=to_int(m.group(2)),
                                           logic_id=None if m.group(3) == "-" else to_int(m.group(3)),
                                           name=m.group(4)))
    if not out.entries and not header:
        raise ParseError(f"expected {MAP_EXPECTS}: found neither the header nor a mapping row")
    return out


# -t topo -----------------------------------------------------------------------------------------------------------
class NpuTopo(Model):
    """`npu-smi info -t topo`: link type between every pair (X, HCCS, SIO, PIX, PXB, PHB, SYS, NA ...)."""

    devices: list[str] = Field(default_factory=list, description="Column names as printed: NPU0, NPU1, ...")
    links: dict[str, dict[str, str]] = Field(default_factory=dict)
    cpu_affinity: dict[str, str] = Field(default_factory=dict)
    legend: dict[str, str] = Field(default_factory=dict)

    def link(self, a: str, b: str) -> Optional[str]:
        return self.links.get(a, {}).get(b)

    def pairs_not(self, *kinds: str) -> list[tuple]:
        """(a, b, link) for every ordered pair of different devices whose link is not one of `kinds`."""
        want = {k.upper() for k in kinds}
        return [(a, b, t) for a, row in self.links.items() for b, t in row.items()
                if a != b and t.upper() not in want]


TOPO_EXPECTS = "`npu-smi info -t topo` output (an NPU0 NPU1 ... matrix)"


@parser_kind("npu-smi-topo", expects=TOPO_EXPECTS)
def parse_npu_smi_topo(text: str) -> NpuTopo:
    out = NpuTopo()
    affinity_col = False
    in_legend = False
    for raw in clean_paste(text).split("\n"):
        line = raw.strip()
        if not line:
            continue
        if line.lower().startswith("legend"):
            in_legend = True
            continue
        if in_legend:
            m = re.match(r"^(\S+)\s*=\s*(.+)$", line)
            if m:
                out.legend[m.group(1)] = m.group(2).strip()
            continue
        toks = line.split()
        if not out.devices:
            names = toks[:-2] if toks[-2:] == ["CPU", "Affinity"] else toks
            # NPU0 NPU1 … on A2; A3 prints one column per die: Phy-ID12 Phy-ID13 … (two dies per NPU, SIO between)
            if names and all(re.fullmatch(r"[A-Za-z][A-Za-z-]*\d+", t) for t in names) and (
                    names[0].upper().startswith(("NPU", "PHY-ID", "PHYID", "CHIP"))):
                out.devices = names
                affinity_col = toks[-2:] == ["CPU", "Affinity"]
            continue
        if toks[0] in out.devices:
            n = len(out.devices)
            if len(toks) < n + 1:
                raise ParseError(f"expected {TOPO_EXPECTS}; row {toks[0]} has {len(toks) - 1} of {n} links")
            out.links[toks[0]] = dict(zip(out.devices, toks[1:n + 1]))
            if affinity_col and len(toks) > n + 1:
                out.cpu_affinity[toks[0]] = " ".join(toks[n + 1:])
    if not out.devices or not out.links:
        err = find_npu_smi_error(text)
        detail = f" (npu-smi said: {err.message})" if err else ""
        raise ParseError(f"expected {TOPO_EXPECTS}: no device header and rows{detail}")
    return out
