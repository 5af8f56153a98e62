"""Schema of the matrix TOML files (matrices/*.toml): every row carries a source, every version parses.

Rows are validated here and nowhere else, so the query code in `ascend_doctor.knowledge.matrix` can trust them: a
version string that `ascend_doctor.text.versions` cannot parse, a specifier it cannot read, a row without `source`, or a
key the schema does not know is a load-time error, not a surprise in the middle of a check. """

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Dict, List, Literal, Optional

from packaging.utils import canonicalize_name
from pydantic import AfterValidator, BaseModel, Field, model_validator

from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import SpecifierSet, parse_version

SCHEMA_VERSION = 1

# Hardware families as vllm-ascend names them (faqs.md, vllm_ascend/device/hardware.py): A2 = Atlas 800I/800T A2
# (910B), A3 = Atlas 800I/800T A3, 310P = Atlas 300I Duo, A5 = Ascend 950 (950PR/950DT).
Hardware = Literal["A2", "A3", "310P", "A5", "910"]  # 910: the first-generation Ascend 910 (910A/910ProB)
ParserKind = Literal["tool_parser", "reasoning_parser", "tokenizer_mode"]
PARSER_KINDS = ("tool_parser", "reasoning_parser", "tokenizer_mode")
# "wheels": binary wheels on PyPI (wheel_cp lists the CPython tags); "sdist-only"; "absent": not on PyPI at all
# (a mirror or OBS build); "unknown": nobody checked.
PypiState = Literal["wheels", "sdist-only", "absent", "unknown"]
Severity = Literal["critical", "error", "warning", "info"]
Confidence = Literal["high", "medium", "low"]

# Fields of a release row that may legitimately carry more than one value when vllm-ascend's documents disagree.
CONFLICT_FIELDS = ("cann", "torch", "torch_npu", "triton_ascend")


def _version(text: str) -> str:
    try:
        parse_version(text)
    except ParseError as exc:
        raise ValueError(f"not a version: {exc}") from None
    return text


def check_specifier(text: str) -> str:
    """`text` if it is a version specifier ascend_doctor.text.versions reads, else ValueError (a field check)."""
    try:
        SpecifierSet(text)
    except ParseError as exc:
        raise ValueError(f"not a version specifier: {exc}") from None
    return text


def _cp_tag(text: str) -> str:
    if not re.fullmatch(r"cp3\d{1,2}", text):
        raise ValueError(f"not a CPython wheel tag like 'cp311': {text!r}")
    return text


def _python(text: str) -> str:
    if not re.fullmatch(r"3\.\d{1,2}", text):
        raise ValueError(f"not a Python 'major.minor' like '3.11': {text!r}")
    return text


def normalize_name(name: str) -> str:
    """PyPI name normalization (PEP 503), so `torch_npu`, `torch-npu` and `Torch.NPU` are one key."""
    return canonicalize_name(name)


def _source(items: List[str]) -> List[str]:
    if not items or any(not s.strip() for s in items):
        raise ValueError("every row needs a non-empty source (repo + path/tag/issue)")
    return items


VersionStr = Annotated[str, AfterValidator(_version)]
SpecStr = Annotated[str, AfterValidator(check_specifier)]
CpTag = Annotated[str, AfterValidator(_cp_tag)]
PythonMinor = Annotated[str, AfterValidator(_python)]
Sources = Annotated[List[str], AfterValidator(_source)]


class Row(Model, extra="forbid", frozen=True):
    """Fields every row has: where it comes from, and an optional human note."""

    source: Sources
    note: str = ""


def _check_conflicts(row: BaseModel, conflict: Dict[str, str], fields: tuple) -> None:
    """A field with several values must say who says what; a conflict note needs several values."""
    for name in fields:
        values = getattr(row, name, None) or []
        if len(values) > 1 and name not in conflict:
            raise ValueError(f"{name} has {len(values)} values {values}: add conflict.{name} saying which document "
                             "says which")
    for name in conflict:
        if name not in fields:
            raise ValueError(f"conflict.{name}: only {', '.join(fields)} can carry conflicting values")
        if len(getattr(row, name) or []) < 2:
            raise ValueError(f"conflict.{name} given but {name} has fewer than two values")


class Release(Row):
    """One vllm-ascend release and the stack it was built and tested against. The first value of a list field is
    what the release's own package pins (what pip installs); further values come from documents that disagree."""

    version: VersionStr
    listed: Literal["matrix", "tag", "pypi"]
    commit: Optional[str] = None
    released: Optional[date] = None
    vllm: List[VersionStr] = Field(min_length=1)
    python: SpecStr
    cann: List[VersionStr] = Field(min_length=1)
    cann_per_hardware: Dict[Hardware, VersionStr] = {}
    # csrc/version.info of the release (from v0.20.2rc1): the CANN its custom ops were built against and the CANN
    # runtime their package requires (`required_package_runtime_version`).
    ops_cann: Optional[VersionStr] = None
    ops_cann_requires: Optional[SpecStr] = None
    # The image variant of one hardware family with its own triton-ascend: `[]` where its Dockerfile uninstalls it
    # (Dockerfile.310p from v0.19.1rc1 on: `pip uninstall -y triton-ascend triton`).
    triton_ascend_per_hardware: Dict[Hardware, List[VersionStr]] = {}
    torch: List[VersionStr] = []
    torch_npu: List[VersionStr] = []
    triton_ascend: List[VersionStr] = []
    transformers: Optional[SpecStr] = None
    mooncake: Optional[VersionStr] = None
    # The MindIE Turbo the official table pairs with the release (its "MindIE Turbo" column, v0.7.3 and v0.7.3.post1:
    # 2.0rc1); None: the table pairs none (v0.9.1's notes: "the old version of Mindie Turbo is not compatible").
    mindie_turbo: Optional[VersionStr] = None
    hardware: List[Hardware] = Field(min_length=1)
    experimental_hardware: List[Hardware] = []
    pypi: PypiState
    wheel_cp: List[CpTag] = []
    conflict: Dict[str, str] = {}

    @model_validator(mode="after")
    def _rules(self):
        _check_conflicts(self, self.conflict, CONFLICT_FIELDS)
        if (self.pypi == "wheels") != bool(self.wheel_cp):
            raise ValueError("wheel_cp must be given exactly when pypi = 'wheels'")
        extra = set(self.experimental_hardware) - set(self.hardware)
        if extra:
            raise ValueError(f"experimental_hardware {sorted(extra)} not in hardware")
        return self

    @property
    def key(self) -> str:
        return self.version

    def first(self, field: str) -> Optional[str]:
        """The value the release's package pins for a list field (torch, torch_npu, ...), or None."""
        values = getattr(self, field)
        return values[0] if values else None

    def pins_for(self, field: str, hardware: Optional[str] = None):
        """What the release's image for `hardware` carries for `field` (`cann`, `triton_ascend`): the variant's own
        value where the row records one (the -310p image's CANN, its missing triton-ascend), else the row's. None
        `hardware` (the family is not known): the row's values."""
        if hardware and field == "cann" and hardware in self.cann_per_hardware:
            return [self.cann_per_hardware[hardware]]
        if hardware and field == "triton_ascend" and hardware in self.triton_ascend_per_hardware:
            return list(self.triton_ascend_per_hardware[hardware])
        return getattr(self, field)


class TorchNpuRow(Row):
    """One torch_npu release: its torch, the CANN it was released with, and the CPython tags PyPI ships."""

    version: VersionStr
    listed: Literal["compatibility-table", "eol-table", "readme-history", "vllm-ascend", "pypi"]
    branch: Optional[str] = None
    torch: VersionStr
    cann: List[VersionStr] = []  # empty: no source pairs it with a CANN release
    requires_torch: Optional[SpecStr] = None
    pypi: PypiState
    wheel_cp: List[CpTag] = []
    wheel_cp_arch: Dict[str, List[Literal["aarch64", "x86_64"]]] = {}  # tag -> the only arches that have it
    conflict: Dict[str, str] = {}

    @model_validator(mode="after")
    def _rules(self):
        _check_conflicts(self, self.conflict, ("cann",))
        if (self.pypi == "wheels") != bool(self.wheel_cp):
            raise ValueError("wheel_cp must be given exactly when pypi = 'wheels'")
        for tag in self.wheel_cp_arch:
            if tag not in self.wheel_cp:
                raise ValueError(f"wheel_cp_arch.{tag}: {tag} is not in wheel_cp")
        return self

    @property
    def key(self) -> str:
        return self.version


class TorchPythonRow(Row):
    """The Python versions one PyTorch release supports (Ascend/pytorch COMPATIBILITY.en.md)."""

    torch: VersionStr
    python: List[PythonMinor] = Field(min_length=1)

    @property
    def key(self) -> str:
        return self.torch


class HdkPairing(Row):
    """A driver (Ascend HDK) a source names together with one CANN release: a tested pair, not an exclusive one."""

    id: str
    cann: VersionStr
    hardware: List[Hardware] = []  # empty: the source does not restrict it
    driver: List[VersionStr] = Field(min_length=1)
    firmware: Optional[VersionStr] = None
    hdk: Optional[str] = None
    confidence: Confidence = "high"
    conflict: Dict[str, str] = {}

    @model_validator(mode="after")
    def _rules(self):
        # Several drivers may simply all be supported (9.0.0 -> 26.0.RC1, 25.5.2, 25.5.1); only flag real disputes.
        for name in self.conflict:
            if name != "driver":
                raise ValueError(f"conflict.{name}: only driver can carry conflicting values")
        return self

    @property
    def key(self) -> str:
        return self.id


class DriverRule(Row):
    """One cell block of a published CANN x HDK compatibility grid ("Y" or "N")."""

    id: str
    cann: List[SpecStr] = Field(min_length=1)
    driver: List[SpecStr] = Field(min_length=1)
    compatible: bool
    inferred: bool = Field(False, description="No grid names this CANN: the cell is inferred from the grids of its "
                                              "neighbours (the note names them); a verdict from it says so")

    @property
    def key(self) -> str:
        return self.id


class VllmParsers(Row):
    """Names one sampled vLLM release accepts for --tool-call-parser, --reasoning-parser, --tokenizer-mode."""

    vllm: VersionStr
    tool_parser: Optional[List[str]] = None  # None: not extracted for this release
    reasoning_parser: Optional[List[str]] = None
    tokenizer_mode: Optional[List[str]] = None
    torch: Optional[VersionStr] = None  # the torch its Requires-Dist pins (what `pip install vllm==X` installs)
    partial: List[ParserKind] = []  # kinds whose list names only some registered names
    absent: Dict[ParserKind, List[str]] = {}  # names known to be missing

    @model_validator(mode="after")
    def _rules(self):
        for kind in self.partial:
            if getattr(self, kind) is None:
                raise ValueError(f"partial names {kind} but {kind} is not given")
        for kind, names in self.absent.items():
            if kind not in self.partial:
                raise ValueError(f"absent.{kind} is only meaningful when {kind} is partial (a complete list says it)")
            clash = set(names) & set(getattr(self, kind) or [])
            if clash:
                raise ValueError(f"absent.{kind} and {kind} both name {sorted(clash)}")
        return self

    @property
    def key(self) -> str:
        return self.vllm


class ModelNames(Row):
    """The model names one release knows, as a change against the previous recorded release (`after`): the first
    row of a chain lists everything, each later row what was added and removed. A chain has no gaps: a release
    between two recorded ones is not recorded, and queries about it answer unknown."""

    after: Optional[VersionStr] = None
    model_types: List[str] = []
    removed_model_types: List[str] = []

    @model_validator(mode="after")
    def _delta(self):
        for kind in self._kinds():
            added, removed = getattr(self, kind), getattr(self, "removed_" + kind)
            if removed and self.after is None:
                raise ValueError(f"removed_{kind} needs `after` (the release it changes)")
            clash = set(added) & set(removed)
            if clash:
                raise ValueError(f"{kind} and removed_{kind} both name {sorted(clash)}")
        return self

    @classmethod
    def _kinds(cls) -> tuple:
        return ("model_types",)


class VllmModels(ModelNames):
    """Architectures vLLM implements (`_*_MODELS` of vllm/model_executor/models/registry.py) and the model_types it
    configures itself (`_CONFIG_REGISTRY` of vllm/transformers_utils/config.py), per recorded vLLM release."""

    vllm: VersionStr
    architectures: List[str] = []
    removed_architectures: List[str] = []

    @classmethod
    def _kinds(cls) -> tuple:
        return ("architectures", "model_types")

    @property
    def key(self) -> str:
        return self.vllm


class VllmOptions(ModelNames):
    """The `vllm serve` option names (without `--`) one recorded vLLM release defines: its EngineArgs and frontend
    args fields and explicit `add_argument` names, read by the same code that reads an installed vLLM."""

    vllm: VersionStr
    serve_options: List[str] = []
    removed_serve_options: List[str] = []

    @classmethod
    def _kinds(cls) -> tuple:
        return ("serve_options",)

    @property
    def key(self) -> str:
        return self.vllm


class TransformersModels(ModelNames):
    """The model_types one transformers release knows (`CONFIG_MAPPING_NAMES`), per recorded release."""

    transformers: VersionStr

    @property
    def key(self) -> str:
        return self.transformers


class PackageIndex(Row):
    """Where pinned versions of a package come from when PyPI does not have them (`pip install` fails with
    `No matching distribution found`): the index a source names, or none known."""

    id: str
    package: str
    versions: List[VersionStr] = Field(min_length=1)
    on_pypi: bool = False
    index_url: Optional[str] = Field(None, pattern=r"^https://\S+$")
    checked: Optional[date] = None  # when PyPI was last seen without them

    @property
    def key(self) -> str:
        return self.id


ServeRuleKind = Literal["dtype", "eager", "required_flag", "forbidden_package", "image_suffix", "mla_graph_heads",
                        "unsupported", "forbidden_kv_cache_dtype", "single_node"]


class ServeRule(Row):
    """A rule one hardware family's documentation sets for one range of vllm-ascend releases (tutorials, release
    notes), so checks hold no hardware knowledge of their own. Kinds:
      dtype              `values` are the only dtypes (the model's torch_dtype when --dtype is auto); with
                         `quant_types`, only for checkpoints of those ModelSlim quantization types
      eager              only eager mode: `--enforce-eager` expected
      required_flag      `flag` must be given (e.g. --max-model-len); with `above_model_len`, only for a model whose
                         derived context length is above it
      forbidden_package  none of `values` may be installed (PyPI names)
      image_suffix       the container image tag should end with `values[0]` (e.g. -310p)
      mla_graph_heads    with MLA attention and graph mode, the heads per TP rank must be one of `values`
      unsupported        the release does not run on this family at all
      forbidden_kv_cache_dtype  none of `values` may be given as --kv-cache-dtype
      single_node        the family serves on one server only: no deployment across nodes"""

    id: str = Field(pattern=r"^HW-[A-Z0-9]+-\d{3}$")
    hardware: List[Hardware] = Field(min_length=1)
    vllm_ascend: SpecStr
    kind: ServeRuleKind
    values: List[str] = []
    flag: Optional[str] = Field(None, pattern=r"^--[a-z0-9-]+$")
    above_model_len: Optional[int] = Field(None, gt=0, description="required_flag: only when the model's derived "
                                                                     "context length (config.json) is above this")
    quant_types: List[str] = Field(default_factory=list, description="dtype: only for a checkpoint whose "
                                                                     "quant_model_description.json model_quant_type "
                                                                     "is one of these (W8A8_DYNAMIC)")
    severity: Severity
    confidence: Confidence = "high"
    says: str  # what the source says, quoted or closely paraphrased
    fix: str

    @model_validator(mode="after")
    def _rules(self):
        if self.kind in ("dtype", "forbidden_package", "image_suffix", "mla_graph_heads",
                         "forbidden_kv_cache_dtype") and not self.values:
            raise ValueError(f"kind {self.kind} needs values")
        if self.kind == "required_flag" and not self.flag:
            raise ValueError("kind required_flag needs flag")
        return self

    @property
    def key(self) -> str:
        return self.id


def _when(items: Dict[str, str]) -> Dict[str, str]:
    if not items:
        raise ValueError("when needs at least one condition")
    out = {}
    for name, spec in items.items():
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise ValueError(f"when: {name!r} is not a package name")
        try:
            out[normalize_name(name)] = check_specifier(spec)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    return out


class Advisory(Row):
    """A known-bad combination: matches when every `when` condition holds for the installed versions."""

    id: str = Field(pattern=r"^ADV-\d{4}-\d{3}$")
    title: str
    severity: Severity
    when: Annotated[Dict[str, str], AfterValidator(_when)]
    machine: List[str] = []
    symptom: List[str] = Field(min_length=1)
    fix: str
    confidence: Confidence = "high"
    judged_by: Optional[str] = Field(None, pattern=r"^[A-Z]+\d{3}$",
                                     description="a serve check that judges this with the command line (SERVE312 "
                                                 "for the graph budget): with a command, VLLM103 leaves it to it")
    weights: Optional[Literal["unquantized"]] = Field(
        None, description="the advisory concerns only a model served with unquantized (bf16/fp16) weights: VLLM103 "
                          "drops it when the served model is quantized (--quantization, the checkpoint's "
                          "quantization config or description, a quantization word ending its name)")

    @property
    def key(self) -> str:
        return self.id


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    return text


Regex = Annotated[str, AfterValidator(_regex)]


class MarkupFamily(Row):
    """How one family of models writes tool calls or reasoning as text, and the `vllm serve` flags that parse it.

    The smoke's leak detector names a family when one of `patterns` is found in a served text (families are tried
    in file order, most specific first; a family is not reported when one of `shadowed_by` is found in the same
    text); the fix it prints is built from the parser fields. `content_only`: markup that is a leak only in
    `content` (reasoning tags belong in the reasoning field)."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    label: str
    patterns: List[Regex] = Field(min_length=1)
    tool_parser: Optional[str] = None
    reasoning_parser: Optional[str] = None
    tokenizer_mode: Optional[str] = None
    shadowed_by: List[str] = []
    content_only: bool = False


class ModelFamily(Row):
    """Which `--tool-call-parser` names read the markup a model family writes, keyed by config.json `model_type`.

    Several rows may share a model_type (DeepSeek-V3/R1 and V3.1 both say `deepseek_v3`): the row whose
    `name_pattern` matches the checkpoint's name is the expected one, else the row without a name_pattern; a parser
    of another row of the same model_type is then a warning (the other release's call shape), any other a failure."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    model_types: List[str] = Field(min_length=1)
    tool_parsers: List[str] = Field(min_length=1)
    name_pattern: Optional[Regex] = None
    label: str = ""
    markup: List[str] = []


class ServeOptionKind(Row):
    """How one `vllm serve` option parses beyond what its name says (see matrices/vllm-options.toml): `flag` takes no
    value, `value` takes one even though a `no-X` form exists, `multi` takes every value up to the next option,
    `alias` is a short spelling of `option`, `level` reads a bare 0-3 as `{"level": n}` (`--compilation-config 3`).
    `vllm`: the releases it holds for (all recorded ones when absent)."""

    id: str
    kind: Literal["flag", "value", "multi", "alias", "level"]
    option: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    alias: Optional[str] = Field(None, pattern=r"^-[A-Za-z][A-Za-z0-9]*$")
    vllm: Optional[SpecStr] = None

    @model_validator(mode="after")
    def _rules(self):
        if (self.kind == "alias") != (self.alias is not None):
            raise ValueError("alias is given exactly for kind 'alias'")
        return self


class MatrixFile(Model, extra="forbid"):
    """One matrix TOML file: a header and any of the row tables."""

    schema_version: int
    updated: Optional[date] = None
    min_tool_version: Optional[VersionStr] = None
    vllm_ascend_release: List[Release] = []
    torch_npu: List[TorchNpuRow] = []
    torch_python: List[TorchPythonRow] = []
    cann_hdk: List[HdkPairing] = []
    cann_driver_rule: List[DriverRule] = []
    vllm_parsers: List[VllmParsers] = []
    vllm_models: List[VllmModels] = []
    vllm_options: List[VllmOptions] = []
    transformers_models: List[TransformersModels] = []
    package_index: List[PackageIndex] = []
    serve_rule: List[ServeRule] = []
    advisory: List[Advisory] = []
    markup_family: List[MarkupFamily] = []
    model_family: List[ModelFamily] = []
    serve_option_kind: List[ServeOptionKind] = []

    @model_validator(mode="after")
    def _rules(self):
        if self.schema_version != SCHEMA_VERSION:
            raise ValueError(f"schema_version {self.schema_version} is not supported (this ascend-doctor reads "
                             f"{SCHEMA_VERSION})")
        return self


TABLES = ("vllm_ascend_release", "torch_npu", "torch_python", "cann_hdk", "cann_driver_rule", "vllm_parsers",
          "vllm_models", "vllm_options", "transformers_models", "package_index", "serve_rule", "advisory",
          "markup_family", "model_family", "serve_option_kind")
# Which field identifies a row (layering replaces rows with the same id; ids are unique per table).
ID_FIELD = {"vllm_ascend_release": "version", "torch_npu": "version", "torch_python": "torch", "cann_hdk": "id",
            "cann_driver_rule": "id", "vllm_parsers": "vllm", "vllm_models": "vllm", "vllm_options": "vllm",
            "transformers_models": "transformers", "package_index": "id", "serve_rule": "id", "advisory": "id",
            "markup_family": "id", "model_family": "id", "serve_option_kind": "id"}
