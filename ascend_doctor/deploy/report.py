"""The plan as a document: what `plan --format json` writes and `ascend-doctor schema --plan` describes. English texts
(the JSON contract, as for the check report); the console and markdown views render the same object in the user's
language."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.deploy.chips import Chip
from ascend_doctor.deploy.command import ServePlan
from ascend_doctor.deploy.plan import Plan, Want
from ascend_doctor.deploy.release import ReleaseChoice
from ascend_doctor.deploy.template import TemplateFacts
from ascend_doctor.deploy.weights import WeightSize

PLAN_SCHEMA_VERSION = 1


class PlannedModel(Model):
    path: str = Field(description="what `vllm serve` is given: the directory or the checkpoint's repository id")
    name: str = Field(description="the model's name (catalogue id or directory)")
    architecture: Architecture
    weights: WeightSize
    weight_format: Optional[str] = None


class PlanReport(Model):
    schema_version: int = PLAN_SCHEMA_VERSION
    tool_version: str
    model: PlannedModel
    chip: Chip
    want: Want
    plan: Plan
    replicas: int = Field(0, description="copies of the chosen layout the ranks hold")
    serve: Optional[ServePlan] = None
    release: Optional[ReleaseChoice] = None
    template: Optional[TemplateFacts] = None
    exit_code: int = Field(description="0 a layout fits (or a shortened context does); 1 none does, or unknown")
