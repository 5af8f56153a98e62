"""The `--additional-config` keys one vllm-ascend release reads, from its own source: every
`additional_config.get("key", …)`, `additional_config["key"]` and `"key" in additional_config` under `vllm_ascend/`,
found with `ast` (nothing is imported or run). vllm-ascend reads the dict with `.get`, so a key no release reads is
ignored without a word — the list is what SERVE307 judges a command's keys against
(the matrix's vllm-ascend-config.toml)."""

from __future__ import annotations

import ast
from typing import Optional, Set


def _is_additional_config(node: ast.AST) -> bool:
    """`additional_config`, `self.additional_config`, `vllm_config.additional_config`, `x.additional_config or {}`."""
    if isinstance(node, ast.Name):
        return node.id == "additional_config"
    if isinstance(node, ast.Attribute):
        return node.attr == "additional_config"
    if isinstance(node, ast.BoolOp):
        return any(_is_additional_config(v) for v in node.values)
    return False


def _key(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def keys_in_source(text: str) -> Set[str]:
    """The top-level keys one Python file reads from the additional config (empty for a file that does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and _is_additional_config(node.func.value) and node.args:
            k = _key(node.args[0])
        elif isinstance(node, ast.Subscript) and _is_additional_config(node.value):
            k = _key(node.slice)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and _is_additional_config(node.comparators[0]):
            k = _key(node.left)
        elif isinstance(node, ast.Call):  # a helper handed the dict and the key: _get_config_value(cfg, "key", …)
            k = next((_key(b) for a, b in zip(node.args, node.args[1:]) if _is_additional_config(a) and _key(b)),
                     None)
        else:
            continue
        if k:
            found.add(k)
    return found

