"""The messages with which a vllm-ascend release refuses a configuration at start, read from its own source with `ast`
(nothing is imported or run): every `raise SomeError("…")` and `assert cond, "…"` whose message is text, in the
modules that validate a deployment before the model loads (platform.py's check_and_update_config and the helpers
of utils.py it calls, ascend_config.py, the worker's device init).

Each release's checks change (vllm-ascend#4222 added "VL models doesn't support FLASHCOMM" in 0.11.0rc2, 0.13.0rc2
dropped it, 0.15.0rc1 brought it back as an assert, 0.18.0rc1 dropped it again), and the message a user pastes is
the release's own words. So the table records each message once, with every release whose source raises it: triage
tells a refusal of the configuration (change what the message names) from a crash inside the release (a bug), and
says whether the pasted release is one that raises it.

A message is kept as a template: the text, with `{}` where the release formats a value in (an f-string field, a
`%s`/`{…}` of `.format`/`%`, a non-text operand of `+`). Messages whose fixed text is short (`{}`, "Invalid value")
name nothing and are left out.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, List, Optional, Tuple

from ascend_doctor.knowledge.refusals import normalize, refusal_id

# The modules that judge a deployment at start, in the layouts of 0.7.x to 0.30.x (utils.py holds the
# sequence-parallel asserts of 0.13-0.14 and the helpers platform.py calls).
MODULES = ("vllm_ascend/platform.py", "vllm_ascend/ascend_config.py", "vllm_ascend/utils.py",
           "vllm_ascend/worker/worker.py", "vllm_ascend/worker/worker_v1.py")
MIN_FIXED = 24  # characters of fixed text a message needs to name something
MIN_RUN = 14    # and one run of fixed text at least this long (what a pasted line is matched on)
_FORMAT_FIELD = re.compile(r"\{[^{}]*\}|%[-#0 +]*\d*(?:\.\d+)?[sdrif]")


def _text(node: ast.AST) -> Optional[str]:
    """The message of an expression as a template, or None when it is not text (a variable, a call)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        fmt = _text(node.left)
        return _FORMAT_FIELD.sub("{}", fmt) if fmt is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        fmt = _text(node.func.value)
        return _FORMAT_FIELD.sub("{}", fmt) if fmt is not None else None
    return None


def _exception(node: Optional[ast.AST]) -> Optional[str]:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def names_something(template: str) -> bool:
    parts = [p.strip() for p in template.split("{}")]
    return sum(len(p) for p in parts) >= MIN_FIXED and max((len(p) for p in parts), default=0) >= MIN_RUN


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: str):
        self.path = path
        self.stack: List[str] = []
        self.found: List[Tuple[str, str, str, int]] = []  # (template, exception, where, line)

    def _function(self, node):
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def _add(self, message: Optional[ast.AST], exception: Optional[str], line: int) -> None:
        text = _text(message) if message is not None else None
        if text is None or exception is None:
            return
        text = normalize(text)
        if names_something(text):
            where = f"{self.path}:{self.stack[-1]}" if self.stack else self.path
            self.found.append((text, exception, where, line))

    def visit_Raise(self, node: ast.Raise):
        call = node.exc
        if isinstance(call, ast.Call) and call.args:
            self._add(call.args[0], _exception(call), node.lineno)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert):
        self._add(node.msg, "AssertionError", node.lineno)
        self.generic_visit(node)


def read_refusals(read: Callable[[str], Optional[str]]) -> Dict[str, dict]:
    """template -> {exception, where, line} of one release tree (`read(path)` gives a file's text or None); the first
    place a message is raised is kept."""
    out: Dict[str, dict] = {}
    for path in MODULES:
        text = read(path)
        if text is None:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        v = _Visitor(path)
        v.visit(tree)
        for template, exception, where, line in v.found:
            out.setdefault(template, {"exception": exception, "where": where, "line": line})
    return out


def merge_refusals(per_release: Dict[str, Tuple[Dict[str, dict], str]]) -> Dict[str, dict]:
    """id -> row over several releases (version -> (its refusals, its source label)): every release that raises the
    message, and where the newest one raises it."""
    from ascend_doctor.text.versions import parse_version

    out: Dict[str, dict] = {}
    for version in sorted(per_release, key=parse_version):
        found, source = per_release[version]
        for template, at in found.items():
            rid = refusal_id(template)
            row = out.setdefault(rid, {"id": rid, "text": template, "releases": []})
            row["releases"].append(version)
            row.update(exception=at["exception"], where=at["where"], source=f"{source}:{at['where'].split(':')[0]}:"
                                                                          f"{at['line']}")
    return out


def refusal_proposals(table, extracted: Dict[str, dict]) -> List:
    """A proposal for each message the table does not record, and for a recorded one that a release read raises
    and the row does not list (the row with those releases added; a row is never shrunk by a partial read)."""
    from ascend_doctor.sync.diff import release_row_proposals

    return release_row_proposals(
        "release_refusals", table.refusal if table is not None else [], extracted,
        lambda f: f"vllm-ascend {', '.join(f['releases'])}: a refusal the table does not record",
        lambda more: f"also raised by vllm-ascend {', '.join(more)}")
