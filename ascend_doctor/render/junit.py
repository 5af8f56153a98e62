"""JUnit XML renderer: one testcase per finding, classname = family, so CI dashboards group by family."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ascend_doctor.report import Report, Status
from ascend_doctor.textsafe import xml_text


def _text(f) -> str:
    lines = [f.message]
    for e in f.evidence:
        lines.append(f"[{e.source}] {e.excerpt}")
    if f.remediation:
        lines.append(f"fix: {f.remediation}")
    if f.waived:
        lines.append(f"waived: {f.waived.reason}")
    return xml_text("\n".join(lines))


def render_junit(report: Report) -> str:
    c = report.counts
    suite = ET.Element(
        "testsuite",
        name="ascend-doctor",
        tests=str(len(report.findings)),
        failures=str(sum(1 for f in report.findings if f.status in (Status.FAIL, Status.WARN) and not f.waived
                         and f.level is not None and f.level.rank >= report.fail_on.rank)),
        errors=str(c.error),
        skipped=str(c.skip + c.unknown + c.waived),
        time=f"{report.duration_s:.3f}",
        timestamp=report.started_at.isoformat(),
        hostname=xml_text(report.host.hostname),
    )
    for f in report.findings:
        name = xml_text(f"{f.code} {f.slug}" + (f" [{f.node}]" if f.node else ""))
        tc = ET.SubElement(suite, "testcase", classname=f"ascend_doctor.{f.family}", name=name,
                           time=f"{(f.duration_ms or 0) / 1000:.3f}")
        gating = f.level is not None and f.level.rank >= report.fail_on.rank and not f.waived
        if f.status == Status.ERROR and not f.waived:
            el = ET.SubElement(tc, "error", message=xml_text(f.message), type="check-error")
            el.text = _text(f) + "\n" + xml_text(str(f.details.get("traceback", "")))
        elif f.status in (Status.FAIL, Status.WARN) and gating:
            el = ET.SubElement(tc, "failure", message=xml_text(f.message), type=f"{f.status.value}:{f.severity.value}")
            el.text = _text(f)
        elif f.status in (Status.SKIP, Status.UNKNOWN) or f.waived:
            el = ET.SubElement(tc, "skipped", message=xml_text(("waived: " + f.waived.reason) if f.waived else f.message))
        else:
            out = ET.SubElement(tc, "system-out")
            out.text = _text(f)
    ET.indent(suite) if hasattr(ET, "indent") else None
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
