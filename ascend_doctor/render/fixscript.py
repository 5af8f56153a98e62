"""`--fix-script FILE`: the failing findings' fixes as one reviewed shell script (#24). The doctor never runs it.

Steps are ordered as a stack is repaired — driver and firmware, CANN, Python packages, host knobs, NPU network,
environment, container, serve flags — and each carries its finding's code, what was seen and the fix in words.
A command from a fix becomes a line of the script only when it changes the machine, needs no value the doctor does
not know (`<PID>`, `<ver>`) and is safe to run twice (pip, systemctl, mount, setenforce, timedatectl, sysctl,
`ascend-doctor matrix pins`); everything else is a TODO comment: a per-shell setting (`source`, `export`, `ulimit`)
belongs in the shell or unit that starts `vllm serve`, a container flag in `docker run`, a serve flag in the serve
command. Every word of a command is re-quoted (shlex), so a value read from the host cannot become shell syntax.
"""

from __future__ import annotations

import re
import shlex
import textwrap
from typing import Iterable, Optional

from ascend_doctor.report import Finding, Report, Status
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
# Commands that change the machine and may run twice; anything else is advice, not a script line.
RUNNABLE = frozenset({"pip", "pip3", "setenforce", "mount", "timedatectl", "systemctl", "sysctl", "ascend-doctor",
                      "modprobe", "chmod", "chown", "usermod", "ldconfig"})
PER_SHELL = frozenset({"source", ".", "export", "ulimit", "unset", "cd"})
OPERATORS = frozenset({"&&", ">", ">>"})
_CODE = re.compile(r"`([^`\n]+)`")
_PLACEHOLDER = re.compile(r"<[A-Za-z][^<>]*>")
WIDTH = 110
_OR = re.compile(r"\bor\b")
_LETTER = re.compile(r"[A-Z]")  # `--vllm-ascend X`: a single capital stands for a value
_PLAIN_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # the only target a redirect may have (pins.txt)
_PACKAGES = re.compile(r"(?:^|\s)(?:pip3?|python3? -m pip|\"\$PY\" -m pip) install\b")


def _words(command: str) -> Optional[list[str]]:
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _quoted(words: list[str], py: bool = False) -> str:
    """The command re-quoted word by word; `&&`, `>` and `>>` stay operators; with `py`, a command that starts with
    pip runs the serving interpreter's (`"$PY" -m pip`), not whichever pip is first on PATH."""
    out, head = [], True
    for w in words:
        if w in OPERATORS:
            out.append(w)
        elif head and py and w in ("pip", "pip3"):
            out.append('"$PY" -m pip')
        else:
            out.append(shlex.quote(w))
        head = w == "&&"
    return " ".join(out)


def classify(command: str, py: bool = False) -> tuple[str, str]:
    """('run', line) for a script line, ('shell', text) for a per-shell setting, ('todo', text) for the rest."""
    words = _words(command)
    if not words or _PLACEHOLDER.search(command) or any(_LETTER.fullmatch(w) or "…" in w for w in words):
        return "todo", command  # a value only the user knows: `<PID>`, `X`, `…`
    parts, part = [], []
    for w in words:
        if w == "&&":
            parts.append(part)
            part = []
        else:
            part.append(w)
    parts.append(part)
    for i, w in enumerate(words):  # a redirect only into a plain file of the working directory (pins.txt)
        if w in (">", ">>") and not (i + 1 < len(words) and _PLAIN_FILE.fullmatch(words[i + 1])):
            return "todo", command
    heads = [p[0] for p in parts if p]
    if heads and heads[0] in PER_SHELL:
        return "shell", command
    if heads and all(h in RUNNABLE for h in heads) and all(p for p in parts):
        return "run", _quoted(words, py)
    return "todo", command


def _comment(label: str, text: str) -> list[str]:
    lines = textwrap.wrap(" ".join(text.split()), WIDTH - len(label) - 2) or [""]
    return [f"# {label}{lines[0]}"] + [f"# {' ' * len(label)}{ln}" for ln in lines[1:]]


def _section_of(code: str) -> str:
    family = re.match(r"[A-Z]+", code)
    for name, families in SECTIONS:
        if family and family.group(0) in families:
            return name
    return "other"


def _step(f: Finding, seen: dict, py: bool = False) -> list[str]:
    out = [f"# --- {f.code} ({f.severity.value}): {' '.join(f.title.split())}"]
    out += _comment("seen: ", f.message)
    if f.evidence:
        e = sorted(f.evidence, key=lambda x: {False: 0, None: 1, True: 2}[x.ok])[0]  # a faulty item first
        first = (e.excerpt or "").strip().splitlines()
        if first:
            out += _comment("      ", f"{e.source}: {first[0][:200]}")
    if f.remediation:
        out += _comment("fix:  ", f.remediation)
    ran, last_end = False, None
    for m in _CODE.finditer(f.remediation or ""):
        kind, text = classify(m.group(1), py)
        between = (f.remediation or "")[last_end:m.start()] if last_end is not None else ""
        if kind == "run" and ran and _OR.search(between):
            out += _comment("alternative: ", text)  # "`a` or `b`": one of them, the first is scripted
        elif kind == "run" and _PACKAGES.search(text) and seen.get("pip"):
            # One package change per script: a second install from another finding would undo the first.
            out += _comment(f"alternative to {seen['pip']}'s install above: ", text)
            ran, last_end = True, m.end()
        elif kind == "run":
            ran, last_end = True, m.end()
            out.append(text if text not in seen else f"# (already above) {text}")
            seen[text] = f.code
            if _PACKAGES.search(text):
                seen["pip"] = f.code
        elif kind == "shell":
            out += _comment("TODO: in the shell or unit that starts vllm serve: ", text)
    if not ran:
        out.append(f"# TODO: not scripted — apply the fix above by hand ({f.code})")
    return out + [""]


def to_fix(findings: Iterable[Finding]) -> list[Finding]:
    """The findings a fix script addresses: failures and warnings not waived, errors of the doctor excluded."""
    return [f for f in findings if f.status in (Status.FAIL, Status.WARN) and f.waived is None]


def render_fixscript(report: Report) -> str:
    findings = to_fix(report.findings)
    head = [
        "#!/usr/bin/env bash",
        "# shellcheck disable=SC2016  # a value read from the host is single-quoted on purpose: never expanded",
        f"# ascend-doctor {report.tool_version}: fixes for {len(findings)} finding(s) of `{report.command}` on "
        f"{' '.join(report.host.hostname.split())} ({' '.join(report.host.source.split())}), "
        f"{report.started_at:%Y-%m-%d %H:%M} UTC.",
        "# Review every step before running it: the doctor never runs this script. Steps that cannot be scripted are",
        "# TODO comments; run `ascend-doctor check` again afterwards.",
        "set -euo pipefail",
        "",
    ]
    py = bool(report.host.python)
    body = _body(findings, py)
    if py and any('"$PY"' in line and not line.startswith("#") for line in body):
        head += [f"# The serving interpreter the report judged ({' '.join((report.host.python_how or '').split())});",
                 "# packages are installed into it. Another one: PY=/path/to/python bash THIS_SCRIPT",
                 f"PY=${{PY:-{shlex.quote(report.host.python)}}}", ""]  # an assignment: no word splitting
    return redact_text("\n".join(head + body)).rstrip("\n") + "\n"


def _body(findings: list[Finding], py: bool) -> list[str]:
    if not findings:
        return ["# Nothing to fix: no failing or warning finding.", ""]
    body: list[str] = []
    seen: dict = {}  # script lines already written (and "pip": the finding whose install was scripted)
    for name, _families in SECTIONS:
        mine = [f for f in findings if _section_of(f.code) == name]
        if not mine:
            continue
        body += [f"# ===== {name} " + "=" * max(3, WIDTH - 9 - len(name)), ""]
        for f in mine:
            body += _step(f, seen, py)
    return body
