"""`--fix-script FILE`: the changes the failing findings propose, as one shell script an operator reviews and runs.

Root runs what this prints, so the script is built from the doctor's own knowledge only (#40):

* A live line comes from a finding's typed fix steps (ascend_doctor.core.fixsteps), validated again here against
  the shipped knowledge; every other fix is a comment. No text of a message, evidence or fix advice — read off a
  host, a paste, a server or a fleet node — is ever parsed for commands, and comments are made single-line and
  printable, so such text cannot leave its `#`.
* It acts only when asked: by default it prints what it would run (`--apply` runs it), and it refuses another host
  than the one judged (its name, and the versions of the serving stack the report saw) unless `--force`.
* A package step installs pinned versions, then verifies (`pip check`, importing what it installed) and reinstalls
  what was there when that fails. No package step is scripted while NPU100 or VLLM105 fails: no package change makes
  such a host serve. A step runs only if its program is installed (`command -v`).

Steps are ordered as a stack is repaired: driver and firmware, CANN, Python packages, host knobs, NPU network,
environment, container, serve flags. Fleet reports guard each step with the node it is about.
"""

from __future__ import annotations

import re
import shlex
import textwrap
from typing import Iterable, Optional

from ascend_doctor.core.fixsteps import INVOKER, PY, SAFE_VERSION, Gate, Plan, Refused, plan
from ascend_doctor.report import Finding, Report, Status
from ascend_doctor.text import textsafe
from ascend_doctor.text.redact import redact_text

SECTIONS = (
    ("driver and firmware", ("DRV", "NPU", "HW")),
    ("CANN", ("CANN",)),
    ("Python packages", ("TORCH", "VLLM")),
    ("host", ("HOST",)),
    ("NPU network (HCCL)", ("HCCL",)),
    ("environment of vllm serve", ("ENV",)),
    ("container", ("CTR",)),
    ("vllm serve", ("SERVE", "SRV", "TOOL")),
    ("other", ()),
)
WIDTH = 110
_HOSTNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")
# The serving stack the guard compares, as (label, distribution, Stack field).
STACK = (("vllm-ascend", "vllm-ascend", "vllm_ascend"), ("vllm", "vllm", "vllm"), ("torch", "torch", "torch"),
         ("torch-npu", "torch-npu", "torch_npu"), ("triton-ascend", "triton-ascend", "triton_ascend"),
         ("transformers", "transformers", "transformers"))
# Prints the same `name=version ...` line from the serving interpreter (a fixed program; no value of the report).
_STACK_PY = ("import importlib.metadata as m\n"
             "def v(n):\n"
             "    try:\n"
             "        return m.version(n)\n"
             "    except Exception:\n"
             "        return '-'\n"
             "print(' '.join(n + '=' + v(n) for n in NAMES))\n")


def printable(text: str) -> str:
    """One line of printable text for a comment: `textsafe.printable` (control characters, bidi overrides and
    undecodable bytes as visible escapes), then every run of whitespace — newlines too — one space."""
    return " ".join(textsafe.printable(text).split())


def _comment(label: str, text: str) -> list[str]:
    lines = textwrap.wrap(printable(text), WIDTH - len(label) - 2, break_long_words=False,
                          break_on_hyphens=False) or [""]
    return [f"# {label}{lines[0]}"] + [f"# {' ' * len(label)}{ln}" for ln in lines[1:]]


def _argv(words: Iterable[str]) -> str:
    out = []
    for w in words:
        if w == PY:
            out.append('"$PY"')
        elif w == INVOKER:
            out.append('"${SUDO_USER:-$(id -un)}"')
        else:
            out.append(shlex.quote(w))
    return " ".join(out)


def _section_of(code: str) -> str:
    family = re.match(r"[A-Z]+", code)
    for name, families in SECTIONS:
        if family and family.group(0) in families:
            return name
    return "other"


def to_fix(findings: Iterable[Finding]) -> list[Finding]:
    """The findings a fix script addresses: failures and warnings not waived, errors of the doctor excluded."""
    return [f for f in findings if f.status in (Status.FAIL, Status.WARN) and f.waived is None]


def _plan_lines(p: Plan, code: str, indent: str) -> list[str]:
    """The step's lines: its program checked, its commands run (or printed), verified, undone when that fails."""
    out = []
    tools = list(p.tools)
    test = " && ".join(f"have {shlex.quote(t)}" for t in tools)
    body = [f"run {_argv(c)}" for c in p.commands]
    if p.verify:
        checks = " && ".join(f"run {_argv(c)}" for c in p.verify)
        undo = [f"  run {_argv(c)}" for c in p.undo]
        body = [f"if {' && '.join(b for b in body)} && {checks}; then",
                f"  done_step {shlex.quote(code)}",
                "else",
                f"  echo {shlex.quote(f'{code}: the change did not verify; restoring what was there')} >&2",
                *undo,
                "  exit 1",
                "fi"]
    else:
        body += [f"done_step {shlex.quote(code)}"]
    if test:
        out.append(f"{indent}if {test}; then")
        out += [f"{indent}  {b}" for b in body]
        out.append(f"{indent}else")
        out.append(f"{indent}  echo {shlex.quote(f'{code}: skipped, ' + ' or '.join(tools) + ' is not installed')}"
                   " >&2")
        out.append(f"{indent}fi")
    else:
        out += [f"{indent}{b}" for b in body]
    return out


def _installer(findings: list[Finding], knowledge) -> Optional[str]:
    """The one finding whose pip install is scripted: VLLM102's (the release's whole set of pins) when it has one,
    else the first. A second install from another finding could undo the first; it is shown as an alternative."""
    codes = []
    for f in findings:
        for s in f.fix:
            try:
                if plan(s, knowledge).kind == "pip-install":
                    codes.append(f.code)
            except Refused:
                pass
    return "VLLM102" if "VLLM102" in codes else (codes[0] if codes else None)


def _step(f: Finding, knowledge, gate: Gate, fleet: bool, installer: Optional[str]) -> tuple[list[str], list[Plan]]:
    out = [f"# --- {f.code} ({f.severity.value}): {printable(f.title)}"]
    if f.node:
        out += _comment("node: ", f.node)
    out += _comment("seen: ", f.message)
    if f.remediation:
        out += _comment("fix:  ", f.remediation)
    plans: list[Plan] = []
    node_ok = not fleet or (f.node is not None and _HOSTNAME.match(f.node) is not None)
    for s in f.fix:
        try:
            p = plan(s, knowledge)
        except Refused as exc:
            out += _comment("not scripted: ", str(exc))
            continue
        if p.kind == "pip-install" and f.code != installer:
            out += _comment(f"alternative to {installer}'s install: ", p.says)
            continue
        blocked = gate.blocks(p)
        if blocked:
            out += _comment("not scripted: ", f"{p.says} — {blocked}: no package change makes this host serve")
            continue
        if not node_ok:
            out += _comment("not scripted: ", f"{p.says} — the node's name cannot be checked safely")
            continue
        out += _comment("step: ", p.says)
        if fleet:
            out.append(f"if on_node {shlex.quote(f.node)}; then")
            out += _plan_lines(p, f.code, "  ")
            out.append("fi")
        else:
            out += _plan_lines(p, f.code, "")
        plans.append(p)
    if not plans:
        out.append(f"# TODO: not scripted — apply the fix above by hand ({f.code})")
    return out + [""], plans


def _stack_line(report: Report) -> Optional[str]:
    """`vllm-ascend=0.13.0 vllm=0.13.0+empty …` from the report's stack, or None when it holds nothing checkable."""
    st = report.host.stack
    if st is None:
        return None
    parts = []
    for label, _dist, fieldname in STACK:
        v = getattr(st, fieldname, None) or "-"
        if v != "-" and not SAFE_VERSION.match(v):
            return None  # a version that is not version characters: not something to compare in a script
        parts.append(f"{label}={v}")
    return " ".join(parts)


def _head(report: Report, n: int, fleet: bool, packages: bool) -> list[str]:
    host = report.host.hostname
    judged = host if _HOSTNAME.match(host) else ""
    head = [
        "#!/usr/bin/env bash",
        f"# ascend-doctor {printable(report.tool_version)}: fixes for {n} finding(s) of `{printable(report.command)}` "
        f"on {printable(host)} ({printable(report.host.source)}), {report.started_at:%Y-%m-%d %H:%M} UTC.",
        "# Review every step. By default it only prints what it would run; `bash THIS_SCRIPT --apply` runs it.",
        "# It refuses another host than the one judged unless --force. Run `ascend-doctor check` again afterwards.",
        "set -euo pipefail",
        "APPLY=0",
        "FORCE=0",
        'for arg in "$@"; do',
        '  case "$arg" in',
        "    --apply) APPLY=1 ;;",
        "    --force) FORCE=1 ;;",
        '    *) echo "usage: bash $0 [--apply] [--force]" >&2; exit 2 ;;',
        "  esac",
        "done",
        "run() {",
        '  if [ "$APPLY" = 1 ]; then "$@"; else printf "would run:"; printf " %q" "$@"; printf "\\n"; fi',
        "}",
        'have() { command -v "$1" >/dev/null 2>&1; }',
        'done_step() { if [ "$APPLY" = 1 ]; then echo "$1: done"; fi; }',
    ]
    if fleet:
        head += ['on_node() { [ "$(uname -n)" = "$1" ] || [ "$FORCE" = 1 ]; }']
    else:
        head += [f"JUDGED_HOST='{judged}'",  # judged matches _HOSTNAME: no quote inside
                 'if [ "$(uname -n)" != "$JUDGED_HOST" ] && [ "$FORCE" != 1 ]; then',
                 '  echo "this script is for ${JUDGED_HOST:-a host whose name the report does not give}, not '
                 '$(uname -n): not run (--force to run it anyway)" >&2',
                 "  exit 2",
                 "fi"]
    if packages and report.host.python:
        head += ["# The serving interpreter the report judged "
                 f"({printable(report.host.python_how or '')}); another one: PY=/path/to/python bash THIS_SCRIPT",
                 f"PY=${{PY:-{shlex.quote(report.host.python)}}}"]
        stack = _stack_line(report)
        if stack is not None and not fleet:
            names = "[" + ", ".join(repr(d) for _label, d, _f in STACK) + "]"
            head += [f"JUDGED_STACK={shlex.quote(stack)}",
                     "NOW_STACK=$(\"$PY\" - 2>/dev/null <<'PYEOF' || echo unreadable",
                     "NAMES = " + names, *_STACK_PY.rstrip("\n").split("\n"), "PYEOF", ")",
                     'if [ "$NOW_STACK" != "$JUDGED_STACK" ] && [ "$FORCE" != 1 ]; then',
                     '  echo "the serving stack changed since it was judged (was: $JUDGED_STACK; now: $NOW_STACK): '
                     'not run (check again, or --force)" >&2',
                     "  exit 2",
                     "fi"]
    elif packages:
        head += ['PY=${PY:?"set PY=/path/to/the serving python: the report does not name it"}']
    return head + [""]


def render_fixscript(report: Report, knowledge) -> str:
    """The script for `report`; its steps are validated against `knowledge` (the run's tables)."""
    findings = to_fix(report.findings)
    fleet = report.host.nodes is not None
    gate = Gate.of(report.findings)
    installer = _installer(findings, knowledge)
    body: list[str] = []
    plans: list[Plan] = []
    for name, _families in SECTIONS:
        mine = [f for f in findings if _section_of(f.code) == name]
        if not mine:
            continue
        body += [f"# ===== {name} " + "=" * max(3, WIDTH - 9 - len(name)), ""]
        for f in mine:
            lines, got = _step(f, knowledge, gate, fleet, installer)
            body += lines
            plans += got
    if not findings:
        body = ["# Nothing to fix: no failing or warning finding.", ""]
    elif not plans:
        body += ["# No step of these findings can be scripted: apply the fixes above by hand.", ""]
    head = _head(report, len(findings), fleet, any(p.package for p in plans))
    return redact_text("\n".join(head + body)).rstrip("\n") + "\n"
