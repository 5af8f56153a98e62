"""JUnit XML renderer: one testcase per finding, classname = family, so CI dashboards group by family.

Mapping (the console and the exit code say the same thing):

  fail      <failure type="fail:SEVERITY">, whatever --fail-on says: a failed check is a failure
  warn      <failure type="warn:SEVERITY"> when it gates (--fail-on warning/info), else passes with its text in
            <system-out>, prefixed "WARNING:"
  error     <error type="check-error"> (the check or its probe crashed; traceback in the text)
  unknown   <skipped message="unknown: …">  (could not look)
  skip      <skipped message="skip: …">     (does not apply here)
  waived    <skipped message="waived: …">
  pass      passes, its message in <system-out>

Every testcase carries <properties>: status, severity and gating (true when it alone makes the exit code 1). The
suite's `failures` counts the <failure> elements, `errors` the <error> ones, `skipped` the <skipped> ones.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ascend_doctor.report import Finding, Report, Status, gating
from ascend_doctor.text.textsafe import xml_text


def _text(f: Finding) -> str:
    lines = [f.message]
    for e in f.evidence:
        lines.append(f"[{e.source}] {e.excerpt}")
    if f.remediation:
        lines.append(f"fix: {f.remediation}")
    if f.waived:
        lines.append(f"waived: {f.waived.reason}")
    return xml_text("\n".join(lines))


def _outcome(f: Finding, report: Report) -> tuple[str, dict, str]:
    """(element, attributes, text) of the testcase's outcome; element '' for a pass."""
    gates = gating(f, report.fail_on)
    if f.waived:
        return "skipped", {"message": xml_text("waived: " + f.waived.reason)}, ""
    if f.status == Status.ERROR:
        return "error", {"message": xml_text(f.message), "type": "check-error"}, \
            _text(f) + "\n" + xml_text(f.traceback or "")
    if f.status == Status.FAIL or (f.status == Status.WARN and gates):
        return "failure", {"message": xml_text(f.message), "type": f"{f.status.value}:{f.severity.value}"}, _text(f)
    if f.status in (Status.SKIP, Status.UNKNOWN):
        return "skipped", {"message": xml_text(f"{f.status.value}: {f.message}")}, ""
    return "", {}, ("WARNING: " if f.status == Status.WARN else "") + _text(f)


def render_junit(report: Report) -> str:
    outcomes = [(f, *_outcome(f, report)) for f in report.findings]
    suite = ET.Element(
        "testsuite",
        name="ascend-doctor",
        tests=str(len(report.findings)),
        failures=str(sum(1 for o in outcomes if o[1] == "failure")),
        errors=str(sum(1 for o in outcomes if o[1] == "error")),
        skipped=str(sum(1 for o in outcomes if o[1] == "skipped")),
        time=f"{report.duration_s:.3f}",
        timestamp=report.started_at.isoformat(),
        hostname=xml_text(report.host.hostname),
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (("verdict", report.verdict), ("fail_on", report.fail_on.value),
                        ("exit_code", str(report.exit_code)), ("where", report.host.where or "")):
        ET.SubElement(props, "property", name=name, value=xml_text(value))
    for f, element, attrs, text in outcomes:
        name = xml_text(f"{f.code} {f.slug}" + (f" [{f.node}]" if f.node else ""))
        tc = ET.SubElement(suite, "testcase", classname=f"ascend_doctor.{f.family}", name=name,
                           time=f"{(f.duration_ms or 0) / 1000:.3f}")
        tprops = ET.SubElement(tc, "properties")
        for pname, value in (("status", f.status.value), ("severity", f.severity.value),
                             ("gating", "true" if gating(f, report.fail_on) else "false")):
            ET.SubElement(tprops, "property", name=pname, value=value)
        if element:
            el = ET.SubElement(tc, element, **attrs)
            if text:
                el.text = text
        else:
            ET.SubElement(tc, "system-out").text = text
    ET.indent(suite) if hasattr(ET, "indent") else None
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
