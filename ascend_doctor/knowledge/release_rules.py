"""The release rules of matrices/serve/release-rules.toml (SERVE311): the rows are data; the conditions they name
(`when`) are the functions here, each a question about the `vllm serve` command, its environment and the model.

A condition answers (True, fields for the row's `says`, what it saw) when the combination is there, (False, …) when
it is not, and None when it cannot tell (the model's config.json was not readable): a row it cannot judge is said to
be unjudged, never passed.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Callable, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.deploy.arch import MLA_MODEL_TYPES, derived_max_len, read_architecture, text_config
from ascend_doctor.text.textsafe import clipped
from ascend_doctor.text.versions import SpecifierSet

Answer = Optional[tuple[bool, dict, str]]


class ReleaseRule(Model, extra="forbid"):
    id: str
    cls: str = Field(alias="class")
    vllm_ascend: str
    when: str
    effect: str = Field(pattern="^(refuses|breaks|overrides|unsupported|may_hang)$")  # may_hang: a warning
    exempt_model_types: list[str] = Field(default_factory=list, description="config.json model_type values the "
                                                                             "release leaves out of this rule")
    families: list[str] = Field(default_factory=list, description="the chip families (knowledge/hardware.py: A2, "
                                                                  "A3, 310P, A5) the rule holds on; empty: every one")
    missing_package: Optional[str] = Field(None, description="the rule holds only while this distribution (its PyPI "
                                                              "name) is not installed in the serving python")
    wheel_only: bool = Field(False, description="the rule holds for an install from the release's PyPI package (its "
                                                "wheel, or a wheel built from its sdist), not for an editable install "
                                                "of its source tree, as the official images have")
    says: str
    fix: str
    source: list[str] = Field(min_length=1)


class ReleaseRules(Model, extra="forbid"):
    schema_version: int
    updated: date
    release_rule: list[ReleaseRule]


def _ascend_section(cmd, key: str) -> dict:
    cfg, _ = cmd.json_value("additional_config")
    section = (cfg or {}).get(key)
    return section if isinstance(section, dict) else {}


def _block_size(cmd) -> Optional[int]:
    try:
        return cmd.int_opt("block_size")
    except ValueError:
        return None


def _explicit(cmd, name: str) -> Optional[bool]:
    """True/False when the command sets the flag either way, None when it leaves vLLM's default."""
    return cmd.flag(name) if cmd.has(name) else None


def prefix_cache_block_size(cmd, env, model) -> Answer:
    bs = _block_size(cmd)
    hit = _explicit(cmd, "enable_prefix_caching") is True and bs not in (None, 128)
    return hit, {}, f"{cmd.source('block_size')} with --enable-prefix-caching" if hit else ""


def default_prefix_cache_block_size(cmd, env, model) -> Answer:
    bs = _block_size(cmd)
    hit = _explicit(cmd, "enable_prefix_caching") is not False and bs not in (None, 128)
    return hit, {}, f"{cmd.source('block_size')}, prefix caching on (the V1 default)" if hit else ""


def cache_block_size(cmd, env, model) -> Answer:
    bs = _block_size(cmd)
    off = _explicit(cmd, "enable_prefix_caching") is False and _explicit(cmd, "enable_chunked_prefill") is False
    hit = bs not in (None, 128) and not off
    return hit, {}, f"{cmd.source('block_size')}, prefix caching or chunked prefill on (the defaults)" if hit else ""


def _model_type(model: Optional[dict]) -> Optional[str]:
    value = (model or {}).get("model_type")
    return value if isinstance(value, str) else None


def dsv4_block_size(cmd, env, model) -> Answer:
    """DeepSeek-V4 with a --block-size outside 32, 64 and 128: `refresh_block_size` sets 32 (with a warning)."""
    bs = _block_size(cmd)
    if bs is None or bs in (32, 64, 128):
        return False, {}, ""
    if model is None:
        return None
    hit = _model_type(model) == "deepseek_v4"
    return hit, {}, f"model_type deepseek_v4 with {cmd.source('block_size')}" if hit else ""


def dsv4_block_size_128(cmd, env, model) -> Answer:
    """vllm-ascend 0.20.2rc1: DeepSeek-V4 runs with block size 128 whatever --block-size says, silently."""
    bs = _block_size(cmd)
    if bs is None or bs == 128:
        return False, {}, ""
    if model is None:
        return None
    hit = _model_type(model) == "deepseek_v4"
    return hit, {}, f"model_type deepseek_v4 with {cmd.source('block_size')}" if hit else ""


# --kv-cache-dtype values that keep the model's own width: what the DSA cache-dtype override leaves as it is.
_WIDE_KV = ("auto", "bfloat16", "bf16", "float16", "half", "fp16")


def index_topk_cache_dtype(cmd, env, model) -> Answer:
    """A DeepSeek-sparse-attention model (`index_topk`: DeepSeek-V3.2, GLM-5, DeepSeek-V4) with an 8-bit
    --kv-cache-dtype: vllm-ascend sets the cache dtype to the model's own, without a log line."""
    value = cmd.get("kv_cache_dtype")
    if not isinstance(value, str) or value.strip().lower() in _WIDE_KV:
        return False, {}, ""
    if model is None:
        return None
    hit = text_config(model).get("index_topk") is not None
    return hit, {"value": value}, f"index_topk in config.json with {cmd.source('kv_cache_dtype')}" if hit else ""


def _cache_features(cmd) -> list[str]:
    return [f"--{n.replace('_', '-')}" for n in ("enable_prefix_caching", "enable_chunked_prefill")
            if _explicit(cmd, n) is True]


def v0_cache_features_default_v0(cmd, env, model) -> Answer:
    feats = _cache_features(cmd)
    hit = bool(feats) and env.get("VLLM_USE_V1") != "1"
    return hit, {}, f"{', '.join(feats)} on the V0 engine (VLLM_USE_V1 is not 1)" if hit else ""


def v0_cache_features_opt_in_v0(cmd, env, model) -> Answer:
    feats = _cache_features(cmd)
    hit = bool(feats) and env.get("VLLM_USE_V1") == "0"
    return hit, {}, f"{', '.join(feats)} with VLLM_USE_V1=0" if hit else ""


def v0_engine_default(cmd, env, model) -> Answer:
    """VLLM_USE_V1 not set: vLLM 0.8.0-0.9.1 keep every platform but CUDA (TPU, x86 CPU from 0.9.0) on V0 unless the
    user opts in (VLLM_USE_V1=0 is SERVE401's)."""
    hit = "VLLM_USE_V1" not in env
    return hit, {}, "VLLM_USE_V1 is not set in the server's environment" if hit else ""


def _scheduler_on(cmd) -> dict:
    sched = _ascend_section(cmd, "ascend_scheduler_config")
    return sched if sched.get("enabled") is True else {}


def ascend_scheduler_policy(cmd, env, model) -> Answer:
    policy = cmd.get("scheduling_policy")
    hit = bool(_scheduler_on(cmd)) and isinstance(policy, str) and policy != "fcfs"
    return hit, {"policy": policy}, f"ascend_scheduler_config.enabled with --scheduling-policy {policy}" if hit else ""


def ascend_scheduler_short_batch(cmd, env, model) -> Answer:
    sched = _scheduler_on(cmd)
    if not sched or sched.get("enable_chunked_prefill"):
        return False, {}, ""
    try:
        batched, model_len = cmd.int_opt("max_num_batched_tokens"), cmd.int_opt("max_model_len")
    except ValueError:
        return False, {}, ""
    if batched is None:
        return False, {}, ""
    if model_len is None:
        if model is None:
            return None
        model_len, _, _ = derived_max_len(text_config(model))  # what vLLM derives when --max-model-len is absent
        if model_len is None:
            return None
    hit = batched < model_len
    return hit, {"batched": batched, "model_len": model_len}, (
        f"ascend_scheduler_config without enable_chunked_prefill, --max-num-batched-tokens {batched} < "
        f"max_model_len {model_len}") if hit else ""


def torchair_eager(cmd, env, model) -> Answer:
    hit = _ascend_section(cmd, "torchair_graph_config").get("enabled") is True and cmd.flag("enforce_eager")
    return hit, {}, "torchair_graph_config.enabled with --enforce-eager" if hit else ""


def qwen3_next_prefix_cache(cmd, env, model) -> Answer:
    if _explicit(cmd, "enable_prefix_caching") is not True:
        return False, {}, ""
    if model is None:
        return None
    hit = model.get("model_type") == "qwen3_next"
    return hit, {}, "model_type qwen3_next with --enable-prefix-caching" if hit else ""


def qwen3_next_graph(cmd, env, model) -> Answer:
    """Qwen3-Next with ACL graphs on: the 0.11 runner asks every attention builder for `aclgraph_support`, which
    vLLM's GDN (linear attention) builder does not have."""
    on, how = cmd.graph_capture()
    if not on:
        return False, {}, ""
    if model is None:
        return None
    hit = model.get("model_type") == "qwen3_next"
    return hit, {}, f"model_type qwen3_next with {how}" if hit else ""


def quant_ascend_online(cmd, env, model) -> Answer:
    """`--quantization ascend` on a server's command line (an offline `LLM(quantization="ascend")` takes no argument
    parser): vLLM's parser offers only the methods it knows when it is built, and vllm-ascend adds `ascend` to its
    choices only from 0.9.0rc1 (platform.py pre_register_and_update, #877)."""
    hit = cmd.get("quantization") == "ascend" and cmd.entry != "LLM()"
    return hit, {}, f"{cmd.source('quantization')} on `{cmd.entry or 'vllm serve'}`" if hit else ""


def full_graph_mtp_gqa(cmd, env, model) -> Answer:
    """An MTP draft with full ACL graphs (cudagraph_mode FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE) on a model
    without MLA: the 0.12.0rc1-0.13.0rc1 runner captures the decode graphs in the SpecDecoding state whenever the
    speculative method is MTP, which only the MLA builders accept (attention_v1's raises NotImplementedError)."""
    comp, _ = cmd.json_value("compilation_config")
    mode = str((comp or {}).get("cudagraph_mode") or "").upper() if isinstance(comp, dict) else ""
    spec, _ = cmd.json_value("speculative_config")
    method = str(spec.get("method") or "") if isinstance(spec, dict) else ""
    if cmd.flag("enforce_eager") or "FULL" not in mode or not method.lower().endswith("mtp"):
        return False, {}, ""
    if model is None:
        return None
    text = text_config(model)
    if deepseek_mla(text):
        return False, {}, ""
    return True, {}, (f"--speculative-config method {method} with cudagraph_mode {mode} on model_type "
                      f"{text.get('model_type')} (no MLA)")


def off_grid_capture_ceiling(cmd, env, model) -> Answer:
    """Graphs on, no capture sizes of the user's, and a --max-num-seqs whose decode ceiling (max_num_seqs x decode
    query length, the release's own default without vLLM's x 2) is off vLLM's capture grid: the largest decode
    batches have no graph and run eager (vllm-ascend#16049). Only a --max-num-seqs the command sets is judged (vLLM's
    defaults, 256 and 1024, are on the grid); a speculative config without num_speculative_tokens cannot be told."""
    from ascend_doctor.deploy.graphs import grid

    on, how = cmd.graph_capture()
    comp, _ = cmd.json_value("compilation_config")
    comp = comp if isinstance(comp, dict) else {}
    given = [k for k in ("cudagraph_capture_sizes", "max_cudagraph_capture_size") if comp.get(k) is not None]
    given += [n for n in ("cudagraph_capture_sizes", "max_cudagraph_capture_size", "cuda_graph_sizes") if cmd.has(n)]
    try:
        seqs, tokens = cmd.int_opt("max_num_seqs"), cmd.int_opt("max_num_batched_tokens")
    except ValueError:  # not a number: vLLM's argument parser refuses the command before any release rule
        return False, {}, ""
    if not on or given or seqs is None or seqs <= 0:
        return False, {}, ""
    spec, _ = cmd.json_value("speculative_config")
    k = 0
    if isinstance(spec, dict) and spec:
        k = spec.get("num_speculative_tokens")
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            return None
    ceiling = min(seqs * (1 + k), 512)
    if tokens is not None and tokens <= ceiling:  # vLLM adds max_num_batched_tokens itself when it is below
        return False, {}, ""
    largest = grid(ceiling)[-1]
    if ceiling == largest:
        return False, {}, ""
    decode = f" x {1 + k} (1 + num_speculative_tokens)" if k else ""
    return True, {"ceiling": ceiling, "largest": largest, "first": largest + 1}, (
        f"{cmd.source('max_num_seqs')}{decode} with {how}: ceiling {ceiling}, largest captured size {largest}")


def deepseek_mla(text: dict) -> bool:
    """vLLM's is_deepseek_mla, on the text config: a DeepSeek-style model_type with a kv_lora_rank."""
    return text.get("model_type") in MLA_MODEL_TYPES and text.get("kv_lora_rank") is not None


def _quant_method(cmd, model) -> Optional[str]:
    """The quantization method vLLM will verify: --quantization, else config.json quantization_config.quant_method
    ('' for a checkpoint without one; None when config.json is not readable and no flag is given)."""
    flag = cmd.get("quantization")
    if isinstance(flag, str) and flag:
        return flag
    if model is None:
        return None
    qc = model.get("quantization_config")
    method = qc.get("quant_method") if isinstance(qc, dict) else None
    return method if isinstance(method, str) else ""


def _quant_outside(name: str, supported: tuple[str, ...]) -> Callable[[Any, dict, Optional[dict]], Answer]:
    """A condition named `name`: the method vLLM will verify is set and not in the release's supported list."""
    def condition(cmd, env, model) -> Answer:
        method = _quant_method(cmd, model)
        if method is None:
            return None
        hit = bool(method) and method not in supported
        return hit, {"method": method}, f"quantization method {method} (the release runs {', '.join(supported)})"
    condition.__name__ = name
    return condition


# NPUPlatform.supported_quantization, read at the tags (vllm_ascend/platform.py): "ascend" up to v0.11.0 (which on an
# NPU also takes every other quantization_config for an msModelSlim one); "compressed-tensors" from v0.12.0rc1;
# "fp8" and "deepseek_v4_fp8" from v0.21.0rc1; "modelopt_mxfp8" and "mxfp8" from v0.27.1rc1 (to v0.30.0rc2).
quant_not_ascend = _quant_outside("quant_not_ascend", ("ascend",))
quant_not_ascend_ct = _quant_outside("quant_not_ascend_ct", ("ascend", "compressed-tensors"))
quant_not_ascend_ct_fp8 = _quant_outside("quant_not_ascend_ct_fp8",
                                         ("ascend", "compressed-tensors", "fp8", "deepseek_v4_fp8"))
quant_not_ascend_ct_fp8_mx = _quant_outside("quant_not_ascend_ct_fp8_mx",
                                            ("ascend", "compressed-tensors", "fp8", "deepseek_v4_fp8", "modelopt_mxfp8",
                                             "mxfp8"))


# The FP8 quantization methods vllm-ascend registers (NPUPlatform.supported_quantization): fp8 and deepseek_v4_fp8
# from v0.21.0rc1, the MX ones from v0.27.1rc1.
_FP8_METHODS = ("fp8", "deepseek_v4_fp8")
_MX_METHODS = ("deepseek_v4_fp8", "mxfp8", "modelopt_mxfp8")


def _fp8(cmd, model) -> tuple[Optional[str], dict]:
    """(the FP8 method vLLM will verify, or '' for another or none; None when it cannot tell), config.json's
    quantization_config."""
    method = _quant_method(cmd, model)
    qc = (model or {}).get("quantization_config")
    fp8 = (method if method in _FP8_METHODS else "") if method is not None else None
    return fp8, qc if isinstance(qc, dict) else {}


def quant_fp8(cmd, env, model) -> Answer:
    """An FP8 checkpoint (quant_method fp8 or deepseek_v4_fp8): what v0.21.0rc1-v0.26.0rc1 run only on Ascend 950."""
    method, _ = _fp8(cmd, model)
    if method is None:
        return None
    return bool(method), {"method": method}, f"quantization method {method}" if method else ""


def quant_mx_native(cmd, env, model) -> Answer:
    """Weights in the MX formats (mxfp8, modelopt_mxfp8) or DeepSeek-V4's native FP8/FP4 ones (deepseek_v4_fp8, or
    fp8 on model_type deepseek_v4: MXFP8 attention, MXFP4 experts): kernels of Ascend 950 only."""
    method = _quant_method(cmd, model)
    if method is None or (method == "fp8" and model is None):
        return None
    hit = method in _MX_METHODS or (method == "fp8" and _model_type(model) == "deepseek_v4")
    return hit, {"method": method}, (f"quantization method {method}" + (
        " on model_type deepseek_v4" if method == "fp8" else "")) if hit else ""


def quant_fp8_unblocked(cmd, env, model) -> Answer:
    """An fp8 checkpoint AscendFp8Config refuses from v0.27.1rc1 (`_verify_block_quantization`): no
    `weight_block_size` (per-tensor or per-channel scales), or an activation scheme other than dynamic."""
    method, qc = _fp8(cmd, model)
    if method is None or (method == "fp8" and model is None):
        return None
    if method != "fp8" or _model_type(model) == "deepseek_v4":
        return False, {}, ""
    scheme = qc.get("activation_scheme")
    if qc.get("weight_block_size") is None:
        return True, {"what": "no weight_block_size (per-tensor or per-channel scales)"}, \
            "quant_method fp8 without quantization_config.weight_block_size"
    if scheme is not None and scheme != "dynamic":
        return True, {"what": f"activation_scheme {scheme}"}, f"quant_method fp8 with activation_scheme {scheme}"
    return False, {}, ""


def quant_fp8_block(cmd, env, model) -> Answer:
    """A block-wise fp8 checkpoint (not DeepSeek-V4's): from v0.27.1rc1 served everywhere, off Ascend 950 by resolving
    the blocks to the model's dtype at load."""
    method, qc = _fp8(cmd, model)
    if method is None or (method == "fp8" and model is None):
        return None
    hit = method == "fp8" and _model_type(model) != "deepseek_v4" and qc.get("weight_block_size") is not None
    return hit, {"method": method}, (f"quant_method fp8, weight_block_size {qc.get('weight_block_size')}"
                                     if hit else "")


def launch_blocking_graph(cmd, env, model) -> Answer:
    """ASCEND_LAUNCH_BLOCKING=1 (the exact string vllm-ascend compares) with ACL graphs on: the users a maintainer
    asked to set it for a clearer traceback cannot start the server at all."""
    on, how = cmd.graph_capture()
    hit = on and str(env.get("ASCEND_LAUNCH_BLOCKING", "0")) == "1"
    return hit, {}, f"ASCEND_LAUNCH_BLOCKING=1 with {how}" if hit else ""


def _additional(cmd) -> dict:
    cfg, _ = cmd.json_value("additional_config")
    return cfg if isinstance(cfg, dict) else {}


def kv_nz_not_d_node(cmd, env, model) -> Answer:
    """`enable_kv_nz` outside a P/D decode node: no --kv-transfer-config, or a kv_role that is not a consumer
    (vLLM's `is_kv_consumer`: kv_consumer or kv_both)."""
    if not _additional(cmd).get("enable_kv_nz"):
        return False, {}, ""
    kv, _ = cmd.json_value("kv_transfer_config")
    role = kv.get("kv_role") if isinstance(kv, dict) else None
    hit = role not in ("kv_consumer", "kv_both")
    return hit, {}, (f"enable_kv_nz with kv_role {role}" if role else "enable_kv_nz without --kv-transfer-config") \
        if hit else ""


def layer_sharding_not_p_node(cmd, env, model) -> Answer:
    """`layer_sharding` (a non-empty list in --additional-config) outside a P/D prefill node: no
    --kv-transfer-config, or a kv_role other than kv_producer."""
    if not _additional(cmd).get("layer_sharding"):
        return False, {}, ""
    kv, _ = cmd.json_value("kv_transfer_config")
    role = kv.get("kv_role") if isinstance(kv, dict) else None
    hit = role != "kv_producer"
    return hit, {}, (f"layer_sharding with kv_role {role}" if role else
                     "layer_sharding without --kv-transfer-config") if hit else ""


def prefill_node(cmd, env, model) -> Answer:
    """A P/D prefill node: --kv-transfer-config with kv_role kv_producer."""
    kv, _ = cmd.json_value("kv_transfer_config")
    hit = isinstance(kv, dict) and kv.get("kv_role") == "kv_producer"
    return hit, {}, (f"--kv-transfer-config kv_role kv_producer "
                     f"({clipped(str(kv.get('kv_connector') or 'no connector named'), 60)})" if hit else "")


def flashcomm1_overlap_dp(cmd, env, model) -> Answer:
    """FlashComm1 on (`--additional-config enable_flashcomm1`, which decides where given, else
    VLLM_ASCEND_ENABLE_FLASHCOMM1), `multistream_overlap_shared_expert` true and --data-parallel-size above 1 (#16446:
    any two of the three start). A variable a paste does not show leaves it unjudged (read_switch raises)."""
    from ascend_doctor.knowledge.sequence_parallel import read_switch

    add = _additional(cmd)
    try:
        dp = cmd.int_opt("data_parallel_size")
    except ValueError:
        return None
    if add.get("multistream_overlap_shared_expert") is not True or not dp or dp <= 1:
        return False, {}, ""
    if "enable_flashcomm1" in add:
        on, said = bool(add["enable_flashcomm1"]), "--additional-config enable_flashcomm1=" + clipped(
            repr(add["enable_flashcomm1"]), 20)
    else:
        on, said = read_switch("env:VLLM_ASCEND_ENABLE_FLASHCOMM1", env, {}, {})
    if on is None:  # unset: vllm-ascend's default 0; a value it cannot read as an integer stops it elsewhere
        return False, {}, ""
    return on, {}, (f"{said}, --additional-config multistream_overlap_shared_expert=true, --data-parallel-size {dp}"
                    if on else "")


def recompute_scheduler_mixed(cmd, env, model) -> Answer:
    """`recompute_scheduler_enable` true (the top-level --additional-config key, or under `scheduler_config`, where
    0.25.1rc1 moved it) on a PD-mixed server: no --kv-transfer-config, or kv_role kv_both. A false anywhere is taken
    at its word (not judged)."""
    add = _additional(cmd)
    nested = add.get("scheduler_config") if isinstance(add.get("scheduler_config"), dict) else {}
    given = [v for v in (add.get("recompute_scheduler_enable"), nested.get("recompute_scheduler_enable"))
             if v is not None]
    if not given or not all(v is True for v in given):
        return False, {}, ""
    kv, _ = cmd.json_value("kv_transfer_config")
    role = kv.get("kv_role") if isinstance(kv, dict) else None
    hit = role in (None, "kv_both")
    return hit, {}, (f"recompute_scheduler_enable with kv_role {role}" if role else
                     "recompute_scheduler_enable without --kv-transfer-config") if hit else ""


def kv_nz_not_mla(cmd, env, model) -> Answer:
    """`enable_kv_nz` on a model that is not DeepSeek-style MLA, or is a DeepSeek-sparse-attention one (`index_topk`
    without DeepSeek-V4's `compress_ratios`, which the releases read differently)."""
    if not _additional(cmd).get("enable_kv_nz"):
        return False, {}, ""
    if model is None:
        return None
    text = text_config(model)
    if text.get("compress_ratios") is not None:
        return False, {}, ""
    mla = deepseek_mla(text)
    hit = not mla or text.get("index_topk") is not None
    kind = "DSA (index_topk)" if mla else "not DeepSeek-style MLA"
    return hit, {}, f"enable_kv_nz on model_type {text.get('model_type')} ({kind})" if hit else ""


def lora(cmd, env, model) -> Answer:
    hit = cmd.flag("enable_lora")
    return hit, {}, "--enable-lora" if hit else ""


def lora_v1_opt_in(cmd, env, model) -> Answer:
    hit = cmd.flag("enable_lora") and env.get("VLLM_USE_V1") == "1"
    return hit, {}, "--enable-lora with VLLM_USE_V1=1" if hit else ""


def lora_fully_sharded_tp(cmd, env, model) -> Answer:
    try:
        tp = cmd.int_opt("tensor_parallel_size") or 1
    except ValueError:
        return False, {}, ""
    hit = cmd.flag("enable_lora") and cmd.flag("fully_sharded_loras") and tp > 1
    return hit, {}, f"--enable-lora --fully-sharded-loras --tensor-parallel-size {tp}" if hit else ""


def lora_expert_parallel(cmd, env, model) -> Answer:
    if not (cmd.flag("enable_lora") and cmd.flag("enable_expert_parallel")):
        return False, {}, ""
    if model is None:
        return None
    arch = read_architecture(model)  # the deployment model's reading of routed experts (as SERVE306 and plan)
    return arch.is_moe, {}, "--enable-lora --enable-expert-parallel on a MoE model" if arch.is_moe else ""


def moe_model(cmd, env, model) -> Answer:
    """A model with routed experts (the deployment model's reading, as SERVE306 and plan): the rows that say a chip's
    kernels lack the MoE operators of a release."""
    if model is None:
        return None
    arch = read_architecture(model)
    return arch.is_moe, {}, (f"model_type {arch.model_type}: {arch.experts} routed experts" if arch.is_moe else "")


def _flashcomm_env(env) -> Optional[str]:
    """The FlashComm variable that is on (vllm-ascend 0.11.0rc2-0.14.0rc1 read both with `bool(int(os.getenv(…)))`,
    as the sequence-parallel switches are read), or None."""
    from ascend_doctor.knowledge.sequence_parallel import read_switch

    for name in ("VLLM_ASCEND_ENABLE_FLASHCOMM", "VLLM_ASCEND_ENABLE_FLASHCOMM1"):
        on, said = read_switch(f"env:{name}", env, {}, {})
        if on:
            return said
    return None


def _flashcomm_vl(vl: bool, model: dict, env) -> Answer:
    if not vl:
        return False, {}, ""
    on = _flashcomm_env(env)
    return bool(on), {}, (f"{on} with a VL model ({', '.join(model.get('architectures') or []) or 'config.json'})"
                          if on else "")


def flashcomm_vl_arch(cmd, env, model) -> Answer:
    """FlashComm on for a model whose first architecture name holds "VL" (is_vl_model up to 0.12.0rc1)."""
    if model is None:
        return None
    archs = model.get("architectures") or [""]
    return _flashcomm_vl("VL" in str(archs[0]), model, env)


def flashcomm_vl_config(cmd, env, model) -> Answer:
    """FlashComm on for a model whose config has `vision_config` or `thinker_config` (is_vl_model from 0.13.0rc1)."""
    if model is None:
        return None
    return _flashcomm_vl("vision_config" in model or "thinker_config" in model, model, env)


def qwen3_next_model(cmd, env, model) -> Answer:
    """A Qwen3-Next model (its gated delta-net layers run Triton kernels on Ascend)."""
    if model is None:
        return None
    hit = model.get("model_type") == "qwen3_next"
    return hit, {}, "model_type qwen3_next" if hit else ""


# The architectures vLLM builds with encoder-only attention (EncoderOnlyAttention / attn_type "encoder_only"): the
# registry entries of its bert.py, roberta.py, bert_with_rope.py and modernbert.py (vLLM 0.32.0
# vllm/model_executor/models/registry.py; 0.10.1.1's bert.py and roberta.py build the same attention).
ENCODER_ONLY_ARCHITECTURES = frozenset({
    "BertModel", "BertForMaskedLM", "BertForSequenceClassification", "BertForTokenClassification",
    "BertSpladeSparseEmbeddingModel", "BgeM3EmbeddingModel", "GteModel", "GteNewModel",
    "GteNewForSequenceClassification",
    "ModernBertModel", "ModernBertForSequenceClassification", "ModernBertForTokenClassification", "NomicBertModel",
    "RobertaModel", "RobertaForMaskedLM", "RobertaForSequenceClassification", "RobertaForTokenClassification",
    "XLMRobertaModel", "XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification",
})


def deepseek_v3_model(cmd, env, model) -> Answer:
    """DeepSeek-V3 or R1 (model_type deepseek_v3): the rows of the releases before vllm-ascend ran them."""
    if model is None:
        return None
    hit = _model_type(model) == "deepseek_v3" or "DeepseekV3ForCausalLM" in (model.get("architectures") or [])
    return hit, {}, "model_type deepseek_v3 (DeepSeek-V3/R1)" if hit else ""


# --- the subpackages a release's wheel leaves out (ascend_doctor.sync.package_holes): what reaches their import ---

def any_deployment(cmd, env, model) -> Answer:
    """Every deployment: the module is imported when the worker starts (0.13.0rc3's worker imports
    vllm_ascend.models.layer through its model runner)."""
    return True, {}, "any deployment (its worker imports the module at start)"


def _env_on(env, name: str) -> bool:
    """A variable vLLM or vllm-ascend reads as `bool(int(os.getenv(NAME, "0")))` is on."""
    value = str(env.get(name, "0") or "0").strip()
    return value.lstrip("-").isdigit() and int(value) != 0


def v1_piecewise_graph(cmd, env, model) -> Answer:
    """VLLM_USE_V1=1 (vLLM 0.8-0.9 keep the NPU on V0 without it) with graph capture on and torchair off: vllm-ascend
    0.9.0rc1 compiles the model piecewise with the backend its platform names
    (`vllm_ascend.compilation.piecewise_backend.NPUPiecewiseBackend`, platform.py get_piecewise_backend_cls)."""
    if str(env.get("VLLM_USE_V1", "") or "").strip() != "1":
        return False, {}, ""
    on, how = cmd.graph_capture()
    if not on or _ascend_section(cmd, "torchair_graph_config").get("enabled") is True:
        return False, {}, ""
    return True, {}, f"VLLM_USE_V1=1 with {how}"


def multi_block_pool(cmd, env, model) -> Answer:
    """USE_MULTI_BLOCK_POOL on (vllm_ascend/envs.py): 0.13.0rc3's platform patches then import its DeepSeek-V4
    config (vllm_ascend.transformers_utils)."""
    hit = _env_on(env, "USE_MULTI_BLOCK_POOL")
    return hit, {}, "USE_MULTI_BLOCK_POOL=" + str(env.get("USE_MULTI_BLOCK_POOL")) if hit else ""


def v2_model_runner(cmd, env, model) -> Answer:
    """VLLM_USE_V2_MODEL_RUNNER on (vLLM's envs.py): vllm-ascend's worker then imports its model runner v2."""
    hit = _env_on(env, "VLLM_USE_V2_MODEL_RUNNER")
    return hit, {}, "VLLM_USE_V2_MODEL_RUNNER=" + str(env.get("VLLM_USE_V2_MODEL_RUNNER")) if hit else ""


# --- vLLM 0.7.3-0.8.x: reasoning parsing only behind --enable-reasoning (vllm/entrypoints/openai) ---------------

def reasoning_parser_without_enable(cmd, env, model) -> Answer:
    """--reasoning-parser without --enable-reasoning: vLLM before 0.9.0 builds the parser only when
    `enable_reasoning` is set (serving_chat.py `if self.enable_reasoning:`)."""
    hit = bool(cmd.get("reasoning_parser")) and not cmd.flag("enable_reasoning")
    return hit, {}, f"{cmd.source('reasoning_parser')} without --enable-reasoning" if hit else ""


def enable_reasoning_without_parser(cmd, env, model) -> Answer:
    hit = bool(cmd.flag("enable_reasoning")) and not cmd.get("reasoning_parser")
    return hit, {}, "--enable-reasoning without --reasoning-parser" if hit else ""


def tool_choice_with_reasoning(cmd, env, model) -> Answer:
    hit = bool(cmd.flag("enable_auto_tool_choice")) and bool(cmd.flag("enable_reasoning"))
    return hit, {}, "--enable-auto-tool-choice with --enable-reasoning" if hit else ""


def encoder_only_model(cmd, env, model) -> Answer:
    """An encoder-only model (a BERT/RoBERTa/XLM-RoBERTa embedding model or reranker: bge-m3, bge-reranker)."""
    if model is None:
        return None
    hits = [a for a in model.get("architectures") or [] if a in ENCODER_ONLY_ARCHITECTURES]
    return bool(hits), {}, (f"architectures {', '.join(hits)}: encoder-only attention" if hits else "")


# How vLLM resolves `--runner auto` (vLLM 0.10.1.1 vllm/config/__init__.py _RUNNER_TASKS, _RUNNER_CONVERTS,
# _SUFFIX_TO_DEFAULTS; the same lists in later releases' vllm/config/model.py): the pooling tasks and conversions, and
# the architecture name endings that choose the pooling runner (the first ending listed that matches decides).
POOLING_TASKS = frozenset({"embedding", "embed", "classify", "score", "reward"})
# A model name that suggests a pooling model (`Qwen3-Embedding-4B`, `bge-reranker-v2-m3`): where its config is not
# read, such a model is not known to run generate; any other name is taken for the generative model it almost always
# is (its config, once read, decides).
_POOLING_NAME = re.compile(r"embed|rerank|bge|gte|e5-|retriev|classif|reward|sentence", re.I)
POOLING_CONVERTS = frozenset({"embed", "classify", "reward"})
_GENERATE_SUFFIXES = ("ForCausalLM", "ForConditionalGeneration", "ChatModel", "LMHeadModel")
_POOLING_SUFFIXES = ("ForTextEncoding", "EmbeddingModel", "ForSequenceClassification", "ForAudioClassification",
                     "ForImageClassification", "ForVideoClassification", "ClassificationModel", "ForRewardModeling",
                     "RewardModel", "Model")


def pooling_runner(cmd, env, model) -> Answer:
    """vLLM runs the model with its pooling runner: `--runner pooling`, a pooling `--task` or `--convert`, or (runner
    auto) an architecture whose name ends as vLLM's pooling defaults do (`…ForSequenceClassification`, `…Model`).
    A sentence-transformers checkpoint served under a `…ForCausalLM` name (Qwen3-Embedding) turns pooling through its
    modules.json, which this does not read: without a flag it is not counted (a miss, never a false claim)."""
    runner, task, convert = (str(cmd.get(k) or "").lower() for k in ("runner", "task", "convert"))
    for value, pooling, how in ((runner, {"pooling"}, "--runner"), (task, POOLING_TASKS, "--task"),
                                (convert, POOLING_CONVERTS, "--convert")):
        if value in pooling:
            return True, {}, f"{how} {clipped(value, 40)}"
    if runner and runner != "auto":
        return False, {}, ""
    if model is None:  # the architecture decides: not known, unless nothing suggests a pooling model at all
        return None if _POOLING_NAME.search(str(getattr(cmd, "model", "") or "")) else (False, {}, "")
    for arch in model.get("architectures") or []:
        if not isinstance(arch, str):
            continue
        if arch.endswith(_GENERATE_SUFFIXES):
            return False, {}, ""
        if arch.endswith(_POOLING_SUFFIXES):
            return True, {}, f"architectures {clipped(arch, 80)}: vLLM's pooling runner (--runner auto)"
    return False, {}, ""


def _pooling_type(cmd) -> str:
    """The pooling type --pooler-config (or the older --override-pooler-config) sets, upper-cased; '' when none."""
    for name in ("pooler_config", "override_pooler_config"):
        cfg, _ = cmd.json_value(name)
        if isinstance(cfg, dict) and isinstance(cfg.get("pooling_type"), str):
            return cfg["pooling_type"].upper()
    return ""


def pooling_prefix_cache(cmd, env, model) -> Answer:
    """A decoder pooling model (an embedding model built on a causal LM: Qwen3-Embedding) with prefix caching on,
    where the release sends every pooling model through its encoder attention (npu_fusion_attention), which ignores
    the cached prefix: a repeated prompt's embedding is wrong. On: `--enable-prefix-caching`, or vLLM's default for a
    decoder model with LAST or ALL pooling (vLLM 0.13.0 ModelConfig.is_prefix_caching_supported; MEAN, CLS and STEP
    pooling leave it off). An encoder-only model is not prefix-cached; a pooling type neither --pooler-config nor
    the flag shows is not known (the checkpoint's 1_Pooling/config.json is not read)."""
    from ascend_doctor.core.errors import FactUnavailable
    from ascend_doctor.i18n import T

    explicit = _explicit(cmd, "enable_prefix_caching")
    if explicit is False:
        return False, {}, ""
    said = pooling_runner(cmd, env, model)
    if not said or not said[0]:
        return said
    if model is None:
        return None
    if encoder_only_model(cmd, env, model)[0]:
        return False, {}, ""
    if explicit:
        return True, {}, f"{said[2]} with --enable-prefix-caching"
    pooling = _pooling_type(cmd)
    if pooling in ("LAST", "ALL"):
        return True, {}, f"{said[2]} with {pooling} pooling: prefix caching on (vLLM's default)"
    if pooling:
        return False, {}, ""
    raise FactUnavailable("serve_model.pooling_type", T(
        "the model's pooling type: vLLM turns prefix caching on by default for a decoder model's LAST or ALL pooling "
        "(its 1_Pooling/config.json, or --pooler-config, says which)"))


def quant_compressed_tensors(cmd, env, model) -> Answer:
    """A compressed-tensors checkpoint (LLM Compressor: config.json quantization_config.quant_method, or
    --quantization compressed-tensors)."""
    method = _quant_method(cmd, model)
    if method is None:
        return None
    hit = method == "compressed-tensors"
    return hit, {}, ("quantization method compressed-tensors" if hit else "")


CONDITIONS: dict[str, Callable[[Any, dict, Optional[dict]], Answer]] = {
    f.__name__: f for f in (
        prefix_cache_block_size, default_prefix_cache_block_size, cache_block_size, v0_cache_features_default_v0,
        v0_cache_features_opt_in_v0, v0_engine_default, ascend_scheduler_policy, ascend_scheduler_short_batch,
        torchair_eager, qwen3_next_prefix_cache, qwen3_next_graph, quant_not_ascend, quant_not_ascend_ct,
        quant_not_ascend_ct_fp8, quant_not_ascend_ct_fp8_mx, quant_fp8, quant_mx_native, quant_fp8_unblocked,
        quant_fp8_block, lora, lora_v1_opt_in, lora_fully_sharded_tp, lora_expert_parallel, launch_blocking_graph,
        dsv4_block_size, dsv4_block_size_128, index_topk_cache_dtype, kv_nz_not_d_node, kv_nz_not_mla,
        layer_sharding_not_p_node, recompute_scheduler_mixed, moe_model, qwen3_next_model,
        flashcomm_vl_arch, flashcomm_vl_config, encoder_only_model, full_graph_mtp_gqa, quant_ascend_online,
        off_grid_capture_ceiling, pooling_runner, pooling_prefix_cache,
        quant_compressed_tensors, prefill_node, flashcomm1_overlap_dp, deepseek_v3_model, any_deployment,
        v1_piecewise_graph, multi_block_pool, v2_model_runner, reasoning_parser_without_enable,
        enable_reasoning_without_parser, tool_choice_with_reasoning)
}


def rules_for(rules, version: str) -> list:
    """The rows whose releases include `version` (SERVE311 judges them all; SERVE305 asks the ones it sizes by)."""
    return [r for r in rules if SpecifierSet(r.vllm_ascend).contains(version)]


def answer(rule: ReleaseRule, cmd, env: dict, model: Optional[dict]) -> Answer:
    """The row's condition on this deployment (None: it cannot tell); a model type the row exempts does not match,
    and where the model is not known, a row with exemptions cannot tell (its condition may hold, the model may be
    one it exempts)."""
    if model is not None and str(model.get("model_type") or "") in rule.exempt_model_types:
        return False, {}, ""
    got = CONDITIONS[rule.when](cmd, env, model)
    if model is None and rule.exempt_model_types and got is not None and got[0]:
        return None
    return got


# The conditions that read the checkpoint alone (its config.json) and --quantization: what `plan` can judge before it
# writes a command, which sets no other option these rows read (ascend_doctor.deploy.command: `ascend` for an
# msModelSlim checkpoint, else none).
CHECKPOINT_CONDITIONS = frozenset({"quant_not_ascend", "quant_not_ascend_ct", "quant_not_ascend_ct_fp8",
                                   "quant_not_ascend_ct_fp8_mx", "quant_fp8", "quant_mx_native", "quant_fp8_unblocked",
                                   "quant_fp8_block"})


class _PlanCommand:
    """A plan's own command as the checkpoint rows read it: its --quantization, no other option."""

    def __init__(self, quantization: Optional[str] = None):
        self.quantization = quantization

    def get(self, name: str):
        return self.quantization if name == "quantization" else None


def checkpoint_rules(rules, version: str, family: str, config: Optional[dict],
                     quantization: Optional[str] = None) -> list:
    """[(rule, says)] of the rows for release `version` whose checkpoint condition holds for `config` served with
    `--quantization quantization` on a chip of `family` (the ones with `families` only there)."""
    out = []
    for rule in rules_for(rules, version):
        if rule.when not in CHECKPOINT_CONDITIONS or (rule.families and family not in rule.families):
            continue
        said = answer(rule, _PlanCommand(quantization), {}, config)
        if said and said[0]:
            fields = {**said[1], "chips": family} if rule.families else said[1]
            out.append((rule, rule.says.format(**fields) if fields else rule.says))
    return out


def converting_rule(rules, version: Optional[str], family: str, cmd, env: dict, model: Optional[dict],
                    quantization: Optional[str] = None):
    """The row that converts the checkpoint at load on a chip of `family` (REL-B27-008: block-wise FP8 to BF16 off
    Ascend 950), or None; `cmd` None for a plan's own command, which gives only `--quantization quantization`."""
    from ascend_doctor.text.versions import try_parse_version

    if not version or try_parse_version(version) is None:
        return None
    for rule in rules_for(rules, version):
        if rule.when == "quant_fp8_block" and family in rule.families:
            said = answer(rule, cmd if cmd is not None else _PlanCommand(quantization), env or {}, model)
            if said and said[0]:
                return rule
    return None

