"""Every regular expression the doctor may run on untrusted text, found rather than listed: module-level compiled
patterns (also inside lists, tuples and dicts), the literal patterns of `re.search(...)`-style calls in the source
(with the call they are used by), the error signatures and the markup families of the matrix."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

import ascend_doctor
from tests.helpers import REPO

_CALLS = ("compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split")
_FLAGS = {"I": re.I, "IGNORECASE": re.I, "M": re.M, "MULTILINE": re.M, "S": re.S, "DOTALL": re.S, "X": re.X,
          "VERBOSE": re.X, "A": re.A, "ASCII": re.A}


@dataclass(frozen=True)
class Regex:
    pattern: "re.Pattern[str]"
    use: str  # "search", "match" or "fullmatch": how the code applies it (search when unknown: the worst case)
    where: str

    def run(self, text: str) -> None:
        getattr(self.pattern, self.use)(text)


def _sources() -> list[Path]:
    return sorted((REPO / "ascend_doctor").rglob("*.py")) + sorted((REPO / "checks").glob("*.py"))


def _modules() -> list:
    import sys

    from ascend_doctor.core.registry import load_registry

    mods = [importlib.import_module(m.name) for m in pkgutil.walk_packages(ascend_doctor.__path__, "ascend_doctor.")]
    load_registry(entry_points=False)  # the check modules, and their family helpers, as the registry loads them
    checks = {f.stem for f in (REPO / "checks").glob("*.py")}
    mods += [m for name, m in sorted(sys.modules.items())
             if name.startswith("ascend_doctor_checks.") and name.rsplit(".", 1)[-1] in checks]
    return mods


def _walk(obj, where: str, depth: int, out: dict) -> None:
    if isinstance(obj, re.Pattern) and isinstance(obj.pattern, str):
        out.setdefault((obj.pattern, obj.flags), Regex(obj, "search", where))
    elif depth < 3 and isinstance(obj, (list, tuple)):
        for i, x in enumerate(obj):
            _walk(x, f"{where}[{i}]", depth + 1, out)
    elif depth < 3 and isinstance(obj, dict):
        for k, x in obj.items():
            _walk(x, f"{where}[{k!r}]", depth + 1, out)


def _literal_calls(out: dict) -> None:
    for f in _sources():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in _CALLS and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                continue
            flags = 0
            for arg in list(node.args[1:]) + [k.value for k in node.keywords]:
                for n in ast.walk(arg):
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "re":
                        flags |= _FLAGS.get(n.attr, 0)
            pat = re.compile(node.args[0].value, flags)
            use = node.func.attr if node.func.attr in ("match", "fullmatch") else "search"
            out.setdefault((pat.pattern, pat.flags), Regex(pat, use, f"{f.relative_to(REPO)}:{node.lineno}"))


def all_regexes() -> list[Regex]:
    out: dict = {}
    _literal_calls(out)  # first: these know how they are applied
    for mod in _modules():
        for name, obj in vars(mod).items():
            _walk(obj, f"{mod.__name__}.{name}", 0, out)
    from ascend_doctor.knowledge.door import Knowledge

    for s in Knowledge().signatures.signature:
        pat = re.compile(s.pattern, re.MULTILINE)
        out.setdefault((pat.pattern, pat.flags), Regex(pat, "search", f"signature {s.id}"))
    for fam in Knowledge().matrix.markup_families.values():
        for p in fam.patterns:
            pat = re.compile(p)
            out.setdefault((pat.pattern, pat.flags), Regex(pat, "search", f"markup family {fam.id}"))
    return list(out.values())
