"""`matrix sync` for the `serve/kv-pool-env` table: the host versions a vllm-ascend release's KV-pool guide requires
for the transfer variables it tells you to export, read from the guide's own table.

The table moved and changed shape between releases; both shapes are read:

* 0.16.0rc1-0.29.0rc1, docs/source/user_guide/feature_guide/kv_pool.md, "Environment Variables Description":
  `| Hardware | HDK & CANN versions (or Dependencies) | Export Command | Description |`, the requirements as
  `HDK >= 26.0<br>or HDK >= 25.5 with mooncake >= v0.3.11<br>CANN >= 9.0.0<br>LingQu Computing Network >= 1.5`
  (0.29.0rc1 lost the `<br>`s: `HDK >= 26.0or HDK >= 25.5 …CANN >= 9.0.0LingQu …`, which the clause reader takes
  as well);
* 0.30.0rc2, kv_cache_pool_ascend_store.md, "HDK and CANN Version Compatibility Reference":
  `| Hardware Series | HDK Requirement | CANN Requirement | Other Dependencies |`, the variable named in the last
  cell (`recommended \\`ASCEND_ENABLE_USE_FABRIC_MEM=1\\``).
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

from ascend_doctor.knowledge.kv_pool_env import requirement_id

GUIDES = ("docs/source/user_guide/feature_guide/kv_pool.md",
          "docs/source/user_guide/feature_guide/kv_cache_pool_ascend_store.md")
HEADINGS = ("Environment Variables Description", "HDK and CANN Version Compatibility Reference")
_V = r"v?(\d+(?:\.\d+)*)"
_RANGE = re.compile(r"<=\s*HDK\s*<\s*(\d+(?:\.\d+)*)")  # `25.5.0<=HDK<26.0.0`: the lower end read backwards
_HDK = re.compile(r"HDK\s*>=\s*" + _V + r"(?:\s*\(?\s*with\s+mooncake\s*>=\s*" + _V + r"\s*\)?)?", re.I)
_CANN = re.compile(r"CANN\s*>=\s*" + _V)
_LINGQU = re.compile(r"LingQu Computing Network\s*>=\s*" + _V)
_EXPORT = re.compile(r"""`(?:export\s+)?([A-Z][A-Z0-9_]*)=('[^']*'|"[^"]*"|[^`\s]+)`""")
_BR = re.compile(r"<br\s*/?>", re.I)


def family(hardware: str) -> Optional[str]:
    """The chip family a hardware cell names ('800 I/T A3 series' -> A3, '950PR&950DT Products' -> A5)."""
    if re.search(r"\bA3\b", hardware):
        return "A3"
    if re.search(r"\bA2\b", hardware):
        return "A2"
    if "950" in hardware:
        return "A5"
    return None


def clauses(cell: str, hdk_cell: Optional[str] = None) -> Dict:
    """hdk_any / all_of / unchecked / recommended of one requirement cell (see the module docstring); `hdk_cell` the
    cell whose "recommended" softens the HDK requirement (the whole cell when not given)."""
    text = _BR.sub(" ", cell)
    hdk_any: List[str] = []
    for m in _RANGE.finditer(text):
        low = _trailing_number(text[:m.start()])
        if low:
            hdk_any.append(f"hdk>={low},hdk<{m.group(1)}")
    for m in _HDK.finditer(text):
        hdk_any.append(f"hdk>={m.group(1)}" + (f",mooncake>={m.group(2)}" if m.group(2) else ""))
    all_of = [f"cann>={m.group(1)}" for m in _CANN.finditer(text)]
    unchecked = [f"LingQu Computing Network >= {m.group(1)}" for m in _LINGQU.finditer(text)]
    return {"hdk_any": hdk_any, "all_of": all_of, "unchecked": unchecked,
            "recommended": bool(re.search(r"recommended", hdk_cell or text, re.I)) and bool(hdk_any)}


def _trailing_number(text: str) -> str:
    """The version number `text` ends with ('25.5.0' of 'HDK 25.5.0 '), '' when none: read without a regex (a
    pattern anchored at the end backtracks over a long run of digits)."""
    t = text.rstrip()
    i = len(t)
    while i > 0 and (t[i - 1].isdigit() or t[i - 1] == "."):
        i -= 1
    return t[i:].strip(".") if any(c.isdigit() for c in t[i:]) else ""


def _cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(lines: List[str], start: int) -> List[Tuple[int, List[str]]]:
    """(line number, cells) of the markdown table that follows line `start` (its header and rule skipped)."""
    i = start + 1
    while i < len(lines) and not lines[i].lstrip().startswith("|"):
        i += 1
    rows = []
    for j in range(i + 2, len(lines)):
        if not lines[j].lstrip().startswith("|"):
            break
        rows.append((j + 1, _cells(lines[j])))
    return rows


def _rows_of(text: str, path: str) -> List[Dict]:
    lines = text.splitlines()
    out: List[Dict] = []
    fenced = False
    for k, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced  # a `# … see 5.1 Environment Variables Description` comment in a script is no heading
        if fenced or not re.match(r"#{1,6}\s", line) or not any(h in line for h in HEADINGS):
            continue
        wide = "HDK Requirement" not in "".join(lines[k:k + 6])  # the 0.16-0.29 shape (export in its own column)
        for no, cells in _table(lines, k):
            if len(cells) < 4 or family(cells[0]) is None:
                continue
            if wide:
                says, exports = cells[1], cells[2]
            else:
                says, exports = f"HDK {cells[1]}; CANN {cells[2]}; {cells[3]}", cells[3]
            req = clauses(says) if wide else clauses(_shape_b(cells), hdk_cell=cells[1])
            if not req["hdk_any"] and not req["all_of"]:
                continue
            for name, value in _EXPORT.findall(exports):
                value = value[1:-1] if value[:1] in "'\"" and value[-1:] == value[:1] else value
                flat = " ".join(_BR.sub("; ", says).split())
                out.append({"id": requirement_id(name, value, family(cells[0]), flat), "variable": name,
                            "value": value, "hardware": family(cells[0]), **req, "says": flat,
                            "where": f"{path}:{no}"})
        break
    return out


def _shape_b(cells: List[str]) -> str:
    """0.30.0rc2's cells as the clause reader reads the older shape: `>= 26.0 or >= 25.5 (with Mooncake >= v0.3.11)`
    under "HDK Requirement" is `HDK >= 26.0 or HDK >= 25.5 with mooncake >= v0.3.11`."""
    hdk = re.sub(r"(?i)mooncake", "mooncake", cells[1])
    hdk = re.sub(r"(?<![A-Za-z])>=", "HDK >=", hdk).replace("mooncake HDK >=", "mooncake >=")
    cann = re.sub(r"(?<![A-Za-z])>=", "CANN >=", cells[2])
    return f"{hdk} {cann} {cells[3]}"


def read_kv_pool_env(read: Callable[[str], Optional[str]]) -> List[Dict]:
    """The rows of one release (its guide's table; [] when the release has none)."""
    for path in GUIDES:
        text = read(path)
        if text is None:
            continue
        rows = _rows_of(text, path)
        if rows:
            return rows
    return []


def merge_kv_pool_env(per_release: Dict[str, Tuple[List[Dict], str]]) -> Dict[str, Dict]:
    """id -> row over several releases (version -> (its rows, its source label)): every release whose guide says
    it, and where the newest one does."""
    from ascend_doctor.sync.diff import merge_release_rows

    return merge_release_rows(per_release, lambda source, r: f"{source}:{r['where']}")


def kv_pool_env_proposals(table, extracted: Dict[str, Dict]) -> List:
    """A proposal for each row the table does not record, and for a recorded one a release read also says."""
    from ascend_doctor.sync.diff import release_row_proposals

    return release_row_proposals(
        "kv_pool_env", table.requirement if table is not None else [], extracted,
        lambda f: f"vllm-ascend {', '.join(f['releases'])}: {f['variable']}={f['value']} on {f['hardware']} needs "
                  f"{f['says']}",
        lambda more: f"also in vllm-ascend {', '.join(more)}'s guide")
