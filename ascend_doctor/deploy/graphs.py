"""The ACL graph stream budget (SERVE312): how many capture sizes the streams of an Ascend HDK driver before 25.5.1
hold for a model and parallel layout, and how many a `vllm serve` command asks vLLM to capture.

Why a model and not a rule: whether a command fits is the product of the model's depth, the parallel layout and the
capture list, and users meet it as `error code is 207008` several minutes into the start. vllm-ascend itself used
to do this sum and shrink the list (update_aclgraph_sizes, up to v0.20.2rc1); from v0.21.0rc1 it does not, so on an
old driver the doctor does the sum the plugin stopped doing. The numbers are data (the `serve/graph-budget` table);
the formula's shape is the plugin's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import SpecifierSet


class Budget(Model, extra="forbid"):
    vllm_ascend: str
    driver_below: str
    max_graphs: int
    comm_group_streams: int
    context_parallel_streams: int
    source: list[str]


class CaptureDefaults(Model, extra="forbid"):
    max_num_seqs: int
    max_num_batched_tokens: int
    max_capture_size: int
    ascend_ceiling: str = Field(description="the vllm-ascend releases whose default capture ceiling is "
                                            "max_num_seqs x decode query length (vLLM doubles it)")
    ceiling_captured: str = Field(description="the releases that add that ceiling itself to the capture list")
    source: list[str]


class GraphBudgetFile(Model, extra="forbid"):
    schema_version: int
    updated: date
    budget: Budget
    defaults: CaptureDefaults


@dataclass
class CaptureList:
    """The capture sizes vLLM will use (vllm/config/vllm.py `_set_cudagraph_sizes`) and where they came from."""

    sizes: list[int]
    how: str


def grid(cap: int) -> list[int]:
    """vLLM's default capture sizes up to `cap` (vllm/config/vllm.py `_set_cudagraph_sizes`): 1, 2, 4, then multiples
    of 8 below 256 and of 16 from 256. A ceiling off this grid is not one of them."""
    return [x for x in (1, 2, 4) if x <= cap] + list(range(8, min(cap + 1, 256), 8)) + list(range(256, cap + 1, 16))


def capture_list(comp: dict, max_num_seqs: Optional[int], max_batched: Optional[int], spec_tokens: int,
                 d: CaptureDefaults, version: str) -> CaptureList:
    """An explicit `cudagraph_capture_sizes` (de-duplicated, above max_num_batched_tokens dropped), else vLLM's
    default grid up to min(max_cudagraph_capture_size or the default ceiling, max_num_batched_tokens). The default
    ceiling is vLLM's max_num_seqs x (1 + speculative tokens) x 2 capped at 512, but vllm-ascend `version` sets its
    own without the x 2 from 0.18.0rc1 (`d.ascend_ceiling`, vllm-ascend#7572) and adds it to the list from 0.30.0rc1
    (`d.ceiling_captured`)."""
    tokens = max_batched or d.max_num_batched_tokens
    given = comp.get("cudagraph_capture_sizes")
    if isinstance(given, list) and given and all(isinstance(x, int) and not isinstance(x, bool) for x in given):
        sizes = sorted({x for x in given if x <= tokens})
        return CaptureList(sizes, f"cudagraph_capture_sizes in --compilation-config ({len(given)} given)")
    seqs = max_num_seqs or d.max_num_seqs
    cap = comp.get("max_cudagraph_capture_size")
    extra: list[int] = []
    if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
        how = f"max_cudagraph_capture_size {cap}"
    else:
        ascend = SpecifierSet(d.ascend_ceiling).contains(version)
        times = "" if ascend else " x 2"
        cap = min(seqs * (1 + spec_tokens) * (1 if ascend else 2), d.max_capture_size)
        who = "vllm-ascend" if ascend else "vLLM"
        how = (f"{who}'s default list up to min({seqs} sequences x {1 + spec_tokens}{times}, {d.max_capture_size})"
               + ("" if max_num_seqs else " (--max-num-seqs not given: vLLM's default)"))
        if SpecifierSet(d.ceiling_captured).contains(version):
            extra = [min(cap, tokens)]
    cap = min(cap, tokens)
    sizes = grid(cap) + extra
    if tokens <= cap:
        sizes.append(tokens)
    return CaptureList(sorted(set(sizes)), f"{how}, max_num_batched_tokens {tokens}")


@dataclass
class Layout:
    """What the budget formula reads: the model's depth and the parallel layout of one `vllm serve`."""

    layers: int
    draft_layers: int = 0          # speculative decoding with a draft model config (MTP: the checkpoint's MTP layers)
    tp: int = 1
    dp: int = 1
    expert_parallel: bool = False
    moe: bool = False
    aiv: bool = False              # HCCL_OP_EXPANSION_MODE=AIV
    overlap_shared_expert: bool = False
    pcp: int = 1
    dcp: int = 1


def budget_sizes(b: Budget, lay: Layout) -> tuple[int, str]:
    """(capture sizes the old budget holds, the sum as text) — update_aclgraph_sizes of vllm-ascend v0.20.2rc1."""
    per_graph = lay.layers + 1 + (lay.draft_layers + 1 if lay.draft_layers else 0)
    groups = int(lay.dp > 1) + int(lay.tp > 1)
    total = b.max_graphs
    if lay.aiv:
        factor = 1 + groups + int(lay.expert_parallel) + int(lay.overlap_shared_expert)
        if lay.moe:
            factor += int(lay.dp > 1)
        else:  # the dense allreduce takes its own streams under AIV
            total -= factor * per_graph
        n = max(math.floor(total / per_graph / factor), 0)
        return n, f"floor({total} / {per_graph} / {factor}) = {n} (HCCL_OP_EXPANSION_MODE=AIV)"
    total -= b.context_parallel_streams * (int(lay.pcp > 1) + int(lay.dcp > 1))
    n = max(math.floor((total - groups * b.comm_group_streams) / per_graph / (1 + groups * 2)), 0)
    parts = f"{lay.layers} layers + 1" + (f", + {lay.draft_layers + 1} for the draft" if lay.draft_layers else "")
    return n, (f"floor(({total} - {groups} x {b.comm_group_streams}) / {per_graph} / (1 + {groups} x 2)) = {n} "
               f"({per_graph} streams per graph: {parts})")


def sample(sizes: list[int], n: int) -> list[int]:
    """`n` of `sizes` spread evenly, first and last kept — the subset vllm-ascend's pruning picked."""
    if n >= len(sizes):
        return list(sizes)
    if n <= 1:
        return sizes[:1] if n == 1 else []
    step = (len(sizes) - 1) / (n - 1)
    idx = [round(i * step) for i in range(n)]
    idx[0], idx[-1] = 0, len(sizes) - 1
    return [sizes[i] for i in idx]
