"""The engine of `check` and `exec`: start the probes early, evaluate the selected checks, build the report.

Facts live in `ascend_doctor.facts`, the evaluation of checks in `ascend_doctor.core.evaluator` (shared by every
command); this module only composes them into a Report for one host."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Iterable, Optional

from ascend_doctor import __version__
from ascend_doctor.core.config import Config
from ascend_doctor.core.evaluator import apply_config, evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import Registry
from ascend_doctor.facts import FactStore
from ascend_doctor.report import Finding, HostSummary, Report, build_report
from ascend_doctor.seam.host import Host


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
        from ascend_doctor.facts.stack import python_of, stack_of, where_of

        summary.where, summary.runtime, summary.image = where_of(facts)
        summary.stack = stack_of(facts)
        summary.python, summary.python_how, summary.python_detail = python_of(facts)
    return summary


# The vendor-tool probes with the longest chains (npu-smi info, then per-NPU questions; hccn_tool per port) and the
# file probes the header needs. A full run starts them while the checks are still being loaded (`prefetch`), so the
# run waits for the slowest tool, not for the doctor's own start-up plus the tool. The options are complete by then
# (exec's command line included), so these may read any fact.
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
    from ascend_doctor.facts.stack import STACK_FACTS

    checks = registry.select(options.select, options.ignore, stage=stages)
    if facts is None:
        facts = FactStore(host, options)
    for name, value in (preset_facts or {}).items():
        facts.preset(name, value)
    facts.start_all(sorted({n for c in checks for n in c.needs} | set(STACK_FACTS)))
    findings = evaluate(checks, facts, options)
    findings.extend(extra_findings)
    notes = apply_config(findings, config)
    reap = getattr(host, "reap_strays", None)  # LocalHost: what the probes left outside their process groups
    if reap is not None:
        notes.extend(reap())
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
