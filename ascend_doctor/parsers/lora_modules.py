"""`--lora-modules` as vLLM reads it (vllm/entrypoints/launchers/cli_args.py LoRAParserAction, vLLM 0.32): each
value is `name=path` when it has a `=` and no `,`, else a JSON object with `name`, `path` and optionally
`base_model_name`. A value vLLM cannot read stops argparse with the words kept here."""

from __future__ import annotations

import json
from typing import Any, Optional

from ascend_doctor.core.model import Model
from ascend_doctor.text.jsonread import loads

FIELDS = ("name", "path", "base_model_name", "is_3d_lora_weight")


class LoraModule(Model):
    text: str
    name: Optional[str] = None
    path: Optional[str] = None
    base_model_name: Optional[str] = None
    error: Optional[str] = None  # vLLM's own error for this value


def parse_lora_modules(value: Any) -> list[LoraModule]:
    """The entries of `--lora-modules` (a string or a list of them; a list from a --config YAML may hold objects)."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, dict):
            item = json.dumps(item)
        if item in (None, "", True):
            continue
        text = str(item)
        if "=" in text and "," not in text:
            name, path = text.split("=", 1)
            out.append(LoraModule(text=text, name=name, path=path))
            continue
        try:
            obj = loads(text)
        except ValueError:
            out.append(LoraModule(text=text, error=f"Invalid JSON format for --lora-modules: {text}"))
            continue
        if not isinstance(obj, dict) or "name" not in obj or "path" not in obj or set(obj) - set(FIELDS):
            missing = [k for k in ("name", "path") if not isinstance(obj, dict) or k not in obj]
            why = (f"missing {', '.join(repr(m) for m in missing)}" if missing
                   else f"unexpected {', '.join(sorted(set(obj) - set(FIELDS)))}")
            out.append(LoraModule(text=text, error=f"Invalid fields for --lora-modules: {text} - {why}"))
            continue
        out.append(LoraModule(text=text, name=str(obj["name"]), path=str(obj["path"]),
                              base_model_name=obj.get("base_model_name")))
    return out
