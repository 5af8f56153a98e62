"""JSON renderer: the report exactly as the contract (ascend-doctor schema) describes it."""

from __future__ import annotations

from ascend_doctor.report import Report
from ascend_doctor.text.textsafe import dump_json


def render_json(report: Report) -> str:
    return dump_json(report.model_dump(mode="json", by_alias=True)) + "\n"
