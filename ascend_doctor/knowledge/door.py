"""The one door to what the doctor knows: every shipped table under matrices/, each with the user's `--matrix` layers
(and `--policy`) over it, validated by its schema, loaded on first use and cached by file contents.

Checks reach it as `ctx.knowledge`, probes as `store.knowledge`, commands that judge no host (plan, diagnose, triage,
smoke, matrix) through `Knowledge.for_options` or `Knowledge(layers)`. Nothing else reads a file under matrices/.
"""

from __future__ import annotations

import difflib
import os
import threading
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Optional

from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T
from ascend_doctor.knowledge import layers as L
from ascend_doctor.knowledge.tables import MATRIX, TABLES, Table, resolve, verifier

_lock = threading.Lock()
_cache: dict[tuple, Any] = {}
_routes: dict[tuple, tuple[str, dict]] = {}


def _stamp(path: str) -> tuple:
    try:
        st = os.stat(path)
        return (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        return (path, None, None)


def _shipped_table(path: str) -> Optional[str]:
    """The table whose shipped file `path` is (`matrices/serve/lora.toml` -> serve/lora), so a maintainer can
    validate an edited shipped file in place without adding a `table` key to it; None for any other file."""
    from ascend_doctor.knowledge.files import shipped_file

    try:
        real = Path(path).resolve()
    except OSError:
        return None
    return next((name for name in TABLES if shipped_file(name).resolve() == real), None)


def _route(path: str) -> tuple[str, dict]:
    """(table the layer extends, its data without the `table` key); InputError for an unknown table."""
    from ascend_doctor.knowledge.tomlread import read_toml

    key = _stamp(path)
    with _lock:
        hit = _routes.get(key)
    if hit is not None:
        return hit
    data = read_toml(path, T("matrix file"))
    name = data.pop("table", _shipped_table(path) or MATRIX)
    if not isinstance(name, str) or (name != MATRIX and name not in TABLES):
        names = [MATRIX, *sorted(TABLES)]
        close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
        hint = T("; did you mean {name}?", name=close[0]) if close else ""
        raise InputError(T("matrix file {path}: table: {name} is not a table the doctor ships{hint} (one of: "
                           "{names})", path=path, name=repr(name), hint=hint, names=", ".join(names)))
    with _lock:
        _routes[key] = (name, data)
    return name, data


class Knowledge:
    """Every shipped table with the user's layers over it. `layers`: `--matrix` files in order (each names the table
    it extends with `table = "…"`, the compatibility matrix when it names none); `policy`: a `--policy` file, a layer
    over the host policy."""

    def __init__(self, layers: Iterable[str] = (), policy: Optional[str] = None):
        self.layers: tuple[str, ...] = tuple(str(p) for p in layers)
        self.policy_file = str(policy) if policy else None
        self._by_table: Optional[dict[str, list[str]]] = None

    @classmethod
    def for_options(cls, options: Any) -> "Knowledge":
        return cls(getattr(options, "matrix", ()) or (), getattr(options, "policy", None))

    # routing ----------------------------------------------------------------------------------------------------
    def layers_of(self, table: str) -> list[str]:
        """The layer files that extend `table`, in order."""
        if self._by_table is None:
            by: dict[str, list[str]] = {}
            for path in self.layers:
                by.setdefault(_route(path)[0], []).append(path)
            if self.policy_file:
                by.setdefault("host-policy", []).append(self.policy_file)
            self._by_table = by
        return list(self._by_table.get(table, []))

    def check(self) -> list[tuple[str, str, list[str]]]:
        """Load every table a layer extends (an InputError for the first problem); for each layer, (file, table, what
        each of its rows did). `matrix validate` prints this; the CLI calls it before a run."""
        out = []
        for path in [*self.layers, *([self.policy_file] if self.policy_file else [])]:
            name = "host-policy" if path == self.policy_file else _route(path)[0]
            if name == MATRIX:
                self.matrix  # noqa: B018 — validates
                out.append((path, MATRIX, self._matrix_said(path)))
            else:
                out.append((path, name, self._load(name)[1].get(path, [])))
        return out

    def _matrix_said(self, path: str) -> list[str]:
        from ascend_doctor.knowledge.matrix import layer_rows

        return layer_rows(path)

    # loading ----------------------------------------------------------------------------------------------------
    def _load(self, name: str) -> tuple[Any, dict[str, list[str]]]:
        """(validated table, layer file -> what its rows did)."""
        from ascend_doctor.knowledge.files import shipped_file
        from ascend_doctor.knowledge.tomlread import read_toml, validate

        t: Table = TABLES[name]
        ship = str(shipped_file(name))
        tops = self.layers_of(name)
        key = (name, _stamp(ship), *(_stamp(p) for p in tops))
        with _lock:
            hit = _cache.get(key)
        if hit is not None:
            return hit
        schema = resolve(t.schema)
        data, origins = L.start(t, read_toml(ship, t.what), ship)
        validate(schema, data, t.what, ship, ids=t.rows)  # the shipped file alone: its own errors name it
        said: dict[str, list[str]] = {}
        for path in tops:
            top = dict(_route(path)[1]) if path != self.policy_file else read_toml(path, t.what)
            top.pop("table", None)
            data, origins, said[path] = L.layer(t, data, origins, top, path)
        try:
            value = schema.model_validate(data)
        except Exception as exc:
            if not hasattr(exc, "errors"):
                raise
            raise InputError(L.locate(t, exc, data, origins, tops[-1] if tops else ship)) from None
        check = verifier(t)
        if check is not None:
            check(value, tops[-1] if tops else ship)
        with _lock:
            _cache[key] = (value, said)
        return value, said

    def instead(self, name: str, path: str) -> Any:
        """The file at `path` validated as the whole table `name`, in place of the shipped one and its layers
        (`diagnose --signatures FILE`)."""
        from ascend_doctor.knowledge.tomlread import read_toml, validate

        t = TABLES[name]
        data, _ = L.start(t, read_toml(path, t.what), path)
        data.pop("table", None)
        value = validate(resolve(t.schema), data, t.what, path, ids=t.rows)
        check = verifier(t)
        if check is not None:
            check(value, path)
        return value

    def table(self, name: str) -> Any:
        """The validated table `name` (see ascend_doctor.knowledge.tables.TABLES), layers applied."""
        if name == MATRIX:
            return self.matrix
        if name not in TABLES:
            raise KeyError(name)
        return self._load(name)[0]

    # the tables, by what they hold --------------------------------------------------------------------------------
    @cached_property
    def matrix(self):
        """The compatibility matrix (ascend_doctor.knowledge.matrix.Matrix)."""
        from ascend_doctor.knowledge.matrix import load_matrix

        return load_matrix(self.layers_of(MATRIX))

    @property
    def policy(self):
        """Host thresholds (HostPolicy)."""
        return self.table("host-policy")

    @property
    def compute(self):
        """The compute smoke's sizes, limits and operators (ComputePolicy)."""
        return self.table("compute/compute-smoke")

    @property
    def allowlist(self):
        """Dependency conflicts documented as harmless (AllowList)."""
        return self.table("depcheck/dependency-allowlist")

    @property
    def chips(self):
        """The chip table (list of Chip)."""
        return self.table("deploy/chips").chip

    @property
    def hybrid_pages(self):
        """How each vllm-ascend release pages a Gated DeltaNet hybrid (list of PageRange)."""
        return self.table("deploy/hybrid-pages").range

    @property
    def dsa_pages(self):
        """How each vllm-ascend release caches a DeepSeek-sparse-attention layer (list of DsaRange)."""
        return self.table("deploy/dsa-pages").range

    @property
    def replication(self):
        """Which weights each vllm-ascend release keeps whole on every rank under which switch (list of
        ReplicationRange)."""
        return self.table("deploy/replication").range

    @property
    def runtime_reserve(self):
        """How each vllm-ascend release charges non-torch memory at start-up (list of ReserveRange)."""
        return self.table("deploy/runtime-reserve").range

    @property
    def hccl_groups(self):
        """How each vllm-ascend release sizes the HCCL buffer of a process group (list of HcclRange)."""
        return self.table("deploy/hccl-groups").range

    @property
    def kernels(self):
        """Each chip family's kernel directory (KernelLayout)."""
        return self.table("deploy/kernels")

    @property
    def catalogue(self):
        """The shipped model catalogue (list of CatalogueModel; `config` paths absolute)."""
        return self.table("deploy/models").model

    @property
    def additional_config(self):
        """The --additional-config keys each vllm-ascend release reads (AdditionalConfigTable)."""
        return self.table("serve/additional-config")

    @property
    def release_names(self):
        """project -> the names each of its releases accepts (NamesTable): KV connectors, speculative methods,
        cudagraph modes, structured-outputs backends, environment variables."""
        from ascend_doctor.knowledge.release_names import TABLE

        return {project: self.table(name) for project, name in TABLE.items()}

    @property
    def support_matrix(self):
        """What each vllm-ascend release's own support matrix rules out (SupportMatrixTable)."""
        return self.table("serve/support-matrix")

    @property
    def known_issues(self):
        """Every vllm-ascend release note's known issues, with the conditions they state (KnownIssues)."""
        return self.table("serve/known-issues")

    @property
    def open_bugs(self):
        """The bugs the release checklists list as open when a release shipped, with their conditions (OpenBugs)."""
        return self.table("serve/open-bugs")

    @property
    def release_changes(self):
        """What each release's notes say it removed, renamed or stopped honouring (ReleaseChanges)."""
        return self.table("serve/release-changes")

    @property
    def graph_budget(self):
        """The ACL graph stream budget of old drivers (GraphBudgetFile)."""
        return self.table("serve/graph-budget")

    @property
    def host_mask(self):
        """The attention mask some releases pre-build on the host, and what it costs (HostMask)."""
        return self.table("serve/host-attn-mask")

    @property
    def lora(self):
        """vLLM's LoRA limits (LoraRules)."""
        return self.table("serve/lora")

    @property
    def release_features(self):
        """What each vllm-ascend release does by itself (ReleaseFeatures)."""
        return self.table("serve/release-features")

    @property
    def release_rules(self):
        """What each vllm-ascend release refuses, breaks or overrides (list of ReleaseRule)."""
        return self.table("serve/release-rules").release_rule

    @property
    def start_checks(self):
        """Checks vllm-ascend makes on a command at start (StartChecks)."""
        return self.table("serve/start-checks")

    @property
    def sequence_parallel(self):
        """vllm-ascend's sequence parallelism per release and vLLM's decode graph rounding (SequenceParallel)."""
        return self.table("serve/sequence-parallel")

    @property
    def parser_issues(self):
        """vLLM releases whose tool-call parser breaks streamed calls (list of ParserIssue)."""
        return self.table("serve/tool-parser-issues").parser_issue

    @property
    def release_fixes(self):
        """vllm-ascend's bug fixes, the functions they changed and the releases that carry them (ReleaseFixes)."""
        return self.table("signatures/release-fixes")

    @property
    def kv_pool_env(self):
        """The host versions each release's KV-pool guide requires for its transfer variables (KvPoolEnv)."""
        return self.table("serve/kv-pool-env")

    @property
    def images(self):
        """What each official vllm-ascend image holds, from its release's own recipe (ImageTable)."""
        return self.table("serve/images")

    @property
    def flashcomm_vl(self):
        """What each release's guide says and its code does about FlashComm1 on a VL model (FlashcommVl)."""
        return self.table("serve/flashcomm-vl")

    @property
    def quant_schemes(self):
        """The msModelSlim quantization types each release builds a method for, per layer kind (QuantSchemes)."""
        return self.table("serve/quant-schemes")

    @property
    def release_refusals(self):
        """The messages each vllm-ascend release refuses a configuration with at start (ReleaseRefusals)."""
        return self.table("signatures/release-refusals")

    @property
    def signatures(self):
        """The error-signature catalogue and its matcher (SignatureFile)."""
        return self.table("signatures/error-signatures")
