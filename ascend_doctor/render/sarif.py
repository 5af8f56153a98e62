"""SARIF 2.1.0 renderer (GitHub code scanning and other SARIF consumers): one rule per check, one result per finding.

Mapping (SARIF 2.1.0 §3.27.9: a result whose `kind` is not `fail` has `level: none`):

  finding status   kind            level
  fail, error      fail            error (severity critical/error) · warning (warning) · note (info)
  warn             fail            warning (note for info-severity checks)
  unknown          open            none   — the doctor could not look: neither pass nor fail
  skip             notApplicable   none
  pass             pass            none

A waived finding carries a `suppressions` entry with the waiver's reason. Rules come from the checks' docs (what
`ascend-doctor explain CODE` prints): title, what it checks, why it matters, how to fix. A host finding has no source
line, so each result points at the artifact the run judged — the snapshot file for a replay, else the config file or
`ascend-doctor.toml` — and names the check and node as its logical location.
"""

from __future__ import annotations

from typing import Any, Optional

from ascend_doctor import __version__
from ascend_doctor.report import Finding, Report, Severity, Status
from ascend_doctor.text.textsafe import dump_json

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_KIND = {Status.FAIL: "fail", Status.ERROR: "fail", Status.WARN: "fail", Status.UNKNOWN: "open",
         Status.SKIP: "notApplicable", Status.PASS: "pass"}
_LEVEL = {Severity.CRITICAL: "error", Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _level(f: Finding) -> str:
    if _KIND[f.status] != "fail":
        return "none"
    if f.status == Status.WARN:
        return "note" if f.severity == Severity.INFO else "warning"
    return _LEVEL[f.severity]


def _rule(f: Finding, checks: dict[str, Any]) -> dict:
    c = checks.get(f.code)
    doc_body = c.doc.strip().split("\n", 1)[1].strip() if c is not None and "\n" in c.doc.strip() else ""
    fix = (c.section("How to fix") if c is not None else "") or (f.remediation or "")
    rule: dict[str, Any] = {
        "id": f.code,
        "name": f.slug,
        "shortDescription": {"text": f.title},
        "fullDescription": {"text": doc_body or f.title},
        "help": {"text": f"{fix}\n\n(`{f.docs or 'ascend-doctor explain ' + f.code}` prints the whole doc)".strip()},
        "defaultConfiguration": {"level": _LEVEL[c.severity if c is not None else f.severity]},
        "properties": {"family": f.family, "severity": (c.severity if c is not None else f.severity).value,
                       "tags": ["ascend", f.family.lower()]},
    }
    return rule


def _artifact(report: Report) -> str:
    src = report.host.source
    if src.startswith("replay:"):
        return src[len("replay:"):]
    return "ascend-doctor.toml"


def _result(f: Finding, index: int, artifact: str, report: Report) -> dict:
    text = f.message
    if f.evidence:
        text += "\n" + "\n".join(f"seen: {e.source}: {e.excerpt}" for e in f.evidence[:6])
    if f.remediation and f.status in (Status.FAIL, Status.WARN):
        text += f"\nfix: {f.remediation}"
    where = "/".join(x for x in (report.host.hostname, f.node, f.family, f.code) if x)
    result: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index,
        "kind": _KIND[f.status],
        "level": _level(f),
        "message": {"text": text},
        "locations": [{
            "physicalLocation": {"artifactLocation": {"uri": artifact}},
            "logicalLocations": [{"fullyQualifiedName": where, "kind": "module"}],
        }],
        "properties": {"status": f.status.value, "severity": f.severity.value,
                       "gating": bool(f.level is not None and f.level.rank >= report.fail_on.rank and not f.waived)},
    }
    if f.node:
        result["properties"]["node"] = f.node
    if f.waived:
        result["suppressions"] = [{"kind": "external", "justification": f.waived.reason}]
    return result


def render_sarif(report: Report, checks: Optional[dict[str, Any]] = None) -> str:
    """SARIF 2.1.0 of `report`; each rule's description comes from `checks` (the run's checks by code, given by the
    command), else from the findings' own title and remediation."""
    checks = checks or {}
    rules: list[dict] = []
    index: dict[str, int] = {}
    for f in report.findings:
        if f.code not in index:
            index[f.code] = len(rules)
            rules.append(_rule(f, checks))
    artifact = _artifact(report)
    run = {
        "tool": {"driver": {"name": "ascend-doctor", "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "invocations": [{"executionSuccessful": report.exit_code in (0, 1), "exitCode": report.exit_code,
                         "startTimeUtc": report.started_at.isoformat().replace("+00:00", "Z"),
                         "commandLine": f"ascend-doctor {report.command}"}],
        "artifacts": [{"location": {"uri": artifact}}],
        "results": [_result(f, index[f.code], artifact, report) for f in report.findings],
        "properties": {"verdict": report.verdict, "fail_on": report.fail_on.value, "hostname": report.host.hostname,
                       "where": report.host.where, "incomplete": report.incomplete},
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return dump_json(doc) + "\n"
