"""Read a model directory for `plan`: config.json, the checkpoint's size, msModelSlim's quantization description.

The size comes from `model.safetensors.index.json` (`metadata.total_size`, written by save_pretrained), else from
the safetensors headers — the first 8 bytes give the header length, the header gives each tensor's byte range — so
a 600 GB checkpoint is sized by reading a few kilobytes per shard. Every file is read under the config cap of
ascend_doctor/seam/inputs.py; a broken file is an InputError naming it and the parser's own words.
"""

from __future__ import annotations

import os
import struct
from typing import Optional

from pydantic import Field

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture, derived_max_len, read_architecture, text_config
from ascend_doctor.deploy.template import template_text
from ascend_doctor.deploy.weights import WeightSize, estimate, float_layers_of, format_of, measured
from ascend_doctor.i18n import Msg, T
from ascend_doctor.seam.inputs import LIMITS, open_regular, read_text
from ascend_doctor.seam.modelfolder import allowed_root, refusal
from ascend_doctor.text.jsonread import loads

TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json", "tokenizer_config.json")
QUANT_DESCRIPTIONS = ("quant_model_description.json", "quant_model_description_w8a8.json")


class ModelFiles(Model):
    path: str = Field(description="what `vllm serve` is given: the directory, or the checkpoint's repository id")
    name: str = Field("", description="the model's name, for the family rules (a catalogue id or the directory)")
    config: dict
    arch: Architecture
    weights: WeightSize
    weight_format: Optional[str] = None
    quant_description: Optional[str] = None
    chat_template: Optional[str] = None
    chat_template_source: str = ""
    chat_template_error: Optional[str] = Field(None, description="why the template files could not be read")


def _inside(path: str, root: str) -> None:
    """InputError when `path` is a link that leads out of the model folder (seam/modelfolder.py)."""
    why = refusal(path, os.path.realpath(path), root) if os.path.islink(path) else None
    if why:
        raise InputError(why)


def _json(path: str, root: Optional[str] = None) -> dict:
    if root is not None:
        _inside(path, root)
    text = read_text(path, "config", strict=True, regular_only=True)
    try:
        data = loads(text)
    except ValueError as exc:
        raise InputError(T("{path} is not valid JSON: {error}", path=path, error=exc)) from None
    if not isinstance(data, dict):
        raise InputError(T("{path} is not a JSON object", path=path))
    return data


def _header_bytes(path: str) -> int:
    """Bytes of the tensors of one .safetensors file, from its header alone."""
    try:
        return _read_header(path)
    except OSError as exc:
        raise InputError(T("cannot read {path}: {strerror}", path=path, strerror=exc.strerror or exc)) from None


def _read_header(path: str) -> int:
    with open_regular(path) as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise InputError(T("{path}: not a safetensors file (shorter than its 8-byte header length)", path=path))
        (n,) = struct.unpack("<Q", head)
        if n > LIMITS["config"]:
            raise InputError(T("{path}: safetensors header of {n} bytes is implausible", path=path, n=n))
        try:
            header = loads(fh.read(n))
        except ValueError as exc:
            raise InputError(T("{path}: safetensors header is not JSON: {error}", path=path, error=exc)) from None
    if not isinstance(header, dict):
        raise InputError(T("{path}: safetensors header is not a JSON object", path=path))
    ends = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)
            and isinstance(v.get("data_offsets"), list) and len(v["data_offsets"]) == 2
            and isinstance(v["data_offsets"][1], int) and not isinstance(v["data_offsets"][1], bool)]
    return max(ends, default=0)


def checkpoint_bytes(path: str, root: Optional[str] = None) -> tuple[Optional[int], Msg]:
    """(bytes of the weights, where that figure came from) or (None, why not). Shards are sized wherever they link
    to (only their headers' offsets are read); the index, a JSON file, must be inside `root`."""
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.isfile(index):
        meta = _json(index, root).get("metadata")
        total = meta.get("total_size") if isinstance(meta, dict) else None
        if isinstance(total, (int, float)) and total > 0:
            return int(total), T("{index}: metadata.total_size", index=index)
    try:
        shards = sorted(f for f in os.listdir(path) if f.endswith(".safetensors"))
    except OSError as exc:
        raise InputError(T("cannot read {path}: {strerror}", path=path, strerror=exc.strerror or exc)) from None
    if shards:
        total = sum(_header_bytes(os.path.join(path, f)) for f in shards)
        if total > 0:
            return total, T("safetensors headers of {n} file(s)", n=len(shards))
        return None, T("the safetensors headers of {n} file(s) give no tensor sizes", n=len(shards))
    return None, T("no model.safetensors.index.json and no .safetensors files")


def read_model_dir(path: str, fmt: Optional[str] = None) -> ModelFiles:
    """The model at `path` (a local directory, as `vllm serve` is given it)."""
    if not os.path.isdir(path):
        raise InputError(T("--model {path}: not a directory, and no catalogue model has that name (give the "
                           "model's local directory, or see `ascend-doctor plan --list-models`)", path=path))
    cfg_path = os.path.join(path, "config.json")
    if not os.path.isfile(cfg_path):
        raise InputError(T("{path}: no config.json", path=path))
    root = allowed_root(os.path.realpath(path))
    config = _json(cfg_path, root)
    arch = read_architecture(config, derived_max_len(text_config(config))[0])
    quant, quant_name = None, None
    for name in QUANT_DESCRIPTIONS:
        if os.path.isfile(os.path.join(path, name)):
            quant, quant_name = _json(os.path.join(path, name), root), name
            break
    weight_format = fmt or format_of(arch, quant)
    total, how = checkpoint_bytes(path, root)
    if total is not None:
        weights = measured(arch, total, how, weight_format, float_layers_of(quant))
    else:
        weights = estimate(arch, weight_format or "bf16", float_layers_of(quant))
        weights.source = T("{source} ({how})", source=weights.source, how=how)
    texts, error = {}, None
    for name in TEMPLATE_FILES:  # a template that cannot be read is said, it does not stop the sizing
        if os.path.isfile(os.path.join(path, name)):
            try:
                _inside(os.path.join(path, name), root)
                texts[name] = read_text(os.path.join(path, name), "config", regular_only=True)
            except InputError as exc:
                error = str(exc)
    template, where = template_text(texts)
    return ModelFiles(path=path, name=path, config=config, arch=arch, weights=weights, weight_format=weight_format,
                      quant_description=quant_name, chat_template=template, chat_template_error=error,
                      chat_template_source=os.path.join(path, where) if where else "")
