"""Prometheus text exposition for node-exporter's textfile collector (`--format prometheus`, `-o FILE.prom`) (#27).

One file per run, rewritten atomically (node-exporter must never read half a file):

  ascend_doctor_ready                 1 when the run exits 0 (nothing at or above --fail-on), else 0
  ascend_doctor_exit_code             the run's exit code (0, 1; 2 and 3 write no report)
  ascend_doctor_verdict{verdict}      1 for the verdict the run reached (ok, incomplete, not_ready)
  ascend_doctor_check{code,…,status}  1 per check, its status and severity as labels, `gating` whether it alone
                                      fails the run — one series per check, so `sum by (status)` counts them
  ascend_doctor_findings{status}      how many checks ended in each status (all statuses, zeros included)
  ascend_doctor_stack_info{…}         1, the stack the run found as labels (driver, CANN, torch_npu, vLLM …)
  ascend_doctor_last_run_timestamp_seconds, ascend_doctor_run_duration_seconds

Every series carries `host` (redacted with --redact-hostname) and `command`. Label values are escaped as the format
requires (backslash, double quote, newline); messages are not exported — a metric is not a log.
"""

from __future__ import annotations

from ascend_doctor.report import Report, Status, gating

PREFIX = "ascend_doctor"


def _escape(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items() if v is not None) + "}"


def _number(value: float) -> str:
    """The exact value: an integer as one, else Python's shortest round-trip form. (`{:g}` kept 6 significant digits,
    so a Unix timestamp came out as `1.79641e+09`, up to 5,000 s off — #40 item 15.)"""
    v = float(value)
    return str(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)


def _metric(out: list[str], name: str, kind: str, help_text: str, samples: list[tuple[dict, float]]) -> None:
    out.append(f"# HELP {PREFIX}_{name} {help_text}")
    out.append(f"# TYPE {PREFIX}_{name} {kind}")
    for labels, value in samples:
        out.append(f"{PREFIX}_{name}{_labels(**labels)} {_number(value)}")


# The worst first: which finding speaks for a check that appears more than once.
_RANK = {Status.ERROR: 0, Status.FAIL: 1, Status.WARN: 2, Status.UNKNOWN: 3, Status.PASS: 4, Status.SKIP: 5}


def _one_per_check(findings) -> list:
    """One finding per (code, node), the worst of them: a report that holds a check twice (an edited or merged one,
    a paste given to triage) must not write two series with one label set — node-exporter then drops the whole
    textfile (#40 item 9), and with it the ready signal."""
    best: dict = {}
    for f in findings:
        key = (f.code, f.node)
        if key not in best or (_RANK.get(f.status, 9), f.waived is not None) < (_RANK.get(best[key].status, 9),
                                                                                  best[key].waived is not None):
            best[key] = f
    return list(best.values())


def render_prometheus(report: Report) -> str:
    base = {"host": report.host.hostname, "command": report.command}
    out: list[str] = []
    _metric(out, "ready", "gauge", "1 when the run exits 0 (nothing at or above --fail-on), else 0.",
            [(base, 1.0 if report.exit_code == 0 else 0.0)])
    _metric(out, "exit_code", "gauge", "The exit code of the run.", [(base, float(report.exit_code))])
    _metric(out, "verdict", "gauge", "1 for the verdict the run reached.",
            [({**base, "verdict": report.verdict}, 1.0)])
    checks = []
    for f in _one_per_check(report.findings):
        labels = {**base, "code": f.code, "slug": f.slug, "family": f.family, "node": f.node,
                  "status": "waived" if f.waived is not None else f.status.value, "severity": f.severity.value,
                  "gating": "true" if gating(f, report.fail_on) else "false"}
        checks.append((labels, 1.0))
    _metric(out, "check", "gauge", "1 per check run; its status, severity and whether it gates are labels.", checks)
    counts = {s.value: 0 for s in Status}
    counts["waived"] = 0
    for f in report.findings:
        counts["waived" if f.waived is not None else f.status.value] += 1
    _metric(out, "findings", "gauge", "Checks that ended in each status.",
            [({**base, "status": s}, float(n)) for s, n in counts.items()])
    stack = report.host.stack
    if stack is not None:
        info = {k: v for k, v in stack.model_dump().items() if v is not None and k != "cann_path"}
        _metric(out, "stack_info", "gauge", "The stack the run found (labels); 1.", [({**base, **info}, 1.0)])
    _metric(out, "last_run_timestamp_seconds", "gauge", "When the run started (Unix time).",
            [(base, report.started_at.timestamp())])
    _metric(out, "run_duration_seconds", "gauge", "How long the run took.", [(base, report.duration_s)])
    return "\n".join(out) + "\n"
