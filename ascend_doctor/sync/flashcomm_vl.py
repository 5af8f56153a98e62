"""`matrix sync` for the `serve/flashcomm-vl` table: what each vllm-ascend release says and does about FlashComm1
(its sequence parallelism by custom ops) on a VL model — read from the release itself, in three places:

* its sequence-parallelism guide (docs/source/user_guide/feature_guide/sequence_parallelism.md, 0.15.0rc1-0.26.0rc1),
  the "Support Matrix" tables "Without Quantization" and "With Quantization": one row per feature
  (`Sequence Parallelism`, `Flash Comm V1`), one column per model class (`VL + Dense`, `VL + MoE`, `non-VL + Dense`,
  `non-VL + MoE`), each cell `x` or the modes it runs in (`graph`, `eager/graph`);
* whether vllm_ascend/platform.py refuses it at start (the `VL models doesn't support FLASHCOMM` ValueError of
  0.11.0rc2-0.14.0rc1, the `Flash Comm V1 is not supported for VL models` assert of 0.15.0rc1-0.17.0rc1 — absent from
  the v0.13.0 branch's 0.13.0rc2-0.13.0, which lifted it for Qwen3-VL, vllm-ascend#5848);
* the models its own tutorials serve with FlashComm1 on (a tutorial is the maintainers' statement of a deployment
  that works: where the guide's `x` and a tutorial disagree, the check says so rather than pick one);
* which VL models its code adapts FlashComm1 to: Qwen3-VL when vllm_ascend/patch/worker/patch_qwen3vl.py chunks the
  deepstack embeddings per TP rank (`_get_deepstack_input_embeds = tensor_parallel_wrap(…)`), VL models with MLA when
  vllm_ascend/ops/mla.py asks `is_vl_model` (vllm-ascend#7390, "Support Flash Comm V1 for VL models (with MLA)").

The guide's cells are copied as written; ascend_doctor.knowledge.flashcomm_vl says what a row claims.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Dict, List, Optional, Tuple

GUIDE = "docs/source/user_guide/feature_guide/sequence_parallelism.md"
PLATFORM = "vllm_ascend/platform.py"
QWEN3_VL_PATCH = "vllm_ascend/patch/worker/patch_qwen3vl.py"
MLA = "vllm_ascend/ops/mla.py"
COLUMNS = {"vl + dense": "vl_dense", "vl + moe": "vl_moe", "non-vl + dense": "dense", "non-vl + moe": "moe"}
FEATURES = {"flash comm v1": "flashcomm1", "sequence parallelism": "sp"}
TABLES = {"without quantization": "unquantized", "with quantization": "quantized"}
_REFUSAL = re.compile(r"VL models doesn't support FLASHCOMM|Flash Comm V1 is not supported for VL models", re.I)


def _cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_guide(text: Optional[str]) -> Tuple[Dict[str, Dict[str, Dict[str, str]]], Dict[str, int]]:
    """({"unquantized"|"quantized": {feature: {column: cell}}}, {table: the line its Flash Comm V1 row is on}); empty
    when the release has no guide or its guide no such table."""
    out: Dict[str, Dict[str, Dict[str, str]]] = {}
    lines_at: Dict[str, int] = {}
    table: Optional[str] = None
    header: Optional[List[str]] = None
    for no, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#"):
            title = stripped.lstrip("#").strip().lower()
            table, header = TABLES.get(title), None
            continue
        if table is None or not stripped.startswith("|"):
            continue
        cells = _cells(stripped)
        if header is None:
            header = [COLUMNS.get(c.lower(), "") for c in cells]
            continue
        feature = FEATURES.get(cells[0].lower())
        if feature is None:
            continue  # the rule line, or a row of another feature
        out.setdefault(table, {})[feature] = {col: cell for col, cell in zip(header[1:], cells[1:]) if col}
        if feature == "flashcomm1":
            lines_at[table] = no
    return out, lines_at


def fc1_tutorial_models(read: Callable[[str], Optional[str]], listdir) -> List[str]:
    """The models the release's own tutorials serve with FlashComm1 on (`VLLM_ASCEND_ENABLE_FLASHCOMM1=1` or the
    older variable exported before the command, `"enable_flashcomm1": true` in its --additional-config), by the
    directory name they give (`Qwen3.5-397B-A17B-w8a8-mtp`), sorted; a placeholder (`<MODEL_PATH>`, `$MODEL`,
    `your_model_path`) is skipped."""
    from ascend_doctor.sync.tutorials import model_of, read_tutorials
    from ascend_doctor.text.jsonread import loads

    out = set()
    for cmd in read_tutorials(read, listdir):
        on = any(str(cmd.env.get(v, "")).lower() in ("1", "true") for v in ("VLLM_ASCEND_ENABLE_FLASHCOMM1",
                                                                              "VLLM_ASCEND_ENABLE_FLASHCOMM"))
        for k, word in enumerate(cmd.argv):
            value = word.split("=", 1)[1] if word.startswith("--additional-config=") else \
                cmd.argv[k + 1] if word == "--additional-config" and k + 1 < len(cmd.argv) else None
            try:
                on = on or (value is not None and loads(value).get("enable_flashcomm1") is True)
            except (ValueError, AttributeError):
                pass
        model = model_of(cmd)
        name = model.rstrip("/").rsplit("/", 1)[-1] if model else ""
        if on and name and not any(c in name for c in "$<>{}") and "your" not in name.lower():
            out.add(name)
    return sorted(out)


def read_flashcomm_vl(read: Callable[[str], Optional[str]], listdir=None) -> List[Dict]:
    """The one row of a release (as a list, the shape the other per-release readers give); [] when its platform.py
    is not in the tree. `listdir` lists the tree's folders, for its tutorials (none: the tutorials are not read)."""
    platform = read(PLATFORM)
    if platform is None:
        return []
    guide, lines_at = read_guide(read(GUIDE))
    refusal = _refusal_line(platform)
    where = [f"{GUIDE}:{lines_at[t]}" for t in TABLES.values() if t in lines_at]
    if refusal:
        where.append(f"{PLATFORM}:{refusal}")
    adapted = []
    patch = read(QWEN3_VL_PATCH) or ""
    if "_get_deepstack_input_embeds = tensor_parallel_wrap" in patch.replace("\n", "").replace("(    ", "("):
        adapted.append("qwen3_vl")
        where.append(f"{QWEN3_VL_PATCH} (tensor_parallel_wrap of _get_deepstack_input_embeds)")
    if "is_vl_model(" in (read(MLA) or ""):
        adapted.append("mla")
        where.append(f"{MLA} (is_vl_model)")
    runs = fc1_tutorial_models(read, listdir) if listdir is not None else []
    if runs:
        where.append("docs/source/tutorials/ (the commands that turn FlashComm1 on)")
    row = {"guide": guide.get("unquantized", {}), "guide_quantized": guide.get("quantized", {}),
           "refuses": refusal is not None, "adapted": adapted, "tutorials": runs}
    return [{"id": row_id(row), **row, "where": where}]


def _refusal_line(platform: str) -> Optional[int]:
    """The line of platform.py where its refusal message starts, None when it has none. The message may be split
    over two string literals on two lines (`"Currently, VL models doesn't support "` / `"FLASHCOMM in …"`): each
    line is read with the literal on the next one."""
    lines = platform.splitlines()
    for no, line in enumerate(lines, 1):
        following = lines[no].strip() if no < len(lines) else ""
        joined = line.rstrip().rstrip("\"'") + following.lstrip("f\"'")
        if _REFUSAL.search(line) or _REFUSAL.search(joined):
            return no
    return None


def row_id(row: Dict) -> str:
    said = repr((sorted((k, sorted(v.items())) for k, v in row["guide"].items()),
                 sorted((k, sorted(v.items())) for k, v in row["guide_quantized"].items()),
                 row["refuses"], row["adapted"], row["tutorials"]))
    return "FCVL-" + hashlib.sha256(said.encode()).hexdigest()[:10]


def merge_flashcomm_vl(per_release: Dict[str, Tuple[List[Dict], str]]) -> Dict[str, Dict]:
    """id -> row over several releases: every release that says and does the same, and where the newest one
    says it."""
    from ascend_doctor.sync.diff import merge_release_rows

    return merge_release_rows(per_release, lambda source, r: [f"{source}:{w}" for w in r["where"]] or [source])


def flashcomm_vl_proposals(table, extracted: Dict[str, Dict]) -> List:
    """A proposal for each row the table does not record, and for a recorded one a release read also says."""
    from ascend_doctor.sync.diff import release_row_proposals

    return release_row_proposals(
        "flashcomm_vl", table.release if table is not None else [], extracted,
        lambda f: (f"vllm-ascend {', '.join(f['releases'])}: FlashComm1 on VL models "
                   f"{'refused' if f['refuses'] else 'not refused'}, guide {f['guide'].get('flashcomm1') or 'absent'}"
                   f", adapted {', '.join(f['adapted']) or 'none'}"),
        lambda more: f"also in vllm-ascend {', '.join(more)}")
