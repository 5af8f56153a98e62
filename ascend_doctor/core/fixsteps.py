"""Fix steps: what a check proposes to change on the host, as data the fix script renders (#40).

A step is one kind from the fixed list below with typed arguments. A script line comes only from a kind's fixed
template, and an argument reaches it only after the kind's validator accepted it: a package name and a version the
matrix knows, an index URL the package-index table lists, a size in GiB, one of the time services. Text a check read
off a host, a paste or a server (messages, evidence, fix advice) never becomes a command.

Validation runs when the script is rendered, against the renderer's own knowledge, so a report from elsewhere (a
fleet node, a saved JSON file, a pasted report) cannot smuggle a command in through its steps: a step whose kind or
argument is not accepted is shown as a comment saying why.

No removal without what restores the state: an install records the versions it replaces (validated as versions) and
its undo reinstalls them when the verification after it (`pip check`, importing what it installed) fails; a removal
is only one the matrix asks for (a package a hardware rule forbids, as the official image removes it), with the
command that puts the packages back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import try_parse_version

PY = "\x00PY"  # the serving interpreter: rendered `"$PY"` (set once at the top of the script)
INVOKER = "\x00USER"  # the user who runs the script: rendered `"${SUDO_USER:-$(id -un)}"`

# The distributions a package step may name, with the module an import proves installed (None: no import check).
PACKAGES = {"torch": "torch", "torch-npu": "torch_npu", "triton-ascend": None, "transformers": "transformers",
            "vllm-ascend": "vllm_ascend"}
# On x86 PyPI's torch is the CUDA build (~20 nvidia wheels); vllm-ascend's installation guide installs torch with
# this index so pip takes the `+cpu` build (docs/source/installation.md, e.g. at v0.9.2rc1 and v0.10.0rc1).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
SAFE_VERSION = re.compile(r"^[0-9A-Za-z.+!_-]{1,64}$")  # what a version may hold on a script line
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class FixStep(Model, extra="forbid", frozen=True):
    """One change a check proposes: `kind` (a key of KINDS) and its arguments."""

    kind: str
    args: dict[str, Any] = {}


class Refused(ValueError):
    """A step the renderer will not script; the message says why (shown as a comment)."""


@dataclass(frozen=True)
class Plan:
    """A validated step: argv lists built from the kind's template (PY and INVOKER stand for shell values)."""

    kind: str
    tools: tuple[str, ...]  # programs that must exist on the host (`command -v`), besides the interpreter
    commands: tuple[tuple[str, ...], ...]
    verify: tuple[tuple[str, ...], ...] = ()
    undo: tuple[tuple[str, ...], ...] = ()
    package: bool = False  # changes the serving interpreter's packages
    says: str = ""  # one line: what it changes


def _norm(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise Refused(f"not a distribution name: {name!r:.60}")
    return re.sub(r"[-_.]+", "-", name).lower()


def _version(text: Any) -> str:
    """A version as text that is only version characters (`2.9.0.post2`, `0.13.0+empty`), or Refused."""
    if not isinstance(text, str) or not SAFE_VERSION.match(text) or try_parse_version(text) is None:
        raise Refused(f"not a version: {text!r:.60}")
    return text


def _same(a: str, b: str) -> bool:
    va, vb = try_parse_version(a), try_parse_version(b)
    return va is not None and va == vb


def known_pins(matrix, package: str) -> set[str]:
    """Every version of `package` the matrix names (`Matrix.known_versions`); for transformers, every specifier a
    release row gives."""
    if package == "transformers":
        return {row.transformers for row in matrix.releases if row.transformers}
    return set(matrix.known_versions(package))


def _pin(matrix, package: Any, wanted: Any) -> tuple[str, str]:
    """(name, requirement text) for one pin the matrix knows, or Refused."""
    name = _norm(package)
    if name not in PACKAGES:
        raise Refused(f"{name} is not a package the doctor installs")
    known = known_pins(matrix, name)
    if name == "transformers":
        if not isinstance(wanted, str) or wanted not in known:
            raise Refused(f"transformers{wanted!r:.60} is not a specifier a release row names")
        try:
            SpecifierSet(wanted)
        except InvalidSpecifier:
            raise Refused(f"not a specifier: {wanted!r:.60}") from None
        return name, f"{name}{wanted}"
    v = _version(wanted)
    if not any(_same(v, k) for k in known):
        raise Refused(f"{name} {v} is not a version the matrix names")
    return name, f"{name}=={v}"


def _pip_install(args: dict, knowledge) -> Plan:
    m = knowledge.matrix
    pins = [_pin(m, *p) if isinstance(p, (list, tuple)) and len(p) == 2 else _refuse(f"not a pin: {p!r:.60}")
            for p in args.get("packages") or ()]
    if not pins:
        raise Refused("no package to install")
    listed = {r.index_url for r in m.package_index if r.index_url}
    indexes = list(args.get("index_urls") or ())
    for index in indexes:
        if index not in listed:
            raise Refused(f"{index!r:.80} is not an index the package-index table lists")
    was = {_norm(k): _version(v) for k, v in (args.get("was") or {}).items()}
    if args.get("machine") == "x86_64" and any(n == "torch" for n, _ in pins):
        indexes.append(TORCH_CPU_INDEX)
    install = [PY, "-m", "pip", "install"] + [w for i in indexes for w in ("--extra-index-url", i)] + \
        [r for _, r in pins]
    verify = [(PY, "-m", "pip", "check")] + [(PY, "-c", f"import {PACKAGES[n]}") for n, _ in pins if PACKAGES[n]]
    back = [f"{n}=={was[n]}" for n, _ in pins if n in was]
    new = [n for n, _ in pins if n not in was]
    undo = ([(PY, "-m", "pip", "install", "--no-deps", *back)] if back else []) + \
        ([(PY, "-m", "pip", "uninstall", "-y", *new)] if new else [])
    return Plan("pip-install", (), (tuple(install),), tuple(verify), tuple(undo), package=True,
                says="install " + " ".join(r for _, r in pins))


def _pip_remove(args: dict, knowledge) -> Plan:
    """Remove what a hardware rule of the matrix forbids for this family and release (triton on a 300I Duo)."""
    m = knowledge.matrix
    rule = next((r for r in m.serve_rules if r.id == args.get("rule") and r.kind == "forbidden_package"), None)
    if rule is None:
        raise Refused(f"{args.get('rule')!r:.60} is not a forbidden-package rule of the matrix")
    family, release = args.get("family"), _version(args.get("vllm_ascend"))
    if family not in rule.hardware or rule not in m.serve_rules_for(family, release, "forbidden_package"):
        raise Refused(f"{rule.id} does not cover {family!r:.20} with vllm-ascend {release}")
    names = [_norm(n) for n in args.get("packages") or ()]
    allowed = {_norm(v) for v in rule.values}
    if not names or any(n not in allowed for n in names):
        raise Refused(f"{rule.id} forbids only {', '.join(sorted(allowed))}")
    was = {_norm(k): _version(v) for k, v in (args.get("was") or {}).items()}
    back = [f"{n}=={was[n]}" for n in names if n in was]
    # Not verified with `pip check`: vllm-ascend's own metadata requires triton-ascend, so pip check reports what the
    # official -310p image also shows after its Dockerfile removes it. The removal is the documented state; how to
    # put the packages back is said with the step.
    return Plan("pip-remove", (), ((PY, "-m", "pip", "uninstall", "-y", *names),), package=True,
                says=f"uninstall {' '.join(names)} as {rule.id} asks (the -310p image does the same)"
                     + (f"; to restore them: pip install --no-deps {' '.join(back)}" if back else ""))


def _selinux(args: dict, knowledge) -> Plan:
    return Plan("selinux-permissive", ("setenforce",), (("setenforce", "0"),), says="SELinux permissive until reboot")


def _shm(args: dict, knowledge) -> Plan:
    size = args.get("size_gib")
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 4096:
        raise Refused(f"not a /dev/shm size in GiB: {size!r:.30}")
    return Plan("shm-size", ("mount",), (("mount", "-o", f"remount,size={size}G", "/dev/shm"),),
                says=f"/dev/shm to {size} GiB until reboot")


_TIME = {"timedatectl": (("timedatectl",), ("timedatectl", "set-ntp", "true")),
         "chronyd": (("systemctl", "chronyd"), ("systemctl", "enable", "--now", "chronyd")),
         "ntpd": (("systemctl", "ntpd"), ("systemctl", "enable", "--now", "ntpd"))}


def _time(args: dict, knowledge) -> Plan:
    via = args.get("via")
    if not isinstance(via, str) or via not in _TIME:
        raise Refused(f"not a time service the doctor knows: {via!r:.30}")
    tools, command = _TIME[via]
    return Plan("time-sync", tools, (command,), says=f"enable time synchronisation ({via})")


def _group(args: dict, knowledge) -> Plan:
    return Plan("group-add", ("usermod",), (("usermod", "-aG", "HwHiAiUser", INVOKER),),
                says="add the invoking user to HwHiAiUser (log in again afterwards)")


def _refuse(why: str):
    raise Refused(why)


KINDS = {"pip-install": _pip_install, "pip-remove": _pip_remove, "selinux-permissive": _selinux,
         "shm-size": _shm, "time-sync": _time, "group-add": _group}


def plan(step: Any, knowledge) -> Plan:
    """The validated plan of one step (from a check, or read back from a report), or Refused."""
    if isinstance(step, dict):
        try:
            step = FixStep.model_validate(step)
        except Exception:
            raise Refused("not a fix step") from None
    if not isinstance(step, FixStep) or step.kind not in KINDS:
        raise Refused(f"not a kind of fix step the doctor scripts: {getattr(step, 'kind', step)!r:.40}")
    try:
        return KINDS[step.kind](dict(step.args), knowledge)
    except Refused:
        raise
    except Exception as exc:  # arguments of the wrong shape (a list where a name goes): refused, never a crash
        raise Refused(f"malformed arguments for {step.kind} ({type(exc).__name__})") from None


def step(kind: str, **args) -> FixStep:
    """A check's way to propose one: `step("pip-install", packages=[("torch", "2.8.0")], was={"torch": "2.9.0"})`."""
    if kind not in KINDS:
        raise ValueError(f"unknown fix step kind {kind!r}")
    return FixStep(kind=kind, args={k: _plain(v) for k, v in args.items() if v is not None})


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


@dataclass
class Gate:
    """Why package steps are not scripted for this report (NPU100 or a platform failure): no package change helps."""

    reasons: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, findings: Iterable) -> "Gate":
        return cls([f"{f.code} fails" for f in findings
                    if f.code in ("NPU100", "VLLM105") and getattr(f.status, "value", f.status) == "fail"])

    def blocks(self, p: Plan) -> Optional[str]:
        return "; ".join(self.reasons) if p.package and self.reasons else None
