"""The shipped model catalogue (the `deploy/models` table and the config.json files its rows name): `plan --model
Qwen/Qwen3-32B` works offline. A catalogue entry is read like a model directory's config.json; its checkpoints say which
weight formats vllm-ascend documents for it, and the size is computed from the config (no checkpoint bytes are
claimed)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, Optional

from pydantic import Field

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import derived_max_len, read_architecture, text_config
from ascend_doctor.deploy.modeldir import ModelFiles
from ascend_doctor.deploy.weights import FORMATS, estimate
from ascend_doctor.i18n import T
from ascend_doctor.text.jsonread import loads


class Checkpoint(Model, extra="forbid"):
    format: str
    repo: str
    source: Optional[str] = None
    float_layers: list[Literal["kv_b_proj", "indexer"]] = Field(
        default_factory=list, description="linear layers the quantized checkpoint keeps in floating point "
                                          "(ascend_doctor.deploy.weights.FLOAT_LAYERS)")
    float_source: Optional[str] = None


class CatalogueModel(Model, extra="forbid"):
    id: str
    config: str = Field(description="its config.json, relative to the file that declares the row (absolute once "
                                    "loaded)")
    source: str
    checkpoints: list[Checkpoint] = Field(min_length=1)


class Catalogue(Model, extra="forbid"):
    updated: str
    model: list[CatalogueModel]


def verify(catalogue: Catalogue, path: str) -> None:
    """Every checkpoint names a weight format the plan can size (the knowledge door calls it on load)."""
    for m in catalogue.model:
        for c in m.checkpoints:
            if c.format not in FORMATS:
                raise InputError(T("{path}: {id}: unknown weight format {format}", path=path, id=m.id, format=c.format))


# Words a converted copy's directory adds after the published name: msModelSlim's quantized exports
# (`Qwen3.5-27B-w8a8-mtp`, `…-W4A8-dynamic`), a dtype, an Ascend build. The copy keeps the published config.json's
# architecture, layers, experts and vision keys — what the checks read here; its quantization and files are not in
# the paste either way (triage.model.SHOWN). A name ending otherwise is not taken for the published one.
COPY_SUFFIXES = frozenset({"w8a8", "w4a8", "w8a16", "w4a16", "w4a4", "w8a8c8", "w4a8c8", "w8a8z", "dynamic", "mtp",
                           "bf16", "fp16", "int8", "int4", "awq", "gptq", "quant", "quantized", "modelslim", "npu",
                           "ascend"})


def published_name(name: str) -> str:
    """`name` without the copy words at its end ('Qwen3.5-27B-w8a8-mtp' -> 'Qwen3.5-27B'); the name itself when it
    ends in none."""
    out = name
    while True:
        cut = max(out.rfind("-"), out.rfind("_"))
        if cut <= 0 or out[cut + 1:].lower() not in COPY_SUFFIXES:
            return out
        out = out[:cut]


# The words that say a checkpoint is quantized, in its name (`Qwen3-32B-W8A8`) or beside it in a paste (`model:
# Qwen3-32B (w8a8sc)`): msModelSlim's types, the other formats vLLM loads, and the plain words.
QUANT_WORDS = frozenset({"w8a8", "w4a8", "w8a16", "w4a16", "w4a4", "w8a8c8", "w4a8c8", "w8a8z", "w8a8sc", "int8",
                         "int4", "awq", "gptq", "fp8", "mxfp8", "mxfp4", "quant", "quantized"})


def quantization_words(name: str) -> list[str]:
    """The quantization words among the copy words ending a model's name or path (`/m/Qwen3-32B-W8A8-mtp/` -> ['W8A8'];
    `Qwen3-8B-FP8` -> ['FP8']; `Qwen3-32B` -> [])."""
    words = re.split(r"[-_]", name.strip().rstrip("/").split("/")[-1])
    out = []
    while len(words) > 1 and words[-1].lower() in COPY_SUFFIXES | QUANT_WORDS:
        w = words.pop()
        if w.lower() in QUANT_WORDS:
            out.insert(0, w)
    return out


def find_model(name: str, models: list[CatalogueModel]) -> Optional[CatalogueModel]:
    """By its id (`Qwen/Qwen3-32B`) or its name alone (`Qwen3-32B`), case-insensitive."""
    want = name.strip().lower()
    for m in models:
        if want in (m.id.lower(), m.id.split("/")[-1].lower()):
            return m
    return None


def close_models(name: str, models: list[CatalogueModel], n: int = 3) -> list[str]:
    """Catalogue ids whose full or short name is near `name` (`Qwen3-23B` -> Qwen/Qwen3-32B, Qwen/Qwen3-8B)."""
    import difflib

    short = {m.id.split("/")[-1].lower(): m.id for m in models}
    full = {m.id.lower(): m.id for m in models}
    want = name.strip().lower()
    hits = difflib.get_close_matches(want, list(full), n=n, cutoff=0.75) or difflib.get_close_matches(
        want.split("/")[-1], list(short), n=n, cutoff=0.75)
    return [full.get(h) or short[h] for h in hits]


def catalogue_files(m: CatalogueModel, fmt: Optional[str] = None) -> ModelFiles:
    """The catalogue entry as the plan reads a model directory: its config, and the size of the checkpoint of
    format `fmt` (the first listed when None) computed from the config."""
    try:  # a shipped file, or a user's layer naming one of theirs
        config = loads(Path(m.config).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(T("cannot read the catalogue's config {path}: {error}", path=m.config, error=exc)) from None
    arch = read_architecture(config, derived_max_len(text_config(config))[0])
    chosen = next((c for c in m.checkpoints if c.format == fmt), None) if fmt else m.checkpoints[0]
    weight_format = fmt or m.checkpoints[0].format
    weights = estimate(arch, weight_format, chosen.float_layers if chosen is not None else ())
    if chosen is not None:
        where = T("catalogue {id}, checkpoint {repo}", id=m.id, repo=chosen.repo)
    else:
        where = T("catalogue {id}, {fmt}: no documented checkpoint in this format", id=m.id, fmt=weight_format)
    weights.source = T("{source} ({how})", source=weights.source, how=where)
    repo = chosen.repo if chosen is not None and not chosen.repo.startswith("(") else m.id
    qc = config.get("quantization_config")
    if isinstance(qc, dict) and qc.get("quant_method") != weight_format:
        # the hub's quantization is not this checkpoint's: DeepSeek-R1's W8A8 and BF16 conversions do not declare
        # the FP8 of the original (the release rules judge the config a checkpoint is served with)
        config = {k: v for k, v in config.items() if k != "quantization_config"}
    return ModelFiles(path=repo, name=m.id, config=config, arch=arch, weights=weights, weight_format=weight_format)
