"""An upstream release tree as two callables, whatever it is packed in.

`matrix sync` reads vLLM sdists (`vllm-0.20.0.tar.gz`), one wheel (vLLM 0.15.0 has no sdist on PyPI), vllm-ascend
sdists or checkouts and transformers wheels with the same parsers the doctor uses on an installed vLLM
(`ascend_doctor.parsers.vllm_source.read_installed`), which take `read(path) -> text | None` and
`listdir(path) -> names | None`. An sdist has one top directory (`vllm-0.20.0/`); paths given to the callables are
relative to it, so `vllm/tool_parsers/__init__.py` means the same file in an sdist, a wheel and a checkout.

Only text members are kept (source, metadata, docs, Dockerfiles), each at most MAX_MEMBER bytes: a wheel's 400 MB of
shared objects is skipped, not read. Undecodable bytes are kept as surrogate escapes, as everywhere in the doctor.
"""

from __future__ import annotations

import os
import posixpath
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Set

from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T

MAX_MEMBER = 4 * 1024 * 1024
TEXT_SUFFIXES = (".py", ".md", ".txt", ".toml", ".cfg", ".json", ".in", ".yaml", ".yml", ".rst")
TEXT_NAMES = ("PKG-INFO", "METADATA", "Dockerfile", "WHEEL", "RECORD", "version.info")


def _wanted(name: str) -> bool:
    base = posixpath.basename(name)
    return base.endswith(TEXT_SUFFIXES) or base.startswith(TEXT_NAMES)


class Tree:
    """Text files of one release, addressed by path relative to the release's root."""

    def __init__(self, label: str, files: Dict[str, str]):
        self.label = label  # what the findings cite: the archive's file name or the directory
        self.files = files
        self._dirs: Dict[str, Set[str]] = {}
        for path in files:
            parts = path.split("/")
            for i in range(len(parts)):
                parent = "/".join(parts[:i]) or "."
                self._dirs.setdefault(parent, set()).add(parts[i])

    def read(self, path: str) -> Optional[str]:
        return self.files.get(posixpath.normpath(path).lstrip("/"))

    def listdir(self, path: str) -> Optional[List[str]]:
        key = posixpath.normpath(path).lstrip("/") or "."
        entries = self._dirs.get(key)
        return sorted(entries) if entries is not None else None

    def exists(self, path: str) -> bool:
        return self.read(path) is not None or self.listdir(path) is not None


def _strip_top(names: List[str]) -> str:
    """The single top directory of an sdist (`vllm-0.20.0/`), or "" when members are not under one."""
    tops = {n.split("/", 1)[0] for n in names if n}
    if len(tops) == 1 and all("/" in n for n in names if n and n.rstrip("/") != next(iter(tops))):
        return next(iter(tops)) + "/"
    return ""


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def open_tree(path: str) -> Tree:
    """A directory, a .tar.gz/.tgz/.tar sdist or a .zip/.whl, as a Tree. InputError (one line) when unreadable."""
    p = Path(path)
    label = p.name
    try:
        if p.is_dir():
            files: Dict[str, str] = {}
            for root, dirs, names in os.walk(p):
                dirs[:] = [d for d in dirs if d not in (".git", "__pycache__", "node_modules")]
                for n in names:
                    full = Path(root) / n
                    rel = full.relative_to(p).as_posix()
                    if _wanted(rel) and full.is_file() and full.stat().st_size <= MAX_MEMBER:
                        files[rel] = _decode(full.read_bytes())
            return Tree(str(p), files)
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as z:
                infos = [i for i in z.infolist() if not i.is_dir()]
                top = _strip_top([i.filename for i in infos]) if not p.suffix == ".whl" else ""
                files = {i.filename[len(top):]: _decode(z.read(i)) for i in infos
                         if _wanted(i.filename) and i.file_size <= MAX_MEMBER}
            return Tree(label, files)
        with tarfile.open(p) as t:
            members = [m for m in t.getmembers() if m.isfile()]
            top = _strip_top([m.name for m in members])
            files = {}
            for m in members:
                if _wanted(m.name) and m.size <= MAX_MEMBER:
                    f = t.extractfile(m)
                    if f is not None:
                        files[m.name[len(top):]] = _decode(f.read())
            return Tree(label, files)
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(T("{path}: cannot read it as a directory, sdist or wheel: {exc}", path=path,
                           exc=exc)) from None
