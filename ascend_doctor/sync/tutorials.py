"""The `vllm serve` commands a vllm-ascend release's own tutorials run (docs/source/tutorials/**/*.md of its sdist),
with the environment each code block exports and the hardware the page says the command is for.

Why: a tutorial command is the release maintainers' statement of a deployment that works — the best control the
doctor has against false failures. tests/field/tutorial_controls.py runs every one of them through the serve lint
on a healthy host of its hardware with the release's own stack; a `fail` there is a false failure of the doctor or a
wrong tutorial, and either is worth knowing (docs/research/tutorial-controls.md). `matrix sync` reads two facts from
them into the support-matrix rows: the ❌ feature pairs they run, and the longest context per chip.

What is read, and how:
- fenced code blocks (``` or ~~~, indented too: the docs put per-hardware variants in mkdocs tabs, `=== "A3 series"`,
  whose blocks are indented four spaces), backslash continuations joined;
- in each block, in order: `name=value` shell assignments and `export NAME=value` (the value unquoted, `$name` and
  `${name}` of earlier assignments expanded; what earlier blocks of the same top-level section set carries on, as
  in the reader's shell, except across tabs, which are alternatives), then each line that starts a server —
  `vllm serve …` or `python[3] -m vllm.entrypoints.openai.api_server …` — with the variables known then expanded; a
  reference the block never assigns stays as written and is listed in `unresolved`, so a caller can tell a
  placeholder (`$local_ip`, `your_model_path`) from a value;
- the hardware: the chips named (Atlas A2/A3, 300I/310P, 950) by the block's tab (its label and prose: the other
  tabs are alternatives, "=== \"A2 series\"" beside "=== \"950DT products\""), else between the nearest heading and
  the block — a bullet ("can be deployed on 1 Atlas 800 A3 (64G × 16) or 2 Atlas 800 A2 (64G × 8)") — else in the
  headings above it; `chip` is the one named last, `chips` all of them; "" / [] when the page never says.

Only text is read; nothing in a tutorial is run or evaluated.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ascend_doctor.core.model import Model
from ascend_doctor.text import shellwords

# The chip families as the docs write them, most specific first (300I Duo / 310P before A2, "A3" as a word)
_CHIPS = (
    ("310P", re.compile(r"300I|310P", re.I)),
    ("A5", re.compile(r"\b950(?:PR|DT)?\b|\bA5\b", re.I)),
    ("A3", re.compile(r"\bA3\b|800I?\s*A3|910C|\b16\s*[×x*]\s*64", re.I)),
    ("A2", re.compile(r"\bA2\b|800I?\s*A2|910B", re.I)),
)
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*)$")
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_TAB = re.compile(r"^\s*(?:===\s+[\"']|:{3,}\s*\{tab-item\})")  # mkdocs-material / MyST tab labels
# where a tab's content ends: MyST's closing colons; mkdocs-material's, any text back at the tab label's margin
_TAB_END = {":": re.compile(r"^\s*:{3,}\s*$"), "=": re.compile(r"^\S")}
_SERVER = re.compile(r"^(?:vllm\s+serve\b|python3?\s+-m\s+vllm\.entrypoints\.openai\.api_server\b)")


class TutorialCommand(Model, frozen=True):
    """One server start a tutorial shows."""

    path: str  # the page, relative to the release tree
    line: int  # 1-based line of the command's first line in the page
    chip: str  # "A2", "A3", "310P", "A5" or "" (the page does not say): the one named last before the block
    chips: List[str] = []  # every family the block's section names ("A3 (64GB × 16) or 2 × A2"), last one last
    heading: str  # the nearest heading above the block
    env: Dict[str, str] = {}  # what the block exports before the command (values expanded where known)
    argv: List[str]  # the command as the shell would pass it (known variables expanded)
    unresolved: List[str] = []  # variables the command or its environment uses that the block never assigns
    multi_node: bool = False  # the command is one node's part of a multi-node start


def _chips_in(text: str) -> List[str]:
    """The chip families `text` names, each once, in the order of their last mention ("1 Atlas 800 A3 … or 2 Atlas
    800 A2" -> A3, A2)."""
    last = {}
    for fam, pat in _CHIPS:
        for m in pat.finditer(text):
            last[fam] = max(last.get(fam, -1), m.start())
    return sorted(last, key=last.get)


def _words(text: str) -> List[str]:
    """The shell's words of `text` up to a comment (the project's linear-time splitter: docs are upstream text of any
    size); ValueError for an unclosed quote."""
    words = shellwords.split(text)
    cut = next((i for i, w in enumerate(words) if w.startswith("#")), len(words))
    return words[:cut]


def _unquote(value: str) -> str:
    try:
        parts = _words(value)
    except ValueError:
        return value.strip()
    return parts[0] if len(parts) == 1 else " ".join(parts)


def _expand(text: str, known: Dict[str, str], missing: List[str]) -> str:
    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name in known:
            return known[name]
        if name not in missing:
            missing.append(name)
        return m.group(0)
    return _REF.sub(sub, text)


def _logical_lines(lines: List[Tuple[int, str]]) -> List[Tuple[int, str]]:
    """Backslash continuations joined; each logical line keeps the number of its first physical line."""
    out: List[Tuple[int, str]] = []
    buf, start = "", 0
    for no, raw in lines:
        s = raw.rstrip()
        if not buf:
            start = no
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        buf += s
        out.append((start, buf.strip()))
        buf = ""
    if buf.strip():
        out.append((start, buf.strip()))
    return out


def _block_commands(path: str, block: List[Tuple[int, str]], chips: List[str], heading: str,
                    multi_node: bool, known: Dict[str, str], env: Dict[str, str]) -> List[TutorialCommand]:
    """The server starts of one block; `known` and `env` are the shell state the page built so far (updated)."""
    chip = chips[-1] if chips else ""
    out: List[TutorialCommand] = []
    for no, line in _logical_lines(block):
        if not line or line.startswith("#"):
            continue
        m = _ASSIGN.match(line)
        if m and not _SERVER.match(line):
            missing: List[str] = []
            value = _expand(_unquote(m.group(2)), known, missing)
            known[m.group(1)] = value
            if line.startswith("export"):
                env[m.group(1)] = value
            continue
        if not _SERVER.match(line):
            continue
        missing = []
        text = _expand(line, known, missing)
        for value in env.values():
            for r in _REF.finditer(value):
                name = r.group(1) or r.group(2)
                if name not in missing:
                    missing.append(name)
        try:
            argv = _words(text)
        except ValueError:
            continue  # an unbalanced quote: not a command the shell would run as written
        # a trailing `&`, `| tee log` or `> log 2>&1` is the shell's, not the server's
        for i, word in enumerate(argv):
            if word in ("&", "|", "&&", ";", ">", ">>", "2>&1", "1>") or re.fullmatch(r"\d?>+.*", word):
                argv = argv[:i]
                break
        out.append(TutorialCommand(path=path, line=no, chip=chip, chips=list(chips), heading=heading, env=dict(env),
                                   argv=argv, unresolved=missing, multi_node=multi_node))
    return out


def read_tutorial(text: str, path: str) -> List[TutorialCommand]:
    """Every server start in one tutorial page, in page order."""
    lines = text.splitlines()
    out: List[TutorialCommand] = []
    headings: List[Tuple[int, str]] = []  # (level, title) chain above the current line
    section_text: List[str] = []  # prose since the nearest heading, before any tab (bullets included)
    tab: Optional[List[str]] = None  # the current tab's label and prose: the other tabs are alternatives
    # the shell state a reader builds block after block ("set the variables", then "run on node 0"), kept until the
    # next top-level section
    known: Dict[str, str] = {}
    env: Dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        h = _HEADING.match(line)
        if h:
            level = len(h.group(1))
            headings = [x for x in headings if x[0] < level] + [(level, h.group(2).strip())]
            section_text, tab = [], None
            if level <= 2:
                known, env = {}, {}
            i += 1
            continue
        f = _FENCE.match(line)
        if not f:
            if _TAB.match(line):  # tabs are alternatives (one per chip or role), not steps: each starts a new shell
                known, env, tab = {}, {}, [line]
            elif tab is not None and _TAB_END[tab[0].strip()[0]].match(line):  # back to the section's own prose
                tab = None
            else:
                (section_text if tab is None else tab).append(line)
            i += 1
            continue
        indent, fence = len(f.group(1)), f.group(2)
        block: List[Tuple[int, str]] = []
        j = i + 1
        while j < len(lines):
            body = lines[j]
            stripped = body.strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            block.append((j + 1, body[indent:] if body[:indent].strip() == "" else body.lstrip()))
            j += 1
        if not any(_SERVER.match(b.strip()) for _, b in block):
            _block_commands(path, block, [], "", False, known, env)  # an environment block: its state carries on
        else:
            # the chips of the block's own tab, else of the section's prose, else of the headings above
            prose = "\n".join(section_text + (tab or []))
            chips = (_chips_in("\n".join(tab or [])) or _chips_in("\n".join(section_text))
                     or next((c for c in (_chips_in(t) for _, t in reversed(headings)) if c), []))
            multi = bool(re.search(r"\bnode\s*[01]\b|\bnodes?\b.*\brespectively\b|multi-node", prose[-600:], re.I)
                         ) or any(re.search(r"--headless|--data-parallel-address|--data-parallel-start-rank", b)
                                  for _, b in block)
            out.extend(_block_commands(path, block, chips, headings[-1][1] if headings else "", multi, known, env))
        (section_text if tab is None else tab).append("")
        i = j + 1
    return out


def read_tutorials(read, listdir, root: str = "docs/source/tutorials") -> List[TutorialCommand]:
    """Every tutorial page of a release tree (`read(path)`, `listdir(path)` as ascend_doctor.sync.archive gives)."""
    out: List[TutorialCommand] = []

    def walk(d: str) -> None:
        for name in sorted(listdir(d) or ()):
            p = f"{d}/{name}"
            if name.endswith(".md"):
                text = read(p)
                if text is not None:
                    out.extend(read_tutorial(text, p))
            elif listdir(p) is not None:
                walk(p)
    walk(root)
    return out


def model_of(cmd: TutorialCommand) -> Optional[str]:
    """The model a command serves: `vllm serve MODEL` or `--model MODEL`."""
    argv = cmd.argv
    if len(argv) > 2 and argv[0] == "vllm" and argv[1] == "serve" and not argv[2].startswith("-"):
        return argv[2]
    for k, w in enumerate(argv):
        if w == "--model" and k + 1 < len(argv):
            return argv[k + 1]
        if w.startswith("--model="):
            return w.split("=", 1)[1]
    return None
