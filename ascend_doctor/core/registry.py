"""Checks: how they are declared, loaded (built-in dir, --checks-dir, entry points — one loader) and selected.

A check is a function decorated with `@check(...)` whose docstring is its documentation:

    @check("HOST101", "selinux-mode", severity="error", needs=["selinux"])
    def selinux_mode(ctx):
        '''SELinux is not enforcing

        Why it matters: ...
        How to fix: ...
        '''
        fact = ctx.fact("selinux")          # raises FactUnavailable -> the engine reports `unknown`
        return ctx.fail("...", evidence=[...])
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional, Union

from packaging.utils import canonicalize_name

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.paths import builtin_checks_dir
from ascend_doctor.i18n import T
from ascend_doctor.report import Severity
from ascend_doctor.seam.inputs import LIMITS
from ascend_doctor.seam.trust import code_dir_untrusted_reason

_CODE = re.compile(r"^([A-Z]+)(\d{3})$")
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# Checks registered by the module being loaded right now (the decorator appends here), and codes it retires.
_pending: list["Check"] = []
_retiring: list["Retired"] = []


@dataclass(frozen=True)
class Retired:
    """A code no longer in use and where its rule went: codes are never reused, and a config, a CI filter or a
    reader of an old report that names it is told where to look."""

    code: str
    into: str
    why: str


def retire(code: str, into: str, why: str) -> None:
    """Record, beside the check that took over, that `code` is retired and its rule is judged by `into`."""
    _retiring.append(Retired(code, into, why))


@dataclass
class Check:
    code: str
    slug: str
    severity: Severity
    func: Callable
    needs: tuple[str, ...] = ()
    # "static": runs in `check`; "serve": the `vllm serve` lint, run by `exec` (it needs the command line);
    # "smoke": judges the live smoke stage's results.
    stage: str = "static"
    doc: str = ""
    source: str = "built-in"
    module: str = ""

    @property
    def family(self) -> str:
        return _CODE.match(self.code).group(1)

    @property
    def title(self) -> str:
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else self.slug

    def section(self, name: str) -> str:
        """Text of a doc section such as 'Why it matters' or 'How to fix' ('' when absent)."""
        return doc_section(self.doc, name)

    @property
    def docs_ref(self) -> str:
        return f"ascend-doctor explain {self.code}"


def doc_section(doc: str, name: str) -> str:
    lines = doc.splitlines()
    out: list[str] = []
    grabbing = False
    head = re.compile(r"^\s*([A-Z][A-Za-z' ]+):\s*(.*)$")
    for line in lines:
        m = head.match(line)
        if m and m.group(1).strip() in ("Why it matters", "How to fix", "What it checks", "Evidence"):
            if grabbing:
                break
            if m.group(1).strip() == name:
                grabbing = True
                if m.group(2).strip():
                    out.append(m.group(2).strip())
            continue
        if grabbing:
            out.append(line.strip())
    # Re-flow the docstring's hard-wrapped lines into paragraphs (blank lines separate them).
    paragraphs = "\n".join(out).strip().split("\n\n")
    return "\n".join(" ".join(p.split()) for p in paragraphs if p.strip())


def check(code: str, slug: str, *, severity: str = "error", needs: Iterable[str] = (), stage: str = "static"):
    """Declare a check. The decorated function's docstring is its doc (title, 'Why it matters', 'How to fix')."""

    def deco(func: Callable) -> Callable:
        _pending.append(
            Check(
                code=code,
                slug=slug,
                severity=Severity(severity),
                func=func,
                needs=tuple(needs),
                stage=stage,
                doc=textwrap.dedent(inspect.getdoc(func) or ""),
                module=getattr(func, "__module__", ""),
            )
        )
        return func

    return deco


class Registry:
    """All loaded checks by code. Rejects duplicate codes and undocumented checks."""

    def __init__(self) -> None:
        self.checks: dict[str, Check] = {}
        self.retired: dict[str, Retired] = {}

    def retired_note(self, code: str) -> Optional[str]:
        """'ENV103 is retired: …; see ENV102' for a retired code, else None."""
        r = self.retired.get(code.strip().upper())
        if r is None:
            return None
        return T("{code} is retired: {why}; its rule is judged by {into} (`ascend-doctor explain {into}`)",
                 code=r.code, why=r.why, into=r.into)

    def add(self, c: Check) -> None:
        where = f"{c.source} ({c.module})"
        if not _CODE.match(c.code):
            raise InputError(T("check code {code} from {where} must be LETTERS+3 digits, e.g. HOST101",
                               code=repr(c.code), where=where))
        if not _SLUG.match(c.slug):
            raise InputError(T("check {code} from {where}: slug {slug} must be kebab-case", code=c.code, where=where,
                               slug=repr(c.slug)))
        if c.code in self.checks:
            other = self.checks[c.code]
            raise InputError(T("duplicate check code {code}: {where} and {source} ({module})", code=c.code,
                               where=where, source=other.source, module=other.module))
        if not c.doc.strip() or not c.section("Why it matters") or not c.section("How to fix"):
            raise InputError(T("check {code} from {where} has no doc: its docstring needs a title line, 'Why it "
                               "matters:' and 'How to fix:' sections", code=c.code,
                               where=where))
        self.checks[c.code] = c

    def all(self) -> list[Check]:
        return sorted(self.checks.values(), key=lambda c: (c.family, c.code))

    def get(self, code: str) -> Optional[Check]:
        code = code.upper()
        if code in self.checks:
            return self.checks[code]
        for c in self.checks.values():
            if c.slug == code.lower():
                return c
        return None

    def select(self, select: Iterable[str] = (), ignore: Iterable[str] = (),
               stage: Optional[Union[str, tuple[str, ...]]] = None) -> list[Check]:
        """Checks whose code starts with any `select` prefix (all when empty), with no `ignore` prefix, in `stage`
        (one name or a tuple of names; None = every stage)."""
        stages = (stage,) if isinstance(stage, str) else stage
        sel = [s.strip().upper() for s in select if s.strip()]
        ign = [s.strip().upper() for s in ignore if s.strip()]
        for p in sel + ign:
            if self.retired_note(p):
                raise InputError(self.retired_note(p))
            if not any(c.code.startswith(p) or c.slug.upper() == p for c in self.checks.values()):
                import difflib

                names = sorted({c.code for c in self.checks.values()} | {c.slug.upper() for c in self.checks.values()}
                               | {c.code.rstrip("0123456789") for c in self.checks.values()})
                close = difflib.get_close_matches(p, names, n=3, cutoff=0.6)
                hint = T("; did you mean {names}?", names=" or ".join(close)) if close else ""
                raise InputError(T("unknown check code or prefix {p}{hint} (see `ascend-doctor list`)", p=repr(p),
                                   hint=hint))

        def hit(c: Check, prefixes: list[str]) -> bool:
            return any(c.code.startswith(p) or c.slug.upper() == p for p in prefixes)

        return [
            c for c in self.all()
            if (not sel or hit(c, sel)) and not hit(c, ign) and (stages is None or c.stage in stages)
        ]


_retired_by_file: list[Retired] = []  # what the files of this load_registry call retired


class _SourceOnly(importlib.machinery.SourceFileLoader):
    """Runs a module from its source, never from a `__pycache__` file: the trust rule checked the directory's .py
    files, and bytecode beside them that someone else wrote must not run in their place."""

    def get_code(self, fullname):
        return compile(self.get_data(self.path), self.path, "exec", dont_inherit=True)


def _run(path: Path, name: str) -> None:
    """Execute `path` as module `name` (registered in sys.modules first, as the import system does)."""
    loader = _SourceOnly(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _package(namespace: str) -> str:
    """The package a checks directory's modules live in (`ascend_doctor_checks.<namespace>`), so a check imports its
    family's helper with `from ._serve import …`. Its __path__ is empty: nothing is found in it by searching (a stray
    file or its bytecode cannot be imported by name), only what load_dir put there."""
    import types

    root = sys.modules.setdefault("ascend_doctor_checks", types.ModuleType("ascend_doctor_checks"))
    root.__path__ = []
    name = f"ascend_doctor_checks.{namespace}"
    pkg = sys.modules.get(name)
    if pkg is None:
        pkg = types.ModuleType(name)
        pkg.__path__ = []
        pkg.__package__ = name
        sys.modules[name] = pkg
    return name


def _load_file(path: Path, source: str, namespace: str) -> list[Check]:
    name = f"{_package(namespace)}.{path.stem}"
    start = len(_pending)
    retiring = len(_retiring)
    try:
        _run(path, name)
    except InputError:
        raise
    except Exception as exc:  # a broken plugin file is the user's input, not our crash
        del _pending[start:]
        raise InputError(T("cannot load checks from {path}: {name}: {exc}", path=path, name=type(exc).__name__,
                           exc=exc)) from None
    found = _pending[start:]
    del _pending[start:]
    for c in found:
        c.source = source
    _retired_by_file.extend(_retiring[retiring:])
    del _retiring[retiring:]
    return found


def load_dir(directory: Path, source: str) -> list[Check]:
    """Load the family helpers (`_*.py`, in name order) and then every other `*.py` in `directory`."""
    if not directory.is_dir():
        raise InputError(T("checks directory {directory} does not exist", directory=directory))
    if source != "built-in":
        why = code_dir_untrusted_reason(directory)
        if why:  # loading it would run code someone else can change
            raise InputError(T("will not load checks from {directory}: {why} (`chown $(id -un)` and `chmod go-w` "
                               "what it names if you trust it)", directory=directory, why=why))
    namespace = re.sub(r"\W", "_", str(directory.resolve()))
    paths = sorted(directory.glob("*.py"))
    for path in paths:
        if path.name.startswith("_") and path.name != "__init__.py":
            try:
                _run(path, f"{_package(namespace)}.{path.stem}")
            except Exception as exc:
                raise InputError(T("cannot load checks from {path}: {name}: {exc}", path=path,
                                   name=type(exc).__name__, exc=exc)) from None
    found: list[Check] = []
    for path in paths:
        if not path.name.startswith("_"):
            found.extend(_load_file(path, source, namespace))
    return found


class _EntryPoint:
    """`name = module[:attr]` from an entry_points.txt (what importlib.metadata.EntryPoint would hold)."""

    def __init__(self, name: str, value: str):
        self.name, self.value = name, value

    def load(self):
        module, _, attr = self.value.partition(":")
        obj = importlib.import_module(module.strip())
        for part in attr.split("[")[0].strip().split(".") if attr.strip() else []:
            obj = getattr(obj, part)
        return obj


def find_entry_points(group: str) -> list[_EntryPoint]:
    """Entry points of `group` declared by the distributions on sys.path (first distribution of a name wins).

    Why not importlib.metadata: importing it costs ~35 ms (it pulls in the email package), a tenth of a whole static
    `check`. Entry points are plain INI files (`*.dist-info/entry_points.txt`, `*.egg-info/entry_points.txt`), and
    only their section names and `name = value` lines matter here.
    """
    found: list[_EntryPoint] = []
    seen_dists: set[str] = set()
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed
        cwd = None
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == cwd:
            continue  # `python -m` puts the working directory first: a *.dist-info there is not installed
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in sorted(names):
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            dist = canonicalize_name(name.rsplit(".", 1)[0].split("-", 1)[0])  # name-1.0.dist-info
            if dist in seen_dists:
                continue
            seen_dists.add(dist)
            try:
                with open(os.path.join(entry or ".", name, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read(LIMITS["plugin"])  # a metadata file, kilobytes: never a device's worth
            except (OSError, UnicodeDecodeError):
                continue
            section = None
            for line in text.splitlines():
                line = line.strip()
                if not line or line.startswith(("#", ";")):
                    continue
                if line.startswith("[") and line.endswith("]"):
                    section = line[1:-1].strip()
                elif section == group and "=" in line:
                    key, _, value = line.partition("=")
                    found.append(_EntryPoint(key.strip(), value.strip()))
    return found


def load_entry_points(group: str = "ascend_doctor.checks") -> list[Check]:
    """Checks from installed plugins: each entry point names a module (or callable) that registers checks."""
    found: list[Check] = []
    for ep in find_entry_points(group):
        start = len(_pending)
        try:
            obj = ep.load()
            if callable(obj) and not inspect.ismodule(obj):
                obj()
        except Exception as exc:
            del _pending[start:]
            raise InputError(T("check plugin {name} ({value}) failed to load: {name2}: {exc}", name=repr(ep.name),
                               value=ep.value, name2=type(exc).__name__, exc=exc)) \
                from None
        new = _pending[start:]
        del _pending[start:]
        for c in new:
            c.source = f"plugin:{ep.name}"
        found.extend(new)
    return found


def load_registry(checks_dirs: Iterable[str | Path] = (), entry_points: bool = True) -> Registry:
    """Built-in checks, then --checks-dir modules, then entry-point plugins, all through the same registry."""
    reg = Registry()
    del _retired_by_file[:]
    for c in load_dir(builtin_checks_dir(), "built-in"):
        reg.add(c)
    for r in _retired_by_file:
        if r.code in reg.checks:
            raise InputError(T("check code {code} is retired (into {into}) and may not be reused", code=r.code,
                               into=r.into))
        reg.retired[r.code] = r
    for d in checks_dirs:
        for c in load_dir(Path(d), f"dir:{d}"):
            reg.add(c)
    if entry_points:
        for c in load_entry_points():
            reg.add(c)
    from ascend_doctor.facts.graph import check_graph
    from ascend_doctor.probes import load_probes

    check_graph(reg.all(), load_probes(), read_code=lambda c: c.source != "built-in")
    return reg
