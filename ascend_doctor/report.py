"""The report contract: the one object every renderer (console, JSON, JUnit, GitHub) prints.

Versioned with `schema_version`; bump the major part on any change a CI consumer could trip over.
`ascend-doctor schema` prints the JSON Schema of `Report`.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, Optional

from ascend_doctor.records import Field, Record

SCHEMA_VERSION = "1.0"


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


class Evidence(Record, extra="forbid"):
    """What was seen and where: a command, a file, an env var, an HTTP exchange."""

    source: str = Field(description="Where it was seen: 'cmd: npu-smi info', 'file: /etc/...', 'env: VAR', 'http: POST /v1/...'")
    excerpt: str = Field("", description="The relevant part of what was seen (trimmed, secrets redacted)")


class Waiver(Record, extra="forbid"):
    reason: str
    expires: Optional[str] = None


class Finding(Record, extra="forbid"):
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
    evidence: list[Evidence] = Field(default_factory=list)
    remediation: Optional[str] = None
    docs: str = Field("", description="Where the check's full doc is: `ascend-doctor explain CODE`")
    node: Optional[str] = Field(None, description="Fleet runs: which node this finding is about")
    waived: Optional[Waiver] = None
    duration_ms: Optional[float] = None
    details: dict[str, Any] = Field(default_factory=dict, description="Machine-readable extras (traceback, metrics)")


class HostSummary(Record, extra="forbid"):
    hostname: str = Field(description="May be '<redacted>' with --redact-hostname")
    os: str = ""
    kernel: str = ""
    machine: str = ""
    source: str = Field("local", description="'local', or 'replay:<snapshot path>'")


class Counts(Record, extra="forbid"):
    pass_: int = Field(0, alias="pass")
    warn: int = 0
    fail: int = 0
    skip: int = 0
    unknown: int = 0
    error: int = 0
    waived: int = 0


class Report(Record, extra="forbid"):
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
    exit_code: int = Field(description="0 nothing at/above fail_on, 1 findings at/above it, 2 input error, 3 internal error")
    linted_command: Optional[list[str]] = Field(None, description="exec: the command line that was linted (redacted)")
    notes: list[str] = Field(default_factory=list, description="Run-level remarks (expired waivers, skipped probes)")


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


def exit_code_for(findings: list[Finding], fail_on: Severity) -> int:
    """1 when any unwaived finding weighs at or above `fail_on`, else 0."""
    for f in findings:
        if f.waived is None and f.level is not None and f.level.rank >= fail_on.rank:
            return 1
    return 0


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
) -> Report:
    """Assemble a Report and derive its counts and exit code (the only place they are computed)."""
    return Report(
        tool_version=tool_version,
        command=command,
        host=host,
        started_at=started_at,
        duration_s=round(duration_s, 4),
        fail_on=fail_on,
        findings=findings,
        counts=count(findings),
        exit_code=exit_code_for(findings, fail_on),
        notes=notes or [],
        linted_command=linted_command,
    )
