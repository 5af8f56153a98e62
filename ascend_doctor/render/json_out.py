"""JSON renderer: the report exactly as the contract (ascend-doctor schema) describes it."""

from __future__ import annotations

from ascend_doctor.report import Report


def render_json(report: Report) -> str:
    return report.model_dump_json(indent=2, by_alias=True) + "\n"
