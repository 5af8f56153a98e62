"""Weights that vllm-ascend features keep whole on every rank, beyond vLLM's sharding — a bound, not a model.

Read in vllm-ascend's sources (vllm_ascend/ops/linear_op.py, utils.py, attention/mla_v1.py and sfa_v1.py):
- sequence parallelism (FlashComm1: `VLLM_ASCEND_ENABLE_FLASHCOMM1=1`, or `--compilation-config` pass_config
  `enable_sp`) leaves the shared experts unsharded (`shared_expert_dp_enabled`, 0.11.0rc2 on; from 0.26.0rc1 only
  `enable_shared_expert_dp` does) and, on a DeepSeek-sparse-attention model, turns on DSA context parallelism, whose
  `ShardedCPColumnParallelOp` builds q_b_proj and kv_b_proj with a TP world of 1 (0.13.0rc2 on; from 0.24.0rc1 with
  `enable_dsa_cp` in --additional-config);
- MLAPO (`VLLM_ASCEND_ENABLE_MLAPO=1`, later `enable_mlapo`) keeps a transformed copy of the MLA down-projections and
  of q_b beside the originals (`_process_weights_for_fused_mlapo`).
Which release does which under which switch changes often (shared-expert DP stopped following FlashComm1 in
0.26.0rc1; MLAPO drops the originals from 0.27.1rc1 unless `mlapo_keep_prefill_weights`), so the serve lint takes
the most these can add as a bound: a command that still fits with it passes, one that fits only without it warns.
vllm-ascend's nightly DeepSeek-V3.2-W8A8 runs on A3 load 4.7 GiB more per rank with FlashComm1 than without at TP8;
the bound for that model and layout is 4.9 GiB (docs/research/calibration.md).
"""

from __future__ import annotations

from typing import Mapping, Optional

from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.deploy.weights import FORMATS
from ascend_doctor.i18n import Localized, T, join
from ascend_doctor.text.switches import is_on


def features(env: Mapping[str, str], additional: Optional[dict], pass_config: Optional[dict],
             a: Architecture) -> list[str]:
    """The weight-replicating features a command turns on that apply to this model."""
    add = additional if isinstance(additional, dict) else {}
    sp = (is_on(env.get("VLLM_ASCEND_ENABLE_FLASHCOMM1"))
          or is_on(env.get("VLLM_ASCEND_ENABLE_FLASHCOMM"))
          or bool(isinstance(pass_config, dict) and pass_config.get("enable_sp") is True))
    on = []
    if a.shared_intermediate and (sp or add.get("enable_shared_expert_dp") is True):
        on.append("shared-expert-dp")
    if a.index_head_dim and (sp or add.get("enable_dsa_cp") is True):
        on.append("dsa-cp")
    if a.attention == "mla" and (is_on(env.get("VLLM_ASCEND_ENABLE_MLAPO"))
                                 or add.get("enable_mlapo") is True):
        on.append("mlapo")
    return on


def bound(a: Architecture, fmt: str, tp: int, on: list[str]) -> tuple[int, Localized]:
    """(the most bytes per rank the features `on` can add beyond vLLM's sharding at TP `tp`, the words)."""
    linear_b = FORMATS.get(fmt, FORMATS["bf16"])[0]
    unshard = 1 - 1 / tp if tp > 1 else 0.0
    attn_layers = a.full_layers + a.sliding_layers
    nope, rope = a.qk_nope_head_dim or 0, a.qk_rope_head_dim or 0
    q_b = a.q_lora_rank * a.heads * (nope + rope) if a.q_lora_rank else 0
    kv_b = (a.kv_lora_rank or 0) * a.heads * (nope + (a.v_head_dim or nope))
    down = (a.hidden * a.q_lora_rank if a.q_lora_rank else 0) + a.hidden * ((a.kv_lora_rank or 0) + rope)
    parts, total = [], 0.0
    if "shared-expert-dp" in on:
        b = a.moe_layers * 3 * a.hidden * a.shared_intermediate * linear_b * unshard
        total += b
        parts.append(T("shared experts whole on every rank ({gib} GiB)", gib=f"{b / 2**30:.2f}"))
    if "dsa-cp" in on:
        b = attn_layers * (q_b + kv_b) * linear_b * unshard
        total += b
        parts.append(T("DSA context parallel: q_b_proj and kv_b_proj whole ({gib} GiB)", gib=f"{b / 2**30:.2f}"))
    if "mlapo" in on:
        b = attn_layers * (down + q_b / tp) * linear_b
        total += b
        parts.append(T("MLAPO's copy of the MLA projections ({gib} GiB)", gib=f"{b / 2**30:.2f}"))
    return int(total), join("; ", parts)
