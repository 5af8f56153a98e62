"""What each vllm-ascend release's own support matrix says (the `serve/support-matrix` table, read from
docs/source/user_guide/support_matrix/ of each sdist by `matrix sync`, ascend_doctor.sync.support_matrix), and which
of its rows a served model is.

The docs name models for people ("Qwen3-Moe", "DeepSeek V3/3.1", "Qwen3.5-27B"); a model directory names itself by
config.json (`model_type`, `architectures`) and its folder. A row is the model when one of the row's names, reduced
to lower-case letters and digits, equals the model_type or an architecture without its head (`Qwen3MoeForCausalLM`
-> qwen3moe), or — for a row naming a checkpoint, six characters or more — begins the folder's name (`Qwen3.5-27B`
for /models/Qwen3.5-27B-w8a8). Anything looser would judge a model by another's row.
"""

from __future__ import annotations

import posixpath
import re
from datetime import date
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import release_row

_HEADS = ("ForCausalLM", "ForConditionalGeneration", "LMHeadModel", "ForSequenceClassification", "Model")
# The hardware names the docs use -> the doctor's chip families (ascend_doctor.knowledge.hardware)
_FAMILY = ((re.compile(r"300I|310P", re.I), "310P"), (re.compile(r"950|A5\b", re.I), "A5"),
           (re.compile(r"^A3\b|800I? A3|A3$", re.I), "A3"), (re.compile(r"^A2\b|800I? A2|A2$", re.I), "A2"))


def norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def doc_families(listed: str) -> set:
    """{"A2", "A3"} for "A2/A3", {"310P"} for "Atlas 300I DUO", {"A5"} for "950DT Products"."""
    out = set()
    for part in listed.split("/"):
        fam = next((f for pat, f in _FAMILY if pat.search(part.strip())), None)
        if fam:
            out.add(fam)
    return out


def model_aliases(display: str) -> set:
    """The normalized names one docs row gives (its `_raw_aliases`): `Llama2/3/3.1/3.2` -> llama2, llama3, llama31,
    llama32; `GLM-4.x`; `MiniMax-M2.5/2.7` -> minimaxm25, minimaxm27."""
    return {norm(a) for a in _raw_aliases(display)} - {""}


def arch_stem(arch: str, heads: tuple = _HEADS) -> str:
    """An architecture's model name, normalized: its class name without the first of `heads` it ends with
    (`Qwen3NextForCausalLM` -> qwen3next)."""
    for head in heads:
        if arch.endswith(head) and len(arch) > len(head):
            arch = arch[: -len(head)]
            break
    return norm(arch)


def model_keys(model) -> tuple[set, str]:
    """(normalized model_type and architecture names, normalized folder name) of a served model."""
    cfg = getattr(model, "config", None) or {}
    keys = set()
    if isinstance(cfg.get("model_type"), str):
        keys.add(norm(cfg["model_type"]))
    for arch in cfg.get("architectures") or []:
        if isinstance(arch, str):
            keys.add(arch_stem(arch))
    return keys - {""}, norm_folder(getattr(model, "path", None) or getattr(model, "model", "") or "")


def norm_folder(path: str) -> str:
    """The last part of a model path or hub id as row names are compared with it (`/models/Qwen3.5-27B_w8a8/` ->
    qwen3.5-27b-w8a8): lower case, blanks and `_` as `-`."""
    return _raw(posixpath.basename(path.rstrip("/")))


def folder_aliases(display: str, folder: str) -> list[str]:
    """The names of a docs row that begin the folder's name at a word boundary (`glm-5.1` for `glm-5.1-w8a8`, not
    `glm-5` for `glm-5.2-w8a8`), as `_raw_aliases` spells them."""
    if not folder:
        return []
    return [a for a in _raw_aliases(display) if _begins(folder, a) or _begins(_joined(folder), _joined(a))]


def is_model(display: str, keys: set, folder: str) -> bool:
    """One docs row is this model: a name of the row is its model_type or architecture, or begins its folder's name
    at a word boundary with at least 6 letters and digits or with a dotted version (a family's bare name, `Qwen3`,
    never stands for one checkpoint on its own; rows_of picks the most specific row instead; `GLM-5.2` names one
    generation, whose model_type glm_moe_dsa GLM-5 and GLM-5.1 share)."""
    return bool(model_aliases(display) & keys) or any(len(norm(a)) >= 6 or _DOTTED.search(a)
                                                       for a in folder_aliases(display, folder))


_DOTTED = re.compile(r"[a-z]-?\d{1,3}\.\d")


def _same_checkpoint(a: str, b: str) -> bool:
    """Equal folder names, or one beginning the other at a word boundary (`…-w8a8sc-310` of `…-w8a8sc-310-vllm`, not
    `…-w8a8` of `…-w8a8sc-310`) where the shorter has at least 12 characters; a `-` between a letter and a digit is
    not a difference (an h38k false warning: the tutorial spelled the name without it)."""
    a, b = _joined(a), _joined(b)  # `GLM-4.5-Air` and `GLM4.5-Air` are one spelling, as row names are matched
    short, long_ = sorted((a, b), key=len)
    return a == b or (len(short) >= 12 and _begins(long_, short))


class ReleaseSupport(Model, extra="forbid", frozen=True):
    version: str
    source: str
    where: list[str] = []
    models: list[str] = []  # every model row's name, whatever its cells say
    not_supported: list[str] = []  # models whose `Support` is ❌
    notes: list[str] = []  # "model: issue link" for those
    model_feature: list[str] = []  # "model [hardware]: feature" marked ❌
    feature_pairs: list[str] = []  # "A + B" marked ❌ in feature_matrix.md
    hardware: list[str] = []  # "model: A2/A3"
    tutorial_pairs: list[str] = []  # "A + B: models/X.md:149, …": ❌ pairs the release's own tutorials run together
    tutorial_lengths: list[str] = []  # "A2: 140000 models/GLM4.x.md:192": the longest context its tutorials run
    tutorial_models: list[str] = []  # "310P: Eco-Tech/Qwen3-32B-w8a8sc-310-vllm/… hardwares/310p.md:158": served where

    def tutorial_serving(self, model_path: str, families: set) -> str:
        """Where the release's own tutorials serve this checkpoint on one of `families` ("310P hardwares/310p.md:158";
        "" when none does). The checkpoint is matched by its folder's name against the tutorial's path components:
        equal, or one a prefix of the other up to a separator where the shorter has at least 12 characters (a renamed
        download, `Qwen3-32B-w8a8sc-310` for `Qwen3-32B-w8a8sc-310-vllm`): a family's bare name never matches."""
        name = norm_folder(model_path)
        for t in self.tutorial_models:
            fam, _, rest = t.partition(": ")
            served, _, where = rest.rpartition(" ")
            if fam in families and any(_same_checkpoint(name, _raw(part)) for part in served.split("/")):
                return f"{fam} {where}"
        return ""

    def tutorial_checkpoints(self) -> set[str]:
        """The folder names of the checkpoints the release's tutorials serve, on any chip
        (`Qwen3.5-397B-A17B-w8a8-mtp` for "A2: Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp models/Qwen3.5-397B-A17B.md:172")."""
        return {t.partition(": ")[2].rpartition(" ")[0].rstrip("/").rpartition("/")[2] for t in self.tutorial_models}

    def tutorial_length(self, family: str) -> tuple[int, str]:
        """(the longest --max-model-len the release's tutorials run on `family`, where), or (0, "")."""
        for t in self.tutorial_lengths:
            fam, _, rest = t.partition(": ")
            if fam == family:
                n, _, where = rest.partition(" ")
                return int(n), where
        return 0, ""

    def tutorials_running(self, pair: str) -> str:
        """Where the release's tutorials run a pair its feature matrix marks ❌ ("" when none does)."""
        return next((t.split(": ", 1)[1] for t in self.tutorial_pairs if t.startswith(pair + ": ")), "")

    def split(self, entry: str) -> tuple[str, str, str]:
        """("model", "hardware", "feature") of a model_feature entry ("" where absent)."""
        head, _, feature = entry.rpartition(": ")
        m = re.fullmatch(r"(.*) \[(.*)\]", head)
        return (m.group(1), m.group(2), feature) if m else (head, "", feature)

    def note_of(self, model: str) -> str:
        return next((n.split(": ", 1)[1] for n in self.notes if n.startswith(model + ": ")), "")


class SupportMatrixTable(Model, extra="forbid"):
    schema_version: int
    updated: date
    release: list[ReleaseSupport] = Field(min_length=1)

    def row_for(self, version: str, paired: Optional[str] = None) -> tuple[Optional[ReleaseSupport], str]:
        """The release's own row ("exact"), or for a development build the row of the release that pairs its vLLM
        (`paired`: the same weeks of main); never an older release's: its support matrix says nothing about this
        one."""
        return release_row(self.release, version, older=False, paired=paired)


def first_listing(table: "SupportMatrixTable", after: ReleaseSupport, model: Any) -> tuple[Optional[ReleaseSupport],
                                                                                             list[str]]:
    """The first release after `after` whose matrix has rows for this model, and those rows; (None, []) if none."""
    from ascend_doctor.text.versions import parse_version

    start = parse_version(after.version)
    for r in sorted(table.release, key=lambda r: parse_version(r.version)):
        if parse_version(r.version) > start and (rows := rows_of(r, model)):
            return r, rows
    return None, []


def rows_of(release: ReleaseSupport, model: Any) -> list[str]:
    """The display names of the rows (any table) that are this model: by model_type or architecture, and the most
    specific row whose name begins the checkpoint folder's name at a word boundary (`GLM-5.2` for `GLM-5.2-w8a8`,
    not `GLM-5`; `Qwen3-Next` for `Qwen3-Next-80B`, not `Qwen3`; `GLM-5/5.1` for `GLM-5.1-w8a8`)."""
    keys, folder = model_keys(model)
    names = set(release.models) | {e.split(": ", 1)[0] for e in release.hardware} | set(release.not_supported) | {
        release.split(e)[0] for e in release.model_feature}
    found = {n for n in names if is_model(n, keys, "")}
    prefixes = [(len(a), n) for n in names for a in folder_aliases(n, folder) if len(a) >= 4]
    if prefixes:
        longest = max(k for k, _ in prefixes)
        found |= {n for k, n in prefixes if k == longest}
    return sorted(found)


def _raw(name: str) -> str:
    """Lower case, blanks and `_` as `-`."""
    return re.sub(r"[\s_]+", "-", name.replace("(Experimental)", "").replace("(experimental)", "").strip().lower())


def _joined(name: str) -> str:
    """Without a `-` between a letter and a digit: `llama-3.1` is `llama3.1`."""
    return re.sub(r"(?<=[a-z])-(?=\d)", "", name)


def _raw_aliases(display: str) -> set:
    """The names a docs row spells, lower-cased with spaces as `-`: each part of `A/B`; a part that is a version
    alone is the first part at that version (`GLM-5/5.1` -> glm-5, glm-5.1; `Llama2/3/3.1` -> llama2, llama3,
    llama3.1; `DeepSeek V3/3.1` -> deepseek-v3, deepseek-v3.1)."""
    parts = [_raw(p) for p in display.split("/")]
    first = parts[0]
    out = {first}
    for p in parts[1:]:
        if p[:1].isdigit() and all(ch.isdigit() or ch == "." for ch in p):
            out.add(_without_version(first) + p if first[-1:].isdigit() else first + p)
        elif p:
            out.add(p)
    return out - {""}


def _without_version(name: str) -> str:
    """`glm-5.1` -> `glm-`, `deepseek-v3` -> `deepseek-v`: the name without its trailing version (a scan, not a
    pattern: a trailing-version pattern backtracks quadratically on a long run of digits, tests/security)."""
    i = len(name)
    while i > 0 and (name[i - 1].isdigit() or name[i - 1] == "."):
        i -= 1
    while i < len(name) and name[i] == ".":
        i += 1
    return name[:i]


def _begins(folder: str, alias: str) -> bool:
    """`folder` starts with `alias` and the next character ends a word: the end, `-`, or a `.` not followed by a
    digit (`glm-5` does not begin `glm-5.2-w8a8`)."""
    if not folder.startswith(alias):
        return False
    rest = folder[len(alias):]
    return rest == "" or rest[0] == "-" or (rest[0] == "." and not rest[1:2].isdigit())
