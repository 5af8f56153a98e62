"""The report contract: the one object every renderer (console, JSON, JUnit, GitHub) prints.

Versioned with `schema_version`; bump the major part on any change a CI consumer could trip over.
`ascend-doctor schema` prints the JSON Schema of `Report`.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any, ClassVar, Optional

from pydantic import Field, PrivateAttr, WrapValidator

from ascend_doctor.core.fixsteps import FixStep
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import Msg, shown


def _keep_message(value: Any, handler: Any) -> Any:
    """A message (`T(...)`) is kept as it is, for the renderers to translate; anything else is validated as str (a
    report read back, or a node's findings, may hold anything)."""
    return value if isinstance(value, Msg) else handler(value)


Excerpt = Annotated[str, WrapValidator(_keep_message)]

# 1.1: verdict, incomplete, fail_on_unknown, host.where/runtime/image/stack
# 2.0: a finding's cause, see, root_cause, traceback and value are typed fields (they were keys of `details`)
# 2.1: a finding's `fix`: the typed fix steps its check proposes (ascend_doctor.core.fixsteps)
SCHEMA_VERSION = "2.1"


class Status(str, Enum):
    """What a check concluded."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    UNKNOWN = "unknown"
    ERROR = "error"  # the check itself crashed; traceback in `details.traceback`


class Severity(str, Enum):
    """How bad a failing check is. Belongs to the check; configuration may only lower it."""

    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2, Severity.CRITICAL: 3}


class Evidence(Model, extra="forbid"):
    """What was seen and where: a command, a file, an env var, an HTTP exchange."""

    source: str = Field(description="Where it was seen: 'cmd: npu-smi info', 'file: /etc/...', 'env: VAR', "
                                    "'http: POST /v1/...'")
    excerpt: Excerpt = Field("", description="The relevant part of what was seen (trimmed, secrets redacted); the "
                                               "doctor's own words in it (`not found`, `none`) are a message, shown "
                                               "in the run's language")
    ok: Optional[bool] = Field(None, description="Per-item evidence (one device, one port): true for an item that is "
                                                 "fine, false for one that is not; renderers show failing items first")
    _shown: Optional[str] = PrivateAttr(None)  # the excerpt in the run's language, kept across the renderers' copy

    def shown_excerpt(self) -> str:
        """The excerpt as people read it: the doctor's own words in the run's language, a tool's output as it is."""
        if self._shown is not None:
            return self._shown
        return shown(self.excerpt) if isinstance(self.excerpt, Msg) else self.excerpt


class Waiver(Model, extra="forbid"):
    reason: str
    expires: Optional[str] = None


class Finding(Model, extra="forbid"):
    """One check's verdict on this host (or node, for fleet runs)."""

    code: str = Field(description="Stable check code, e.g. HOST101")
    slug: str = Field(description="Stable human name, e.g. selinux-mode")
    title: str
    family: str = Field(description="Check family, e.g. HOST, CANN, NPU, TOOL")
    status: Status
    severity: Severity = Field(description="Severity of the check (after configuration lowered it, if it did)")
    level: Optional[Severity] = Field(
        None,
        description="What this finding weighs against --fail-on: the severity for fail/error, at most 'warning' "
        "for warn, null for pass/skip/unknown",
    )
    message: str
    message_template: Optional[str] = Field(None, description="The English template `message` was filled from "
                                                              "(named fields in braces): stable text for scripts")
    message_fields: dict[str, str] = Field(default_factory=dict, description="The values of the template's fields; "
                                             "`name@msg` is a field that is itself a message: its "
                                             "English template and fields (JSON), for rendering in another language")
    evidence: list[Evidence] = Field(default_factory=list)
    remediation: Optional[str] = None
    remediation_template: Optional[str] = None
    remediation_fields: dict[str, str] = Field(default_factory=dict)
    docs: str = Field("", description="Where the check's full doc is: `ascend-doctor explain CODE`")
    node: Optional[str] = Field(None, description="Fleet runs: which node this finding is about")
    waived: Optional[Waiver] = None
    duration_ms: Optional[float] = None
    cause: Optional[str] = Field(None, description="unknown: why the check could not judge (a fact it lacked)")
    see: list[str] = Field(default_factory=list, description="Codes whose findings explain this one's cause")
    root_cause: bool = Field(False, description="This finding explains others (shown first)")
    traceback: Optional[str] = Field(None, description="error: the crash of the check, probe or command")
    value: Optional[Excerpt] = Field(None, description="fleet: the short value a node differs by (its cell in the "
                                                       "node matrix)")
    fix: list[FixStep] = Field(default_factory=list, description="The changes the check proposes, as typed steps "
                                                                 "(the fix script renders only these, after "
                                                                 "validating them again)")
    details: dict[str, Any] = Field(default_factory=dict, description="Machine-readable extras of the check "
                                                                      "(metrics, ids); no renderer reads them")

    # Facts the check asked for and did not get (name -> reason; not in the report): how triage tells a check that
    # lacked the paste's facts from one that looked and could not tell.
    _unread: dict = PrivateAttr(default_factory=dict)
    _value_shown: Optional[str] = PrivateAttr(None)  # `value` in the run's language, kept across the renderers' copy

    def shown_value(self) -> Optional[str]:
        """The node-matrix cell value as people read it (the doctor's words translated, a version as it is)."""
        if self._value_shown is not None:
            return self._value_shown
        return shown(self.value) if isinstance(self.value, Msg) else self.value


class Stack(Model, extra="forbid"):
    """The stack the doctor found, so a reader knows it without reading findings. `null`: not established (not looked
    at, not installed, or the probe could not tell — the findings say which)."""

    driver: Optional[str] = Field(None, description="NPU driver version (driver version.info, else npu-smi)")
    firmware: Optional[str] = Field(None, description="NPU firmware version (firmware version.info)")
    cann: Optional[str] = Field(None, description="Version of the active CANN toolkit")
    cann_path: Optional[str] = Field(None, description="Root of the active CANN toolkit")
    python: Optional[str] = Field(None, description="Version of the serving interpreter")
    torch: Optional[str] = None
    torch_npu: Optional[str] = None
    vllm: Optional[str] = None
    vllm_ascend: Optional[str] = None
    transformers: Optional[str] = None
    triton_ascend: Optional[str] = None
    npu_model: Optional[str] = Field(None, description="Chip names npu-smi lists, e.g. '910B3' or '4x 910B3 + 4x "
                                                       "910B4'")
    npu_count: Optional[int] = Field(None, description="Number of NPU chips npu-smi lists")


class HostSummary(Model, extra="forbid"):
    hostname: str = Field(description="May be '<redacted>' with --redact-hostname")
    os: str = ""
    kernel: str = ""
    machine: str = ""
    source: str = Field("local", description="'local', or 'replay:<snapshot path>'")
    where: Optional[str] = Field(None, description="Where the doctor ran: 'host' or 'container' (null: not "
                                                   "established). Inside a container, host facts are not judged.")
    runtime: Optional[str] = Field(None, description="Container runtime: docker, podman, containerd, kubernetes, lxc")
    image: Optional[str] = Field(None, description="Container image, when the runtime tells (podman's "
                                                   "/run/.containerenv, or the environment)")
    stack: Optional[Stack] = None
    python: Optional[str] = Field(None, description="The serving interpreter judged (its sys.executable)")
    python_how: Optional[str] = Field(None, description="How it was chosen: --python, the vllm serve command line, "
                                                        "a running vllm serve, vllm on PATH, the active venv/conda "
                                                        "env, the image's interpreter, or the doctor's own (fallback)")
    python_detail: Optional[str] = Field(None, description="Where exactly: `pid 4242`, `/usr/local/bin/vllm → "
                                                          "#!/opt/venv/bin/python3`, `VIRTUAL_ENV=/opt/venv`")
    nodes: Optional[int] = Field(None, description="fleet: how many nodes were asked (null for one host)")
    answered: Optional[int] = Field(None, description="fleet: how many of them answered")


class Counts(Model, extra="forbid"):
    pass_: int = Field(0, alias="pass")
    warn: int = 0
    fail: int = 0
    skip: int = 0
    unknown: int = 0
    error: int = 0
    waived: int = 0


class TriageSection(Model, extra="forbid"):
    kind: str
    lines: str = Field(description="'N' or 'N-M': lines of the paste as given")
    label: str = ""


class TriageSummary(Model, extra="forbid"):
    """`triage` only: what the paste held and the answer's order (root cause first)."""

    source: str = Field(description="the file read, or 'stdin'")
    lines: int = 0
    machines: int = Field(0, description="environment reports (collect_env) in the paste; only the first is judged")
    sections: list[TriageSection] = Field(default_factory=list)
    seen: dict[str, str] = Field(default_factory=dict, description="component -> 'value (source, line N)'")
    root_cause: Optional[str] = Field(None, description="code of the finding most likely to explain the failure")
    root_cause_why: str = ""
    others: list[str] = Field(default_factory=list, description="codes of the other failing findings, in order")
    missing: list[str] = Field(default_factory=list, description="what to ask the reporter to paste")
    not_judged: list[str] = Field(default_factory=list, description="checks a paste cannot answer, with why")
    leads: list[str] = Field(default_factory=list, description="where to look next, no verdict: the fixes made after "
                                                               "the pasted release to the vllm-ascend function that "
                                                               "raised")
    # The same texts as messages (T(...)) for the console and markdown in another language; never serialised.
    _texts: dict = PrivateAttr(default_factory=dict)
    _shown: dict = PrivateAttr(default_factory=dict)  # the same, already rendered (and redacted) for the outputs

    TEXTS: ClassVar[tuple] = ("root_cause_why", "missing", "not_judged", "leads")

    def keep_texts(self, **texts) -> None:
        self._texts.update(texts)

    def text(self, name: str):
        """`name` (a str or list field) in the current language: from the kept messages when there are any."""
        from ascend_doctor.i18n import localize, split

        if name in self._shown:
            return self._shown[name]
        value = self._texts.get(name, getattr(self, name))
        if isinstance(value, list):
            return [localize(*split(v)) for v in value]
        return localize(*split(value))


class Report(Model, extra="forbid"):
    """Everything one run concluded. Renderers print it; they compute nothing."""

    schema_version: str = SCHEMA_VERSION
    tool: str = "ascend-doctor"
    tool_version: str
    command: str = Field("check", description="Which subcommand produced it: check, smoke, exec, fleet")
    host: HostSummary
    started_at: datetime
    duration_s: float
    fail_on: Severity
    findings: list[Finding]
    counts: Counts
    exit_code: int = Field(description="0 nothing at/above fail_on, 1 findings at/above it (or, with fail_on_unknown, "
                                       "an incomplete run), 2 input error, 3 internal error")
    verdict: str = Field("ok", description="ok | incomplete (no finding at/above fail_on, but checks of severity "
                                           "error or critical could not run: see `incomplete`) | not_ready")
    incomplete: list[str] = Field(default_factory=list, description="Codes of the error/critical checks that are "
                                                                    "unknown (could not look)")
    fail_on_unknown: bool = Field(False, description="--fail-on-unknown: an incomplete run exits 1")
    linted_command: Optional[list[str]] = Field(None, description="exec: the command line that was linted (redacted)")
    notes: list[str] = Field(default_factory=list, description="Run-level remarks (expired waivers, skipped probes)")
    _note_msgs: list = PrivateAttr(default_factory=list)  # the notes as messages (T(...)), for other languages

    def note_msgs(self) -> list:
        """The notes as the messages they were made from (while they still match the notes)."""
        return list(self._note_msgs) if [str(m) for m in self._note_msgs] == list(self.notes) else list(self.notes)

    def with_notes(self, notes: list) -> "Report":
        """A copy with these notes (messages kept for other languages)."""
        r = self.model_copy(update={"notes": [str(n) for n in notes]})
        r._note_msgs = list(notes)
        return r

    _notes_shown: Optional[list] = PrivateAttr(default=None)

    def note_texts(self) -> list[str]:
        """The notes in the current language."""
        from ascend_doctor.i18n import localize, split

        if self._notes_shown is not None and len(self._notes_shown) == len(self.notes):
            return list(self._notes_shown)
        return [localize(*split(n)) for n in self.note_msgs()]
    triage: Optional[TriageSummary] = Field(None, description="triage: the paste's sections and the answer's order")
    lang: str = Field("en", description="Language of this run's console/markdown outputs (en | zh). The JSON report "
                                        "itself is never translated: code, status, severity, details and the English "
                                        "message are the contract")


def finding_level(status: Status, severity: Severity) -> Optional[Severity]:
    """The weight of a finding against --fail-on: fail/error keep the severity; warn is capped at warning."""
    if status in (Status.FAIL, Status.ERROR):
        return severity
    if status == Status.WARN:
        return severity if severity.rank < Severity.WARNING.rank else Severity.WARNING
    return None


def count(findings: list[Finding]) -> Counts:
    """Counts per status; waived findings are counted under `waived` only."""
    c = Counts()
    for f in findings:
        if f.waived is not None:
            c.waived += 1
        elif f.status == Status.PASS:
            c.pass_ += 1
        else:
            setattr(c, f.status.value, getattr(c, f.status.value) + 1)
    return c


def gating(f: Finding, fail_on: Severity) -> bool:
    """This finding alone makes the exit code 1: unwaived and weighing at or above `fail_on`."""
    return f.waived is None and f.level is not None and f.level.rank >= fail_on.rank


def incomplete_codes(findings: list[Finding]) -> list[str]:
    """Checks that matter (severity error or critical) but could not look: the run is not a clean bill of health."""
    return [f.code + (f"@{f.node}" if f.node else "") for f in findings
            if f.status == Status.UNKNOWN and f.waived is None and f.severity.rank >= Severity.ERROR.rank]


def exit_code_for(findings: list[Finding], fail_on: Severity, fail_on_unknown: bool = False) -> int:
    """1 when any unwaived finding weighs at or above `fail_on` (or, with `fail_on_unknown`, when the run is
    incomplete), else 0."""
    if any(gating(f, fail_on) for f in findings):
        return 1
    return 1 if fail_on_unknown and incomplete_codes(findings) else 0


def build_report(
    *,
    tool_version: str,
    host: HostSummary,
    started_at: datetime,
    duration_s: float,
    fail_on: Severity,
    findings: list[Finding],
    command: str = "check",
    notes: Optional[list[str]] = None,
    linted_command: Optional[list[str]] = None,
    fail_on_unknown: bool = False,
) -> Report:
    """Assemble a Report and derive its counts, verdict and exit code (the only place they are computed)."""
    incomplete = incomplete_codes(findings)
    blocked = any(gating(f, fail_on) for f in findings)
    report = Report(
        tool_version=tool_version,
        command=command,
        host=host,
        started_at=started_at,
        duration_s=round(duration_s, 4),
        fail_on=fail_on,
        findings=findings,
        counts=count(findings),
        exit_code=exit_code_for(findings, fail_on, fail_on_unknown),
        verdict="not_ready" if blocked else ("incomplete" if incomplete else "ok"),
        incomplete=incomplete,
        fail_on_unknown=fail_on_unknown,
        notes=notes or [],
        linted_command=linted_command,
    )
    report._note_msgs = list(notes or [])
    return report
