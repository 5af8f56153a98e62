"""One rank's memory at --gpu-memory-utilization, term by term, after vllm-ascend's NPUWorker (worker.py
`determine_available_memory`, deploy-facts.md §3a):

    requested = device total (torch_npu) × gpu_memory_utilization
    KV budget = requested − weights − peak activation (profile run) − non-torch (HCCL buffers, ACL context)

ACL graph capture runs after the KV cache is allocated, so graph memory is not in the budget: it must fit in the
`1 − gpu_memory_utilization` left over (vllm-ascend#2959: gmu 1.0 ran out of memory while capturing).

Two terms are estimates and are named so in every table: the activation peak (the profile run of
`max_num_batched_tokens` tokens: hidden states and the widest feed-forward input of one layer, plus fp32 logits of
`max_num_seqs` sampled rows) and the ACL/runtime reserve. Each term carries its inputs, so a user can recompute it.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.i18n import Localized, T, join

# ACL graph capture runs after the KV cache is allocated, in what --gpu-memory-utilization leaves (vllm-ascend#2959:
# gmu 1.0 ran out of memory while capturing); vllm-ascend logs `Graph capturing finished …, took X GiB`: 0.29 GiB for
# GLM-5 TP8 (#6847), 0.40 GiB for Qwen3-32B TP8 (#4594), 0.79 GiB for DeepSeek-V4-Flash (#13439) — the most seen.
GRAPH_HEADROOM = 1 << 30
RUNTIME_RESERVE = 1 << 30  # ACL context, driver and allocator slack per rank: an estimate (vllm-ascend measures it)
HCCL_BUFFSIZE_MB = 200  # CANN default; "each communicator occupies 2 x HCCL_BUFFSIZE" (CANN env var reference)


class Term(Model):
    name: Localized
    bytes: int
    inputs: Localized = Field(description="how it was computed, with the values used")
    estimate: bool = False


class Layout(Model):
    tp: int = 1
    dp: int = 1
    pp: int = 1
    ep: bool = False

    @property
    def ranks(self) -> int:
        return self.tp * self.dp * self.pp

    def label(self) -> str:
        parts = [f"TP{self.tp}"] + ([f"DP{self.dp}"] if self.dp > 1 else []) + ([f"PP{self.pp}"] if self.pp > 1
                                                                                 else [])
        return " ".join(parts) + (" + EP" if self.ep else "")


class Budget(Model):
    visible: Term
    gmu: float
    requested: int
    terms: list[Term]
    kv_bytes: int = Field(description="requested − the terms; negative when the weights alone do not fit")


def activation(a: Architecture, tp: int, batched_tokens: int, max_seqs: int, act_bytes: int) -> Term:
    """The profile run's peak, estimated: `batched_tokens` × (4 hidden vectors + the gate/up output of the widest
    feed-forward, split by TP) at the activation dtype, plus fp32 logits for `max_seqs` rows over the vocabulary."""
    ffn = a.intermediate if a.moe_layers < a.layers else 0
    if a.is_moe:
        ffn = max(ffn, a.experts_per_token * a.expert_intermediate + a.shared_intermediate)
    hidden = batched_tokens * (4 * a.hidden + 2 * ffn // tp) * act_bytes
    logits = max_seqs * a.vocab * 4
    return Term(name=T("activation peak"), bytes=hidden + logits, estimate=True,
                inputs=T("{tokens} tokens × (4 × hidden {hidden} + 2 × FFN {ffn} / TP {tp}) × {nbytes} B + {rows} "
                         "rows × vocab {vocab} × 4 B", tokens=batched_tokens, hidden=a.hidden, ffn=ffn, tp=tp,
                         nbytes=act_bytes, rows=max_seqs, vocab=a.vocab))


def moe_routing(a: Architecture, layout: Layout, batched_tokens: int, act_bytes: int) -> Optional[Term]:
    """The routed rows of a MoE layer without expert parallelism, which `activation` does not hold: every rank routes
    every token of the profile batch (gathered across DP first), npu_moe_init_routing expands each to top-k rows of
    hidden width, and the experts' down projection returns as many before they are combined — two [tokens × top-k,
    hidden] tensors alive at once (vllm-ascend's all-gather dispatcher, TokenDispatcherWithAllGather in
    ops/fused_moe/token_dispatcher.py of 0.11.0rc0-0.30.0rc2; `fused_experts` in ops/fused_moe.py of 0.9.x). With
    expert parallelism each rank keeps the rows of its own experts (MC2, all-to-all, or A2's all-gather limited to
    the rank's expert range): not counted, and the calibration set's EP rows need no term
    (docs/research/calibration.md)."""
    if not a.is_moe or (layout.ep and layout.tp * layout.dp > 1):
        return None
    rows = batched_tokens * layout.dp * a.experts_per_token
    return Term(name=T("MoE routed rows"), bytes=2 * rows * a.hidden * act_bytes, estimate=True,
                inputs=T("2 × {tokens} tokens × DP {dp} × top-{k} × hidden {hidden} × {nbytes} B (no expert "
                         "parallelism: each rank routes the whole batch)", tokens=batched_tokens, dp=layout.dp,
                         k=a.experts_per_token, hidden=a.hidden, nbytes=act_bytes))


def hccl(layout: Layout, buffsize_mb: int = HCCL_BUFFSIZE_MB, group_mb: Optional[int] = None) -> Optional[Term]:
    """2 × the buffer of each communicator this rank belongs to: TP, PP, the MoE (MC2) group with expert parallelism;
    the DP group gets vllm-ascend's small buffer (max(⌈(dp+1)·4 B / 1 MiB⌉, 50) MB, utils.py). `group_mb`: what the
    release gives each group itself (deploy/hccl.py `group_mb`; None: every group takes HCCL_BUFFSIZE). With it,
    TP and PP take `group_mb` whatever HCCL_BUFFSIZE says — but not with expert parallelism: there the TP group is
    still counted at HCCL_BUFFSIZE, what the calibration set's 13 DeepSeek-V3.2 logs at HCCL_BUFFSIZE=1024 fit, where
    the group options alone leave 1.2 GiB per rank unexplained (docs/research/calibration.md) — two sources that
    disagree, the larger kept."""
    ep = layout.ep and layout.tp * layout.dp > 1
    own = group_mb if group_mb and not ep else buffsize_mb
    groups = []
    if layout.tp > 1:
        groups.append(("TP", own))
    if layout.pp > 1:
        groups.append(("PP", own))
    if ep:
        groups.append(("EP/MC2", buffsize_mb))
    if layout.dp > 1:
        groups.append(("DP", 50))
    if not groups:
        return None
    total = sum(2 * mb for _g, mb in groups) * 2**20
    how = " + ".join(f"{g} 2 × {mb} MB" for g, mb in groups) + f" (HCCL_BUFFSIZE={buffsize_mb})"
    if own != buffsize_mb:
        how = join(" ", [how, T("(vllm-ascend gives each group {mb} MB itself; HCCL_BUFFSIZE sizes only the MC2 "
                                "group)", mb=own)])
    return Term(name=T("HCCL buffers"), bytes=total, inputs=how)


def default_reserve() -> Term:
    """The runtime reserve where no release rule is known (deploy/reserve.py has them): a 1 GiB estimate."""
    return Term(name=T("runtime reserve"), bytes=RUNTIME_RESERVE, estimate=True,
                inputs=T("ACL context, driver and allocator slack (1 GiB; vllm-ascend measures the real value as "
                         "non-torch memory at start-up)"))


def budget(visible: Term, gmu: float, weights: Term, act: Term, layout: Layout, buffsize_mb: int = HCCL_BUFFSIZE_MB,
           extra: Optional[list[Term]] = None, reserve: Optional[Term] = None,
           group_mb: Optional[int] = None) -> Budget:
    """`reserve`: the release's runtime-reserve term (deploy/reserve.py); without it, the 1 GiB estimate; `group_mb`:
    the HCCL buffer the release gives each group itself (deploy/hccl.py)."""
    requested = int(visible.bytes * gmu)
    terms = [weights, act]
    comm = hccl(layout, buffsize_mb, group_mb)
    if comm is not None:
        terms.append(comm)
    terms.append(reserve or default_reserve())
    terms.extend(extra or [])
    return Budget(visible=visible, gmu=gmu, requested=requested, terms=terms,
                  kv_bytes=requested - sum(t.bytes for t in terms))
