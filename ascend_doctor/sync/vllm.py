"""One vLLM release, read from its sdist (or wheel): the names it registers and the torch it pins.

The registries are read by the same functions that read an installed vLLM (`parsers.vllm_source.read_installed`), so
the shipped matrix and a live lint cannot disagree about where a list lives. Checked against the 2026-12-01 audit
(../shared/facts/matrix-audit-2026-12-01.md §2.2): all 37 sampled releases give the audit's tool-parser,
reasoning-parser and tokenizer-mode lists exactly.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Dict, List, Optional

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.parsers.vllm_source import read_installed
from ascend_doctor.sync.archive import Tree, open_tree
from ascend_doctor.sync.metadata import read_metadata
from ascend_doctor.sync.names import read_names

# VllmRelease field -> InstalledVllm attribute
REGISTRIES = {"tool_parser": "tool_parsers", "reasoning_parser": "reasoning_parsers",
              "tokenizer_mode": "tokenizer_modes", "architectures": "architectures", "model_types": "vllm_model_types",
              "serve_options": "cli_options"}


class VllmRelease(Model):
    version: str
    archive: str  # file name (what sources cite) and its sha256
    sha256: str = ""
    torch: Optional[str] = None  # Requires-Dist torch==X
    transformers: Optional[str] = None  # Requires-Dist specifier
    names: Dict[str, Optional[List[str]]] = {}  # REGISTRIES key -> sorted names, None when not read
    where: Dict[str, str] = {}  # REGISTRIES key -> the file(s) read, or why not
    names_row: Optional[Dict[str, Any]] = None  # the serve/names-vllm row (sync.names), None when nothing was read

    def source(self, key: str) -> str:
        sha = f" (sha256 {self.sha256[:16]})" if self.sha256 else ""
        return f"pypi:{self.archive}{sha}:{self.where.get(key, '')}"


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_vllm_tree(tree: Tree, sha256: str = "") -> VllmRelease:
    meta = read_metadata(tree)
    if meta is None or meta.name.lower() != "vllm" or not meta.version:
        raise InputError(T("{label}: not a vLLM release (no PKG-INFO or *.dist-info/METADATA naming vllm)",
                           label=tree.label))
    fact = read_installed(".", tree.read, tree.listdir)
    rel = VllmRelease(version=meta.version, archive=tree.label, sha256=sha256, torch=meta.pin("torch"),
                      transformers=meta.requires.get("transformers") or None)
    for key, attr in REGISTRIES.items():
        nl = getattr(fact, attr)
        rel.names[key] = sorted(nl.names) if nl.ok else None
        rel.where[key] = (nl.source if nl.ok else f"not read: {nl.why_not}").replace("./", "")
    rel.names_row = read_names("vllm", tree, rel.source("").rstrip(":"))
    return rel


def read_vllm_release(path: str) -> VllmRelease:
    """A vLLM sdist, wheel or checkout. InputError when it is not one."""
    tree = open_tree(path)
    return read_vllm_tree(tree, _sha256(path) if Path(path).is_file() else "")
