"""The `--additional-config` keys one vllm-ascend release accepts, from its own source (nothing is imported or run).

Two eras, two readers, both with `ast`:

* Up to 0.26.0rc1 vllm-ascend reads the dict with `.get`, so the keys are every `additional_config.get("key", …)`,
  `additional_config["key"]`, `"key" in additional_config` (and a helper handed the dict and the key) under
  `vllm_ascend/`; a key no release reads is ignored without a word.
* From 0.27.1rc1 (vllm-project/vllm-ascend#13838) `AscendConfig` in `vllm_ascend/ascend_config.py` is a pydantic
  `@config` dataclass whose default is `extra="forbid"`: the keys are its init fields plus the ones
  `init_ascend_config` strips before validation (`_NON_USER_INPUT_KEYS`), and any other top-level key stops vLLM with
  `Unexpected keyword argument`. A field whose type is another `@config` class of the module is checked the same way
  one level down; its keys are recorded as `field.key`.

`read_release_keys` returns what the `serve/additional-config` table records for one release (SERVE307 judges a
command against it; `matrix sync` proposes it from an sdist).
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Set, Tuple

from ascend_doctor.core.model import Model

CONFIG_MODULE = "vllm_ascend/ascend_config.py"
TOP_CLASS = "AscendConfig"
STRIPPED = "_NON_USER_INPUT_KEYS"


class ReleaseConfigKeys(Model):
    """The accepted keys of one release, as its source defines them."""

    keys: List[str]  # top-level keys, and `sub.key` for the keys of a strict sub-config
    strict: bool  # an unknown key stops vLLM at start (pydantic extra="forbid")
    lenient_with: Optional[str] = None  # installed, it turns an unknown top-level key into a warning
    how: str  # which reader found them, for the row's source


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


def _parse(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def keys_in_source(text: str) -> Set[str]:
    """The top-level keys one Python file reads from the additional config (empty for a file that does not parse)."""
    tree = _parse(text)
    if tree is None:
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


# The pydantic era ---------------------------------------------------------------------------------------------
def _extra(call: ast.AST) -> Optional[str]:
    """The `extra=` of a `ConfigDict(extra=…)` call, if that is what `call` is."""
    if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) == "ConfigDict":
        return next((_key(k.value) for k in call.keywords if k.arg == "extra"), None)
    return None


def _forbids(cls: ast.ClassDef) -> Optional[bool]:
    """True for a `@config` class that forbids unknown keys (the decorator's default, unless its `config=` or a
    `model_config` in the body says otherwise); None for a class that is not a `@config` class."""
    extra: Optional[str] = None
    decorated = False
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if getattr(target, "id", getattr(target, "attr", None)) != "config":
            continue
        decorated = True
        extra = "forbid"
        if isinstance(d, ast.Call):
            extra = next((_extra(k.value) or extra for k in d.keywords if k.arg == "config"), extra)
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and any(getattr(t, "id", "") == "model_config" for t in stmt.targets):
            extra = _extra(stmt.value) or extra
            decorated = decorated or extra is not None
    return (extra == "forbid") if decorated else None


def _not_init(value: Optional[ast.AST]) -> bool:
    """`dataclasses.field(…, init=False)`: not a constructor argument."""
    return isinstance(value, ast.Call) and any(k.arg == "init" and isinstance(k.value, ast.Constant)
                                               and k.value.value is False for k in value.keywords)


def _fields(cls: ast.ClassDef) -> List[Tuple[str, ast.AST]]:
    """(name, annotation) of the init fields a dataclass body declares."""
    out = []
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        name = stmt.target.id
        if name.startswith("_") or name == "model_config" or "ClassVar" in ast.unparse(stmt.annotation) \
                or _not_init(stmt.value):
            continue
        out.append((name, stmt.annotation))
    return out


def _annotation_name(node: ast.AST) -> Optional[str]:
    """`EplbConfig` for `EplbConfig` or the string "EplbConfig"; None for unions, generics and Any."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
        return node.value
    return None


def _set_literal(tree: ast.Module, name: str) -> Set[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets) \
                and isinstance(node.value, (ast.Set, ast.List, ast.Tuple)):
            return {k for k in (_key(e) for e in node.value.elts) if k}
    return set()


def _lenient_with(tree: ast.Module) -> Optional[str]:
    """The project `init_ascend_config` lets keep its own top-level keys: from vllm-project/vllm-ascend#15515 an
    unknown key only warns when `importlib.util.find_spec("vllm_omni")` finds vLLM-Omni installed."""
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "init_ascend_config"):
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "find_spec" \
                    and node.args and _key(node.args[0]):
                return _key(node.args[0]).replace("_", "-")
    return None


def pydantic_keys(text: str) -> Optional[ReleaseConfigKeys]:
    """The keys of a release whose AscendConfig is a `@config` dataclass; None when it is not one (or the file does
    not parse)."""
    tree = _parse(text)
    if tree is None:
        return None
    classes: Dict[str, ast.ClassDef] = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    top = classes.get(TOP_CLASS)
    if top is None:
        return None
    strict = _forbids(top)
    if strict is None:
        return None
    keys: Set[str] = set(_set_literal(tree, STRIPPED))
    for name, annotation in _fields(top):
        keys.add(name)
        sub = classes.get(_annotation_name(annotation) or "")
        if sub is not None and _forbids(sub):
            keys.update(f"{name}.{k}" for k, _ in _fields(sub))
    return ReleaseConfigKeys(keys=sorted(keys), strict=strict, lenient_with=_lenient_with(tree) if strict else None,
                             how=f"{CONFIG_MODULE} ({TOP_CLASS} fields, {STRIPPED})")


def read_release_keys(files: Iterable[Tuple[str, str]]) -> Optional[ReleaseConfigKeys]:
    """The keys of one release from its (path, text) pairs under `vllm_ascend/`: the pydantic reader when
    AscendConfig is a `@config` class, else every key read from the dict. None when no file names vllm_ascend."""
    files = [(p, t) for p, t in files if p.startswith("vllm_ascend/") and p.endswith(".py")]
    if not files:
        return None
    module = next((t for p, t in files if p == CONFIG_MODULE), None)
    found = pydantic_keys(module) if module is not None else None
    if found is not None:
        return found
    keys: Set[str] = set()
    for _, text in files:
        keys |= keys_in_source(text)
    return ReleaseConfigKeys(keys=sorted(keys), strict=False, how="vllm_ascend/**/*.py (keys read from the dict)")
