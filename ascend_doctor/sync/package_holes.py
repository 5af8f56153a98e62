"""The subpackages a vllm-ascend release leaves out of its own wheel, read from its sdist (nothing is built or run).

vllm-ascend's setup.py builds the wheel with setuptools' `find_packages()`, which takes a directory only when it
holds an `__init__.py`, and then only below a package. A directory of modules without one is left out of the wheel
(and of an install built from the sdist), while an editable install — the official images run `pip install -e` on
the source tree — imports it anyway as a namespace package. The code still names it, so a wheel user meets
`ModuleNotFoundError: No module named 'vllm_ascend.…'` when the feature that imports it starts: 0.8.4rc1 left out
`vllm_ascend.lora` (LoRA; vllm-ascend#592, fixed by #600 in 0.8.4rc2), 0.9.0rc1 `vllm_ascend.compilation` (the
NPUPiecewiseBackend its platform names as the graph backend of the V1 engine).

Which feature reaches the module is a maintainer's reading of the code: `matrix sync` lists each hole with the lines
that name it, and says when no release rule (serve/release-rules, SERVE311) of that release names the module.
"""

from __future__ import annotations

import posixpath
import re
from typing import List

from ascend_doctor.core.model import Model

PACKAGE = "vllm_ascend"


class Hole(Model):
    module: str  # the dotted name of the top directory left out (`vllm_ascend.compilation`)
    modules: List[str]  # the .py files under it, relative to the release's root
    named_by: List[str]  # `path:line` of the shipped modules that import or name it


def package_holes(files: dict) -> List[Hole]:
    """The holes of one release tree (`path -> text`, paths relative to its root); [] when its setup.py does not
    build with find_packages (then this reading does not say what the wheel holds)."""
    setup = files.get("setup.py") or ""
    if "find_packages(" not in setup:
        return []
    py = [p for p in files if p.startswith(PACKAGE + "/") and p.endswith(".py")]
    dirs = {posixpath.dirname(p) for p in py}
    inits = {posixpath.dirname(p) for p in py if posixpath.basename(p) == "__init__.py"}
    every = {d for p in dirs for d in _ancestors(p)}  # a directory holding only subdirectories counts too
    top = sorted(d for d in every if d != PACKAGE and d not in inits and posixpath.dirname(d) in inits)
    holes = []
    for d in top:
        module = d.replace("/", ".")
        inside = sorted(p for p in py if p.startswith(d + "/"))
        holes.append(Hole(module=module, modules=inside, named_by=_named_by(files, py, module, d)))
    return holes


def _ancestors(d: str) -> List[str]:
    out = []
    while d and d != PACKAGE and d.startswith(PACKAGE + "/"):
        out.append(d)
        d = posixpath.dirname(d)
    return out + [PACKAGE]


def _named_by(files: dict, py: List[str], module: str, d: str) -> List[str]:
    """`path:line` of the modules the wheel does ship that name `module` (an import or a dotted string)."""
    word = re.compile(re.escape(module) + r"(?![\w])")
    out = []
    for path in sorted(p for p in py if not p.startswith(d + "/")):
        for no, line in enumerate(files[path].splitlines(), 1):
            if word.search(line):
                out.append(f"{path}:{no}")
    return out


_NO_MODULE = re.compile(r"No module named '([\w.]+)'")


def covered_module(rule) -> str:
    """The module a release rule says the release's wheel lacks ('' for another rule)."""
    m = _NO_MODULE.search(rule.says) if getattr(rule, "wheel_only", False) else None
    return m.group(1) if m else ""


def hole_review(rules, holes: dict) -> List[str]:
    """Lines for a maintainer: each hole (release -> (its holes, the release's label)) that no wheel-only release
    rule of that release names — which feature reaches the import is the maintainer's reading to write as a row."""
    from ascend_doctor.text.versions import SpecifierSet

    out = []
    for version, (found, label) in sorted(holes.items()):
        named = {covered_module(r) for r in rules if SpecifierSet(r.vllm_ascend).contains(version)}
        for hole in found:
            if hole.module not in named:
                out.append(f"vllm-ascend {version} ({label}): its wheel leaves out {hole.module} (no __init__.py; "
                           f"{len(hole.modules)} module(s)), named by {', '.join(hole.named_by[:4]) or 'no module'}"
                           " — no wheel-only rule in serve/release-rules names it")
    return out
