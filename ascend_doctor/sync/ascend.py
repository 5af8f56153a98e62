"""vllm-ascend, from a checkout or an sdist: the official release table, and what one release's own files pin.

The official "Release compatibility matrix" lives in docs/source/community/versioning_policy.md (in
docs/source/developer_guide/ before v0.9). Its columns moved over time (Mooncake and Triton Ascend were added,
"PyTorch/torch_npu" is one cell), so columns are found by their header text, not their position. A release's own
files say what pip installs: Requires-Dist of PKG-INFO (requirements.txt in a checkout), README's "CANN == X" and
the Dockerfile's base image. Where the table and the release's own files disagree, both are reported; deciding
which one the matrix records is the maintainer's call (see the header of the matrix's vllm-ascend.toml).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ascend_doctor.core.model import Model
from ascend_doctor.sync.archive import Tree
from ascend_doctor.sync.metadata import read_metadata

TABLE_PATHS = ("docs/source/community/versioning_policy.md", "docs/source/developer_guide/versioning_policy.md")
HEADING = re.compile(r"^#+\s*Release compatibility matrix", re.IGNORECASE | re.MULTILINE)
_NA = {"", "n/a", "na", "-", "—"}


class TableRow(Model):
    """One row of the official release table, as written."""

    version: str
    vllm: List[str]
    python: Optional[str] = None  # a specifier (">=3.10,<3.13"), None when the cell is not one
    python_text: str = ""
    cann: Optional[str] = None
    torch: Optional[str] = None
    torch_npu: Optional[str] = None
    triton_ascend: Optional[str] = None
    mooncake: Optional[str] = None
    mindie_turbo: Optional[str] = None  # the MindIE Turbo column (v0.7.3-v0.9.1 tables): empty but for v0.7.3(.post1)


class AscendTable(Model):
    path: str  # "<archive>:<file>" as sources cite it
    tree_version: str = ""  # the vllm-ascend version of the tree the copy was read from
    rows: List[TableRow] = []
    newest: bool = False  # set by merge_tables on the copy read from the newest tree


class AscendOwn(Model):
    """What one vllm-ascend release's own files say."""

    version: str
    archive: str
    requires_python: str = ""
    pins: Dict[str, str] = {}  # torch, torch-npu, triton-ascend -> pinned version
    transformers: Optional[str] = None  # Requires-Dist specifier
    readme_cann: Optional[str] = None
    readme_python: Optional[str] = None  # "Python >= 3.10, < 3.13" in README.md, as a specifier
    dockerfile_cann: Optional[str] = None
    vllm_tag: Optional[str] = None
    mooncake: Optional[str] = None  # the Dockerfile's MOONCAKE_TAG (mooncake-transfer-engine-npu)
    ops_cann: Optional[str] = None  # csrc/version.info `Version=`: the CANN the custom ops were built against
    ops_cann_requires: Optional[str] = None  # its `required_package_runtime_version` (">=9.1.0")
    where: Dict[str, str] = {}  # field -> file read


def _strip_v(text: str) -> str:
    text = text.strip().strip("`")
    return text[1:] if re.match(r"^[vV]\d", text) else text


def _cell(text: str) -> Optional[str]:
    t = text.strip()
    return None if t.lower() in _NA else _strip_v(t)


def _python_spec(text: str) -> Optional[str]:
    """'>= 3.10, < 3.13' -> '>=3.10,<3.13'; anything else (e.g. '3.9 - 3.12') is not a specifier: None."""
    t = re.sub(r"\s+", "", text)
    if re.fullmatch(r"(?:(?:>=|<=|==|<|>|!=)\d+\.\d+(?:\.\d+)?,?)+", t):
        return t.rstrip(",")
    return None


def _columns(header: List[str]) -> Dict[str, int]:
    cols: Dict[str, int] = {}
    for i, h in enumerate(header):
        k = h.strip().lower()
        if "ascend" in k and "vllm" in k:
            cols["version"] = i
        elif k == "vllm":
            cols["vllm"] = i
        elif "python" in k:
            cols["python"] = i
        elif "cann" in k:
            cols["cann"] = i
        elif "torch_npu" in k or "pytorch" in k or "torch" in k:
            cols.setdefault("torch", i)
        elif "triton" in k:
            cols["triton_ascend"] = i
        elif "mooncake" in k:
            cols["mooncake"] = i
        elif "mindie" in k:
            cols["mindie_turbo"] = i
    return cols


def _split_row(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_release_table(text: str) -> List[TableRow]:
    """Rows of the first markdown table under the "Release compatibility matrix" heading (release rows only: the
    `main` row and template rows are skipped)."""
    m = HEADING.search(text)
    if m is None:
        return []
    lines = text[m.end():].splitlines()
    rows: List[TableRow] = []
    cols: Dict[str, int] = {}
    in_table = False
    for line in lines:
        s = line.strip()
        if not s.startswith("|"):
            if in_table:
                break
            if s.startswith("#"):
                break
            continue
        cells = _split_row(s)
        if not in_table:
            cols = _columns(cells)
            in_table = True
            continue
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        if "version" not in cols or "vllm" not in cols or len(cells) <= max(cols.values()):
            continue
        version = _strip_v(cells[cols["version"]])
        if not re.match(r"^\d+\.\d+", version):
            continue
        vllm = [_strip_v(x) for x in cells[cols["vllm"]].split("/") if x.strip()]
        row = TableRow(version=version, vllm=vllm)
        if "python" in cols:
            row.python_text = cells[cols["python"]]
            row.python = _python_spec(row.python_text)
        if "cann" in cols:
            row.cann = _cell(cells[cols["cann"]])
        if "torch" in cols:
            parts = [p.strip() for p in cells[cols["torch"]].split("/")]
            row.torch = _cell(parts[0]) if parts else None
            row.torch_npu = _cell(parts[1]) if len(parts) > 1 else None
        for key in ("triton_ascend", "mooncake", "mindie_turbo"):
            if key in cols:
                setattr(row, key, _cell(cells[cols[key]]))
        rows.append(row)
    return rows


def cite(tree: Tree) -> str:
    """How sources name a tree: `pypi:<file>` for an sdist or wheel (the shipped rows' convention), else its path."""
    return f"pypi:{tree.label}" if tree.label.endswith((".tar.gz", ".tgz", ".whl", ".zip")) else tree.label


def read_release_table(tree: Tree) -> Optional[AscendTable]:
    """The official table in this tree, or None when the tree has none."""
    meta = read_metadata(tree)
    for path in TABLE_PATHS:
        text = tree.read(path)
        if text is not None:
            rows = parse_release_table(text)
            if rows:
                return AscendTable(path=f"{cite(tree)}:{path}", tree_version=meta.version if meta else "", rows=rows)
    return None


_README_CANN = re.compile(r"CANN\s*==\s*([0-9][0-9A-Za-z.\-]*)")
_README_PYTHON = re.compile(r"^\s*[*-]\s*Python\s*((?:(?:>=|<=|==|<|>)\s*\d+\.\d+\s*,?\s*)+)", re.MULTILINE)
_DOCKER_CANN = (re.compile(r'^ARG\s+CANN_VERSION\s*=\s*"?([0-9][^"\s]*)"?', re.MULTILINE),
                re.compile(r"^FROM\s+\S*/cann:([0-9][0-9A-Za-z.]*?)-", re.MULTILINE))
_MOONCAKE_TAG = re.compile(r"^ARG\s+MOONCAKE_TAG\s*=\s*\"?v?([0-9][^\"\s]*)\"?", re.MULTILINE)
_OPS_VERSION = re.compile(r"^Version\s*=\s*\"?([0-9][^\"\s]*)\"?", re.MULTILINE)
_OPS_RUNTIME = re.compile(r"^required_package_runtime_version\s*=\s*\"?([<>=!~][^\"\s]*)\"?", re.MULTILINE)
_VLLM_TAG = re.compile(r"^ARG\s+VLLM_TAG\s*=\s*\"?v?([0-9][^\"\s]*)\"?", re.MULTILINE)
_REQ_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][^\s;#,]*)", re.MULTILINE)


def _requirements_pins(text: str) -> Dict[str, str]:
    from ascend_doctor.knowledge.matrix_schema import normalize_name
    return {normalize_name(n): v for n, v in _REQ_LINE.findall(text)}


def read_own(tree: Tree) -> Optional[AscendOwn]:
    """One release's own pins, README CANN and Dockerfile CANN; None when the tree is not vllm-ascend."""
    meta = read_metadata(tree)
    if meta is None or meta.name.lower().replace("_", "-") != "vllm-ascend":
        return None
    own = AscendOwn(version=meta.version, archive=cite(tree), requires_python=meta.requires_python)
    pins: Dict[str, str] = {}
    for name in ("torch", "torch-npu", "triton-ascend"):
        v = meta.pin(name)
        if v:
            pins[name] = v
            own.where[name] = meta.path
    req = tree.read("requirements.txt")
    if req is not None:
        for name, v in _requirements_pins(req).items():
            if name in ("torch", "torch-npu", "triton-ascend") and name not in pins:
                pins[name] = v
                own.where[name] = "requirements.txt"
    own.pins = pins
    own.transformers = meta.requires.get("transformers") or None
    readme = tree.read("README.md") or ""
    m = _README_CANN.search(readme)
    if m:
        own.readme_cann, own.where["readme_cann"] = m.group(1).rstrip("."), "README.md"
    m = _README_PYTHON.search(readme)
    if m and _python_spec(m.group(1)):
        own.readme_python, own.where["readme_python"] = _python_spec(m.group(1)), "README.md"
    docker = tree.read("Dockerfile") or ""
    for pat in _DOCKER_CANN:
        m = pat.search(docker)
        if m:
            own.dockerfile_cann, own.where["dockerfile_cann"] = m.group(1), "Dockerfile"
            break
    m = _VLLM_TAG.search(docker)
    if m:
        own.vllm_tag = m.group(1)
    m = _MOONCAKE_TAG.search(docker)
    if m:
        own.mooncake, own.where["mooncake"] = m.group(1), "Dockerfile"
    ops = tree.read("csrc/version.info") or ""  # from v0.20.2rc1: the custom-op package's own requirement
    m = _OPS_VERSION.search(ops)
    if m:
        own.ops_cann, own.where["ops_cann"] = m.group(1), "csrc/version.info"
        r = _OPS_RUNTIME.search(ops)
        own.ops_cann_requires = r.group(1) if r else None
    return own


def merge_tables(tables: List[AscendTable]) -> Dict[str, Tuple[TableRow, str]]:
    """version -> (row, source) over several copies of the table: the copy from the newest tree wins, older copies
    fill in rows the newer ones dropped (PR #799 removed the v0.7.x rc rows)."""
    from ascend_doctor.text.versions import try_parse_version

    dated = [(try_parse_version(t.tree_version), t) for t in tables]
    ordered = [t for v, t in sorted(((v, t) for v, t in dated if v is not None), key=lambda p: p[0], reverse=True)]
    ordered += [t for v, t in dated if v is None]
    for t in ordered:
        t.newest = t is ordered[0]
    out: Dict[str, Tuple[TableRow, str]] = {}
    for t in ordered:
        for row in t.rows:
            out.setdefault(row.version, (row, t.path))
    return out
