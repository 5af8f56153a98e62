"""transformers, from a wheel or sdist: the model_types one release knows (what `AutoConfig` accepts without
`trust_remote_code`). Read by the function the live lint uses (`parsers.vllm_source.transformers_model_types`)."""

from __future__ import annotations

from pathlib import Path
from typing import List

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.parsers.vllm_source import transformers_model_types
from ascend_doctor.sync.archive import open_tree
from ascend_doctor.sync.metadata import read_metadata
from ascend_doctor.sync.vllm import _sha256

AUTO_DIRS = ("transformers/models/auto", "src/transformers/models/auto")  # wheel / sdist layout


class TransformersRelease(Model):
    version: str
    archive: str
    sha256: str = ""
    model_types: List[str]
    where: str

    def source(self) -> str:
        sha = f" (sha256 {self.sha256[:16]})" if self.sha256 else ""
        return f"pypi:{self.archive}{sha}:{self.where}"


def read_transformers_release(path: str) -> TransformersRelease:
    tree = open_tree(path)
    meta = read_metadata(tree)
    if meta is None or meta.name.lower() != "transformers" or not meta.version:
        raise InputError(T("{path}: not a transformers release (no metadata naming transformers)", path=path))
    why = []
    for auto in AUTO_DIRS:
        nl = transformers_model_types(tree.read, auto)
        if nl.ok:
            return TransformersRelease(version=meta.version, archive=tree.label,
                                       sha256=_sha256(path) if Path(path).is_file() else "",
                                       model_types=sorted(nl.names or []), where=nl.source)
        why.append(nl.why_not)
    raise InputError(T("{path}: model_types not readable: {why}", path=path, why='; '.join(why)))
