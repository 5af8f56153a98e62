"""How vLLM, and vllm-ascend around it, round the capture sizes of FULL decode graphs for speculative decoding — the
`serve/spec-graphs` table (SERVE317).

With `num_speculative_tokens` n, every decode step is n + 1 tokens per request, so vLLM keeps only capture sizes that
are multiples of n + 1 (`CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`, vllm#28315). With sequence
parallelism on and TP > 1 the sizes must also be multiples of TP: vLLM takes the larger of the two and refuses when
it is not a multiple of the other (vllm#29036) — "Can't determine cudagraph shapes that are both a multiple of …".
When no size is left and n + 1 exceeds the largest one it stops with "No valid cudagraph sizes after rounding".

On Ascend, which switch turns sequence parallelism on at that moment is vllm-ascend's, and it changed from release to
release: its model runner sets `pass_config.enable_sp` to its own `enable_sp()` around the resolution
(`update_pass_config`), which read FlashComm1 (`VLLM_ASCEND_ENABLE_FLASHCOMM1`, later also `--additional-config
enable_flashcomm1`) and shared-expert DP; from 0.29.0rc1 vllm-ascend aligns the sizes to lcm(n + 1, TP) itself and
nothing is refused. Each row says, for a range of releases, the switches that count (`switches`: any one on turns it
on; "a|b": the first one given decides) — and the table leaves out the releases whose switches were not read.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Mapping, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import SpecifierSet


class VllmRounding(Model, extra="forbid"):
    vllm: str = Field(description="vLLM releases (a specifier) that round the sizes in this way")
    modes: list[str] = Field(min_length=1, description="the cudagraph_mode values whose decode graphs are rounded")
    sp_multiple: bool = Field(description="sequence parallelism with TP > 1 makes the multiple max(n + 1, TP)")
    source: list[str] = Field(min_length=1)


class AscendSp(Model, extra="forbid"):
    vllm_ascend: str = Field(description="vllm-ascend releases (a specifier)")
    switches: list[str] = Field(default_factory=list, description="what turns sequence parallelism on when the "
                                                                  "sizes are rounded: `env:NAME`, `additional:key`, "
                                                                  "`pass_config.enable_sp`; `a|b`: the first given "
                                                                  "decides")
    aligned: bool = Field(False, description="vllm-ascend aligns the sizes to lcm(n + 1, TP) itself: nothing refused")
    source: list[str] = Field(min_length=1)


class SpecGraphs(Model, extra="forbid"):
    schema_version: int
    updated: date
    rounding: list[VllmRounding] = Field(min_length=1)
    sp: list[AscendSp] = Field(min_length=1)

    def rounding_of(self, vllm: str) -> Optional[VllmRounding]:
        return next((r for r in self.rounding if SpecifierSet(r.vllm).contains(vllm)), None)

    def sp_of(self, vllm_ascend: str) -> Optional[AscendSp]:
        return next((r for r in self.sp if SpecifierSet(r.vllm_ascend).contains(vllm_ascend)), None)


def _switch(term: str, env: Mapping[str, str], additional: Mapping[str, Any],
            pass_config: Mapping[str, Any]) -> tuple[Optional[bool], Optional[str]]:
    """(on, off, or None when the switch is not given or not readable; what was seen, or None)."""
    kind, _, name = term.partition(":")
    if term == "pass_config.enable_sp":
        value = pass_config.get("enable_sp")
        return (None, None) if value is None else (value is True, f"pass_config.enable_sp={value!r}")
    if kind == "additional":
        if name not in additional:
            return None, None
        return bool(additional[name]), f"--additional-config {name}={additional[name]!r}"
    if kind == "env":
        raw = env.get(name)
        if raw is None:
            return None, None
        try:  # vllm-ascend reads these as bool(int(value))
            return bool(int(str(raw).strip())), f"{name}={raw}"
        except ValueError:
            return None, f"{name}={raw} (not an integer: vllm-ascend cannot read it)"
    raise ValueError(f"spec-graphs: unknown switch {term!r}")


def sequence_parallel(row: AscendSp, env: Mapping[str, str], additional: Optional[Mapping[str, Any]],
                      pass_config: Optional[Mapping[str, Any]]) -> tuple[Optional[bool], list[str]]:
    """(True when a switch of `row` turns sequence parallelism on, False when none does, None when one cannot be
    read; the switches seen). An unset environment variable reads as vllm-ascend's default, 0."""
    additional, pass_config = additional or {}, pass_config or {}
    on, seen, unreadable = False, [], False
    for term in row.switches:
        for alt in term.split("|"):
            value, said = _switch(alt, env, additional, pass_config)
            if said:
                seen.append(said)
            if value is None and said:
                unreadable = True
            if value is not None:
                on = on or value
                break
    return (None if unreadable and not on else on), seen


def env_on(env: Mapping[str, str], name: str) -> bool:
    """An environment switch set to a true value (1, true, yes, on)."""
    return str(env.get(name, "")).strip().lower() in ("1", "true", "yes", "on")
