"""Weights that vllm-ascend features keep whole on every rank, beyond vLLM's sharding: per release where it was read,
a bound where it was not.

Read in vllm-ascend's sources (vllm_ascend/ops/linear_op.py, utils.py, attention/mla_v1.py and sfa_v1.py):
- sequence parallelism (FlashComm1: `VLLM_ASCEND_ENABLE_FLASHCOMM1=1`, or `--compilation-config` pass_config
  `enable_sp`) leaves the shared experts unsharded (`shared_expert_dp_enabled`, 0.11.0rc1 on; from 0.26.0rc1 only
  `enable_shared_expert_dp` does) and, on a DeepSeek-sparse-attention model, turns on DSA context parallelism, whose
  `ShardedCPColumnParallelOp` builds q_b_proj and kv_b_proj with a TP world of 1 (0.13.0rc2 on; from 0.20.2rc1 only
  with `enable_dsa_cp` in --additional-config as well);
- MLAPO (`VLLM_ASCEND_ENABLE_MLAPO=1`, later `enable_mlapo`) keeps a transformed copy of the MLA down-projections and
  of q_b beside the originals (`_process_weights_for_fused_mlapo`); on a DSA layer it is off under DSA context
  parallelism and for anything but W8A8.

Where the `deploy/replication` rows cover the installed release for every feature the command turns on, `kept_whole`
gives the bytes (SERVE305 budgets them like the weights); elsewhere `bound` gives the most the features can add, so a
command that fits only without it warns. The rows were checked against vllm-ascend's nightly DeepSeek-V3.2-W8A8 logs
on A3: 4.7 GiB more per rank with FlashComm1 at TP8, the rows' 5.83 GiB against MLAPO's 1.15 GiB without it
(docs/research/calibration.md).
"""

from __future__ import annotations

from datetime import date
from typing import Literal, Mapping, Optional, Sequence

from pydantic import Field, field_validator

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import Architecture
from ascend_doctor.deploy.hybrid import ReleaseRange, release_range
from ascend_doctor.deploy.weights import FORMATS
from ascend_doctor.i18n import Localized, T, join
from ascend_doctor.text.switches import is_on

SWITCHES = ("flashcomm1", "sp-pass", "enable_shared_expert_dp", "mlapo-env")  # what `switches` reads


class ReplicationRange(ReleaseRange):
    """One row of the `deploy/replication` table: how a range of releases keeps one feature's weights whole."""

    id: str
    feature: Literal["shared-expert-dp", "dsa-cp", "mlapo-dsa"]
    when: list[str] = Field(description="switch sets that turn the feature on, any of them; '+' joins switches "
                                        "that must all be on")
    off_with: list[str] = Field(default_factory=list, description="features that turn this one off")
    unsure: list[str] = Field(default_factory=list, description="switches whose effect on the feature in this range "
                                                                "was not read to the end: set, the feature is bounded")
    dtype: str = Field("", description="the only weight format the feature runs on (empty: any)")

    @field_validator("when", "unsure")
    @classmethod
    def _known_switches(cls, value: list[str]) -> list[str]:
        for alt in value:
            unknown = [s for s in alt.split("+") if s not in SWITCHES]
            if unknown:
                raise ValueError(f"unknown switch {', '.join(unknown)} (known: {', '.join(SWITCHES)})")
        return value


class ReplicationRules(Model, extra="forbid"):
    schema_version: int
    updated: date
    range: list[ReplicationRange]


class KeptWhole(Model):
    """What the features on keep whole per rank, as the release does it."""

    bytes: int
    features: list[str]
    words: Localized


def switches(env: Mapping[str, str], additional: Optional[dict], pass_config: Optional[dict]) -> set[str]:
    """The switches of the `deploy/replication` rows a command sets (its environment, --additional-config,
    --compilation-config pass_config)."""
    add = additional if isinstance(additional, dict) else {}
    on = set()
    if is_on(env.get("VLLM_ASCEND_ENABLE_FLASHCOMM1")) or is_on(env.get("VLLM_ASCEND_ENABLE_FLASHCOMM")):
        on.add("flashcomm1")
    if isinstance(pass_config, dict) and pass_config.get("enable_sp") is True:
        on.add("sp-pass")
    if add.get("enable_shared_expert_dp") is True:
        on.add("enable_shared_expert_dp")
    if is_on(env.get("VLLM_ASCEND_ENABLE_MLAPO")):
        on.add("mlapo-env")
    return on


def features(env: Mapping[str, str], additional: Optional[dict], pass_config: Optional[dict],
             a: Architecture) -> list[str]:
    """The weight-replicating features a command may turn on for this model, whatever the release (for the bound)."""
    add = additional if isinstance(additional, dict) else {}
    sp = bool({"flashcomm1", "sp-pass"} & switches(env, additional, pass_config))
    on = []
    if a.shared_intermediate and (sp or add.get("enable_shared_expert_dp") is True):
        on.append("shared-expert-dp")
    if a.index_head_dim and (sp or add.get("enable_dsa_cp") is True):
        on.append("dsa-cp")
    if a.attention == "mla" and (is_on(env.get("VLLM_ASCEND_ENABLE_MLAPO")) or add.get("enable_mlapo") is True):
        on.append("mlapo")
    return on


_FAMILY = {"shared-expert-dp": "shared-expert-dp", "dsa-cp": "dsa-cp", "mlapo": "mlapo-dsa"}  # features -> rows


def _applies(feature: str, a: Architecture) -> bool:
    if feature == "shared-expert-dp":
        return bool(a.shared_intermediate)
    return bool(a.index_head_dim) and a.attention == "mla"  # dsa-cp, mlapo-dsa: DSA layers


def kept_whole(a: Architecture, fmt: str, tp: int, command: tuple[Mapping[str, str], Optional[dict], Optional[dict]],
               release: Optional[str], rules: Sequence[ReplicationRange],
               kv_role: Optional[str] = None) -> Optional[KeptWhole]:
    """The bytes per rank the features on keep whole beyond vLLM's sharding, as `release` does it, for a command's
    (environment, --additional-config, pass_config); None when a feature the command may turn on (`features`) is not
    covered for that release by the rows (then bound it). Not modelled either: MLAPO on a KV consumer (`kv_role`
    kv_consumer or kv_both: it drops the originals there) and DSA context parallelism on a KV producer with
    `layer_sharding` (q_b_proj and o_proj then spread over the layers: utils.py enable_dsa_cp_with_layer_shard)."""
    sw = switches(*command)
    may = features(*command, a)
    if any(not any(r.feature == _FAMILY[f] and _applies(r.feature, a) for r in rules) for f in may):
        return None  # e.g. MLAPO on an MLA model without DSA: no row read
    by_feature: dict[str, list[ReplicationRange]] = {}
    for r in rules:
        by_feature.setdefault(r.feature, []).append(r)
    on = []
    for feature, rows in by_feature.items():
        if not _applies(feature, a):
            continue
        row, found = release_range(rows, release)
        if found != "in":
            if any(all(s in sw for s in alt.split("+")) for r in rows for alt in r.when):
                return None  # the switch is set, but this release's behaviour was not read
            continue
        if sw.intersection(row.unsure):
            return None
        if any(all(s in sw for s in alt.split("+")) for alt in row.when) and (not row.dtype or row.dtype == fmt):
            on.append(row)
    names = {r.feature for r in on}
    on = [r for r in on if not names.intersection(r.off_with)]
    names = {r.feature for r in on}
    consumer, producer = kv_role in ("kv_consumer", "kv_both"), kv_role in ("kv_producer", "kv_both")
    sharded = isinstance(command[1], dict) and bool(command[1].get("layer_sharding"))
    if (consumer and "mlapo-dsa" in names) or (producer and sharded and "dsa-cp" in names):
        return None
    if not on:
        return KeptWhole(bytes=0, features=[], words="")
    total, parts = 0, []
    for r in on:
        b, words = _bytes(a, fmt, tp, r.feature)
        total += b
        parts.append(T("{words} (vllm-ascend {release}: {source})", words=words, release=release, source=r.source))
    return KeptWhole(bytes=int(total), features=[r.feature for r in on], words=join("; ", parts))


def _mla_shapes(a: Architecture) -> tuple[int, int, int, int]:
    """(layers, q_b, kv_b, down) parameters per MLA layer: q_b = q_lora_rank × heads × (nope + rope), kv_b =
    kv_lora_rank × heads × (nope + v), down = the q_a and kv_a down-projections."""
    nope, rope = a.qk_nope_head_dim or 0, a.qk_rope_head_dim or 0
    q_b = a.q_lora_rank * a.heads * (nope + rope) if a.q_lora_rank else 0
    kv_b = (a.kv_lora_rank or 0) * a.heads * (nope + (a.v_head_dim or nope))
    down = (a.hidden * a.q_lora_rank if a.q_lora_rank else 0) + a.hidden * ((a.kv_lora_rank or 0) + rope)
    return a.full_layers + a.sliding_layers, q_b, kv_b, down


def _bytes(a: Architecture, fmt: str, tp: int, feature: str) -> tuple[float, Localized]:
    linear_b, _, float_b = FORMATS.get(fmt, FORMATS["bf16"])
    unshard = 1 - 1 / tp if tp > 1 else 0.0
    layers, q_b, kv_b, down = _mla_shapes(a)
    if feature == "shared-expert-dp":
        b = a.moe_layers * 3 * a.hidden * a.shared_intermediate * linear_b * unshard
        return b, T("shared experts whole on every rank ({gib} GiB)", gib=f"{b / 2**30:.2f}")
    if feature == "dsa-cp":  # kv_b_proj stays unquantized on a DSA layer (sfa_v1.py asserts it); one full o_proj pool
        b = layers * (q_b * linear_b + kv_b * float_b) * unshard + a.heads * (a.v_head_dim or 0) * a.hidden * linear_b
        return b, T("DSA context parallel: q_b_proj and kv_b_proj whole, one full o_proj ({gib} GiB)",
                    gib=f"{b / 2**30:.2f}")
    b = layers * (down + q_b / tp) * linear_b
    return b, T("MLAPO's copy of the MLA projections ({gib} GiB)", gib=f"{b / 2**30:.2f}")


def bound(a: Architecture, fmt: str, tp: int, on: list[str]) -> tuple[int, Localized]:
    """(the most bytes per rank the features `on` can add beyond vLLM's sharding at TP `tp`, the words)."""
    linear_b = FORMATS.get(fmt, FORMATS["bf16"])[0]
    unshard = 1 - 1 / tp if tp > 1 else 0.0
    layers, q_b, kv_b, down = _mla_shapes(a)
    parts, total = [], 0.0
    if "shared-expert-dp" in on:
        b, words = _bytes(a, fmt, tp, "shared-expert-dp")
        total += b
        parts.append(words)
    if "dsa-cp" in on:
        b = layers * (q_b + kv_b) * linear_b * unshard
        total += b
        parts.append(T("DSA context parallel: q_b_proj and kv_b_proj whole ({gib} GiB)", gib=f"{b / 2**30:.2f}"))
    if "mlapo" in on:
        b, words = _bytes(a, fmt, tp, "mlapo")
        total += b
        parts.append(words)
    return int(total), join("; ", parts)
