"""Core metadata (PKG-INFO / METADATA) of a release tree, and PyPI's JSON description of a project saved to disk.

Both are standard formats with standard readers: `email.parser` for core metadata (PEP 566 says it is RFC 822), and
`packaging.requirements` for Requires-Dist lines. The PyPI JSON files are what `https://pypi.org/pypi/<name>/json`
returns; `matrix sync` never fetches them itself (a maintainer saves them, so a run is reproducible and offline).
"""

from __future__ import annotations

import email.parser
import posixpath
from typing import Dict, List, Optional

from packaging.requirements import InvalidRequirement, Requirement

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.knowledge.matrix_schema import normalize_name
from ascend_doctor.sync.archive import Tree
from ascend_doctor.text.jsonread import loads


class CoreMetadata(Model):
    """What a release's own metadata says: its name and version, Requires-Python, and the pins of Requires-Dist."""

    path: str
    name: str = ""
    version: str = ""
    requires_python: str = ""
    requires: Dict[str, str] = {}  # normalized name -> specifier ("==2.10.0", ">=4.56.0,!=5.0.*"), markers dropped

    def pin(self, name: str) -> Optional[str]:
        """The exact version `name` is pinned to (`==X`), or None when it is unpinned or absent."""
        spec = self.requires.get(normalize_name(name), "")
        parts = [p for p in spec.split(",") if p]
        if len(parts) == 1 and parts[0].startswith("==") and "*" not in parts[0]:
            return parts[0][2:]
        return None


def find_metadata(tree: Tree) -> Optional[str]:
    """Path of the tree's core metadata: PKG-INFO at the root (sdist), else `*.dist-info/METADATA` (wheel)."""
    if tree.read("PKG-INFO") is not None:
        return "PKG-INFO"
    for entry in tree.listdir(".") or []:
        if entry.endswith(".dist-info") and tree.read(posixpath.join(entry, "METADATA")) is not None:
            return posixpath.join(entry, "METADATA")
    return None


def read_metadata(tree: Tree) -> Optional[CoreMetadata]:
    path = find_metadata(tree)
    if path is None:
        return None
    msg = email.parser.Parser().parsestr(tree.read(path) or "", headersonly=True)
    requires: Dict[str, str] = {}
    for line in msg.get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and "extra" in str(req.marker):
            continue  # optional extras are not what `pip install X` pins
        requires.setdefault(normalize_name(req.name), str(req.specifier))
    return CoreMetadata(path=path, name=str(msg.get("Name") or ""), version=str(msg.get("Version") or ""),
                        requires_python=str(msg.get("Requires-Python") or ""), requires=requires)


class PypiFile(Model):
    filename: str
    packagetype: str  # sdist | bdist_wheel
    python_tag: str = ""  # cp311, py3, ...
    uploaded: str = ""  # YYYY-MM-DD
    yanked: bool = False


class PypiProject(Model):
    """One project's releases as PyPI's JSON API lists them."""

    name: str
    path: str  # the file it was read from (cited as the source)
    releases: Dict[str, List[PypiFile]] = {}

    def has(self, version: str) -> Optional[bool]:
        """Is `version` on PyPI (any file, not yanked)? Versions compare as PyPI does (2.10.0 == 2.10)."""
        from packaging.version import InvalidVersion, Version
        try:
            want = Version(version)
        except InvalidVersion:
            return None
        for v, files in self.releases.items():
            try:
                if Version(v) == want:
                    return any(not f.yanked for f in files)
            except InvalidVersion:
                continue
        return False

    def state(self, version: str) -> tuple[str, List[str], Optional[str]]:
        """(pypi state as the matrix spells it, CPython wheel tags, first upload date) for one release."""
        files = [f for f in self.releases.get(version, []) if not f.yanked]
        if not files:
            return "absent", [], None
        tags = sorted({f.python_tag for f in files if f.packagetype == "bdist_wheel" and f.python_tag.startswith("cp")})
        wheels = any(f.packagetype == "bdist_wheel" for f in files)
        uploaded = min((f.uploaded for f in files if f.uploaded), default=None)
        if wheels and tags:
            return "wheels", tags, uploaded
        return ("sdist-only" if not wheels else "wheels"), tags, uploaded


def _wheel_python_tag(filename: str) -> str:
    parts = filename[:-4].split("-") if filename.endswith(".whl") else []
    return parts[-3] if len(parts) >= 5 else ""


def read_pypi_json(path: str) -> PypiProject:
    """A saved `https://pypi.org/pypi/<name>/json`. InputError (one line) when it is not that."""
    try:
        with open(path, "rb") as fh:
            data = loads(fh.read().decode("utf-8", errors="surrogateescape"))
    except (OSError, ValueError) as exc:
        raise InputError(T("{path}: not a PyPI JSON file: {exc}", path=path, exc=exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get("info"), dict) \
            or not isinstance(data.get("releases"), dict):
        raise InputError(T("{path}: not a PyPI JSON file (no info/releases; save https://pypi.org/pypi/NAME/json)",
                           path=path))
    releases: Dict[str, List[PypiFile]] = {}
    for version, files in data["releases"].items():
        out = []
        for f in files if isinstance(files, list) else []:
            if not isinstance(f, dict) or not isinstance(f.get("filename"), str):
                continue
            out.append(PypiFile(filename=f["filename"], packagetype=str(f.get("packagetype", "")),
                                python_tag=_wheel_python_tag(f["filename"]),
                                uploaded=str(f.get("upload_time") or "")[:10], yanked=bool(f.get("yanked"))))
        releases[str(version)] = out
    return PypiProject(name=normalize_name(str(data["info"].get("name", ""))), path=path, releases=releases)
