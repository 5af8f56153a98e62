"""The plan: which parallel layouts a model admits on the given ranks, what each leaves for the KV cache, and the one
to deploy — the fewest ranks per replica that hold the weights and `concurrency` requests of `max_model_len`.

Layout rules (each is vLLM's own or a vllm-ascend documented one):
- TP divides the attention heads (vllm `verify_with_parallel_config`: "Total number of attention heads (N) must be
  divisible by tensor parallel size (T)"); KV heads are split or replicated, so TP divides them or they divide TP.
- TP stays within one node (HCCS); across nodes the plan uses PP (or DP for MoE), as the multi-node tutorials do.
- MoE models use expert parallelism over TP×DP (`--enable-expert-parallel`), one instance over all the ranks, as every
  vllm-ascend MoE tutorial does; dense models get the fewest ranks that fit, and the rest are replicas.
- 310P (Atlas 300I Duo) runs float16 only and builds a `max_model_len²` float16 causal mask
  (vllm_ascend/_310p/attention/attention_mask.py), so its context is budgeted with that mask and always given.
"""

from __future__ import annotations

from typing import Optional, Sequence

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.deploy.budget import GRAPH_HEADROOM, Budget, Layout, Term, activation, budget, moe_routing
from ascend_doctor.deploy.chips import Chip
from ascend_doctor.deploy.dsa import DsaRange
from ascend_doctor.deploy.hccl import HcclRange, group_mb
from ascend_doctor.deploy.hybrid import PageRange
from ascend_doctor.deploy.kv import ASCEND_BLOCK, Capacity, KvSize, capacity, kv_per_token
from ascend_doctor.deploy.reserve import ReserveRange, reserve_term
from ascend_doctor.deploy.vision import ENCODER_PROFILE_NOTE
from ascend_doctor.deploy.weights import WeightSize, per_rank
from ascend_doctor.i18n import Localized, T, join


class Want(Model):
    """What the user asked for (None: the plan chooses)."""

    ranks: int = Field(gt=0, description="vLLM ranks (NPUs; dies on A3) in all")
    nodes: int = Field(1, gt=0)
    max_len: Optional[int] = Field(None, gt=0)
    concurrency: int = Field(1, gt=0, description="requests of max_len the KV cache must hold at once")
    gmu: float = Field(0.9, gt=0, le=1)
    batched_tokens: int = Field(4096, gt=0)
    max_seqs: int = Field(256, gt=0)
    hccl_buffsize_mb: int = Field(200, gt=0)
    dtype_bytes: int = 2
    kv_cache_dtype: Optional[str] = Field(None, description="--kv-cache-dtype as given (None: auto)")
    # the longest context the hardware rules allow on the chip without a measured longer one (HW-A2-001), and the
    # rule that says so: applied to the model's own context, never to a --max-model-len the user gave
    max_len_cap: Optional[int] = Field(None, gt=0)
    max_len_cap_rule: str = ""
    # the release halves the KV budget on this chip (310P from 0.18.0rc1): where it does so, for the table
    kv_halved_by: str = ""
    vllm_ascend: Optional[str] = Field(None, description="the release planned or installed: its page rule for "
                                                         "hybrid models")
    spec_tokens: int = Field(0, ge=0, description="speculative tokens per step: they widen a hybrid's conv state")
    page_rules: list[PageRange] = Field(default_factory=list, description="the deploy/hybrid-pages rows")
    dsa_rules: list[DsaRange] = Field(default_factory=list, description="the deploy/dsa-pages rows")
    reserve_rules: list[ReserveRange] = Field(default_factory=list, description="the deploy/runtime-reserve rows")
    hccl_rules: list[HcclRange] = Field(default_factory=list, description="the deploy/hccl-groups rows (none: every "
                                                                          "group takes HCCL_BUFFSIZE)")
    reserve_release: Optional[str] = Field(None, description="the release whose start-up profiling the reserve "
                                                             "follows when it is not vllm_ascend's (a development "
                                                             "build between two tags)")


class Candidate(Model):
    layout: Layout
    budget: Budget
    kv: KvSize
    capacity: Optional[Capacity] = None
    max_len: int
    fits: bool
    why: Localized = Field("", description="why it does not fit (empty when it does)")


class Plan(Model):
    verdict: str = Field("none", description="fits, shortened (a shorter context fits), unknown (the weights fit; "
                                             "the KV cache cannot be sized), or none")
    chosen: Optional[Candidate] = None
    candidates: list[Candidate] = Field(default_factory=list)
    rejected: list[Localized] = Field(default_factory=list, description="layouts vLLM would refuse, with the rule")
    notes: list[Localized] = Field(default_factory=list)
    alternatives: list[Localized] = Field(default_factory=list, description="when nothing fits: what would")
    unknown: Optional[Localized] = Field(None, description="why the KV cache cannot be sized (the plan stops at "
                                                           "weights)")


def tp_refusal(a: Architecture, tp: int) -> Optional[Localized]:
    """Why vLLM refuses this tensor-parallel size for the model (None: it accepts it). The serve lint (SERVE302)
    and the plan judge TP with this one rule."""
    if a.heads and a.heads % tp:
        return T("Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})",
                 heads=a.heads, tp=tp)
    if a.attention != "mla" and a.kv_heads and a.kv_heads % tp and tp % a.kv_heads:
        return T("{kv_heads} KV heads and tensor parallel size {tp}: neither divides the other (vLLM splits the KV "
                 "heads over TP, or replicates them when TP is a multiple)", kv_heads=a.kv_heads, tp=tp)
    return None


def admissible_tp(a: Architecture, most: int) -> list[int]:
    return [tp for tp in range(1, most + 1) if tp_refusal(a, tp) is None]


def _tp_options(a: Architecture, per_node: int) -> tuple[list[int], list[str]]:
    ok, rejected = [], []
    for tp in range(1, per_node + 1):
        if per_node % tp and tp not in (1, 2, 4, 8, 16):
            continue
        why = tp_refusal(a, tp)
        if why is not None:
            rejected.append(why)
        else:
            ok.append(tp)
    return ok, rejected


def layouts(a: Architecture, want: Want) -> tuple[list[Layout], list[str]]:
    """Every layout worth sizing, fewest ranks per replica first."""
    per_node = max(1, want.ranks // want.nodes)
    tps, rejected = _tp_options(a, per_node)
    out = []
    # Across nodes: MoE spreads DP (and EP) over them, as the multi-node tutorials do; dense models use PP.
    pps = [1] if a.is_moe else [p for p in range(1, want.nodes + 1) if want.nodes % p == 0]
    for pp in pps:
        for tp in tps:
            if tp * pp > want.ranks:
                continue
            if a.is_moe:
                dp = want.ranks // (tp * pp)
                out.append(Layout(tp=tp, dp=dp, pp=pp, ep=tp * dp > 1))
            else:
                out.append(Layout(tp=tp, pp=pp))
    out.sort(key=lambda lay: (lay.tp * lay.pp, lay.pp))
    return out, rejected


def _mask(chip: Chip, max_len: int) -> list[Term]:
    if chip.family != "310P":
        return []
    return [Term(name=T("310P causal mask"), bytes=max_len * max_len * 2,
                 inputs=T("max_model_len {max_len}² × 2 B (float16; vllm_ascend/_310p/attention/attention_mask.py)",
                          max_len=max_len))]


def size(a: Architecture, ws: WeightSize, chip: Chip, want: Want, layout: Layout, max_len: int,
         extra: Sequence[Term] = ()) -> Candidate:
    """One layout at one context length: the budget term by term and what the KV cache then holds (`extra`: terms
    the caller knows for this layout, such as the weights a feature keeps whole)."""
    vis_bytes, vis_how, vis_estimated = chip.visible()
    visible = Term(name=T("device total"), bytes=vis_bytes, inputs=vis_how, estimate=vis_estimated)
    ep = layout.tp * layout.dp if layout.ep else 1
    wbytes = per_rank(ws, a, layout.tp, layout.pp, ep)
    if layout.ep:
        shard = T("{total} B, experts / EP {ep}, the rest / TP {tp}", total=ws.total_bytes, ep=ep, tp=layout.tp)
    else:
        shard = T("{total} B / TP {tp}", total=ws.total_bytes, tp=layout.tp)
    if layout.pp > 1:
        shard = T("{shard}, layers / PP {pp}", shard=shard, pp=layout.pp)
    weights = Term(name=T("weights"), bytes=wbytes, inputs=shard, estimate=ws.estimated)
    tokens = min(want.batched_tokens, max(max_len, 1))
    act = activation(a, layout.tp, tokens, want.max_seqs, want.dtype_bytes)
    routed = moe_routing(a, layout, tokens, want.dtype_bytes)
    reserve = reserve_term(want.reserve_release or want.vllm_ascend, want.reserve_rules)
    b = budget(visible, want.gmu, weights, act, layout, want.hccl_buffsize_mb,
               extra=[*extra, *_mask(chip, max_len), *([routed] if routed else [])], reserve=reserve,
               group_mb=group_mb(want.vllm_ascend, want.hccl_rules))
    if want.kv_halved_by and b.kv_bytes > 0:  # 310P: half of what is left stays free for operator workspace
        half = b.kv_bytes - b.kv_bytes // 2
        b.terms.append(Term(name=T("operator workspace (half the rest)"), bytes=half,
                            inputs=T("{source}: the KV cache gets half of what is left", source=want.kv_halved_by)))
        b.kv_bytes -= half
    kv = kv_per_token(a, layout.tp, layout.pp, want.dtype_bytes, want.vllm_ascend, want.spec_tokens, want.page_rules,
                      kv_cache_dtype=want.kv_cache_dtype, dsa_rules=want.dsa_rules)
    if kv.unknown:  # the weights may be placed, but whether the context fits is not known: never a "fits"
        return Candidate(layout=layout, budget=b, kv=kv, max_len=max_len, fits=False,
                         why=T("the KV cache cannot be sized: {why}", why=kv.unknown) if b.kv_bytes > 0
                         else T("the weights and overheads alone exceed the budget"))
    cap = capacity(kv, max(b.kv_bytes, 0), max_len, ASCEND_BLOCK, want.batched_tokens)
    why = ""
    if b.kv_bytes <= 0:
        why = T("the weights and overheads alone exceed the budget")
    elif cap.concurrency < want.concurrency:
        why = T("the KV cache holds {tokens} tokens: {conc} request(s) of {max_len} tokens, {want} wanted",
                tokens=cap.tokens, conc=f"{cap.concurrency:.2f}", max_len=max_len, want=want.concurrency)
    return Candidate(layout=layout, budget=b, kv=kv, capacity=cap, max_len=max_len, fits=not why, why=why)


def fitting_len(a: Architecture, ws: WeightSize, chip: Chip, want: Want, layout: Layout, top: int) -> int:
    """The longest context (a multiple of the block, ≤ top) at which `layout` holds `concurrency` requests."""
    lo, hi = 0, top // ASCEND_BLOCK
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if size(a, ws, chip, want, layout, mid * ASCEND_BLOCK).fits:
            lo = mid
        else:
            hi = mid - 1
    return lo * ASCEND_BLOCK


def make_plan(a: Architecture, ws: WeightSize, chip: Chip, want: Want) -> Plan:
    """Size every admissible layout; choose the first that fits the wanted context (the model's own when none is
    given), else the first that fits a shorter one, saying how much shorter."""
    plan = Plan(unknown=join("; ", a.cannot_size) or None)
    options, plan.rejected = layouts(a, want)
    derived = a.max_len or 4096
    if a.max_len is None and not want.max_len:
        plan.notes.append(T("config.json gives no usable context length (max_position_embeddings …): planned for "
                            "{n} tokens; give --max-model-len", n=derived))
    target = want.max_len or derived
    if want.max_len and want.max_len > derived:
        plan.notes.append(T("--max-model-len {want} is above the {derived} the model config allows", want=want.max_len,
                            derived=derived))
    if want.max_len_cap and not want.max_len and target > want.max_len_cap:
        plan.notes.append(T("{family}: max_model_len capped at {cap}, below the model's {derived} ({rule})",
                            family=chip.family, cap=want.max_len_cap, derived=target, rule=want.max_len_cap_rule))
        target = want.max_len_cap
    if chip.family == "310P" and not want.max_len:
        target = min(target, 16384)
        plan.notes.append(T("310P: max_model_len capped at 16384 (the tutorials' value; its causal mask grows with "
                            "the square of the context)"))
    for lay in options:
        plan.candidates.append(size(a, ws, chip, want, lay, target))
    plan.chosen = next((c for c in plan.candidates if c.fits), None)
    plan.verdict = "fits" if plan.chosen is not None else "none"
    if plan.chosen is None and plan.unknown:
        plan.chosen = next((c for c in plan.candidates if c.budget.kv_bytes > 0), None)
        plan.verdict = "unknown" if plan.chosen is not None else "none"
    if plan.chosen is None and not plan.unknown and not want.max_len:
        for c in plan.candidates:
            if c.budget.kv_bytes > 0:
                best = fitting_len(a, ws, chip, want, c.layout, target)
                if best >= ASCEND_BLOCK:
                    plan.chosen = size(a, ws, chip, want, c.layout, best)
                    plan.verdict = "shortened"
                    plan.notes.append(T("the model's {target} tokens do not fit {want} request(s) on any layout; "
                                        "{best} do on {layout}", target=target, want=want.concurrency, best=best,
                                        layout=c.layout.label()))
                    break
    if plan.chosen is not None:
        plan.notes.extend(graph_mode_notes(a, chip, plan.chosen.layout))
        if a.vision or a.audio:
            plan.notes.append(ENCODER_PROFILE_NOTE)
        left = int(plan.chosen.budget.visible.bytes * (1 - want.gmu))
        if left < GRAPH_HEADROOM:
            plan.notes.append(T("--gpu-memory-utilization {gmu} leaves {left} per rank for the ACL graph capture that "
                                "follows the KV cache; vllm-ascend has logged up to 0.79 GiB for it: lower it, or "
                                "add --enforce-eager", gmu=f"{want.gmu:g}", left=gib(left)))
    return plan


def graph_mode_notes(a: Architecture, chip: Chip, layout: Layout) -> list[Localized]:
    """Documented graph-mode limits of the chosen layout (each sourced in its text)."""
    out: list[Localized] = []
    per_rank = a.heads // layout.tp if layout.tp else a.heads
    if a.attention == "mla" and per_rank not in (32, 64, 128):
        out.append(T("MLA with NPU graph mode on torchair-era releases needs 32, 64 or 128 heads per rank ({heads} / "
                     "TP {tp} = {n}): use --enforce-eager there (vllm-ascend FAQ; PR #933: DeepSeek-V2-Lite is not "
                     "supported in graph mode)", heads=a.heads, tp=layout.tp, n=per_rank))
    if chip.family == "310P" and layout.tp > 1:
        out.append(T("310P with TP {tp}: the ACL graphs it can capture are limited (Qwen3-32B captures 2); the "
                     "tutorials pass capture sizes [16, 32] only (vllm-ascend tutorials/hardwares/310p.md)",
                     tp=layout.tp))
    return out


def alternatives(a: Architecture, ws: WeightSize, chip: Chip, want: Want, quantized: Optional[WeightSize] = None,
                 most_ranks: int = 256) -> list[Localized]:
    """When nothing fits: the fewest ranks that would (doubling, nodes of the same size), a quantized checkpoint on
    these ranks, and the longest context that fits here (when the user fixed --max-model-len)."""
    out: list[Localized] = []
    per_node = max(1, want.ranks // want.nodes, chip.box_ranks or 0)
    ranks = want.ranks * 2
    while ranks <= most_ranks:
        more = want.model_copy(update={"ranks": ranks, "nodes": max(1, -(-ranks // per_node))})
        p = make_plan(a, ws, chip, more)
        if p.verdict in ("fits", "shortened"):
            out.append(T("{ranks} × {chip} on {nodes} node(s): {layout}, --max-model-len {max_len}", ranks=ranks,
                         chip=chip.id, nodes=more.nodes, layout=p.chosen.layout.label(), max_len=p.chosen.max_len))
            break
        ranks *= 2
    if quantized is not None:
        p = make_plan(a, quantized, chip, want)
        if p.verdict in ("fits", "shortened"):
            out.append(T("a W8A8 checkpoint ({gib}) on these {ranks} rank(s): {layout}, --max-model-len {max_len}",
                         gib=gib(quantized.total_bytes), ranks=want.ranks, layout=p.chosen.layout.label(),
                         max_len=p.chosen.max_len))
    if want.max_len:
        p = make_plan(a, ws, chip, want.model_copy(update={"max_len": None}))
        if p.verdict in ("fits", "shortened"):
            out.append(T("--max-model-len {max_len} on {layout}", max_len=p.chosen.max_len,
                         layout=p.chosen.layout.label()))
    return out


def replicas(plan: Plan, want: Want) -> int:
    """How many copies of the chosen layout the ranks hold (dense models: DP replicas or separate servers)."""
    if plan.chosen is None:
        return 0
    return max(1, want.ranks // plan.chosen.layout.ranks)


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"

