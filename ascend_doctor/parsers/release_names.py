"""The names a vLLM or vllm-ascend release accepts inside a deployment's JSON options and environment, read from the
release's own Python files with `ast` (nothing is imported or run).

One reader per *kind* of name, each a (kind, candidate files, parse) row in `READERS`: the same rows read an
installed package (the `vllm_files` fact, for a live `check`/`exec`) and a release archive (`matrix sync`, for the
shipped `serve/names-vllm` and `serve/names-vllm-ascend` tables), so the live lint and the shipped rows cannot
disagree about where a list lives. Adding a kind is one parse function and one row here, one entry in
`ascend_doctor.knowledge.release_names.KINDS` saying how the command names it.

Where each list lives (read at the tags and sdists; the file a row cites is the first candidate that parses):

* `kv_connector` — vLLM's `KVConnectorFactory.register_connector("Name", module, class)` calls at the bottom of
  vllm/distributed/kv_transfer/kv_connector/factory.py; vllm-ascend's own calls under vllm_ascend/distributed/ (its
  `register_connector()`, run when the plugin loads). `create_connector` raises `ValueError: Unsupported connector
  type: X` for any other name unless `kv_connector_module_path` names a module.
* `kv_connector_module` — `Name=module` of each of vllm-ascend's own register_connector calls (read by `matrix sync`
  only): the files a connector's code lives in, so a bug fix confined to them is that connector's (SERVE320).
* `speculative_method` — vLLM's `SpeculativeMethod` Literal (vllm/config/speculative.py; nested Literal aliases
  resolved), validated by pydantic; vllm-ascend's `get_spec_decode_method` (vllm_ascend/spec_decode/__init__.py,
  0.11.0rc0 on), whose `else` raises `Unknown speculative decoding method`.
* `mtp_model_type` — vLLM's `MTPModelTypes`: method names vLLM rewrites to `mtp` before the platform sees them.
* `cudagraph_mode` — the members of vLLM's `CUDAGraphMode` enum (vllm/config/compilation.py), the values
  `--compilation-config '{"cudagraph_mode": …}'` accepts.
* `structured_outputs_backend` — vLLM's `StructuredOutputsBackend` Literal (vllm/config/structured_outputs.py).
* `env` — the keys of `environment_variables` in vllm/envs.py and of `env_variables` in vllm_ascend/envs.py.
* `compilation_config_key`, `attention_config_key`, `speculative_config_key`, `structured_outputs_config_key`,
  `kv_transfer_config_key` — the fields of the config class vLLM validates each JSON option as; `config_strict` is
  `["forbid"]` when vLLM's `config` decorator forbids unknown keys (a validation error at start) and absent when it
  leaves pydantic's default (unknown keys ignored without a word).
* `compilation_config_value`, `attention_config_value`, … — `field=value` for each constant a Literal-typed field of
  those config classes admits (`kv_role=kv_both`), where pydantic validates the class (vLLM 0.9.1 on; 0.8's
  KVTransferConfig is a BaseModel with free strings); a type imported from another module is left out.
* `config_literal`, `engine_arg_field` — the choices of the top-level options: `Class.field=value` for every Literal
  field of the config classes under vllm/config/, and `option=Class.field` for every EngineArgs field whose default
  is one (`kv_cache_dtype=CacheConfig.cache_dtype`): argparse takes an option's choices from that field's type.
* `option_choice_added` — the options whose choices vllm-ascend's platform appends to when vLLM builds its parser
  (`--quantization`: `ascend`; `--kv-cache-dtype`: `int8` from 0.29.0rc1).
* `patched_field` — `Class.field` for each config field vllm-ascend's platform patches retype at plugin load
  (`AttentionConfig.__annotations__["indexer_kv_dtype"] = …`, 0.29.0rc1 on): vLLM's Literal no longer says.
* `env_read` — every upper-case variable name vllm-ascend reads outside envs.py with `os.getenv("X")`,
  `os.environ.get("X")`, `os.environ["X"]` or `"X" in os.environ`: the package reads many outside envs.py
  (`VLLM_ASCEND_ENABLE_FLASHCOMM` "for backward compatibility" in `enable_sp()` up to 0.19.1rc1, the llmdatadist
  and DP-proxy variables of 0.9.x), so envs.py alone called a variable a release acts on unknown. Read by `matrix
  sync` only (`live=False`): the installed package's own list would mean reading every module on a live host; the
  row of the installed release stands in.
* `registered_lib` — the optional libraries vllm-ascend's worker imports when installed (`try_register_lib("name",
  …)` anywhere in the package; read by `matrix sync` only): `mindie_turbo` in 0.7.1rc1-0.11.0, none from 0.12.0rc1
  (VLLM108).
* `quant_fused_experts` — the model types whose entry in vllm-ascend's `packed_modules_model_mapping`
  (vllm_ascend/quantization/quant_config.py from 0.11.0rc0, modelslim_config.py from 0.14.0rc1,
  configs/modelslim_config.py in 0.27.1rc1) maps a FusedMoE layer's `experts` to each expert's shards; the release
  looks its model up by `hf_config.model_type` (config.json's), 0.13.0rc2-0.13.0 by `hf_text_config.model_type`. For
  any other model type the msModelSlim config looks `<prefix>.experts.weight` up in quant_model_description.json,
  which msModelSlim does not write (it names `experts.0.gate_proj.weight`, …): `KeyError:
  'model.layers.1.mlp.experts.weight'` (vllm-ascend#3785, Kimi-K2, fixed by adding the model type; the
  DeepSeek-V3.2-Exp fix #4797). The release's own developer guide says so: "Add the model's `model_type` to
  `packed_modules_model_mapping` … (e.g., `qkv_proj`, `gate_up_proj`, `experts`) to ensure sharding consistency and
  correct loading" (docs/source/developer_guide/feature_guide/quantization.md:73, 0.13.0). From 0.28.0rc1 the mapping
  is found from the description's own expert names, and no list is defined (any model type): "Expert shard mappings
  are auto-discovered from the quantization description" (developer_guide/Design_Documents/quantization.md:72,
  0.30.0rc2).
* `eplb_model_type` — the model types vllm-ascend's EPLB registers (`model_register` in vllm_ascend/eplb/utils.py,
  0.10.x-0.14.0rc1); its `else` raises `NotImplementedError("EPLB is not supported.")`. Later releases register any
  MoE model, and define no list.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Optional

ReadText = Callable[[str], Optional[str]]
ListDir = Callable[[str], Optional[list]]
Parse = Callable[[str], Optional[list]]


def _parse(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _str(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _module_assignments(tree: ast.Module) -> dict[str, ast.AST]:
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            out[node.target.id] = node.value
    return out


def literal_names(text: str, alias: str) -> Optional[list]:
    """The strings of a module-level `alias = Literal[…]`, with other Literal aliases of the module inside it
    resolved (`EagleModelTypes = Literal["eagle", "eagle3", MTPModelTypes]`); None when the module has no such
    alias."""
    tree = _parse(text)
    if tree is None:
        return None
    assigned = _module_assignments(tree)

    def resolve(name: str, seen: frozenset) -> Optional[list]:
        value = assigned.get(name)
        if not (isinstance(value, ast.Subscript) and getattr(value.value, "id", getattr(value.value, "attr", ""))
                == "Literal"):
            return None
        parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        out: list = []
        for p in parts:
            s = _str(p)
            if s is not None:
                out.append(s)
            elif isinstance(p, ast.Name) and p.id not in seen:
                out.extend(resolve(p.id, seen | {p.id}) or [])
        return out

    found = resolve(alias, frozenset({alias}))
    return sorted(set(found)) if found is not None else None


def enum_members(text: str, cls: str) -> Optional[list]:
    """The member names of a module-level `class cls(enum.Enum)` (assignments in its body, not methods)."""
    tree = _parse(text)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return sorted({t.id for s in node.body if isinstance(s, ast.Assign) for t in s.targets
                           if isinstance(t, ast.Name) and t.id.isupper()})
    return None


def register_connector_names(text: str) -> Optional[list]:
    """The first argument of every `….register_connector("Name", …)` call in a file; None when it has none."""
    tree = _parse(text)
    if tree is None:
        return None
    out = {s for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
           and node.func.attr == "register_connector" and node.args for s in [_str(node.args[0])] if s}
    return sorted(out) if out else None


def register_connector_modules(text: str) -> Optional[list]:
    """`Name=module` for every `….register_connector("Name", "module", "Class")` call in a file (the module the
    name loads); None when it has none."""
    tree = _parse(text)
    if tree is None:
        return None
    out = {f"{name}={module}" for node in ast.walk(tree) if isinstance(node, ast.Call)
           and isinstance(node.func, ast.Attribute) and node.func.attr == "register_connector"
           and len(node.args) >= 2 for name, module in [(_str(node.args[0]), _str(node.args[1]))] if name and module}
    return sorted(out) if out else None


def dispatched_strings(text: str, function: str, variable: str) -> Optional[list]:
    """The strings `variable` (a name or a dotted attribute, `config.model_type`) is compared with (`==`,
    `in (…)`) inside module-level `function`: the values a dispatching if/elif chain handles. None when the module
    has no such function."""
    tree = _parse(text)
    if tree is None:
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if fn is None:
        return None
    return sorted(_compared(ast.walk(fn), lambda left: left == variable))


def _compared(nodes, left_is) -> set:
    """The strings the comparisons among `nodes` whose left side (unparsed) passes `left_is` compare it with: `==`
    one string, `in` a literal tuple, list or set of them."""
    out: set = set()
    for node in nodes:
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and left_is(ast.unparse(node.left))):
            continue
        right = node.comparators[0]
        if isinstance(node.ops[0], ast.Eq) and _str(right):
            out.add(_str(right))
        elif isinstance(node.ops[0], ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            out.update(s for s in (_str(e) for e in right.elts) if s)
    return out


def drafter_chain(text: str) -> Optional[list]:
    """The methods an if/elif chain on `….speculative_config.method` builds a drafter for, where its final `else`
    raises "Unknown speculative decoding method" — NPUModelRunner's chain in worker/model_runner_v1.py before
    vllm-ascend had a dispatcher of its own (0.9.0rc1-0.10.1rc1: `eagle3` in 0.9.1rc1, not in 0.9.1rc2-0.9.1, again
    from 0.9.2rc1). None when the module has no such chain."""
    tree = _parse(text)
    if tree is None:
        return None
    out: Optional[set] = None
    elifs: set = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or id(node) in elifs:
            continue
        tests, last = [node.test], node
        while len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If):
            last = last.orelse[0]
            elifs.add(id(last))
            tests.append(last.test)
        raised = next((n for n in last.orelse if isinstance(n, ast.Raise)), None)
        if raised is None or "Unknown speculative decoding method" not in ast.unparse(raised):
            continue
        names = _compared((c for test in tests for c in ast.walk(test)),
                          lambda left: left.endswith("speculative_config.method"))
        out = (out or set()) | names
    return sorted(out) if out is not None else None


def spec_methods(text: str) -> Optional[list]:
    """vllm-ascend's speculative methods: `get_spec_decode_method`'s (spec_decode/__init__.py, 0.10.2rc1 on), else
    NPUModelRunner's drafter chain (drafter_chain)."""
    got = dispatched_strings(text, "get_spec_decode_method", "method")
    return got if got is not None else drafter_chain(text)


def class_fields(text: str, cls: str) -> Optional[list]:
    """The init fields of a module-level dataclass `cls` (annotated names of its body, not `_private`, not
    ClassVar, not `field(init=False)`): the keys its JSON option accepts. None when the module has no such class."""
    tree = _parse(text)
    if tree is None:
        return None
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    if node is None:
        return None
    out = []
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        name = stmt.target.id
        if name.startswith("_") or "ClassVar" in ast.unparse(stmt.annotation):
            continue
        if isinstance(stmt.value, ast.Call) and any(k.arg == "init" and isinstance(k.value, ast.Constant)
                                                    and k.value.value is False for k in stmt.value.keywords):
            continue
        out.append(name)
    return sorted(set(out))


def _literal_values(node: Optional[ast.AST], assigned: dict, seen: frozenset) -> Optional[list]:
    """The constants an annotation admits when it is a Literal (or a module alias of one, `| None`, Optional,
    Union of such); None when it admits anything else (a str, an enum, a type imported from elsewhere)."""
    if isinstance(node, ast.Constant) and node.value is None:
        return []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = (_literal_values(n, assigned, seen) for n in (node.left, node.right))
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Name):
        if node.id in seen or node.id not in assigned:
            return None
        return _literal_values(assigned[node.id], assigned, seen | {node.id})
    if not isinstance(node, ast.Subscript):
        return None
    head = getattr(node.value, "id", getattr(node.value, "attr", ""))
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    out: list = []
    for part in parts:
        if head == "Literal" and isinstance(part, ast.Constant) and isinstance(part.value, (str, int)) \
                and not isinstance(part.value, bool):
            out.append(str(part.value))
            continue
        if head not in ("Literal", "Optional", "Union"):
            return None
        got = _literal_values(part, assigned, seen)
        if got is None:
            return None
        out.extend(got)
    return out


def _validated(tree: ast.Module, node: ast.ClassDef) -> bool:
    """Whether pydantic validates the class's fields: a BaseModel (vLLM 0.8's KVTransferConfig), a dataclass imported
    from pydantic.dataclasses (0.9.1 on), or vLLM's `config` decorator alone, which makes the pydantic dataclass
    itself (vllm/config/utils.py, 0.2x); `@config` over the standard library's dataclass (0.9.0) validates nothing."""
    if any(getattr(b, "id", getattr(b, "attr", "")) == "BaseModel" for b in node.bases):
        return True
    decorators = {getattr(d, "id", getattr(d, "attr", "")) for d in
                  (x.func if isinstance(x, ast.Call) else x for x in node.decorator_list)}
    if "dataclass" in decorators:
        return any(isinstance(n, ast.ImportFrom) and n.module == "pydantic.dataclasses"
                   and any(a.name == "dataclass" for a in n.names) for n in tree.body)
    return "config" in decorators


def literal_field_values(text: str, cls: str) -> Optional[list]:
    """`field=value` for every value a Literal-typed init field of the module-level config class `cls` admits
    (`kv_role=kv_both`, `indexer_kv_dtype=bf16`): what pydantic lets through. None when the module has no such class
    or validates nothing (a plain dataclass, as vLLM's were before its configs became pydantic dataclasses)."""
    tree = _parse(text)
    if tree is None:
        return None
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    if node is None or not _validated(tree, node):
        return None
    fields = set(class_fields(text, cls) or ())
    assigned = _module_assignments(tree)
    out = set()
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in fields:
            values = _literal_values(stmt.annotation, assigned, frozenset())
            out.update(f"{stmt.target.id}={v}" for v in values or ())
    return sorted(out)


def config_literals(text: str) -> Optional[list]:
    """`Class.field=value` for every Literal-typed init field of every config class of a module that pydantic
    validates (`CacheConfig.cache_dtype=fp8`): the choices vLLM's argparse gives a top-level option from the field's
    type (engine/arg_utils.py `literal_to_kwargs`; a field that also admits any `str` gets a metavar, no choices)."""
    tree = _parse(text)
    if tree is None:
        return None
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and _validated(tree, node):
            out += [f"{node.name}.{v}" for v in literal_field_values(text, node.name) or ()]
    return sorted(out)


_PLAIN = frozenset({"int", "float", "bool", "str", "dict", "list", "tuple", "set", "Optional", "Union", "Any"})


def engine_arg_fields(text: str) -> Optional[list]:
    """`option=Class.field` for every EngineArgs field whose default is a config class's field
    (`kv_cache_dtype: CacheDType = CacheConfig.cache_dtype`): the field whose type gives the option its choices.
    None when the module has no EngineArgs."""
    tree = _parse(text)
    if tree is None:
        return None
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EngineArgs"), None)
    if node is None:
        return None
    out = set()
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        words = {n.id for n in ast.walk(stmt.annotation) if isinstance(n, ast.Name)}
        if words <= _PLAIN:  # `max_model_len: int | None`: no Literal can stand behind it
            continue
        value = stmt.value
        if isinstance(value, ast.Call):  # field(default=CacheConfig.cache_dtype)
            value = next((k.value for k in value.keywords if k.arg == "default"), None)
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id[:1].isupper():
            out.add(f"{stmt.target.id}={value.value.id}.{value.attr}")
    return sorted(out)


def appended_choices(text: str) -> Optional[list]:
    """The options whose argparse choices a platform widens in place (`parser._option_string_actions.get(
    "--quantization")` … `.choices.append(…)`, vllm-ascend's `pre_register_and_update`: `--quantization ascend`)."""
    tree = _parse(text)
    if tree is None:
        return None
    flags, appends = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and "_option_string_actions" in ast.unparse(node.func.value) and node.args:
                flag = _str(node.args[0])
                if flag and flag.startswith("--"):
                    flags.add(flag[2:].replace("-", "_"))
            elif node.func.attr in ("append", "extend") and ast.unparse(node.func.value).endswith("choices"):
                appends = True
    return sorted(flags) if appends else []


def patched_fields(text: str) -> Optional[list]:
    """`Class.field` for every config field whose type a patch module rewrites (`AttentionConfig.__annotations__[
    "indexer_kv_dtype"] = …`, `….__dataclass_fields__["cache_dtype"].type = …`): vllm-ascend widens vLLM's Literals
    this way (0.30.0rc1: `int8` for the indexer cache), so vLLM's own list no longer says what is accepted."""
    tree = _parse(text)
    if tree is None:
        return None
    out = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            while isinstance(t, ast.Attribute):  # `….__dataclass_fields__["f"].type = …`
                t = t.value
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) \
                    and t.value.attr in ("__annotations__", "__dataclass_fields__") and _str(t.slice):
                owner = t.value.value
                name = getattr(owner, "id", getattr(owner, "attr", ""))
                out.add(f"{name}.{_str(t.slice)}")
    return sorted(out)


def forbids_extra(text: str) -> Optional[list]:
    """["forbid"] when vLLM's `config` decorator (vllm/config/utils.py) makes its config classes forbid unknown
    keys (`ConfigDict(extra="forbid")`), [] when it leaves pydantic's default (unknown keys ignored), None when the
    file has no such decorator."""
    tree = _parse(text)
    if tree is None:
        return None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "config"]  # @overload stubs too
    if not defs:
        return None
    return ["forbid"] if any(isinstance(n, ast.keyword) and n.arg == "extra" and _str(n.value) == "forbid"
                             for fn in defs for n in ast.walk(fn)) else []


ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{2,}\Z")


def env_reads(text: str) -> Optional[list]:
    """The constant names a module reads from the environment (see `env_read` above); None when it does not parse.
    A write (`os.environ["X"] = …`) is not a read; a name built at run time (an f-string) cannot be listed."""
    tree = _parse(text)
    if tree is None:
        return None
    out: set = set()
    for node in ast.walk(tree):
        name = _env_read(node)
        if name and ENV_NAME.match(name):
            out.add(name)
    return sorted(out)


def registered_libs(text: str) -> Optional[list]:
    """The optional libraries a module loads with `try_register_lib("name", …)` (vllm-ascend's utils: import it if
    installed, log and go on if not); None when the module does not parse."""
    tree = _parse(text)
    if tree is None:
        return None
    return sorted({s for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args
                   and getattr(node.func, "id", getattr(node.func, "attr", "")) == "try_register_lib"
                   for s in [_str(node.args[0])] if s})


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ")


def _env_read(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Call) and node.args:
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "getenv") or (isinstance(f, ast.Name) and f.id == "getenv") \
                or (isinstance(f, ast.Attribute) and f.attr in ("get", "setdefault") and _is_environ(f.value)):
            return _str(node.args[0])
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
        return _str(node.slice)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
            and _is_environ(node.comparators[0]):
        return _str(node.left)
    return None


def fused_expert_model_types(text: str) -> Optional[list]:
    """The model types whose entry in the module-level `packed_modules_model_mapping` maps `experts` to the shards
    of each expert (see `quant_fused_experts` above); None when the module has no such dict."""
    tree = _parse(text)
    value = _module_assignments(tree).get("packed_modules_model_mapping") if tree is not None else None
    if not isinstance(value, ast.Dict):
        return None
    out = set()
    for key, entry in zip(value.keys, value.values):
        if _str(key) and isinstance(entry, ast.Dict) and any(_str(k) == "experts" for k in entry.keys if k):
            out.add(_str(key))
    return sorted(out)


def dict_keys(name: str) -> Parse:
    """Keys of the module-level dict `name` (the envs.py tables)."""
    from ascend_doctor.parsers.vllm_source import module_dict_keys

    def parse(text: str) -> Optional[list]:
        keys = module_dict_keys(text, name)
        return sorted(set(keys)) if keys else None
    return parse


# The JSON options vLLM validates as a config class: (option, class, the files it lives in, newest layout first).
JSON_CONFIGS = (
    ("compilation_config", "CompilationConfig", ("config/compilation.py", "config/__init__.py", "config.py")),
    ("attention_config", "AttentionConfig", ("config/attention.py",)),
    ("speculative_config", "SpeculativeConfig", ("config/speculative.py", "config/__init__.py", "config.py")),
    ("structured_outputs_config", "StructuredOutputsConfig", ("config/structured_outputs.py",)),
    ("kv_transfer_config", "KVTransferConfig", ("config/kv_transfer.py", "config/__init__.py", "config.py")),
)


@dataclass(frozen=True)
class Reader:
    """One kind of name one project defines: the files to try, in order (relative to the package directory, a
    trailing `/` for every package `__init__.py` under a directory), and how a file yields the names."""

    kind: str
    files: tuple
    parse: Parse
    what: str  # what the row's source says was read
    live: bool = True  # read from an installed package too (False: `matrix sync` only, the table row stands in)
    skip: tuple = ()  # modules (relative to the package) a `**.py` walk leaves out: another kind reads them


READERS: dict[str, tuple] = {
    "vllm": (
        Reader("kv_connector", ("distributed/kv_transfer/kv_connector/factory.py",), register_connector_names,
               "register_connector calls"),
        Reader("speculative_method", ("config/speculative.py", "config/__init__.py", "config.py"),
               lambda t: literal_names(t, "SpeculativeMethod"), "SpeculativeMethod"),
        Reader("mtp_model_type", ("config/speculative.py", "config/__init__.py", "config.py"),
               lambda t: literal_names(t, "MTPModelTypes"), "MTPModelTypes"),
        Reader("cudagraph_mode", ("config/compilation.py", "config/__init__.py", "config.py"),
               lambda t: enum_members(t, "CUDAGraphMode"), "CUDAGraphMode members"),
        Reader("structured_outputs_backend", ("config/structured_outputs.py",),
               lambda t: literal_names(t, "StructuredOutputsBackend"), "StructuredOutputsBackend"),
        Reader("env", ("envs.py",), dict_keys("environment_variables"), "environment_variables keys"),
        # the keys inside the JSON options: the fields of the config class each one is validated as
        *(Reader(f"{option}_key", files, partial(class_fields, cls=cls), f"{cls} fields")
          for option, cls, files in JSON_CONFIGS),
        Reader("config_strict", ("config/utils.py",), forbids_extra, "the config decorator's extra="),
        # the values inside them: the constants of each Literal-typed field pydantic validates
        *(Reader(f"{option}_value", files, partial(literal_field_values, cls=cls), f"{cls} Literal fields")
          for option, cls, files in JSON_CONFIGS),
        # the choices of the top-level options: the config field behind each option, and that field's Literal
        Reader("config_literal", ("config/**.py", "config.py"), config_literals, "config classes' Literal fields"),
        Reader("engine_arg_field", ("engine/arg_utils.py",), engine_arg_fields,
               "EngineArgs fields defaulting to a config field"),
    ),
    "vllm-ascend": (
        Reader("kv_connector", ("distributed/",), register_connector_names, "register_connector calls"),
        Reader("kv_connector_module", ("distributed/",), register_connector_modules,
               "register_connector calls' modules", live=False),
        Reader("speculative_method", ("spec_decode/__init__.py", "worker/model_runner_v1.py"), spec_methods,
               "get_spec_decode_method, or NPUModelRunner's drafter chain"),
        Reader("env", ("envs.py",), dict_keys("env_variables"), "env_variables keys"),
        Reader("env_read", ("**.py",), env_reads, "os.getenv / os.environ reads outside envs.py", live=False,
               skip=("envs.py",)),
        Reader("registered_lib", ("**.py",), registered_libs, "try_register_lib calls", live=False),
        Reader("eplb_model_type", ("eplb/utils.py",),
               lambda t: dispatched_strings(t, "model_register", "config.model_type") or None, "model_register"),
        # platform patches run when the plugin loads, before vLLM validates its configs; worker patches run after
        Reader("patched_field", ("patch/platform/**.py",), patched_fields,
               "config fields whose type a platform patch rewrites"),
        Reader("option_choice_added", ("platform.py",), appended_choices, "options whose choices the platform widens"),
        Reader("quant_fused_experts", ("quantization/configs/modelslim_config.py", "quantization/modelslim_config.py",
                                       "quantization/quant_config.py"),
               fused_expert_model_types, "packed_modules_model_mapping entries with experts"),
    ),
}
PACKAGE = {"vllm": "vllm", "vllm-ascend": "vllm_ascend"}


@dataclass(frozen=True)
class Found:
    names: Optional[list]  # None: not read
    source: str  # the file(s) read, relative to the tree's root, and what was read in them; or why not


def _package_inits(listdir: ListDir, directory: str, depth: int = 3) -> list:
    """Every `__init__.py` of a package tree (where a plugin's registrations live), not every module: a snapshot
    records what the probe reads, so the walk stays small."""
    out: list = []
    entries = listdir(directory) or []
    for e in sorted(entries):
        path = posixpath.join(directory, e)
        if e == "__init__.py":
            out.append(path)
        elif depth and "." not in e and e != "__pycache__":
            out.extend(_package_inits(listdir, path, depth - 1))
    return out


def _read_modules(reader: Reader, root: str, directory: str, read: ReadText, listdir: ListDir,
                  shown: str) -> Optional[Found]:
    """Every module of a package tree (`directory` "" for the whole package), parsed and joined (a patch may sit in
    any of them): a readable package without the directory has none (an empty list, known); None when the package
    itself is not readable."""
    top = posixpath.join(root, directory) if directory else root
    if listdir(top) is None:
        return None if listdir(root) is None else Found([], f"{posixpath.join(shown, directory)}: none")
    names: set = set()
    paths, stack = [], [(top, 3 if directory else 6)]
    while stack:
        d, depth = stack.pop()
        for e in sorted(listdir(d) or []):
            path = posixpath.join(d, e)
            if e.endswith(".py") and posixpath.relpath(path, root) not in reader.skip:
                paths.append(path)
            elif depth and "." not in e and e != "__pycache__":
                stack.append((path, depth - 1))
    for path in sorted(paths):
        text = read(path)
        names.update((reader.parse(text) or []) if text is not None else [])
    where = posixpath.join(shown, directory) if directory else shown
    return Found(sorted(names), f"{where}/ ({len(paths)} modules: {reader.what})")


def read_kind(reader: Reader, root: str, read: ReadText, listdir: ListDir, shown: str = "") -> Found:
    """One kind from a package directory `root` (e.g. site-packages/vllm). `shown` prefixes the paths a source
    cites (the package's name, for a tree read from an archive)."""
    tried: list = []
    empty: Optional[Found] = None
    for rel in reader.files:
        if rel.endswith("**.py"):
            found = _read_modules(reader, root, rel[:-len("**.py")].rstrip("/"), read, listdir, shown)
            if found is not None and (found.names or rel == reader.files[-1]):
                return found
            empty = empty or found  # nothing found there (or no such directory): known empty, unless a later file
            tried.append(posixpath.join(shown, rel))
            continue
        if rel.endswith("/"):
            names: set = set()
            used = []
            for path in _package_inits(listdir, posixpath.join(root, rel.rstrip("/"))):
                text = read(path)
                got = reader.parse(text) if text is not None else None
                if got:
                    names.update(got)
                    used.append(posixpath.relpath(path, root))
            if used:
                return Found(sorted(names), " + ".join(posixpath.join(shown, u) for u in used) + f" ({reader.what})")
            tried.append(posixpath.join(shown, rel))
            continue
        text = read(posixpath.join(root, rel))
        got = reader.parse(text) if text is not None else None
        if got is not None:
            return Found(sorted(got), f"{posixpath.join(shown, rel)} ({reader.what})")
        tried.append(posixpath.join(shown, rel))
    return empty or Found(None, f"not in {', '.join(tried)}")


def read_release_names(project: str, root: str, read: ReadText, listdir: ListDir,
                       shown: str = "", live: bool = False) -> dict[str, Found]:
    """Every kind of `project` ("vllm" or "vllm-ascend") from its package directory; `live`: only the kinds read
    from an installed package (a host's files, recorded into its snapshot)."""
    return {r.kind: read_kind(r, root, read, listdir, shown) for r in READERS[project] if r.live or not live}


def kinds(project: str) -> Iterable[str]:
    return (r.kind for r in READERS[project])
