"""vllm-ascend's sequence parallelism (FlashComm1) per release, and how vLLM rounds the capture sizes of FULL decode
graphs for speculative decoding around it — the `serve/sequence-parallel` table (SERVE317, SERVE318).

Which switch turns vllm-ascend's sequence parallelism on changed from release to release: `enable_sp()` read
`VLLM_ASCEND_ENABLE_FLASHCOMM1` (and the older `VLLM_ASCEND_ENABLE_FLASHCOMM`), `pass_config.enable_sp` in the
0.13-0.14 lines, `--additional-config enable_flashcomm1` from 0.20.2rc1 (given, it decides over the variable), and
shared-expert DP until 0.26.0rc1. Each `sp` row says, for a range of releases, the switches that count (`switches`:
any one on turns it on; "a|b": the first one given decides), what the release refuses when it is on (`refuses`:
TP 1, or a MoE model without expert parallelism — "Flash Comm v1 is only supported when tp_size > 1"), whether its
model runner makes the decode graph sizes follow it (`graph_sizes`: `update_pass_config` sets `pass_config.enable_sp`
to it around vLLM's rounding), or that it aligns those sizes itself (`aligned`, 0.29.0rc1 on). Releases no row
covers are not judged.

vLLM's side (`rounding` rows): with `num_speculative_tokens` n every decode step is n + 1 tokens per request, so vLLM
keeps only capture sizes that are multiples of n + 1 (`CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`,
vllm#28315); with sequence parallelism and TP > 1 it takes the larger of n + 1 and TP and refuses when that is not
a multiple of the other (vllm#29036); when n + 1 exceeds the largest size allowed it stops with "No valid cudagraph
sizes after rounding".
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal, Mapping, Optional

from pydantic import Field

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.text.textsafe import clipped
from ascend_doctor.text.versions import SpecifierSet


class VllmRounding(Model, extra="forbid"):
    vllm: str = Field(description="vLLM releases (a specifier) that round the sizes in this way")
    modes: list[str] = Field(min_length=1, description="the cudagraph_mode values whose decode graphs are rounded")
    sp_multiple: bool = Field(description="sequence parallelism with TP > 1 makes the multiple max(n + 1, TP)")
    source: list[str] = Field(min_length=1)


class AscendSp(Model, extra="forbid"):
    vllm_ascend: str = Field(description="vllm-ascend releases (a specifier)")
    switches: list[str] = Field(default_factory=list, description="what turns sequence parallelism on: "
                                                                  "`env:NAME`, `additional:key`, "
                                                                  "`pass_config.enable_sp`; `a|b`: the first given "
                                                                  "decides; `…?ep_tp`: only with "
                                                                  "--enable-expert-parallel and TP > 1")
    refuses: list[Literal["tp1", "moe_without_ep", "vl_model"]] = Field(
        default_factory=list, description="what the release refuses at start when it is on: TP 1, a MoE model "
                                          "without expert parallelism, a VL model (vision_config or thinker_config)")
    graph_sizes: bool = Field(True, description="the model runner applies it to vLLM's decode graph rounding")
    aligned: bool = Field(False, description="vllm-ascend aligns the sizes to lcm(n + 1, TP) itself: nothing refused")
    source: list[str] = Field(min_length=1)


class SequenceParallel(Model, extra="forbid"):
    schema_version: int
    updated: date
    rounding: list[VllmRounding] = Field(min_length=1)
    sp: list[AscendSp] = Field(min_length=1)

    def rounding_of(self, vllm: str) -> Optional[VllmRounding]:
        return next((r for r in self.rounding if SpecifierSet(r.vllm).contains(vllm)), None)

    def sp_of(self, vllm_ascend: str) -> Optional[AscendSp]:
        return next((r for r in self.sp if SpecifierSet(r.vllm_ascend).contains(vllm_ascend)), None)


EP_TP = "ep_tp"  # a switch's condition: vllm-ascend reads it only with expert parallelism and TP > 1


def read_switch(term: str, env: Mapping[str, str], additional: Mapping[str, Any],
            pass_config: Mapping[str, Any], layout: Optional[tuple[bool, int]] = None
            ) -> tuple[Optional[bool], Optional[str]]:
    """(on, off, or None when the switch is not given or not readable; what was seen, or None). `layout` is
    (--enable-expert-parallel given, TP size), None when not known: a switch conditioned on it then counts as given.
    """
    term, _, cond = term.partition("?")
    if cond:
        value, said = read_switch(term, env, additional, pass_config)
        if cond != EP_TP:
            raise ValueError(f"sequence-parallel: unknown switch condition {cond!r}")
        if value and layout is not None and not (layout[0] and layout[1] > 1):
            # vllm-ascend 0.13.0-0.25.x: `enable_shared_expert_dp = additional_config.get(...) and
            # enable_expert_parallel and tensor_parallel_size > 1` — without them the key does nothing
            return False, T("{said} (no effect without --enable-expert-parallel and TP > 1)", said=said)
        return value, said
    kind, _, name = term.partition(":")
    if term == "pass_config.enable_sp":
        value = pass_config.get("enable_sp")
        return (None, None) if value is None else (value is True, f"pass_config.enable_sp={clipped(repr(value))}")
    if kind == "additional":
        if name not in additional:
            return None, None
        return bool(additional[name]), f"--additional-config {name}={clipped(repr(additional[name]))}"
    if kind == "env":
        raw = env.get(name)
        if raw is None:
            return None, None
        try:  # vllm-ascend reads these as bool(int(value))
            return bool(int(str(raw).strip())), f"{name}={clipped(str(raw))}"
        except ValueError:
            return None, f"{name}={clipped(str(raw))} (not an integer: vllm-ascend cannot read it)"
    raise ValueError(f"sequence-parallel: unknown switch {term!r}")


def sequence_parallel(row: AscendSp, env: Mapping[str, str], additional: Optional[Mapping[str, Any]],
                      pass_config: Optional[Mapping[str, Any]], layout: Optional[tuple[bool, int]] = None
                      ) -> tuple[Optional[bool], list[str]]:
    """(True when a switch of `row` turns sequence parallelism on, False when none does, None when one cannot be
    read; the switches seen, the ones that turned it on first). An unset environment variable reads as
    vllm-ascend's default, 0. `layout`: (--enable-expert-parallel given, TP size) for the conditioned switches."""
    additional = additional if isinstance(additional, Mapping) else {}
    pass_config = pass_config if isinstance(pass_config, Mapping) else {}
    on, seen, unreadable = False, [], False
    unshown: Optional[FactUnavailable] = None
    for term in row.switches:
        for alt in term.split("|"):
            try:
                value, said = read_switch(alt, env, additional, pass_config, layout)
            except FactUnavailable as exc:  # a variable a paste does not show: known to be on only by another switch
                value, said, unshown = None, "", exc
                unreadable = True
                continue
            if value is None and said:
                unreadable = True
            if value is not None:
                on = on or value
                seen.insert(0, said) if value else seen.append(said)
                break
            if said:
                seen.append(said)
    if unshown is not None and not on:
        raise unshown  # nothing turned it on and a switch was not shown: not known, as the variable's own reason
    return (None if unreadable and not on else on), seen


def has_experts(config: Any, budget: int = 100_000) -> bool:
    """vllm-ascend's `is_moe_model`: any key of the text config, at any depth, naming experts (`_is_contain_expert`,
    vllm_ascend/utils.py) — read here on config.json as written, without recursion and over at most `budget` keys
    (a config.json nested a thousand deep, or of a million keys, is still an answer, not a crash)."""
    stack = [config]
    while stack and budget > 0:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for k, v in node.items():
            budget -= 1
            if "expert" in str(k):
                return True
            if isinstance(v, Mapping):
                stack.append(v)
    return False

