"""vLLM's LoRA limits (the `serve/lora` table), judged by SERVE310."""

from __future__ import annotations

from datetime import date

from pydantic import Field

from ascend_doctor.core.model import Model


class LoraRules(Model, extra="forbid"):
    """vLLM's accepted --max-lora-rank values and defaults, with sources."""

    schema_version: int
    updated: date
    max_lora_ranks: list[int] = Field(min_length=1)
    default_max_lora_rank: int
    default_max_loras: int
    source: list[str] = Field(min_length=1)
