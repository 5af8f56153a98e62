"""The one-way rules of docs/ARCHITECTURE.md, enforced by reading every module's imports (ast, nothing is run).

An import inside a function counts like one at the top: a layer rule is about what a module may know, not when it
loads it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO

PKG = REPO / "ascend_doctor"

# layer: (the modules it is made of, the ascend_doctor modules it must never import)
RULES = {
    # checks may use the pure judgement helpers of a stage (smoke.judge, triage.logs) but not what runs it
    "checks": (["checks"], ["probes", "cli", "render", "core.engine", "seam.localhost", "seam.snapshot",
                            "seam.collect", "fleet.evaluate", "fleet.ray_runner", "triage.run", "smoke.stage",
                            "smoke.client.SmokeClient", "sync"]),
    "parsers": (["ascend_doctor/parsers"], ["probes", "cli", "render", "core.engine", "core.evaluator",
                                             "core.registry", "facts", "seam.localhost", "seam.snapshot", "knowledge",
                                             "fleet", "triage", "smoke"]),
    "probes": (["ascend_doctor/probes"], ["cli", "render", "core.engine", "core.evaluator", "core.registry", "fleet",
                                           "triage"]),
    "render": (["ascend_doctor/render"], ["core.registry", "probes", "core.engine", "core.evaluator", "facts", "cli",
                                           "seam.localhost", "knowledge"]),
    "evaluator": (["ascend_doctor/core/evaluator.py", "ascend_doctor/facts", "ascend_doctor/core/registry.py"],
                  ["cli", "render", "core.engine", "seam.localhost", "seam.snapshot", "fleet", "triage"]),
    # the deployment model is pure arithmetic over data: it never runs a check, a probe or a renderer
    "deploy": (["ascend_doctor/deploy"], ["cli", "render", "core.engine", "core.evaluator", "core.registry", "probes",
                                          "seam.localhost", "seam.snapshot", "fleet", "triage", "smoke", "facts"]),
    # what the doctor knows: tables, their schemas and queries; never what runs checks or touches the machine
    "knowledge": (["ascend_doctor/knowledge", "ascend_doctor/report.py"],
                  ["cli", "render", "core.engine", "core.evaluator", "core.registry", "probes", "seam.localhost",
                   "seam.snapshot", "fleet", "triage", "facts", "smoke"]),
    # the primitives below everything: they import nothing of the doctor's but each other and i18n
    "text": (["ascend_doctor/text"], ["cli", "render", "core.engine", "core.evaluator", "core.registry", "probes",
                                      "seam", "fleet", "triage", "facts", "smoke", "knowledge", "deploy", "checks"]),
}
# Never imported by the doctor's own process (DESIGN: seconds to import, and a bad CANN segfaults it).
FORBIDDEN_THIRD_PARTY = ("torch", "torch_npu", "vllm", "vllm_ascend")


def _files(parts: list[str]) -> list[Path]:
    out: list[Path] = []
    for part in parts:
        p = REPO / part
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def imports_of(path: Path) -> set[str]:
    """Every module name `path` imports (absolute; relative imports resolved against its package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel_pkg = path.relative_to(REPO).with_suffix("").parts[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(rel_pkg[: len(rel_pkg) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)  # `from ascend_doctor import engine`
    return names


def _hits(names: set[str], banned: list[str]) -> list[str]:
    full = {f"ascend_doctor.{b}" for b in banned}
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in full))


@pytest.mark.parametrize("layer", sorted(RULES))
def test_layer_never_imports_upward(layer):
    parts, banned = RULES[layer]
    bad = {str(f.relative_to(REPO)): _hits(imports_of(f), banned) for f in _files(parts)}
    assert {k: v for k, v in bad.items() if v} == {}


def test_only_the_cli_imports_the_cli():
    bad = [str(f.relative_to(REPO)) for f in _files(["ascend_doctor", "checks"])
           if "cli" not in f.relative_to(PKG if f.is_relative_to(PKG) else REPO).parts[:1]
           and f.name != "__main__.py" and _hits(imports_of(f), ["cli"])]
    assert bad == []


def test_no_module_imports_torch_or_vllm():
    bad = {str(f.relative_to(REPO)): sorted(n for n in imports_of(f) if n.split(".")[0] in FORBIDDEN_THIRD_PARTY)
           for f in _files(["ascend_doctor", "checks"])}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_rules_see_imports_inside_functions(tmp_path):
    """The reader is not blind to a lazy import (the usual way a layer rule gets broken quietly)."""
    mod = REPO / "checks" / "__layer_probe_tmp.py"
    try:
        mod.write_text("def f():\n    from ascend_doctor.probes.npu import npu_smi_probe\n", encoding="utf-8")
        assert _hits(imports_of(mod), RULES["checks"][1]) == ["ascend_doctor.probes.npu",
                                                             "ascend_doctor.probes.npu.npu_smi_probe"]
    finally:
        mod.unlink()


def test_modules_and_functions_stay_readable():
    """No checks/ module over 500 lines; no function whose code (docstring aside) runs over 80 lines unless its
    docstring says why ("Long by design: …")."""
    big = [str(p.relative_to(REPO)) for p in (REPO / "checks").glob("*.py") if len(p.read_text().splitlines()) > 500]
    assert big == []
    long = []
    for p in _files(["ascend_doctor", "checks"]):
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(n) or ""
                start = n.body[1].lineno if doc and len(n.body) > 1 else n.body[0].lineno
                if n.end_lineno - start + 1 > 80 and "Long by design" not in doc:
                    long.append(f"{p.relative_to(REPO)}:{n.lineno} {n.name}")
    assert long == []
