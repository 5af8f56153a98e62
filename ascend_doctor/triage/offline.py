"""An offline launch in a paste: a Python script's `LLM(model=…, tensor_parallel_size=4, …)` read as the
`vllm serve` options it stands for (also a call the paste quotes in comments, `#   llm = LLM(…)`), and the same for
an lm-evaluation-harness run on vLLM (`lm_eval --model vllm --model_args pretrained=…,tensor_parallel_size=8`), whose
model arguments are `vllm.LLM`'s keywords (lm_eval/models/vllm_causallms.py passes them to `LLM(**…)`).

Many reports (and vllm-ascend's own offline examples) start the engine from a script, not from `vllm serve`. The
keyword arguments of `vllm.LLM` are the engine arguments `vllm serve` takes as options (`EngineArgs`: the option is
the keyword with `-` for `_`), so the serve checks can judge them. Only literals are read (`ast.literal_eval`, never
an evaluation): a keyword whose value is a name the script assigns a literal to takes that literal; any other value
(a call, an f-string, `**kwargs`) is a value not shown, and the launch is open, as a command the paste cuts is. The
script's `os.environ["K"] = "V"` and `os.environ.setdefault("K", "V")` lines are the variables it sets for the
engine.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Optional

from ascend_doctor.parsers.serve_cmdline import engine_option

MAX_CALL_CHARS = 20_000  # a launch call is a few hundred characters; past this it is not one
MAX_CALL_LINES = 200
MAX_CALLS = 16  # `LLM(` openings tried as the launch: a paste has one or two, a hostile one thousands
MAX_CLOSES = 256  # closing parentheses tried as the call's end: a launch has a few dozen at most
_CALL = re.compile(r"(?:^|[\s=(,])(?:vllm\.)?LLM\(")
_COMMENT = re.compile(r"^\s*#+\s?")
_ASSIGNMENT = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(.+?)\s*$")
_ENVIRON = re.compile(r"""os\.environ(?:\[\s*(['"])([A-Z][A-Z0-9_]*)\1\s*\]\s*=\s*|\.setdefault\(\s*(['"])"""
                      r"""([A-Z][A-Z0-9_]*)\3\s*,\s*)(['"])([^'"\n]*)\5""")


class OfflineLaunch:
    """What one `LLM(...)` call states: argv as `vllm serve` would take it, the lines it spans, the keywords whose
    value the paste does not show, and the variables the script sets."""

    def __init__(self, argv: list[str], first: int, last: int, unshown: list[str], env: dict[str, tuple[str, int]]):
        self.argv, self.first, self.last, self.unshown, self.env = argv, first, last, unshown, env


def _literal(node: ast.AST, names: dict[str, Any]) -> tuple[bool, Any]:
    """(read, value) of a keyword's value: a literal, or a name the script assigns one to."""
    if isinstance(node, ast.Name) and node.id in names:
        return True, names[node.id]
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False, None


def _assigned(lines: list[tuple[int, str]]) -> dict[str, Any]:
    """NAME -> literal for each `NAME = <literal>` line of the paste (the last one wins, as in a script)."""
    out: dict[str, Any] = {}
    for _, text in lines:
        m = _ASSIGNMENT.match(text)
        if m and len(m.group(2)) < 2000 and not m.group(2).startswith("="):
            try:
                out[m.group(1)] = ast.literal_eval(m.group(2))
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                continue
    return out


def _call_text(lines: list[tuple[int, str]], i: int, start: int) -> Optional[tuple[str, int]]:
    """The text of the call that opens on line i at `start`, to its closing parenthesis (Python's own tokenizer
    decides, through ast.parse), with the index of its last line; None when it never closes."""
    text = lines[i][1][start:]
    for j in range(i, min(len(lines), i + MAX_CALL_LINES)):
        if j > i:
            text += "\n" + lines[j][1]
        if len(text) > MAX_CALL_CHARS:
            return None
        if text.count("(") <= text.count(")"):
            cut = _balanced(text)
            if cut is not None:
                return cut, j
    return None


def _balanced(text: str) -> Optional[str]:
    """The shortest prefix of `text` that parses as a call (the `LLM(...)` itself), None when none does."""
    end, tries = text.find(")"), 0
    while end >= 0 and tries < MAX_CLOSES:
        tries += 1
        try:
            if isinstance(ast.parse(text[:end + 1], mode="eval").body, ast.Call):
                return text[:end + 1]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        end = text.find(")", end + 1)
    return None


def read_offline_launch(lines: list[tuple[int, str]]) -> Optional[OfflineLaunch]:
    """The first `LLM(...)` call of the paste as a launch, None when there is none (or it never closes)."""
    from ascend_doctor.triage.paste import CUT_VALUE

    uncommented: Optional[list[tuple[int, str]]] = None  # the paste with comment marks removed, made once
    tried = 0
    for i, (no, text) in enumerate(lines):
        m = _CALL.search(text)
        if m is None:
            continue
        tried += 1
        if tried > MAX_CALLS:
            return None
        src = lines
        if text.lstrip().startswith("#"):  # a call quoted in comments: read with the comment marks removed
            uncommented = uncommented or [(n, _COMMENT.sub("", t, count=1)) for n, t in lines]
            src = uncommented
            m = _CALL.search(src[i][1])
            if m is None:
                continue
        found = _call_text(src, i, m.end() - len("LLM("))
        if found is None:
            continue
        call_text, last = found
        call = ast.parse(call_text, mode="eval").body
        names = _assigned(src)  # a call quoted in comments takes the assignments quoted with it
        model, argv, unshown = None, [], []
        if call.args:
            read, value = _literal(call.args[0], names)
            model = str(value) if read and isinstance(value, str) else None
            unshown += [] if model else ["model"]
        for kw in call.keywords:
            if kw.arg is None:  # **kwargs: options the paste does not show
                unshown.append("**" + (kw.value.id if isinstance(kw.value, ast.Name) else "kwargs"))
                continue
            read, value = _literal(kw.value, names)
            if kw.arg == "model":
                model = str(value) if read and isinstance(value, str) else None
                unshown += [] if model else ["model"]
            elif read:
                argv += engine_option(kw.arg, value)
            else:
                unshown.append(kw.arg)
                argv += ["--" + kw.arg.replace("_", "-"), CUT_VALUE]
        head = [model] if model else ["--model", CUT_VALUE]  # a model the paste does not show is a cut value
        return OfflineLaunch(["vllm", "serve", *head, *argv], no, src[last][0], unshown, _environ(lines))
    return None


def _environ(lines: list[tuple[int, str]]) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for no, text in lines:
        for m in _ENVIRON.finditer(text):
            out.setdefault(m.group(2) or m.group(4), (m.group(6), no))
    return out


_LM_EVAL = re.compile(r"(?:^|[\s/])(?:lm_eval|lm-eval|python3?\s+-m\s+lm_eval)\s")
_LM_EVAL_LINES = 50


def read_lm_eval_launch(lines: list[tuple[int, str]]) -> Optional[OfflineLaunch]:
    """The first `lm_eval --model vllm --model_args k=v,…` run of the paste as a launch (its continuation lines
    joined), None when there is none. `pretrained` is the model; a value is read as Python would write it (`True`,
    numbers), as lm_eval's own `simple_parse_args_string` does."""
    from ascend_doctor.text import shellwords
    from ascend_doctor.triage.paste import CUT_VALUE

    tried = 0
    for i, (no, text) in enumerate(lines):
        if _LM_EVAL.search(text) is None or text.lstrip().startswith("#"):
            continue
        tried += 1
        if tried > MAX_CALLS:
            return None
        last, joined = i, text
        while joined.rstrip().endswith("\\") and last + 1 < len(lines) and last - i < _LM_EVAL_LINES:
            last += 1
            joined = joined.rstrip()[:-1] + " " + lines[last][1]
        try:
            words = shellwords.split(shellwords.strip_comment(joined))
        except ValueError:
            continue
        given = dict(_flag_values(words))
        if given.get("--model") != "vllm" or "--model_args" not in given:
            continue
        model, argv = None, []
        for pair in given["--model_args"].split(",")[:64]:
            key, sep, raw = pair.partition("=")
            key = key.strip()
            if not sep or not key.isidentifier():
                continue
            try:
                value = ast.literal_eval(raw.strip())
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                value = raw.strip()
            if key == "pretrained":
                model = str(value)
            else:
                argv += engine_option(key, value)
        return OfflineLaunch(["vllm", "serve", *([model] if model else ["--model", CUT_VALUE]), *argv], no,
                             lines[last][0], [] if model else ["model"], _environ(lines))
    return None


def _flag_values(words: list[str]):
    """(flag, value) of each `--flag value` / `--flag=value` pair of an argv (`--model-args` read as `--model_args`,
    as lm_eval's parser takes both)."""
    for k, w in enumerate(words):
        if not w.startswith("--"):
            continue
        flag, sep, value = w.partition("=")
        flag = "--model_args" if flag == "--model-args" else flag
        if sep:
            yield flag, value
        elif k + 1 < len(words):
            yield flag, words[k + 1]
