"""The engine: gather facts concurrently (each probe bounded in time), run the selected checks, build the report."""

from __future__ import annotations

import threading
import time
import traceback
from concurrent.futures import Future
from datetime import datetime, timezone
from functools import cached_property
from typing import Any, Callable, Iterable, Optional

from ascend_doctor import __version__
from ascend_doctor.config import Config
from ascend_doctor.errors import FactUnavailable, ProbeCrashed
from ascend_doctor.host import Host
from ascend_doctor.i18n import T, split
from ascend_doctor.model import Model
from ascend_doctor.options import RunOptions
from ascend_doctor.probes import load_probes
from ascend_doctor.redact import redact_text
from ascend_doctor.registry import Check, Registry
from ascend_doctor.report import (
    Evidence,
    Finding,
    HostSummary,
    Report,
    Severity,
    Status,
    Waiver,
    build_report,
    finding_level,
)


class Outcome(Model):
    """What a check function returns; the engine adds code, title, severity, docs."""

    status: Status
    message: str
    evidence: list[Evidence] = []
    remediation: Optional[str] = None
    details: dict[str, Any] = {}
    message_template: Optional[str] = None
    message_fields: dict[str, str] = {}
    remediation_template: Optional[str] = None
    remediation_fields: dict[str, str] = {}

    @classmethod
    def make(cls, status: Status, message, evidence, remediation=None, details=None) -> "Outcome":
        """An outcome whose message/remediation may be T(...) templates (kept for translated renderings)."""
        text, template, fields = split(message)
        fix, fix_template, fix_fields = split(remediation)
        return cls(status=status, message=text, evidence=list(evidence), remediation=fix, details=details or {},
                   message_template=template, message_fields=fields, remediation_template=fix_template,
                   remediation_fields=fix_fields)


def ev(source: str, excerpt: str = "", limit: int = 1500, ok: Optional[bool] = None) -> Evidence:
    """Evidence with the excerpt trimmed to `limit` characters and secrets masked; `ok` marks a per-item line as
    fine (True) or at fault (False), so a report shows the faulty items first."""
    excerpt = excerpt if len(excerpt) <= limit else excerpt[:limit] + f"\n… ({len(excerpt) - limit} more characters)"
    return Evidence(source=source, excerpt=redact_text(excerpt), ok=ok)


class FactStore:
    """Computes facts on first request, each probe in its own daemon thread, memoised, bounded by a timeout.

    Daemon threads (not a pool) so that a probe stuck in pure Python can never keep the process alive; every host
    call carries its own timeout anyway.
    """

    def __init__(self, host: Host, options: RunOptions, probes: Optional[dict[str, Callable]] = None,
                 preset: Optional[dict[str, Any]] = None):
        self.host = host
        self.options = options
        self.probes = probes if probes is not None else load_probes()
        self._futures: dict[str, Future] = {}
        self._started: dict[str, float] = {}
        self._lock = threading.Lock()
        self.durations: dict[str, float] = {}
        for name, value in (preset or {}).items():
            f: Future = Future()
            f.set_result(value)
            self._futures[name] = f
            self._started[name] = time.monotonic()

    def preset(self, name: str, value: Any) -> None:
        """Give a fact its value instead of a probe (the `vllm serve` line exec lints), unless one is running."""
        self._settle(name, lambda f: f.set_result(value))

    def preset_missing(self, name: str, reason: str) -> None:
        """Mark a fact unavailable for `reason` without running its probe (triage: the paste does not have it)."""
        self._settle(name, lambda f: f.set_exception(FactUnavailable(name, reason)))

    def _settle(self, name: str, settle: Callable[[Future], None]) -> None:
        with self._lock:
            if name not in self._futures:
                f: Future = Future()
                settle(f)
                self._futures[name] = f
                self._started[name] = time.monotonic()

    def start(self, name: str) -> Future:
        with self._lock:
            fut = self._futures.get(name)
            if fut is not None:
                return fut
            fut = Future()
            self._futures[name] = fut
            self._started[name] = time.monotonic()
        func = self.probes.get(name)
        if func is None:
            fut.set_exception(FactUnavailable(name, T("no probe provides fact {name}", name=repr(name))))
            return fut

        def work() -> None:
            t0 = time.monotonic()
            try:
                fut.set_result(func(self.host, self))
            except FactUnavailable as exc:
                fut.set_exception(exc)
            except Exception as exc:  # a probe bug: every check that needs the fact is an error, the run goes on
                fut.set_exception(ProbeCrashed(name, f"the {name} probe crashed: {type(exc).__name__}: {exc}",
                                               traceback.format_exc()))
            finally:
                self.durations[name] = round(time.monotonic() - t0, 4)

        threading.Thread(target=work, name=f"probe-{name}", daemon=True).start()
        return fut

    def start_all(self, names: Iterable[str]) -> None:
        for n in names:
            self.start(n)

    def timeout_for(self, name: str) -> float:
        """This probe's time budget: --probe-timeout, or the probe's own minimum when that is larger."""
        return max(self.options.probe_timeout, getattr(self.probes.get(name), "min_timeout", 0.0) or 0.0)

    def fact(self, name: str) -> Any:
        """The fact's value; raises FactUnavailable when its probe failed or ran out of time."""
        fut = self.start(name)
        budget = self.timeout_for(name)
        remaining = budget - (time.monotonic() - self._started[name])
        try:
            return fut.result(timeout=max(remaining, 0.0))
        except FactUnavailable:
            raise
        except Exception as exc:  # TimeoutError (3.11+) / concurrent.futures.TimeoutError (3.9, 3.10)
            if isinstance(exc, TimeoutError) or type(exc).__name__ == "TimeoutError":
                raise FactUnavailable(name,
                                      T("probe did not finish within {budget}s", budget=format(budget, "g"))) from None
            raise

    def try_fact(self, name: str) -> Any:
        """The fact, or None when unavailable. A crashed probe still raises (ProbeCrashed): a check must not
        conclude anything from a fact that is missing because of a bug."""
        try:
            return self.fact(name)
        except ProbeCrashed:
            raise
        except FactUnavailable:
            return None


class CheckContext:
    """What a check sees: facts, the matrix, the host policy, the options, and outcome helpers."""

    def __init__(self, facts: FactStore, options: RunOptions):
        self._facts = facts
        self.options = options

    def fact(self, name: str) -> Any:
        return self._facts.fact(name)

    def try_fact(self, name: str) -> Any:
        return self._facts.try_fact(name)

    @cached_property
    def policy(self):
        from ascend_doctor.policy import load_policy

        return load_policy()

    @cached_property
    def matrix(self):
        from ascend_doctor.matrix import load_matrix

        return load_matrix(self.options.matrix)

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


def finding_from(c: Check, outcome: Outcome, *, severity: Optional[Severity] = None,
                 duration_ms: Optional[float] = None, node: Optional[str] = None) -> Finding:
    """Turn a check's outcome into a Finding: the engine adds identity, severity, docs and default remediation."""
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
        details=outcome.details,
    )


def evaluate(c: Check, ctx: CheckContext) -> Finding:
    """Run one check: FactUnavailable becomes `unknown`, any other exception an `error` finding with traceback."""
    t0 = time.monotonic()
    try:
        out = c.func(ctx)
        if not isinstance(out, Outcome):
            raise TypeError(f"check returned {type(out).__name__}, not an Outcome")
    except ProbeCrashed as exc:
        out = Outcome(status=Status.ERROR, message=exc.reason,
                      details={"missing_fact": exc.fact, "traceback": exc.traceback})
    except FactUnavailable as exc:
        out = Outcome.make(Status.UNKNOWN, T("could not establish {fact}: {reason}", fact=exc.fact, reason=exc.reason),
                           [], details={"missing_fact": exc.fact, "cause": exc.reason})
    except Exception as exc:
        out = Outcome.make(Status.ERROR, T("the check crashed: {error}", error=f"{type(exc).__name__}: {exc}"), [],
                           details={"traceback": traceback.format_exc()})
    return finding_from(c, out, duration_ms=round((time.monotonic() - t0) * 1000, 2))


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


def host_summary(host: Host, redact_hostname: bool = False, facts: Optional[FactStore] = None) -> HostSummary:
    """The report header: the machine, and — from the run's facts — where it ran and the stack it found."""
    info = host.system()
    summary = HostSummary(
        hostname="<redacted>" if redact_hostname else (info.hostname or "unknown"),
        os=info.os,
        kernel=info.kernel,
        machine=info.machine,
        source=host.describe(),
    )
    if facts is not None:
        from ascend_doctor.stack import stack_of, where_of

        summary.where, summary.runtime, summary.image = where_of(facts)
        summary.stack = stack_of(facts)
    return summary


# The vendor-tool probes with the longest chains (npu-smi info, then per-NPU questions; hccn_tool per port) and the
# file probes the header needs. A full run starts them while the checks are still being loaded (`prefetch`), so the
# run waits for the slowest tool, not for the doctor's own start-up plus the tool. None depends on --python, which
# `exec` may still infer from the command line.
EARLY_FACTS = ("npu_smi", "npu_health", "hccn", "driver", "cann", "container", "devices")


def prefetch(host: Host, options: RunOptions) -> FactStore:
    """A FactStore with the EARLY_FACTS probes already running (for run_static's `facts`)."""
    store = FactStore(host, options)
    store.start_all(EARLY_FACTS)
    return store


def run_static(host: Host, registry: Registry, options: RunOptions, config: Optional[Config] = None,
               extra_findings: Iterable[Finding] = (), command: str = "check",
               linted_command: Optional[list[str]] = None, preset_facts: Optional[dict[str, Any]] = None,
               started: Optional[tuple[datetime, float]] = None, stages: tuple[str, ...] = ("static",),
               facts: Optional[FactStore] = None) -> Report:
    """Select the checks of `stages`, gather the facts they need concurrently (in `facts` when probes were started
    earlier by `prefetch`), evaluate them, build the report."""
    config = config or Config()
    started_at, t0 = started or (datetime.now(timezone.utc), time.monotonic())
    from ascend_doctor.stack import STACK_FACTS

    checks = registry.select(options.select, options.ignore, stage=stages)
    if facts is None:
        facts = FactStore(host, options)
    else:
        facts.options = options  # exec may have inferred --python since: the probes started from now on see it
    for name, value in (preset_facts or {}).items():
        facts.preset(name, value)
    facts.start_all(sorted({n for c in checks for n in c.needs} | set(STACK_FACTS)))
    ctx = CheckContext(facts, options)
    findings = [evaluate(c, ctx) for c in checks]
    findings.extend(extra_findings)
    notes = apply_config(findings, config)
    return build_report(
        tool_version=__version__,
        host=host_summary(host, options.redact_hostname, facts),
        started_at=started_at,
        duration_s=time.monotonic() - t0,
        fail_on=options.fail_on,
        findings=findings,
        command=command,
        notes=notes,
        linted_command=linted_command,
        fail_on_unknown=options.fail_on_unknown,
    )


def finalize(report: Report, extra: Iterable[Finding], config: Optional[Config] = None,
             duration_s: Optional[float] = None) -> Report:
    """A new report with `extra` findings appended (e.g. the smoke stage), counts and exit code recomputed."""
    extra = list(extra)
    notes = report.note_msgs()
    if config is not None:
        notes += apply_config(extra, config)
    return build_report(
        tool_version=report.tool_version,
        host=report.host,
        started_at=report.started_at,
        duration_s=duration_s if duration_s is not None else report.duration_s,
        fail_on=report.fail_on,
        findings=[*report.findings, *extra],
        command=report.command,
        notes=notes,
        linted_command=report.linted_command,
        fail_on_unknown=report.fail_on_unknown,
    )
