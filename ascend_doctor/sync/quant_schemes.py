"""`matrix sync` for the `serve/quant-schemes` table: the msModelSlim quantization types each vllm-ascend release
builds a method for, per layer kind — read from the release itself. A description (quant_model_description.json)
names a type per weight; the release looks the type up for the layer's kind and stops at start when it has no method
(`Currently, vLLM Ascend doesn't support {quant_type} for {layer_type}`, or `only supports following quant types`).

Three shapes over the releases, each read as written:

* 0.9.0rc1-0.9.2rc1: `SUPPORT_ASCEND_QUANTIZER_TYPE = {"W8A8": W8A8Quantizer, …}` in quantization/quantizer.py, each
  quantizer class defining the `build_linear_method` / `build_moe_method` / `build_attention_method` it supports.
  Where quantizer.py first imports `mindie_turbo`, that package's quantizer replaces the release's when installed
  (`mindie_turbo` in the row);
* 0.10.0rc1-0.17.0rc1: `ASCEND_QUANTIZATION_METHOD_MAP = {"W8A8": {"linear": …, "moe": …}, …}` in
  quantization/utils.py;
* later: `@register_scheme("W8A8", "linear")` on the method classes (quantization/methods/).

Beside the types, what decides whether a W4A8_DYNAMIC linear layer's int4 weights are cast to FRACTAL_NZ: whether
its method calls `maybe_trans_nz` / `npu_format_cast` after loading (`w4a8_linear_nz`), the group size it assumes
when the description gives none (`quant_description.get("group_size", 256)`), and the default of
`VLLM_ASCEND_ENABLE_NZ` in vllm_ascend/envs.py (a quantized weight is cast whenever it is not 0).
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Callable, Dict, List, Optional, Tuple

QUANT = "vllm_ascend/quantization"
QUANTIZER = f"{QUANT}/quantizer.py"
METHOD_MAP = f"{QUANT}/utils.py"
ENVS = "vllm_ascend/envs.py"
_REGISTER = re.compile(r"""@register_scheme\(\s*["']([A-Z0-9_]+)["']\s*,\s*["'](\w+)["']\s*\)""")
_BUILD = re.compile(r"build_(\w+)_method")
_W4A8_LINEAR = re.compile(r"^class AscendW4A8DynamicLinearMethod\b.*?(?=^class |\Z)", re.S | re.M)
_GROUP = re.compile(r"""\.get\(\s*["']group_size["']\s*,\s*(\d+)\s*\)""")
_NZ_DEFAULT = re.compile(r"""["']VLLM_ASCEND_ENABLE_NZ["']\s*:\s*lambda\s*:\s*int\(\s*os\.getenv\(\s*["']"""
                         r"""VLLM_ASCEND_ENABLE_NZ["']\s*,\s*["']?(\d+)""")


def _py_files(read: Callable[[str], Optional[str]], listdir, folder: str) -> List[Tuple[str, str]]:
    """(path, text) of every .py file under `folder`, recursively, sorted by path."""
    out = []
    for name in listdir(folder) or []:
        path = f"{folder}/{name}"
        if name.endswith(".py"):
            text = read(path)
            if text is not None:
                out.append((path, text))
        elif "." not in name and name != "__pycache__":
            out.extend(_py_files(read, listdir, path))
    return sorted(out)


def _assigned_dict(text: str, name: str) -> Optional[Tuple[ast.Dict, int]]:
    """The dict literal assigned to `name` at module level (annotated or not), with its line."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.Dict):
            return node.value, node.lineno
    return None


def _keys(d: ast.Dict) -> List[str]:
    return [k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _from_method_map(text: str) -> Optional[Tuple[Dict[str, List[str]], int]]:
    found = _assigned_dict(text, "ASCEND_QUANTIZATION_METHOD_MAP")
    if found is None:
        return None
    d, line = found
    schemes = {}
    for k, v in zip(d.keys, d.values):
        if isinstance(k, ast.Constant) and isinstance(v, ast.Dict):
            schemes[str(k.value)] = sorted(_keys(v))
    return schemes, line


def _from_quantizers(text: str) -> Optional[Tuple[Dict[str, List[str]], int]]:
    found = _assigned_dict(text, "SUPPORT_ASCEND_QUANTIZER_TYPE")
    if found is None:
        return None
    d, line = found
    classes = {node.name: node for node in ast.parse(text).body if isinstance(node, ast.ClassDef)}
    schemes = {}
    for k, v in zip(d.keys, d.values):
        if isinstance(k, ast.Constant) and isinstance(v, ast.Name):
            schemes[str(k.value)] = sorted(_builds(classes, v.id, set()))
    return schemes, line


def _builds(classes: Dict[str, ast.ClassDef], name: str, seen: set) -> set:
    """The layer kinds a quantizer class builds a method for: its own `build_<kind>_method` whose body does more
    than raise (the base class's all raise NotImplementedError), and those of its bases in the same file."""
    node = classes.get(name)
    if node is None or name in seen:
        return set()
    seen.add(name)
    own, refused = set(), set()
    for f in node.body:
        m = _BUILD.fullmatch(f.name) if isinstance(f, ast.FunctionDef) else None
        if m:
            body = [b for b in f.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
            (refused if len(body) == 1 and isinstance(body[0], ast.Raise) else own).add(m.group(1))
    inherited = set().union(*(_builds(classes, b.id, seen) for b in node.bases if isinstance(b, ast.Name)))
    return own | (inherited - refused)


def _from_registry(files: List[Tuple[str, str]]) -> Tuple[Dict[str, List[str]], List[str]]:
    schemes: Dict[str, set] = {}
    where = []
    for path, text in files:
        hits = list(_REGISTER.finditer(text))
        for m in hits:
            schemes.setdefault(m.group(1), set()).add(m.group(2))
        if hits:
            where.append(f"{path}:{text.count(chr(10), 0, hits[0].start()) + 1}")
    return {k: sorted(v) for k, v in schemes.items()}, where


def read_quant_schemes(read: Callable[[str], Optional[str]], listdir) -> List[Dict]:
    """The one row of a release (as a list, the shape the other per-release readers give); [] when the release
    builds its quantization methods in none of the three shapes (0.7.x-0.8.x hand them to mindie_turbo)."""
    files = _py_files(read, listdir, QUANT)
    schemes, where = _from_registry(files)
    how = "registry"
    quantizer = read(QUANTIZER) or ""
    if not schemes:
        for path, reader, shape in ((METHOD_MAP, _from_method_map, "method map"),
                                    (QUANTIZER, _from_quantizers, "quantizer classes")):
            found = reader(read(path) or "")
            if found is not None and found[0]:
                schemes, how, where = found[0], shape, [f"{path}:{found[1]}"]
                break
    if not schemes:
        return []
    w4a8 = next((m.group(0) for _, text in files for m in [_W4A8_LINEAR.search(text)] if m), "")
    group = _GROUP.search(w4a8)
    nz = _NZ_DEFAULT.search(read(ENVS) or "")
    row = {"schemes": schemes, "how": how,
           "mindie_turbo": "import_module(\"mindie_turbo\")" in quantizer.replace("'", '"'),
           "w4a8_linear_nz": bool(w4a8) and ("maybe_trans_nz(" in w4a8 or "npu_format_cast(" in w4a8),
           "w4a8_group_default": int(group.group(1)) if group else None,
           "nz_default": int(nz.group(1)) if nz else None}
    return [{"id": row_id(row), **row, "where": where}]


def row_id(row: Dict) -> str:
    said = repr((sorted(row["schemes"].items()), row["how"], row["mindie_turbo"], row["w4a8_linear_nz"],
                 row["w4a8_group_default"], row["nz_default"]))
    return "QS-" + hashlib.sha256(said.encode()).hexdigest()[:10]


def merge_quant_schemes(per_release: Dict[str, Tuple[List[Dict], str]]) -> Dict[str, Dict]:
    """id -> row over several releases: every release that builds the same methods, cited at the newest one."""
    from ascend_doctor.sync.diff import merge_release_rows

    return merge_release_rows(per_release, lambda source, r: [f"{source}:{w}" for w in r["where"]] or [source])


def quant_scheme_proposals(table, extracted: Dict[str, Dict]) -> List:
    """A proposal for each row the table does not record, and for a recorded one a release read also holds."""
    from ascend_doctor.sync.diff import release_row_proposals

    return release_row_proposals(
        "quant_schemes", table.release if table is not None else [], extracted,
        lambda f: (f"vllm-ascend {', '.join(f['releases'])}: quantization methods for "
                   + ", ".join(f"{k} ({'/'.join(v) or 'none'})" for k, v in sorted(f["schemes"].items()))),
        lambda more: f"also in vllm-ascend {', '.join(more)}")
