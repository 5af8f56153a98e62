"""The one evaluator: checks × facts → findings, for every command (check, exec, smoke, fleet, triage, tests).

A check is a pure function of the facts it declares (`needs`), the matrix, the host policy and the run options. The
evaluator binds a context to each check that answers only the facts the check declared: asking for any other fact
raises `UndeclaredFact`, which becomes an `error` finding naming the fact (and fails the check's tests), so a check's
`needs` — what `explain` lists and what the engine starts early — is exactly what it reads.
"""

from __future__ import annotations

import time
import traceback
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable, Optional

from ascend_doctor.core.config import Config
from ascend_doctor.core.errors import FactUnavailable, ProbeCrashed, UndeclaredFact
from ascend_doctor.core.fixsteps import FixStep
from ascend_doctor.core.model import Model
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import DeclaredReads
from ascend_doctor.i18n import Localized, Msg, T, split
from ascend_doctor.report import Evidence, Finding, Severity, Status, Waiver, finding_level
from ascend_doctor.text.redact import redact_text

if TYPE_CHECKING:
    from ascend_doctor.core.registry import Check
    from ascend_doctor.facts import FactStore


class Outcome(Model):
    """What a check function returns; the evaluator adds code, title, severity, docs."""

    status: Status
    message: str
    evidence: list[Evidence] = []
    remediation: Optional[str] = None
    details: dict[str, Any] = {}
    message_template: Optional[str] = None
    message_fields: dict[str, str] = {}
    remediation_template: Optional[str] = None
    remediation_fields: dict[str, str] = {}
    cause: Optional[str] = None
    see: list[str] = []
    root_cause: bool = False
    traceback: Optional[str] = None
    value: Optional[Localized] = None
    fix: list[FixStep] = []

    @classmethod
    def make(cls, status: Status, message, evidence, remediation=None, details=None) -> "Outcome":
        """An outcome whose message/remediation may be T(...) templates (kept for translated renderings). The keys
        `cause`, `see`, `root_cause`, `traceback` and `value` of `details` become the Finding's typed fields of those
        names (what the renderers read), and `fix` (FixStep items, ascend_doctor.core.fixsteps.step) the steps the fix
        script may render; the rest stays in `details`."""
        text, template, fields = split(message)
        fix, fix_template, fix_fields = split(remediation)
        extra = dict(details or {})
        typed = {k: extra.pop(k) for k in ("cause", "see", "root_cause", "traceback", "value", "fix") if k in extra}
        for k in ("cause", "value"):
            if typed.get(k) is not None and not (k == "value" and isinstance(typed[k], Msg)):
                typed[k] = str(typed[k])
        for k in ("see", "fix"):
            if k in typed:
                typed[k] = list(typed[k] or [])
        return cls(status=status, message=text, evidence=list(evidence), remediation=fix, details=extra,
                   message_template=template, message_fields=fields, remediation_template=fix_template,
                   remediation_fields=fix_fields, **typed)


def ev(source: str, excerpt: str = "", limit: int = 1500, ok: Optional[bool] = None) -> Evidence:
    """Evidence with the excerpt trimmed to `limit` characters and secrets masked; `ok` marks a per-item line as
    fine (True) or at fault (False), so a report shows the faulty items first."""
    if len(excerpt) > limit:
        excerpt = excerpt[:limit] + f"\n… ({len(excerpt) - limit} more characters)"
    return Evidence(source=source, excerpt=masked(excerpt), ok=ok)


def masked(text: str) -> str:
    """`text` with secrets masked. The doctor's own words (a `T(...)` message: "not found", "none") stay a message
    when nothing was masked, so a renderer shows them in the run's language; what a tool printed is shown as it is."""
    out = redact_text(text)
    return text if isinstance(text, Msg) and out == text else out


class CheckContext(DeclaredReads):
    """What a check sees: its declared facts (`fact`, `try_fact`), what the doctor knows (`knowledge`: every table,
    the user's layers over it), the options, and outcome helpers."""

    def __init__(self, facts: "FactStore", options: RunOptions, needs: Optional[Iterable[str]] = None,
                 code: str = ""):
        super().__init__(facts, code, needs)
        self._facts = facts
        self.options = options

    def bind(self, c: "Check") -> "CheckContext":
        """The context one check runs in: only the facts it declared, the run's knowledge."""
        return CheckContext(self._facts, self.options, c.needs, c.code)

    @property
    def code(self) -> str:
        """The code of the check this context runs (e.g. TOOL103)."""
        return self._reader

    @property
    def knowledge(self):
        """Every table the doctor knows (ascend_doctor.knowledge.door.Knowledge), one object per run."""
        return self._facts.knowledge

    @property
    def matrix(self):
        """The compatibility matrix: `knowledge.matrix`."""
        return self._facts.knowledge.matrix

    @property
    def policy(self):
        """The host thresholds: `knowledge.policy`."""
        return self._facts.knowledge.policy

    # Outcome helpers -------------------------------------------------------------------------------------------
    @staticmethod
    def ok(message: str, evidence: Iterable[Evidence] = (), **details) -> Outcome:
        return Outcome.make(Status.PASS, message, evidence, details=details)

    @staticmethod
    def fail(message: str, evidence: Iterable[Evidence] = (), remediation: Optional[str] = None, **details) -> Outcome:
        return Outcome.make(Status.FAIL, message, evidence, remediation, details)

    @staticmethod
    def warn(message: str, evidence: Iterable[Evidence] = (), remediation: Optional[str] = None, **details) -> Outcome:
        return Outcome.make(Status.WARN, message, evidence, remediation, details)

    @staticmethod
    def unknown(message: str, evidence: Iterable[Evidence] = (), **details) -> Outcome:
        return Outcome.make(Status.UNKNOWN, message, evidence, details=details)

    @staticmethod
    def skip(message: str, evidence: Iterable[Evidence] = (), **details) -> Outcome:
        return Outcome.make(Status.SKIP, message, evidence, details=details)


def finding_from(c: "Check", outcome: Outcome, *, severity: Optional[Severity] = None,
                 duration_ms: Optional[float] = None, node: Optional[str] = None) -> Finding:
    """Turn a check's outcome into a Finding: the evaluator adds identity, severity, docs and default remediation."""
    sev = severity or c.severity
    remediation = outcome.remediation
    if remediation is None and outcome.status in (Status.FAIL, Status.WARN):
        remediation = c.section("How to fix") or None
    return Finding(
        code=c.code,
        slug=c.slug,
        title=c.title,
        family=c.family,
        status=outcome.status,
        severity=sev,
        level=finding_level(outcome.status, sev),
        message=redact_text(outcome.message),
        message_template=outcome.message_template,
        message_fields={k: redact_text(v) for k, v in outcome.message_fields.items()},
        evidence=outcome.evidence,
        remediation=redact_text(remediation) if remediation else None,
        remediation_template=outcome.remediation_template if outcome.remediation is not None else None,
        remediation_fields={k: redact_text(v) for k, v in outcome.remediation_fields.items()},
        docs=c.docs_ref,
        node=node,
        duration_ms=duration_ms,
        cause=redact_text(outcome.cause) if outcome.cause else None,
        see=list(outcome.see),
        root_cause=outcome.root_cause,
        traceback=outcome.traceback,
        value=masked(outcome.value) if outcome.value else None,
        fix=list(outcome.fix),
        details=outcome.details,
    )


def evaluate_one(c: "Check", ctx: CheckContext, strict: bool = False) -> Finding:
    """Run one check: FactUnavailable becomes `unknown`, any other exception an `error` finding with traceback.
    `strict` (tests, plugin authors) re-raises UndeclaredFact instead of reporting it."""
    t0 = time.monotonic()
    bound = ctx.bind(c)
    try:
        out = c.func(bound)
        if not isinstance(out, Outcome):
            raise TypeError(f"check returned {type(out).__name__}, not an Outcome")
    except ProbeCrashed as exc:
        out = Outcome(status=Status.ERROR, message=exc.reason, details={"missing_fact": exc.fact},
                      traceback=exc.traceback)
    except FactUnavailable as exc:
        bound.unread.setdefault(exc.fact, exc.reason)
        out = Outcome.make(Status.UNKNOWN, T("could not establish {fact}: {reason}", fact=exc.fact, reason=exc.reason),
                           [], details={"missing_fact": exc.fact, "cause": exc.reason})
    except Exception as exc:
        if strict and isinstance(exc, UndeclaredFact):
            raise
        out = Outcome.make(Status.ERROR, T("the check crashed: {error}", error=f"{type(exc).__name__}: {exc}"), [],
                           details={"traceback": traceback.format_exc()})
    finding = finding_from(c, out, duration_ms=round((time.monotonic() - t0) * 1000, 2))
    finding._unread = dict(bound.unread)
    return finding


def evaluate(checks: Iterable["Check"], facts: "FactStore", options: Optional[RunOptions] = None, *,
             node: Optional[str] = None, strict: bool = False) -> list[Finding]:
    """Evaluate `checks` in order against `facts` (a probing store or `FactStore.given`), one finding each.

    The facts every check declares are started first, so their probes run concurrently while earlier checks are
    judged. `node` labels the findings (fleet)."""
    checks = list(checks)
    options = options or facts.options
    facts.start_all(sorted({n for c in checks for n in c.needs}))
    ctx = CheckContext(facts, options)
    findings = [evaluate_one(c, ctx, strict=strict) for c in checks]
    if node is not None:
        for f in findings:
            f.node = node
    return findings


def apply_config(findings: list[Finding], config: Config, today: Optional[datetime] = None) -> list[str]:
    """Lower severities and mark waivers in place; returns run notes (e.g. expired waivers)."""
    notes: list[str] = []
    today_d = (today or datetime.now(timezone.utc)).date()
    for f in findings:
        lowered = config.severity.get(f.code)
        if lowered is not None and lowered.rank < f.severity.rank:
            f.severity = lowered
            f.level = finding_level(f.status, lowered)
        w = config.waiver_for(f.code)
        if w is None:
            continue
        if w.expires is not None and w.expires < today_d:
            notes.append(T("waiver for {code} expired on {expires} and no longer applies (reason was: {reason})",
                           code=f.code, expires=w.expires.isoformat(), reason=w.reason))
            continue
        if f.status in (Status.FAIL, Status.WARN, Status.ERROR, Status.UNKNOWN):
            f.waived = Waiver(reason=w.reason, expires=w.expires.isoformat() if w.expires else None)
    return notes
