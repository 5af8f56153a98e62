"""The shipped model catalogue (matrices/deploy/models.toml + models/*.json): `plan --model Qwen/Qwen3-32B` works
offline. A catalogue entry is read like a model directory's config.json; its checkpoints say which weight formats
vllm-ascend documents for it, and the size is computed from the config (no checkpoint bytes are claimed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from pydantic import Field

from ascend_doctor.deploy.arch import derived_max_len, read_architecture, text_config
from ascend_doctor.deploy.modeldir import ModelFiles
from ascend_doctor.deploy.weights import FORMATS, estimate
from ascend_doctor.errors import InputError
from ascend_doctor.i18n import T
from ascend_doctor.model import Model
from ascend_doctor.paths import builtin_matrices_dir
from ascend_doctor.tomlread import load_model

CATALOGUE = builtin_matrices_dir() / "deploy" / "models.toml"


class Checkpoint(Model, extra="forbid"):
    format: str
    repo: str
    source: Optional[str] = None


class CatalogueModel(Model, extra="forbid"):
    id: str
    config: str
    source: str
    checkpoints: list[Checkpoint] = Field(min_length=1)


class Catalogue(Model, extra="forbid"):
    updated: str
    model: list[CatalogueModel]


def load_catalogue(path: Path = CATALOGUE) -> list[CatalogueModel]:
    models = load_model(path, Catalogue, "model catalogue").model
    for m in models:
        for c in m.checkpoints:
            if c.format not in FORMATS:
                raise InputError(T("{path}: {id}: unknown weight format {format}", path=path, id=m.id, format=c.format))
    return models


def find_model(name: str, models: Optional[list[CatalogueModel]] = None) -> Optional[CatalogueModel]:
    """By its id (`Qwen/Qwen3-32B`) or its name alone (`Qwen3-32B`), case-insensitive."""
    want = name.strip().lower()
    for m in models if models is not None else load_catalogue():
        if want in (m.id.lower(), m.id.split("/")[-1].lower()):
            return m
    return None


def catalogue_files(m: CatalogueModel, fmt: Optional[str] = None, path: Path = CATALOGUE) -> ModelFiles:
    """The catalogue entry as the plan reads a model directory: its config, and the size of the checkpoint of
    format `fmt` (the first listed when None) computed from the config."""
    config = json.loads((path.parent / m.config).read_text(encoding="utf-8"))
    arch = read_architecture(config, derived_max_len(text_config(config))[0])
    chosen = next((c for c in m.checkpoints if c.format == fmt), None) if fmt else m.checkpoints[0]
    weight_format = fmt or m.checkpoints[0].format
    weights = estimate(arch, weight_format)
    if chosen is not None:
        where = T("catalogue {id}, checkpoint {repo}", id=m.id, repo=chosen.repo)
    else:
        where = T("catalogue {id}, {fmt}: no documented checkpoint in this format", id=m.id, fmt=weight_format)
    weights.source = T("{source} ({how})", source=weights.source, how=where)
    repo = chosen.repo if chosen is not None and not chosen.repo.startswith("(") else m.id
    return ModelFiles(path=repo, name=m.id, config=config, arch=arch, weights=weights, weight_format=weight_format)
