"""Which model, and which features, a vllm-ascend fix names in its subject: the tracker's known bugs, judged before
launch (SERVE320).

The release notes' "Known issues" list a handful of failures per release; the fixes a release does *not* carry are
its other known bugs, and the `signatures/release-fixes` table already holds them, read from the project's git
history with the first release that carries each. A fix's subject usually says what it is for — "[BugFix] Fix
Qwen3-Next …", "[Bugfix] fix dsv32 MTP in FULL_DECODE_ONLY" — so a deployment serving that model with those features
on a release below the fix runs code its maintainers have since corrected.

A fix is judged when it names a model (in its subject, or by changing only that model's files) or, naming none, a
combination of at least two features: a fix of a shared file for one feature (the model runner, the attention
backend) could touch any deployment and says nothing specific about this one. The model is recognised by the names
vLLM itself uses for models — every architecture (its class name without `ForCausalLM` and the like) and model_type
of the recorded `vllm_models` rows — compared with letters and digits only (`Qwen3-Next`, `qwen3_next` and
`Qwen3Next` are one name), plus the short spellings vllm-ascend's commit subjects use for DeepSeek (ABBREVIATIONS).
The features are the names of ascend_doctor.knowledge.serve_features, found by the words a subject uses for them
(FEATURE_WORDS); a fix that names features applies only where the command uses every one of them, and one that
names a condition the doctor cannot tell (UNJUDGED_WORDS) is left unjudged rather than claimed.

A fix confined to one KV connector's code (connector_areas: the files of the modules vllm-ascend's register_connector
calls load, read per release into `serve/names-vllm-ascend`) is that connector's, as a fix confined to one model's
files is that model's: it applies to a command whose --kv-transfer-config names the connector, and to no other.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Optional

from ascend_doctor.knowledge.support_matrix import arch_stem, norm

# Class-name endings vLLM's architectures carry (the stem is the model's name): the support matrix's, and the
# draft and embedding classes' (`DeepSeekMTPModel` is DeepSeek's), which fix subjects name by the model.
_HEADS = ("ForConditionalGeneration", "ForSequenceClassification", "ForCausalLM", "LMHeadModel", "ForEmbedding",
          "MTPModel", "MTP", "Model")

# Short spellings of vllm-ascend's commit subjects (counted in signatures/release-fixes: `dsv4` 12 subjects, `dsv3`
# 10, `dsv32`/`DSV3.2` among them) -> the model name they stand for. DeepSeek-R1 is DeepSeek-V3's architecture
# (config.json model_type deepseek_v3); Kimi-K2 declares both its own model_type and DeepseekV3ForCausalLM, so it
# needs no entry.
ABBREVIATIONS = {"dsv3": "deepseekv3", "dsv31": "deepseekv3", "deepseekv31": "deepseekv3", "dsr1": "deepseekv3",
                 "deepseekr1": "deepseekv3", "dsv32": "deepseekv32", "ds32": "deepseekv32", "deepseek32": "deepseekv32",
                 "dsv4": "deepseekv4"}

# Names too general to stand for one model in a subject ("Fix model loading", "[Model] …").
_GENERIC = {"model", "models", "base", "transformers", "mtp", "eagle", "eagle3", "medusa", "mlp", "moe", "vit",
            "bert", "phi", "step", "glm", "mamba", "llava", "deepseek"}

# A word's edge, between a letter or digit and anything else (`\b` would not end `int8` in `Qwen3_32b_int8`: `_` is
# a word character to it).
_B = r"(?:(?<![A-Za-z0-9])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?![A-Za-z0-9]))"

# The words subjects use for a feature -> its ascend_doctor.knowledge.serve_features name.
FEATURE_WORDS: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p.format(B=_B), re.I), name) for p, name in (
    (r"{B}mtp{B}", "MTP"),
    (r"{B}eagle-?3{B}", "Eagle3"),
    (r"{B}suffix[ _-]?decod", "Suffix Decoding"),
    (r"{B}expert[ _-]?parallel|{B}EP{B}", "EP"),
    (r"{B}data[ _-]?parallel|{B}DP{B}", "DP"),
    (r"{B}pipeline[ _-]?parallel|{B}PP{B}", "Pipeline Parallel"),
    (r"{B}PCP{B}|prefill[ _-]?context[ _-]?parallel", "PCP"),
    (r"{B}DCP{B}|decode[ _-]?context[ _-]?parallel", "Context Parallel"),
    (r"{B}P/?D{B}|disaggregat", "Prefill-decode Disaggregation"),
    (r"kv[ _-]?pool|ascend[ _-]?store", "KV Cache Pool"),
    (r"full[ _-]?decode[ _-]?only", "ACLGraph Full_Decode_Only"),
    (r"acl[ _-]?graph|full[ _-]?graph|graph[ _-]?mode|cuda[ _-]?graph|piecewise", "ACL Graph"),
    (r"torchair", "Torchair"),
    (r"{B}eplb{B}", "EPLB"),
    (r"{B}lora{B}", "LoRA"),
    (r"flash[ _-]?comm(?![ _-]?v?2)", "Flashcomm1"),
    (r"{B}mlapo{B}", "Mlapo"),
    (r"sleep[ _-]?mode", "Sleep Mode"),
    (r"chunked[ _-]?prefill", "Chunked Prefill"),
    (r"prefix[ _-]?cach", "Automatic Prefix Cache"),
    (r"{B}w8a8{B}|{B}int8{B}", "W8A8"),
    (r"{B}w4a8{B}", "Quantization W4A8"),
    (r"(?<![A-Za-z])quantiz|{B}quant{B}|{B}fp8{B}|{B}awq{B}|{B}gptq{B}|{B}w4a16{B}|{B}w8a16{B}|{B}int4{B}|modelslim",
     "Quantization"),
    (r"spec(?:ulative)?[ _-]?decod|{B}spec[ _-]decode", "Speculative Decoding"),
    (r"multi[ _-]?stream", "Multistream Moe"),
    (r"async[ _-]?sched", "Async Scheduling"),
))

# The chip a subject names -> the doctor's chip family (ascend_doctor.knowledge.hardware): "[BugFix][310P] …" is a
# fix for a 300I Duo only.
CHIP_WORDS: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(p.format(B=_B), re.I), name) for p, name in (
    (r"{B}310p{B}|{B}300i{B}", "310P"),
    (r"{B}A2{B}", "A2"),
    (r"{B}A3{B}", "A3"),
    (r"{B}A5{B}|ascend[ _-]?950|{B}950(?:dt|pr)?{B}", "A5"),
))

# Words for a condition the doctor cannot tell from a deployment: a fix that names one is not judged (claiming it
# would assert a condition nobody looked at). A later vLLM's adaptation is no bug of a release paired with an older
# one; FlashComm2, sequence parallel, the NZ weight layout, DBO, a C8 KV cache, profiling, RL weight updates, long
# sequences, tool calls and reasoning, pooling and multi-node layouts are not read from the command here; nor is an
# opt-in engine variant (model runner v2, the V0 engine), which a release may not even run with its vLLM. A
# negation (`when X is disabled`, `without X`) turns a feature word around: such a fix is not judged either.
# (Embedding and reranker models are models: _VARIANTS.)
UNJUDGED_WORDS = re.compile(
    r"{B}(?:cp|sp|nz|dbo|rl|c8|a8w8|kv[ _-]?int8)(?=[^A-Za-z0-9]|$)|flash[ _-]?comm[ _-]?v?2|sequence[ _-]?parallel"
    r"|profil|long[ _-]?seq|tool[ _-]?call|tool[ _-]?parser|reasoning|pooling|multi[ _-]?node"
    r"|{B}adapt|upgrade|compat|main2main|{B}vllm[ _-]?v?\d|weight[ _-]?(?:update|sync|reload)"
    r"|{B}disabl|{B}without{B}|{B}w/o{B}|{B}not[ _-]enabl|{B}un[ _-]?quantiz|{B}non[ _-]?quant"
    r"|{B}mrv2{B}|model[ _-]?runner[ _-]?v2|{B}v2[ _-]?(?:runner|worker){B}|worker[ _-]?v2"
    r"|{B}v0(?=[^A-Za-z0-9.]|$)".format(B=_B), re.I)

# The word after a model name that makes it another model of the same architecture: `Qwen3-Embedding` is not the
# chat Qwen3 a fix of it would be claimed for.
_VARIANTS = ("embedding", "reranker", "rerank", "reward", "guard", "ocr")

# Words of a subject or a folder name: letters, digits and dots (`Qwen3.5`, `V3.2`); `-`, `_`, `/`, blanks and
# brackets separate them.
_WORD = re.compile(r"[A-Za-z0-9.]+")
_MAX_WINDOW = 3
_ACTIVE = re.compile(r"^a\d+(?:\.\d+)?b$", re.I)  # `A3B`, `A22B`: a MoE checkpoint's active parameters


def stem(name: str) -> str:
    """An architecture's model name, normalized: `Qwen3NextForCausalLM` -> qwen3next, `DeepseekV32ForCausalLM` ->
    deepseekv32; a model_type as it is (`qwen3_next` -> qwen3next)."""
    return arch_stem(name, _HEADS)


def vocabulary(architectures: Iterable[str], model_types: Iterable[str]) -> frozenset:
    """Every model name vLLM uses (architecture stems and model_types), normalized, without the general ones."""
    names = {stem(a) for a in architectures} | {norm(t) for t in model_types}
    return frozenset(n for n in names if len(n) >= 3 and not n.isdigit()) - _GENERIC


def _canonical(key: str, vocab: frozenset) -> Optional[str]:
    key = ABBREVIATIONS.get(key, key)
    return key if key in vocab or key in ABBREVIATIONS.values() else None


def _scan(words: list[str], vocab: frozenset, starts: Iterable[int]) -> list[tuple[str, int]]:
    """(model name, the index of its last word) of the longest model name beginning at each start (joining up to
    three words), left to right, never overlapping: `Qwen3 Next` is qwen3next, not qwen3. A variant word after it
    (`Qwen3-Embedding`) makes it that variant (qwen3embedding), which only a folder of that name matches."""
    found, covered = [], -1
    for i in starts:
        if i <= covered:
            continue
        best = None
        for j in range(i + 1, min(len(words), i + _MAX_WINDOW) + 1):
            hit = _canonical(norm("".join(words[i:j])), vocab)
            if hit is not None:
                best = (hit, j - 1)
        if best is not None:
            key, last = best
            if last + 1 < len(words) and words[last + 1].lower() in _VARIANTS:
                key, last = key + words[last + 1].lower(), last + 1
            found.append((key, last))
            covered = last
    return found


def subject_models(subject: str, vocab: frozenset) -> list[str]:
    """The model names a fix's subject gives (normalized, as `stem` spells them)."""
    words = _WORD.findall(re.sub(r"\(#\d+\)|#\d+", " ", subject))
    return list(dict.fromkeys(key for key, _ in _scan(words, vocab, range(len(words)))))


def subject_features(subject: str) -> list[str]:
    """The serve_features names a subject uses words for."""
    return list(dict.fromkeys(name for pat, name in FEATURE_WORDS if pat.search(subject)))


def subject_chips(subject: str) -> list[str]:
    """The chip families a subject names ([310P], A3, Ascend950)."""
    return list(dict.fromkeys(name for pat, name in CHIP_WORDS if pat.search(subject)))


def folder_model(path: str, vocab: frozenset) -> Optional[tuple[str, str]]:
    """(the model name a checkpoint folder's name begins with, as the folder spells it) — `/models/Qwen3-Next-80B`
    -> (qwen3next, Qwen3-Next) — or None: what a paste without the model's config.json shows of it."""
    base = path.rstrip("/").rsplit("/", 1)[-1]
    spans = [(m.group(), m.end()) for m in _WORD.finditer(base)]
    hits = _scan([w for w, _ in spans], vocab, [0])
    if not hits:
        return None
    key, last = hits[0]
    if key + "moe" in vocab and any(_ACTIVE.match(w) for w, _ in spans[last + 1:]):
        return key + "moe", base  # Qwen3.5-35B-A3B: the active-parameter count names a MoE checkpoint
    return key, base[: spans[last][1]]


def served_keys(config: Optional[dict]) -> set:
    """The served model's names as `stem` spells them: its model_type and each architecture's stem (the text
    config's too, for a multimodal model)."""
    keys: set = set()
    for cfg in (config or {}, (config or {}).get("text_config") or {}):
        if not isinstance(cfg, dict):
            continue
        if isinstance(cfg.get("model_type"), str):
            keys.add(norm(cfg["model_type"]))
        for arch in cfg.get("architectures") or []:
            if isinstance(arch, str):
                keys.add(stem(arch))
    return {ABBREVIATIONS.get(k, k) for k in keys} - {""}


# Directories of vllm-ascend whose files are one model's code: a fix that changes only such files is that model's.
_MODEL_DIRS = re.compile(r"^vllm_ascend/(?:torchair/)?models/(?:torchair_)?([A-Za-z0-9_]+?)(?:_mtp)?(?:\.py|/)")


# vllm-ascend's quantized-checkpoint code: a fix confined to it matters only to a quantized checkpoint.
_QUANT_FILES = re.compile(r"^vllm_ascend/(?:torchair/)?quantization/")


def path_models(functions: Iterable[str], vocab: frozenset) -> Optional[list[str]]:
    """The models whose own files are all a fix changed (`vllm_ascend/models/qwen3_next.py:forward` -> qwen3next),
    or None when it changed any other file."""
    out = []
    for fn in functions:
        m = _MODEL_DIRS.match(fn)
        key = _canonical(norm(m.group(1)), vocab) if m else None
        if key is None:
            return None
        out.append(key)
    return list(dict.fromkeys(out)) or None


def connector_areas(modules: Iterable[str]) -> dict[str, frozenset]:
    """Path (a file, or a directory ending in `/`) -> the connector names registered to load code from it, from
    `Name=module` pairs of every release (a connector moved between releases has an area at each place). A module
    alone among the registered ones in its directory owns the directory (`distributed/kvpool/` is AscendStore's, its
    backends included); one that shares its directory with another connector's module owns only its file
    (`distributed/mooncake_connector.py`)."""
    by_module: dict[str, set] = {}
    for pair in modules:
        name, _, module = pair.partition("=")
        if name and module.startswith("vllm_ascend."):
            by_module.setdefault(module.replace(".", "/"), set()).add(name)
    dirs: dict[str, set] = {}
    for path in by_module:
        dirs.setdefault(path.rsplit("/", 1)[0], set()).add(path)
    out: dict[str, frozenset] = {}
    for path, names in by_module.items():
        parent = path.rsplit("/", 1)[0]
        own_dir = len(dirs[parent]) == 1 and parent.count("/") >= 2  # never vllm_ascend/distributed itself
        key = parent + "/" if own_dir else path + ".py"
        out[key] = out.get(key, frozenset()) | frozenset(names)
    return out


def path_connectors(functions: Iterable[str], areas: dict) -> Optional[list[str]]:
    """The connectors whose code holds every file a fix changed (`…/kv_p2p/mooncake_connector.py:_send` ->
    MooncakeConnectorV1), or None when it changed any other file."""
    out: set = set()
    dirs = tuple(a for a in areas if a.endswith("/"))
    for fn in functions:
        path = fn.split(":", 1)[0]
        hit = areas.get(path)  # a file of its own
        if hit is None and path.startswith(dirs):  # inside a package of its own (one str.startswith over all)
            hit = next(areas[d] for d in dirs if path.startswith(d))
        if hit is None:
            return None
        out |= hit
    return sorted(out) or None


# Feature names that are one feature for the combination rule: MTP, eagle3 and suffix decoding are speculative
# decoding (a `[SpecDecode] … MTP` subject names one feature, not two: three false warnings on the h38c-e holdouts).
# ACL graph itself is on by default, so it never makes a combination; FULL_DECODE_ONLY, a mode chosen by name, does.
_SAME_FEATURE = {"MTP": "Speculative Decoding", "Eagle3": "Speculative Decoding",
                 "Suffix Decoding": "Speculative Decoding"}


def distinct_features(features: Iterable[str]) -> set:
    """The features a fix names, counted as the combination rule counts them (see _SAME_FEATURE)."""
    return {_SAME_FEATURE.get(f, f) for f in features} - {"ACL Graph"}


def _reverted(subjects: Iterable[str]) -> set:
    """The subjects a revert in the history names (`Revert "[BUGFIX] Mtp torchair pd fix (#3449)"`): undone, so no
    release lacks them as fixes."""
    out = set()
    for s in subjects:
        m = re.match(r'\s*Revert\s+"(.+)"', s)
        if m:
            out.add(m.group(1).strip())
    return out


@lru_cache(maxsize=8)
def _conditions(fixes: tuple, vocab: frozenset, areas: tuple) -> tuple:
    undone = _reverted(subject for subject, _ in fixes)
    out = []
    for subject, functions in fixes:
        if subject.lstrip().lower().startswith("revert") or subject.strip() in undone:
            out.append(((), (), (), (), ()))  # a revert, or a fix a revert undid: no release lacks it as a fix
            continue
        models = subject_models(subject, vocab)
        in_files = path_models(functions, vocab)
        if in_files and (not models or not set(models) & set(in_files)):
            models = in_files  # the files it changed are one model's: it is that model's fix, whatever it names
        features = subject_features(subject)
        if functions and all(_QUANT_FILES.match(fn) for fn in functions) and "Quantization" not in features:
            features.append("Quantization")  # it changed only the quantized-checkpoint code
        out.append((tuple(models), tuple(features), tuple(subject_chips(subject)),
                    tuple(dict.fromkeys(m.group().lower() for m in UNJUDGED_WORDS.finditer(subject))),
                    tuple(path_connectors(functions, dict(areas)) or ()) if functions else ()))
    return tuple(out)


def conditions(fixes: list[tuple[str, tuple]], vocab: frozenset, areas: Optional[dict] = None
               ) -> list[tuple[tuple, tuple, tuple, tuple, tuple]]:
    """(models, features, chips, words of conditions the doctor cannot tell, KV connectors) of each (subject,
    functions), cached per table; `areas` from connector_areas."""
    return list(_conditions(tuple((s, tuple(f)) for s, f in fixes), vocab, tuple(sorted((areas or {}).items()))))
