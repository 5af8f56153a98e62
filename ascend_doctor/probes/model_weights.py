"""The tensor names of the served checkpoint and its msModelSlim description, read through the host seam for the
description-coverage check (SERVE211): the weights' `*.safetensors.index.json` files, or, without an index, each
shard's safetensors header (8 bytes of length, then that many bytes of JSON: only the header is read, never a
tensor). Nothing is imported; a file too large or unreadable is a reason, never a guess.
"""

from __future__ import annotations

import posixpath
from typing import Callable, Optional

from ascend_doctor.parsers.quant_description import QuantCoverage, coverage
from ascend_doctor.text.jsonread import loads

DESCRIPTION_MAX = 64 * 1024 * 1024  # DeepSeek-V3's W8A8 description is ~15 MB (one line per saved tensor)
INDEX_MAX = 32 * 1024 * 1024  # a 600 B-parameter checkpoint's index is ~17 MB (one line per tensor)
HEADER_MAX = 32 * 1024 * 1024
SHARDS_MAX = 16  # shards read one header each when the checkpoint has no index


def _bytes(text: str) -> bytes:
    """The file's bytes back from the seam's text (it decodes with surrogateescape, which loses none)."""
    return text.encode("utf-8", errors="surrogateescape")


def read_index(host, path: str, cache: dict) -> tuple[Optional[dict], str]:
    """(a `*.safetensors.index.json`, parsed, or None; why not), read once per probe run: the checkpoint's size and
    its tensor names come from the same file (`cache` is the run's)."""
    if path not in cache:
        r = host.read_file(path, max_bytes=INDEX_MAX)
        if not r.ok or r.truncated:
            cache[path] = None, f"{path}: {r.error_message or r.error or 'larger than 32 MiB'}"
        else:
            try:
                data = loads(r.content)
                cache[path] = (data, "") if isinstance(data, dict) else (None, f"{path}: not a JSON object")
            except ValueError as exc:
                cache[path] = None, f"{path}: not valid JSON ({exc})"
    return cache[path]


def _index_names(host, path: str, cache: dict) -> tuple[Optional[list[str]], str]:
    data, why = read_index(host, path, cache)
    if data is None:
        return None, why
    weight_map = data.get("weight_map")
    if not isinstance(weight_map, dict):
        return None, f"{path}: no weight_map"
    return list(weight_map), ""


def _header_names(host, path: str, cache: dict) -> tuple[Optional[list[str]], str]:
    """The tensor names of one safetensors file, from its header."""
    head = host.read_file(path, max_bytes=8)
    if not head.ok:
        return None, f"{path}: {head.error_message or head.error}"
    raw = _bytes(head.content)[:8]
    if len(raw) < 8:
        return None, f"{path}: {len(raw)} bytes, not a safetensors file"
    size = int.from_bytes(raw, "little")
    if size > HEADER_MAX:
        return None, f"{path}: a safetensors header of {size} bytes (more than 32 MiB: not a safetensors file?)"
    whole = host.read_file(path, max_bytes=8 + size)
    if not whole.ok:
        return None, f"{path}: {whole.error_message or whole.error}"
    try:
        header = loads(_bytes(whole.content)[8:8 + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"{path}: the safetensors header is not JSON ({exc})"
    if not isinstance(header, dict):
        return None, f"{path}: the safetensors header is not a JSON object"
    return [k for k in header if k != "__metadata__"], ""


def tensor_names(host, folder: str, files: list[str], guard: Callable[[str], Optional[str]],
                 cache: dict) -> tuple[Optional[list[str]], list[str], str]:
    """(the checkpoint's tensor names, the files they were read from, why not)."""
    indexes = [f for f in files if f.endswith(".safetensors.index.json")]
    sources = indexes or [f for f in files if f.endswith(".safetensors")]
    if not sources:
        return None, [], "no *.safetensors weights in the model directory"
    if not indexes and len(sources) > SHARDS_MAX:
        return None, [], f"{len(sources)} safetensors shards and no *.safetensors.index.json (at most {SHARDS_MAX} " \
                         "headers are read)"
    read = _index_names if indexes else _header_names
    names: list[str] = []
    for name in sources:
        path = posixpath.join(folder, name)
        why = guard(path)
        got, why = (None, why) if why else read(host, path, cache)
        if got is None:
            return None, [], why
        names.extend(got)
    return names, sources, ""


def description_coverage(host, folder: str, files: list[str], description_file: str, config: Optional[dict],
                         guard: Callable[[str], Optional[str]],
                         cache: dict) -> tuple[Optional[dict], Optional[QuantCoverage], str]:
    """(the description, its coverage of the checkpoint's weights, why the coverage is not known); `cache`: the
    probe run's parsed index files (read_index)."""
    path = posixpath.join(folder, description_file)
    why = guard(path)
    if why:
        return None, None, why
    r = host.read_file(path, max_bytes=DESCRIPTION_MAX)
    if not r.ok or r.truncated:
        return None, None, f"{path}: {r.error_message or r.error or 'larger than 64 MiB'}"
    try:
        desc = loads(r.content)
    except ValueError as exc:
        return None, None, f"{path}: not valid JSON ({exc})"
    if not isinstance(desc, dict):
        return None, None, f"{path}: not a JSON object"
    names, sources, why = tensor_names(host, folder, files, guard, cache)
    if names is None:
        return desc, None, why
    return desc, coverage(description_file, desc, names, _layers(config), sources), ""


def _layers(config: Optional[dict]) -> Optional[int]:
    """num_hidden_layers of the text model (a multimodal config nests it in text_config)."""
    for cfg in (config or {}, (config or {}).get("text_config") or {}):
        n = cfg.get("num_hidden_layers") if isinstance(cfg, dict) else None
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return n
    return None
