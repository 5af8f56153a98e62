"""What the INSTALLED vLLM / vllm-ascend / transformers accept, read from their source files as text (never imported).

Every parser here is a pure function `source text -> names` using `ast` (nothing is executed); `read_installed()`
finds the files under a site-packages directory through two callables (so the probe can route them through the host
seam). Where each list lives (verified against the vLLM sdists, see ../shared/facts/matrix-facts.md §4):

  tool parsers       vllm/tool_parsers/__init__.py `_TOOL_PARSERS_TO_REGISTER` (>= 0.13.0; 0.12.0 has it in
                     vllm/entrypoints/openai/tool_parsers/__init__.py);
                     `@ToolParserManager.register_module(...)` in vllm/entrypoints/openai/tool_parsers/*.py (older)
  reasoning parsers  vllm/reasoning/__init__.py `_REASONING_PARSERS_TO_REGISTER` (0.13.0);
                     `@ReasoningParserManager.register_module(...)` in vllm/reasoning/*.py (older;
                     vllm/entrypoints/openai/reasoning_parsers/*.py in 0.7.x)
  tokenizer modes    `TokenizerMode = Literal[...]` in vllm/config/model.py (0.13.0), vllm/config/__init__.py
                     (0.10.1-0.10.2) or vllm/config.py (0.9-0.10.0); the `--tokenizer-mode` choices of
                     vllm/engine/arg_utils.py (<= 0.8),
                     plus the `_VLLM_TOKENIZERS` keys of vllm/tokenizers/registry.py (>= 0.13.0)
  architectures      the `_*_MODELS` dicts of vllm/model_executor/models/registry.py,
                     plus `ModelRegistry.register_model("Arch", ...)` calls in vllm_ascend/**
  model types        transformers/models/auto/configuration_auto.py `CONFIG_MAPPING_NAMES` (from 5.6 mostly in
                     models/auto/auto_mappings.py, which configuration_auto.py imports and extends),
                     plus vllm/transformers_utils/config.py `_CONFIG_REGISTRY` (vLLM's own configs, e.g. deepseek_v32)
  env variables      vllm/envs.py `environment_variables`, vllm_ascend/envs.py `env_variables`
"""

from __future__ import annotations

import ast
import posixpath
import re
from typing import Callable, Iterable, Optional

from pydantic import Field

from ascend_doctor.core.model import Model

ReadText = Callable[[str], Optional[str]]
ListDir = Callable[[str], Optional[list]]


class NameList(Model):
    """Names read from the installed files, and where they came from (or why they could not be read)."""

    names: Optional[list[str]] = None
    source: str = ""
    why_not: str = ""

    @property
    def ok(self) -> bool:
        return self.names is not None


class InstalledVllm(Model):
    """The `vllm_files` fact."""

    site_packages: Optional[str] = None
    vllm_dir: Optional[str] = None
    vllm_version: Optional[str] = None
    vllm_ascend_version: Optional[str] = None
    vllm_ascend_editable: Optional[bool] = Field(None, description="vllm-ascend is an editable install of a source "
                                                                   "tree (the official images'); None: not read")
    transformers_version: Optional[str] = None
    tool_parsers: NameList = Field(default_factory=NameList)
    reasoning_parsers: NameList = Field(default_factory=NameList)
    tokenizer_modes: NameList = Field(default_factory=NameList)
    architectures: NameList = Field(default_factory=NameList)
    vllm_model_types: NameList = Field(default_factory=NameList)
    transformers_model_types: NameList = Field(default_factory=NameList)
    vllm_env_vars: NameList = Field(default_factory=NameList)
    cli_options: NameList = Field(default_factory=NameList, description="`vllm serve` option names, without `--`")
    vllm_ascend_env_vars: NameList = Field(default_factory=NameList)
    # project ("vllm", "vllm-ascend") -> kind -> names (ascend_doctor.parsers.release_names.READERS)
    names: dict[str, dict[str, NameList]] = Field(default_factory=dict)


# Pure parsers ------------------------------------------------------------------------------------------------------
def _tree(text: str) -> ast.Module:
    return ast.parse(text)


def _str_keys(node: ast.AST) -> list[str]:
    """String keys of a dict display, `dict(k=...)`/`LazyConfigDict(k=...)` call or `OrderedDict([("k", v), ...])`."""
    if isinstance(node, ast.Dict):
        keys: list[str] = []
        for k, v in zip(node.keys, node.values):
            if k is None:  # **other_dict: its keys come from elsewhere in the same module
                continue
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                keys.append(k.value)
        return keys
    if isinstance(node, ast.Call):
        out = [kw.arg for kw in node.keywords if kw.arg]
        for arg in node.args:
            if isinstance(arg, (ast.List, ast.Tuple)):
                for el in arg.elts:
                    if isinstance(el, ast.Tuple) and el.elts and isinstance(el.elts[0], ast.Constant) \
                            and isinstance(el.elts[0].value, str):
                        out.append(el.elts[0].value)
            elif isinstance(arg, ast.Dict):
                out.extend(_str_keys(arg))
        return out
    return []


def module_dict_keys(text: str, name: str) -> Optional[list[str]]:
    """Keys of the module-level dict assigned to `name` (plain or annotated assignment); None when absent.

    A file `ast` cannot parse (e.g. recorded into a snapshot whose secret masking rewrote `VLLM_API_KEY: str`) is
    read by pattern: the `"key":` / `key=` lines between `name … = {` (or `(`) and the closing bracket at column 0.
    """
    try:
        tree = _tree(text)
    except SyntaxError:
        return _dict_keys_by_pattern(text, name)
    for node in tree.body:
        targets: list[ast.AST] = []
        value = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return _str_keys(value)
    return None


def accumulated_dict_keys(text: str, name: str) -> tuple[Optional[list[str]], Optional[str]]:
    """(keys, module) of a module-level dict built in steps, as transformers >= 5.6 builds CONFIG_MAPPING_NAMES:
    `from .auto_mappings import NAME` (module returned: its keys come from there), `NAME.update({...})`, and
    `NAME = OrderedDict(**{...}, **NAME)`. keys None when the file never assigns, updates or imports NAME."""
    tree = _tree(text)
    keys: Optional[list[str]] = None
    module = None

    def splat_keys(value: ast.AST) -> list[str]:
        out = list(_str_keys(value))
        if isinstance(value, ast.Call):
            for kw in value.keywords:
                if kw.arg is None:
                    if isinstance(kw.value, ast.Dict):
                        out.extend(_str_keys(kw.value))
                    elif isinstance(kw.value, ast.Name) and kw.value.id == name:
                        out.extend(keys or [])
        elif isinstance(value, ast.Dict):
            for k, v in zip(value.keys, value.values):
                if k is None and isinstance(v, ast.Name) and v.id == name:
                    out.extend(keys or [])
        return out

    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            module, keys = ("." * node.level) + (node.module or ""), keys or []
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                keys = splat_keys(node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            f = node.value.func
            if isinstance(f, ast.Attribute) and f.attr == "update" and isinstance(f.value, ast.Name) \
                    and f.value.id == name and node.value.args:
                keys = (keys or []) + _str_keys(node.value.args[0])
    return keys, module


def _dict_keys_by_pattern(text: str, name: str) -> Optional[list[str]]:
    m = re.search(rf"^{re.escape(name)}\b[^\n=]*=\s*[\w.\[\], ]*([{{(])\s*$", text, re.MULTILINE)
    if m is None:
        return None
    closing = "}" if m.group(1) == "{" else ")"
    body = text[m.end():]
    end = re.search(rf"^\{closing}", body, re.MULTILINE)
    body = body[:end.start()] if end else body
    pattern = r"^( +)[\"']([^\"']+)[\"']\s*:" if closing == "}" else r"^( +)([A-Za-z_]\w*)\s*=[^=]"
    found = re.findall(pattern, body, re.MULTILINE)
    if not found:
        return []
    indent = min(len(i) for i, _ in found)  # top-level keys only, not keys inside the values
    return [k for i, k in found if len(i) == indent]


def _assignments(text: str):
    """(targets, value) of every module-level assignment (`X = …` and `X: T = …`)."""
    for node in _tree(text).body:
        if isinstance(node, ast.Assign):
            yield node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            yield [node.target], node.value


def module_dicts_matching(text: str, pred: Callable[[str], bool]) -> dict[str, list[str]]:
    """Every module-level dict whose name satisfies `pred`: name -> string keys."""
    out: dict[str, list[str]] = {}
    for targets, value in _assignments(text):
        for t in targets:
            if isinstance(t, ast.Name) and pred(t.id) and isinstance(value, (ast.Dict, ast.Call)):
                out[t.id] = _str_keys(value)
    return out


def _const_strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def registered_names(text: str, manager: str) -> list[str]:
    """Names in `@<manager>.register_module("a")` / `(["a", "b"])` / `(name="a")` decorators and calls."""
    out: list[str] = []
    for node in ast.walk(_tree(text)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("register_module", "register_lazy_module") \
                and isinstance(f.value, ast.Name) and f.value.id == manager:
            if node.args:
                out.extend(_const_strings(node.args[0]))
            for kw in node.keywords:
                if kw.arg == "name":
                    out.extend(_const_strings(kw.value))
    return out


def literal_alias(text: str, name: str) -> Optional[list[str]]:
    """The strings of `name = Literal["a", "b"]` (module level), or None when absent."""
    for targets, value in _assignments(text):
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and isinstance(value, ast.Subscript):
            sl = value.slice
            if isinstance(sl, ast.Index):  # Python 3.8 AST shape
                sl = sl.value  # type: ignore[attr-defined]
            return _const_strings(sl) if isinstance(sl, (ast.Tuple, ast.Constant)) else []
    return None


def argparse_choices(text: str, option: str) -> Optional[list[str]]:
    """The `choices=[...]` of `add_argument("<option>", ...)`, or None when no such call has them."""
    for node in ast.walk(_tree(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument" \
                and any(isinstance(a, ast.Constant) and a.value == option for a in node.args):
            for kw in node.keywords:
                if kw.arg == "choices" and isinstance(kw.value, (ast.List, ast.Tuple)):
                    return _const_strings(kw.value)
    return None


def register_model_calls(text: str) -> list[str]:
    """Architectures passed to `ModelRegistry.register_model("Arch", ...)`."""
    out: list[str] = []
    for node in ast.walk(_tree(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "register_model" and node.args:
            out.extend(_const_strings(node.args[0]))
    return out


ARG_CLASSES = ("EngineArgs", "AsyncEngineArgs", "FrontendArgs", "BaseFrontendArgs")
# Where `vllm serve` gets its options: EngineArgs fields, FrontendArgs fields (0.10+), and the explicit
# `add_argument("--…")` calls of the same files. The frontend file moved twice: entrypoints/openai/cli_args.py
# (0.10 … 0.28), entrypoints/launchers/cli_args.py (0.29 … 0.32), entrypoints/common/cli_args.py (0.33).
CLI_OPTION_FILES = ("engine/arg_utils.py", "entrypoints/openai/cli_args.py", "entrypoints/launchers/cli_args.py",
                    "entrypoints/common/cli_args.py", "entrypoints/cli/serve.py", "entrypoints/openai/api_server.py")


def cli_option_names(text: str) -> list[str]:
    """Option names (dashes, no leading `--`) a vLLM argument module defines: the fields of its *Args dataclasses
    (`no-<name>` too for bool fields, BooleanOptionalAction) and every `add_argument("--…", "-…")` string."""
    out: set[str] = set()
    for node in ast.walk(_tree(text)):
        if isinstance(node, ast.ClassDef) and node.name in ARG_CLASSES:
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) \
                        and not st.target.id.startswith("_"):
                    name = st.target.id.replace("_", "-")
                    out.add(name)
                    if "id='bool'" in ast.dump(st.annotation):  # bool, bool | None, Optional[bool]
                        out.add("no-" + name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-"):
                    out.add(a.value.lstrip("-"))
    return sorted(out)


_FIELD_LINE = re.compile(r"^    ([a-z_][a-z0-9_]*)\s*:\s*([^=\n]*)", re.MULTILINE)
_ADD_ARGUMENT = re.compile(r"add_argument\(\s*((?:[\"'][^\"']+[\"']\s*,\s*)+)")


def cli_option_names_lenient(text: str) -> list[str]:
    """The same names by regular expressions, for a file `ast` cannot parse — e.g. one recorded into a snapshot
    whose secret masking rewrote `api_key: list[str] | None` (the 4-space-indented `name: type` lines of any
    class count as fields: a superset, which only errs towards accepting an option)."""
    out: set[str] = set()
    for name, ann in _FIELD_LINE.findall(text):
        if name.startswith("_"):
            continue
        out.add(name.replace("_", "-"))
        if re.search(r"\bbool\b", ann):
            out.add("no-" + name.replace("_", "-"))
    for group in _ADD_ARGUMENT.findall(text):
        out.update(s.lstrip("-") for s in re.findall(r"[\"'](-[^\"']+)[\"']", group))
    return sorted(out)


def _is_models_dict(name: str) -> bool:
    return name.startswith("_") and name.endswith("_MODELS") and name != "_PREVIOUSLY_SUPPORTED_MODELS"


def model_registry_architectures(text: str) -> list[str]:
    """Architectures in vllm/model_executor/models/registry.py (every `_*_MODELS` dict, not the removed ones)."""
    names: list[str] = []
    for keys in module_dicts_matching(text, _is_models_dict).values():
        names.extend(keys)
    return sorted(set(names))


# Reading an installed tree -----------------------------------------------------------------------------------------
def _safe(parse: Callable[[str], Optional[list[str]]], text: str, path: str) -> NameList:
    try:
        names = parse(text)
    except SyntaxError as exc:
        return NameList(why_not=f"{path}: not parseable Python ({exc.msg}, line {exc.lineno})")
    if names is None:
        return NameList(why_not=f"{path}: the expected table is not in this file")
    return NameList(names=sorted(set(names)), source=path)


def _from_first(read: ReadText, candidates: Iterable[tuple[str, Callable[[str], Optional[list[str]]]]]) -> NameList:
    tried = []
    for path, parse in candidates:
        text = read(path)
        if text is None:
            tried.append(path)
            continue
        res = _safe(parse, text, path)
        if res.ok:
            return res
        tried.append(res.why_not)
    return NameList(why_not="not found: " + "; ".join(tried))


def _from_decorators(read: ReadText, listdir: ListDir, directory: str, manager: str) -> NameList:
    entries = listdir(directory)
    if entries is None:
        return NameList(why_not=f"{directory} not found")
    names: list[str] = []
    for e in sorted(entries):
        if e.endswith(".py"):
            text = read(posixpath.join(directory, e))
            if text is not None and manager in text:
                try:
                    names.extend(registered_names(text, manager))
                except SyntaxError:
                    continue
    if not names:
        return NameList(why_not=f"no @{manager}.register_module(...) in {directory}/*.py")
    return NameList(names=sorted(set(names)), source=f"{directory}/*.py (@{manager}.register_module)")


def editable_root(site_packages: str, dist: str, read: ReadText, listdir: ListDir) -> Optional[str]:
    """Source checkout of an editable install (`pip install -e`, as the vllm-ascend images install vLLM and
    vllm-ascend): the `file://` URL in `<dist>-<version>.dist-info/direct_url.json` (PEP 610) when editable."""
    from urllib.parse import unquote, urlsplit

    from ascend_doctor.text.jsonread import loads

    prefix = dist.replace("-", "_").lower() + "-"
    for e in listdir(site_packages) or []:
        if e.lower().startswith(prefix) and e.endswith(".dist-info"):
            text = read(posixpath.join(site_packages, e, "direct_url.json"))
            try:
                info = loads(text) if text else None
            except ValueError:
                info = None
            if isinstance(info, dict) and (info.get("dir_info") or {}).get("editable") \
                    and str(info.get("url", "")).startswith("file://"):
                return unquote(urlsplit(info["url"]).path)
    return None


def read_installed(site_packages: str, read: ReadText, listdir: ListDir,
                   roots: Optional[dict] = None) -> InstalledVllm:
    """Read every table from the vllm / vllm_ascend / transformers trees under `site_packages` (or, per package,
    under `roots[package]`, e.g. the checkout of an editable install)."""
    j = posixpath.join
    roots = roots or {}
    fact = InstalledVllm(site_packages=site_packages)
    vllm = j(roots.get("vllm", site_packages), "vllm")
    if listdir(vllm) is not None:
        fact.vllm_dir = vllm
        fact.tool_parsers = _from_first(read, [
            (j(vllm, "tool_parsers", "__init__.py"), lambda t: module_dict_keys(t, "_TOOL_PARSERS_TO_REGISTER")),
            (j(vllm, "entrypoints", "openai", "tool_parsers", "__init__.py"),  # 0.12
             lambda t: module_dict_keys(t, "_TOOL_PARSERS_TO_REGISTER")),
        ])
        if not fact.tool_parsers.ok:
            old = _from_decorators(read, listdir, j(vllm, "entrypoints", "openai", "tool_parsers"), "ToolParserManager")
            fact.tool_parsers = old if old.ok else NameList(why_not=f"{fact.tool_parsers.why_not}; {old.why_not}")
        reasoning_init = j(vllm, "reasoning", "__init__.py")
        fact.reasoning_parsers = _from_first(
            read, [(reasoning_init, lambda t: module_dict_keys(t, "_REASONING_PARSERS_TO_REGISTER"))])
        for directory in (j(vllm, "reasoning"), j(vllm, "entrypoints", "openai", "reasoning_parsers")):  # 0.7
            if fact.reasoning_parsers.ok:
                break
            old = _from_decorators(read, listdir, directory, "ReasoningParserManager")
            fact.reasoning_parsers = old if old.ok else NameList(
                why_not=f"{fact.reasoning_parsers.why_not}; {old.why_not}")
        fact.tokenizer_modes = _from_first(read, [
            (j(vllm, "config", "model.py"), lambda t: literal_alias(t, "TokenizerMode")),
            (j(vllm, "config", "__init__.py"), lambda t: literal_alias(t, "TokenizerMode")),  # 0.10.1 - 0.10.2
            (j(vllm, "config.py"), lambda t: literal_alias(t, "TokenizerMode")),
            (j(vllm, "engine", "arg_utils.py"), lambda t: argparse_choices(t, "--tokenizer-mode")),  # <= 0.8
        ])
        registry = _from_first(read, [(j(vllm, "tokenizers", "registry.py"),
                                       lambda t: module_dict_keys(t, "_VLLM_TOKENIZERS"))])
        if fact.tokenizer_modes.ok and registry.ok:
            # From 0.12 the option is typed `TokenizerMode | str`: vLLM accepts any registered mode (kimi_audio,
            # deepseek_v41, ...) although the Literal does not list it, and rejects the rest when it loads.
            fact.tokenizer_modes = NameList(names=sorted(set(fact.tokenizer_modes.names) | set(registry.names)),
                                            source=f"{fact.tokenizer_modes.source} + {registry.source}")
        fact.architectures = _from_first(
            read, [(j(vllm, "model_executor", "models", "registry.py"), model_registry_architectures)])
        fact.vllm_model_types = _from_first(
            read, [(j(vllm, "transformers_utils", "config.py"), lambda t: module_dict_keys(t, "_CONFIG_REGISTRY"))])
        fact.cli_options = _cli_options(read, vllm)
        fact.names["vllm"] = _release_names("vllm", vllm, read, listdir)
        fact.vllm_env_vars = fact.names["vllm"]["env"]  # envs.py is read once, by the names' `env` reader
    else:
        why = f"{vllm} not found"
        for k in ("tool_parsers", "reasoning_parsers", "tokenizer_modes", "architectures", "vllm_model_types",
                  "vllm_env_vars", "cli_options"):
            setattr(fact, k, NameList(why_not=why))
    va = j(roots.get("vllm_ascend", site_packages), "vllm_ascend")
    if listdir(va) is not None:
        fact.names["vllm-ascend"] = _release_names("vllm-ascend", va, read, listdir)
        fact.vllm_ascend_env_vars = fact.names["vllm-ascend"]["env"]
        extra = _ascend_registered_models(read, listdir, va)
        if extra and fact.architectures.ok:
            fact.architectures = NameList(
                names=sorted(set(fact.architectures.names or []) | set(extra)),
                source=fact.architectures.source + f" + {va}/** (ModelRegistry.register_model)")
    else:
        fact.vllm_ascend_env_vars = NameList(why_not=f"{va} not found")
    fact.transformers_model_types = transformers_model_types(
        read, j(roots.get("transformers", site_packages), "transformers", "models", "auto"))
    return fact


def transformers_model_types(read: ReadText, auto_dir: str) -> NameList:
    """The model_types a transformers release knows: `CONFIG_MAPPING_NAMES` of models/auto/configuration_auto.py;
    from 5.6 the bulk is generated into models/auto/auto_mappings.py and configuration_auto.py adds to it."""
    path = posixpath.join(auto_dir, "configuration_auto.py")
    text = read(path)
    if text is None:
        return NameList(why_not=f"not found: {path}")
    try:
        keys, module = accumulated_dict_keys(text, "CONFIG_MAPPING_NAMES")
    except SyntaxError as exc:
        return NameList(why_not=f"{path}: not parseable Python ({exc.msg}, line {exc.lineno})")
    if keys is None:
        return NameList(why_not=f"{path}: the expected table is not in this file")
    source = path
    if module is not None:
        if not module.startswith(".") or module.strip(".") == "" or "." in module.strip("."):
            return NameList(why_not=f"{path}: CONFIG_MAPPING_NAMES comes from {module}, which is not read")
        other = posixpath.join(auto_dir, module.strip(".") + ".py")
        res = _from_first(read, [(other, lambda t: module_dict_keys(t, "CONFIG_MAPPING_NAMES"))])
        if not res.ok:
            return NameList(why_not=f"{path} imports CONFIG_MAPPING_NAMES: {res.why_not}")
        keys = keys + list(res.names or [])
        source = f"{other} + {path}"
    if not keys:
        return NameList(why_not=f"{path}: CONFIG_MAPPING_NAMES has no entries this reader understands")
    return NameList(names=sorted(set(keys)), source=source)


def _cli_options(read: ReadText, vllm: str) -> NameList:
    names: set[str] = set()
    used, problems = [], []
    for rel in CLI_OPTION_FILES:
        path = posixpath.join(vllm, rel)
        text = read(path)
        if text is None:
            continue
        try:
            found = cli_option_names(text)
        except SyntaxError as exc:
            found = cli_option_names_lenient(text)
            problems.append(f"{path}: not parseable Python ({exc.msg}), option names read by pattern")
        if found:
            names.update(found)
            used.append(path)
    if posixpath.join(vllm, CLI_OPTION_FILES[0]) not in used:
        return NameList(why_not=f"{posixpath.join(vllm, CLI_OPTION_FILES[0])} not readable" +
                        (f" ({'; '.join(problems)})" if problems else ""))
    return NameList(names=sorted(names), source=" + ".join(used) + (f" ({'; '.join(problems)})" if problems else ""))


def _release_names(project: str, root: str, read: ReadText, listdir: ListDir) -> dict[str, NameList]:
    from ascend_doctor.parsers.release_names import read_release_names

    out = {}
    for kind, found in read_release_names(project, root, read, listdir, root, live=True).items():
        out[kind] = NameList(names=found.names, source=found.source) if found.names is not None else NameList(
            why_not=found.source)
    return out


def _ascend_registered_models(read: ReadText, listdir: ListDir, va: str) -> list[str]:
    """Architectures vllm-ascend registers out of tree (vllm_ascend/__init__.py, vllm_ascend/models/__init__.py)."""
    out: list[str] = []
    for path in (posixpath.join(va, "__init__.py"), posixpath.join(va, "models", "__init__.py")):
        text = read(path)
        if text and "register_model" in text:
            try:
                out.extend(register_model_calls(text))
            except SyntaxError:
                continue
    return out
