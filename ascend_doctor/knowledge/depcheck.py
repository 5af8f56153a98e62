"""`pip check` from package metadata: every installed distribution's `Requires-Dist` against what is installed.

The `python` fact lists the serving interpreter's distributions with their `requires` lines, so unmet requirements
can be found without running pip in that environment (and on a replayed snapshot). As pip does, requirements are
read with `packaging.requirements.Requirement`, markers are evaluated for *that* interpreter (version and machine
from the fact, Linux assumed: the fact comes from an Ascend host), `extra == ...` requirements are skipped (pip
checks only the base requirements), and names are PEP 503-normalised. Versions are compared with
`ascend_doctor.text.versions` (PEP 440 semantics for PEP 440 strings; pre-releases are never excluded, like pip check).

Some conflicts are deliberate and documented as harmless — vLLM from PyPI pins the CUDA torch it was built with while
vllm-ascend pins the torch torch_npu needs (vllm-ascend#754: "torch version conflict doesn't affect the real work").
Those live as data in the allow-list (the `depcheck/dependency-allowlist` table), each rule with its reason and source;
an allowed conflict is still returned, marked with the rule that allows it. """

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Dict, List, Literal, Optional

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from pydantic import AfterValidator, Field

from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.knowledge.matrix_schema import check_specifier
from ascend_doctor.seam.host import PythonEnv, normalize_name
from ascend_doctor.text.versions import build_of, try_parse_version, version_in

# --- allow-list schema ------------------------------------------------------------------------------------------

def _when(v: Dict[str, str]) -> Dict[str, str]:
    return {normalize_name(k): check_specifier(s) for k, s in v.items()}


def _sources(v: List[str]) -> List[str]:
    if any(not s.strip() for s in v):
        raise ValueError("every source must name a repo + issue/path")
    return v


class AllowRule(Model, extra="forbid", frozen=True):
    """One documented-harmless conflict: `requirer`'s requirement on `requirement` may be unmet when `when` holds."""

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    requirer: Annotated[str, AfterValidator(normalize_name)] = Field(
        min_length=1, description="Distribution whose requirement is unmet (e.g. vllm)")
    requirement: Annotated[str, AfterValidator(normalize_name)] = Field(
        min_length=1, description="Distribution it requires (e.g. torch)")
    when: Annotated[Dict[str, str], AfterValidator(_when)] = Field(
        default_factory=dict, description="Installed-version conditions that must all hold, e.g. vllm-ascend")
    reason: str = Field(min_length=1)
    source: Annotated[List[str], AfterValidator(_sources)] = Field(min_length=1)


class AllowList(Model, extra="forbid"):
    schema_version: Literal[1]
    updated: date
    allow: List[AllowRule] = Field(default_factory=list)


# --- conflicts --------------------------------------------------------------------------------------------------

class Conflict(Model):
    """One unmet requirement, worded like `pip check`."""

    requirer: str
    requirer_version: str
    requirement: str = Field(description="The Requires-Dist line as written (marker dropped)")
    name: str = Field(description="Normalised name of the required distribution")
    installed: Optional[str] = Field(None, description="Installed version of it; None when missing")
    kind: Literal["missing", "version"]
    allowed_by: Optional[str] = Field(None, description="Allow-list rule id when the conflict is documented harmless")
    allowed_reason: str = ""
    allowed_source: List[str] = Field(default_factory=list)

    def line(self) -> str:
        if self.kind == "missing":
            return f"{self.requirer} {self.requirer_version} requires {self.requirement}, which is not installed."
        return (f"{self.requirer} {self.requirer_version} has requirement {self.requirement}, "
                f"but you have {self.name} {self.installed}.")


def marker_environment(py: PythonEnv) -> Dict[str, str]:
    """PEP 508 marker variables for the interpreter in the fact (Linux; what the fact does not say stays empty)."""
    full = py.version or ""
    m = re.match(r"^(\d+)\.(\d+)", full)
    impl = (py.implementation or "CPython")
    return {
        "python_version": f"{m.group(1)}.{m.group(2)}" if m else "",
        "python_full_version": full,
        "implementation_name": impl.lower(),
        "implementation_version": full,
        "platform_python_implementation": impl,
        "platform_machine": py.machine or "",
        "platform_system": "Linux",
        "sys_platform": "linux",
        "os_name": "posix",
        "platform_release": "",
        "platform_version": "",
        "extra": "",
    }


def _applies(req: Requirement, env: Dict[str, str]) -> Optional[bool]:
    """Whether the requirement's marker holds here; None when it cannot be evaluated from the fact."""
    if req.marker is None:
        return True
    try:
        return bool(req.marker.evaluate(env))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError, TypeError):
        return None


def _satisfied(installed: str, spec: str) -> Optional[bool]:
    if not spec:
        return True
    if try_parse_version(installed) is None:
        return None
    try:
        return version_in(installed, spec)
    except ParseError:
        return None


def find_conflicts(py: PythonEnv, allowlist: Optional[AllowList] = None) -> List[Conflict]:
    """Every unmet requirement among the installed distributions, allowed ones marked (pip check order: by name)."""
    env = marker_environment(py)
    versions: Dict[str, str] = {}
    for d in py.distributions:
        versions.setdefault(normalize_name(d.name), d.version)
    rules = allowlist.allow if allowlist is not None else []
    out: List[Conflict] = []
    seen: set = set()
    for d in sorted(py.distributions, key=lambda x: normalize_name(x.name)):
        dn = normalize_name(d.name)
        if dn in seen:  # the same project twice on sys.path: the first one wins, as for importlib.metadata
            continue
        seen.add(dn)
        for line in d.requires:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if _applies(req, env) is not True:
                continue
            name = normalize_name(req.name)
            text = req.name + (f"[{','.join(sorted(req.extras))}]" if req.extras else "") + str(req.specifier)
            installed = versions.get(name)
            if installed is None:
                c = Conflict(requirer=d.name, requirer_version=d.version, requirement=text, name=name, kind="missing")
            elif _satisfied(installed, str(req.specifier)) is False:
                c = Conflict(requirer=d.name, requirer_version=d.version, requirement=text, name=name,
                             installed=installed, kind="version")
            else:
                continue
            pinned = [s.version for s in req.specifier if s.operator == "=="]
            if c.kind == "version" and len(pinned) == 1 and len(req.specifier) == 1 and \
                    try_parse_version(pinned[0]) is not None and build_of(installed, pinned[0]):
                c.allowed_by = "official-build"
                c.allowed_reason = (f"{installed} is a dev/post build of {pinned[0]} (the vllm-ascend images ship "
                                    "such builds of the pinned release); judged as its public release")
                c.allowed_source = ["vllm-ascend v0.18.0 release notes: torch_npu 2.9.0.post1+git4c901a4 and "
                                    "triton-ascend 3.2.0.dev20260322 in the official table while the package pins "
                                    "2.9.0 / 3.2.0 (../shared/facts/matrix-facts.md §2)"]
                out.append(c)
                continue
            for rule in rules:
                if rule.requirer == dn and rule.requirement == name and all(
                        versions.get(k) is not None and _satisfied(versions[k], s) is True
                        for k, s in rule.when.items()):
                    c.allowed_by, c.allowed_reason, c.allowed_source = rule.id, rule.reason, list(rule.source)
                    break
            out.append(c)
    return out


def pin_index(matrix, requirements) -> str:
    """` --extra-index-url URL` for the exact pins (`name==version`) PyPI does not have (`triton-ascend==3.2.2`:
    matrices/package-index.toml, vllm-ascend#16732), so a printed `pip install` of them works as written."""
    urls: list = []
    for req in requirements:
        name, _, version = req.partition("==")
        row = matrix.index_for(name.strip(), version.strip()) if version and "," not in version else None
        if row is not None and row.index_url and row.index_url not in urls:
            urls.append(row.index_url)
    return "".join(f" --extra-index-url {u}" for u in urls)
