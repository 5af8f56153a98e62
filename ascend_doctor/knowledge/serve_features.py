"""Which vllm-ascend features a `vllm serve` command turns on, named as vllm-ascend's own support matrices name them.

vllm-ascend's docs judge features by name: the columns of supported_models.md ("Expert Parallel", "Fullgraph
AclGraph", "LoRA", …) and the rows of feature_matrix.md ("EP", "ACLGraph Full_Decode_Only", "Eplb", …). This is the
one vocabulary that turns a command, its environment and the served model into those names, so the support-matrix
check (SERVE314) and the known-issue rows ask the same question the same way.

A feature is *used* only when the command says so explicitly (or the model is what it is): vLLM's defaults
(prefix caching on in V1, the default cudagraph mode) are not claimed as the user's choice, so a ❌ the docs give a
feature is never held against a command that did not ask for it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from ascend_doctor.text.textsafe import clipped

Used = Optional[str]  # what was seen (the command's words), or None when the feature is not used


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _int(cmd, name: str) -> Optional[int]:
    try:
        return cmd.int_opt(name)
    except ValueError:
        return None


def _json(cmd, name: str) -> dict:
    if not cmd.has(name):
        return {}
    value, err = cmd.json_value(name)
    return value if isinstance(value, dict) and not err else {}


def _explicit(cmd, name: str) -> Used:
    return cmd.source(name) if cmd.has(name) and cmd.flag(name) is True else None


def _more_than_one(name: str) -> Callable:
    def used(cmd, env, model) -> Used:
        n = _int(cmd, name)
        return cmd.source(name) if n is not None and n > 1 else None
    return used


def _cudagraph(*modes: str) -> Callable:
    def used(cmd, env, model) -> Used:
        mode = _json(cmd, "compilation_config").get("cudagraph_mode")
        if isinstance(mode, str) and mode.upper() in modes and not cmd.flag("enforce_eager"):
            return f"--compilation-config cudagraph_mode {mode}"
        return None
    return used


def _spec_method(*methods: str) -> Callable:
    def used(cmd, env, model) -> Used:
        spec = _json(cmd, "speculative_config")
        if not spec:
            return None
        method = spec.get("method")
        if methods and method not in methods:
            return None
        return f"--speculative-config method {method}" if method else "--speculative-config"
    return used


_STORE = re.compile(r"Store|Offload|Pool|UCM", re.IGNORECASE)


def _kv(pool: bool) -> Callable:
    def used(cmd, env, model) -> Used:
        kv = _json(cmd, "kv_transfer_config")
        name = kv.get("kv_connector")
        if not isinstance(name, str):
            return None
        return f"--kv-transfer-config kv_connector {name}" if bool(_STORE.search(name)) == pool else None
    return used


def _ascend_or_env(key: str, env_name: str) -> Callable:
    """An --additional-config switch (top level or in a section) or the VLLM_ASCEND_* variable of older releases."""
    def used(cmd, env, model) -> Used:
        cfg = _json(cmd, "additional_config")
        if cfg.get(key) is True:
            return f"--additional-config {key}"
        if env_name and str(env.get(env_name, "")).strip().lower() in ("1", "true"):
            return f"{env_name}={env[env_name]}"
        return None
    return used


def _fused_mc2(cmd, env, model) -> Used:
    """VLLM_ASCEND_ENABLE_FUSED_MC2 1 or 2 (vllm-ascend reads it as an int; 0, the default, leaves MC2 unfused)."""
    raw = str(env.get("VLLM_ASCEND_ENABLE_FUSED_MC2", "")).strip()
    return f"VLLM_ASCEND_ENABLE_FUSED_MC2={raw}" if raw in ("1", "2") else None


def _kv_producer(cmd, env, model) -> Used:
    """A node that prefills for others: --kv-transfer-config kv_role kv_producer or kv_both."""
    role = _json(cmd, "kv_transfer_config").get("kv_role")
    return f"--kv-transfer-config kv_role {role}" if role in ("kv_producer", "kv_both") else None


def _eplb(cmd, env, model) -> Used:
    cfg = _json(cmd, "additional_config")
    section = cfg.get("eplb_config") if isinstance(cfg.get("eplb_config"), dict) else {}
    if cfg.get("dynamic_eplb") is True or section.get("dynamic_eplb") is True:
        return "--additional-config dynamic_eplb"
    if cfg.get("expert_map_path") or section.get("expert_map_path"):
        return "--additional-config expert_map_path"
    if str(env.get("DYNAMIC_EPLB", "")).lower() in ("1", "true"):
        return f"DYNAMIC_EPLB={env['DYNAMIC_EPLB']}"
    return None


def _graph_mode(cmd, env, model) -> Used:
    """ACL graph capture: vllm-ascend's default on V1 unless --enforce-eager (or cudagraph_mode NONE), or torchair's
    graph mode replaces it (platform.py check_and_update_config: "Torchair compilation enabled on NPU. Setting level
    to NO_COMPILATION" in 0.9.x, "Setting CUDAGraphMode to NONE" from 0.10)."""
    if cmd.flag("enforce_eager") or _torchair(cmd, env, model):
        return None
    mode = _json(cmd, "compilation_config").get("cudagraph_mode")
    if isinstance(mode, str) and mode.upper() == "NONE":
        return None
    return f"--compilation-config cudagraph_mode {mode}" if mode else "no --enforce-eager (ACL graph is the default)"


def _torchair(cmd, env, model) -> Used:
    section = _json(cmd, "additional_config").get("torchair_graph_config")
    return "--additional-config torchair_graph_config.enabled" if isinstance(section, dict) and \
        section.get("enabled") is True else None


def _mtp(cmd, env, model) -> Used:
    method = _json(cmd, "speculative_config").get("method")
    return f"--speculative-config method {method}" if isinstance(method, str) and method.endswith("mtp") else None


def _ascend_scheduler(cmd, env, model) -> Used:
    section = _json(cmd, "additional_config").get("ascend_scheduler_config")
    return "--additional-config ascend_scheduler_config.enabled" if isinstance(section, dict) and \
        section.get("enabled") is True else None


def _ray(cmd, env, model) -> Used:
    """Ray as the executor: named on the command line (vLLM also picks it by itself for a multi-node layout, which
    the command does not show, so that case is not claimed)."""
    backend = cmd.get("distributed_executor_backend")
    return cmd.source("distributed_executor_backend") if isinstance(backend, str) and backend == "ray" else None


def _lmhead_tp(cmd, env, model) -> Used:
    n = _json(cmd, "additional_config").get("lmhead_tensor_parallel_size")
    return f"--additional-config lmhead_tensor_parallel_size {n}" if isinstance(n, int) and n > 1 else None


def _quant(kind: str) -> Callable:
    def used(cmd, env, model) -> Used:
        q = getattr(model, "quant_type", None) if model is not None else None
        return f"quant_model_description: model_quant_type {q}" if isinstance(q, str) and q.upper() == kind else None
    return used


def quantized_sign(cmd, env, model, by_name: bool = False) -> Used:
    """A quantized checkpoint, by any sign: `--quantization`, an msModelSlim description, or the config's
    quantization_config; with `by_name`, also a quantization word ending the model's name (`Qwen3-32B-W8A8`: weaker,
    so only where it can only remove a claim, never make one)."""
    q = cmd.get("quantization") if cmd is not None else None
    if isinstance(q, str) and q:
        return cmd.source("quantization")
    if model is not None and isinstance(getattr(model, "quant_type", None), str):
        return f"quant_model_description: model_quant_type {model.quant_type}"
    cfg = getattr(model, "config", None) if model is not None else None
    if isinstance(cfg, dict) and isinstance(cfg.get("quantization_config"), dict):
        return "config.json quantization_config"
    if by_name:
        from ascend_doctor.deploy.catalogue import quantization_words

        for name in (getattr(cmd, "model", None), getattr(model, "model", None)):
            words = quantization_words(name or "")
            if words:
                return f"the model's name ({clipped(name, 80)}: {'-'.join(words)})"
    return None


def _multimodal(cmd, env, model) -> Used:
    cfg = getattr(model, "config", None) if model is not None else None
    if isinstance(cfg, dict) and any(k in cfg for k in ("vision_config", "audio_config", "visual")):
        return "config.json has a vision/audio config"
    return None


def _bf16(cmd, env, model) -> Used:
    dtype = cmd.get("dtype")
    if isinstance(dtype, str) and dtype.lower() in ("bfloat16", "bf16"):
        return cmd.source("dtype")
    cfg = getattr(model, "config", None) if model is not None else None
    if (not dtype or dtype == "auto") and isinstance(cfg, dict) and cfg.get("torch_dtype") == "bfloat16":
        return "config.json torch_dtype bfloat16 (--dtype auto)"
    return None


# vllm-ascend's names (normalized by _norm) -> what says a command uses the feature
FEATURES: dict[str, Callable[[Any, dict, Any], Used]] = {}
for _names, _used in (
    (("BF16",), _bf16),
    (("W8A8", "Quantization W8A8"), _quant("W8A8")),
    (("Quantization W4A8",), _quant("W4A8")),
    (("Quantization W4A4",), _quant("W4A4")),
    (("Quantization",), quantized_sign),
    (("Chunked Prefill",), lambda c, e, m: _explicit(c, "enable_chunked_prefill")),
    (("Automatic Prefix Cache", "APC"), lambda c, e, m: _explicit(c, "enable_prefix_caching")),
    (("LoRA",), lambda c, e, m: _explicit(c, "enable_lora")),
    (("Speculative Decoding",), _spec_method()),
    (("Eagle3",), _spec_method("eagle3")),
    (("Async Scheduling",), lambda c, e, m: _explicit(c, "async_scheduling")),
    (("Tensor Parallel", "TP"), _more_than_one("tensor_parallel_size")),
    (("Pipeline Parallel",), _more_than_one("pipeline_parallel_size")),
    (("Data Parallel", "DP"), _more_than_one("data_parallel_size")),
    (("Expert Parallel", "EP"), lambda c, e, m: _explicit(c, "enable_expert_parallel")),
    (("Prefill-decode Disaggregation", "Disaggregated Prefill"), _kv(pool=False)),
    (("KV Cache Pool",), _kv(pool=True)),
    (("Piecewise AclGraph", "ACLGraph Piecewise"), _cudagraph("PIECEWISE")),
    (("Fullgraph AclGraph",), _cudagraph("FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")),
    (("ACLGraph Full_Decode_Only",), _cudagraph("FULL_DECODE_ONLY")),
    (("Context Parallel", "Decode Context Parallel"), _more_than_one("decode_context_parallel_size")),
    (("Eplb", "EPLB"), _eplb),
    (("Flashcomm1",), _ascend_or_env("enable_flashcomm1", "VLLM_ASCEND_ENABLE_FLASHCOMM1")),
    (("Mlapo",), _ascend_or_env("enable_mlapo", "VLLM_ASCEND_ENABLE_MLAPO")),
    (("Multistream Moe",), _ascend_or_env("multistream_overlap_shared_expert", "")),
    (("Lmhead TP",), _lmhead_tp),
    (("mm",), _multimodal),
    # not support-matrix names: the conditions release notes' known issues give
    (("ACL Graph",), _graph_mode),
    (("Torchair",), _torchair),
    (("MTP",), _mtp),
    (("Sleep Mode",), lambda c, e, m: _explicit(c, "enable_sleep_mode")),
    (("Prefill Context Parallel", "PCP"), _more_than_one("prefill_context_parallel_size")),
    (("Suffix Decoding",), _spec_method("suffix")),
    (("Ray",), _ray),
    (("Ascend Scheduler",), _ascend_scheduler),
    (("Fused MC2",), _fused_mc2),
    (("KV Producer",), _kv_producer),
    (("Sparse SFA C8",), _ascend_or_env("enable_sparse_sfa_c8", "")),
    (("Tool Calling",), lambda c, e, m: _explicit(c, "enable_auto_tool_choice")),
):
    for _n in _names:
        FEATURES[_norm(_n)] = _used


def used(name: str, cmd, env: dict, model) -> tuple[bool, Used]:
    """(known, what was seen): whether the doctor knows how to tell the feature `name` (a support-matrix name), and
    the command's words when the command uses it."""
    fn = FEATURES.get(_norm(name))
    if fn is None:
        return False, None
    return True, fn(cmd, env, model)
