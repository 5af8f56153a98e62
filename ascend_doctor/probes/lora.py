"""The `serve_lora` probe: the adapters `--lora-modules` names, where each one is and what its adapter_config.json
says — what vLLM reads at start for every static adapter (SERVE310)."""

from __future__ import annotations

import posixpath
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.parsers.lora_modules import parse_lora_modules
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import REPLAY_MISS_NOTE
from ascend_doctor.text.jsonread import loads

CONFIG_MAX = 256 * 1024


class LoraAdapter(Model):
    text: str
    name: Optional[str] = None
    path: Optional[str] = None
    error: Optional[str] = Field(None, description="vLLM's own words when it cannot read the --lora-modules value")
    where: str = Field("", description="local | missing | hub (vLLM tries a path that is not here as a Hugging "
                                       "Face repo id) | unrecorded (a snapshot without it)")
    why: str = ""
    config: Optional[dict[str, Any]] = None
    config_error: Optional[str] = None


class LoraFact(Model):
    adapters: list[LoraAdapter] = Field(default_factory=list)


def _looks_like_path(path: str) -> bool:
    """A path vLLM cannot mistake for a repo id: absolute, ./ ../ ~, or more than one slash (`org/name` is an id)."""
    return path.startswith(("/", "./", "../", "~")) or path.count("/") > 1


def _read(host, adapter: LoraAdapter) -> None:
    listing = host.list_dir(adapter.path)
    if not listing.ok:
        message = listing.error_message or listing.error or "not a directory"
        if REPLAY_MISS_NOTE in message:
            adapter.where, adapter.why = "unrecorded", message
        elif _looks_like_path(adapter.path):
            adapter.where, adapter.why = "missing", message
        else:
            adapter.where, adapter.why = "hub", message
        return
    adapter.where = "local"
    if "adapter_config.json" not in (listing.entries or []):
        adapter.config_error = "no adapter_config.json"
        return
    cfg_path = posixpath.join(adapter.path, "adapter_config.json")
    r = host.read_file(cfg_path, max_bytes=CONFIG_MAX)
    if not r.ok:
        adapter.config_error = f"{cfg_path}: {r.error_message or r.error}"
        return
    try:
        value = loads(r.content or "")
    except ValueError as exc:
        adapter.config_error = f"{cfg_path}: {exc}"
        return
    if isinstance(value, dict):
        adapter.config = value
    else:
        adapter.config_error = f"{cfg_path}: not a JSON object"


@probe("serve_lora", reads=("serve_cmd",))
def lora_probe(host, ctx) -> LoraFact:
    """The adapters of `--lora-modules`: each directory's adapter_config.json."""
    cmd = ctx.fact("serve_cmd")
    if not cmd.recognized:
        raise FactUnavailable("serve_lora", T("no vllm serve command"))
    fact = LoraFact()
    value = cmd.get("lora_modules")
    if value is None or value is True:
        return fact
    for m in parse_lora_modules(value):
        adapter = LoraAdapter(text=m.text, name=m.name, path=m.path, error=m.error)
        if not m.error and m.path:
            _read(host, adapter)
        fact.adapters.append(adapter)
    return fact
