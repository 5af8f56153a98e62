"""SERVE207: the model the command names can be loaded from where the server runs — a directory that is there and
has a config, or a hub id the server can fetch (or has cached)."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.switches import is_on

from ._serve import cmd_or_skip


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~")) or model.count("/") > 1


@check("SERVE207", "serve-model-reference", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "server_env", "python"])
def model_reference(ctx):
    """The model the command names is there: a directory with config.json, or a hub id the server can get

    What it checks: a model given as a path is a directory here (inside the container) with config.json (or a GGUF
    file, or Mistral's params.json); a hub id is in the Hugging Face cache, or the server may download it — not with
    `HF_HUB_OFFLINE=1`; `VLLM_USE_MODELSCOPE=true` has the `modelscope` package to download with.

    Why it matters: these fail only after vLLM started: `OSError: Can't load the configuration of
    '/data/Qwen/Qwen3-0.6B'` for a path that is not mounted (vllm-ascend#9999); `OfflineModeIsEnabled: Cannot reach
    https://huggingface.co/api/models/…` offline without the cache (vllm#3719), or a name-resolution error on an
    air-gapped cluster (vllm#1432, #1986); `ModuleNotFoundError: No module named 'modelscope'` (vllm#16524).

    How to fix: mount the model directory into the container (`-v /data/models:/data/models`) and pass its absolute
    path; pre-download the hub id (`huggingface-cli download ID` / `modelscope download ID`) on an offline host;
    `pip install modelscope` when VLLM_USE_MODELSCOPE is set. Whether a hub id is gated or misspelt is not seen: the
    doctor does not contact the hub.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    m = ctx.fact("serve_model")
    env = ctx.fact("server_env")
    model = cmd.model or ""
    evidence = [ev(T("command line"), f"model: {model}")]
    if model.endswith(".gguf"):
        return ctx.skip(T("{model} is a GGUF file, not a model directory", model=model))
    if m.path:
        evidence.append(ev(f"dir: {m.path}", ", ".join(m.files[:12]) + (" …" if len(m.files) > 12 else "")))
        if {"config.json", "params.json"} & set(m.files) or any(f.endswith(".gguf") for f in m.files):
            return ctx.ok(T("{model} resolves to {path} ({source}) with its config", model=model, path=m.path,
                            source=m.resolved_from), evidence)
        return ctx.fail(T("{path} has no config.json: vLLM stops with `Can't load the configuration of '{path}'`",
                          path=m.path), evidence,
                        remediation=T("Point the command at the directory that holds config.json and the weights."))
    if _looks_like_path(model):
        evidence.append(ev(f"dir: {model}", m.why_not))
        if m.unrecorded:
            return ctx.unknown(T("the snapshot did not record {model}: collect it with the serve command "
                                 "(`ascend-doctor collect -o FILE -- vllm serve …`) to judge it", model=model),
                               evidence)
        return ctx.fail(T("{model} is not a directory here ({why}): vLLM takes it for a hub id and stops with "
                          "`Can't load the configuration of '{model}'`", model=model, why=m.why_not), evidence,
                        remediation=T("Mount the model directory into the container (`-v /data/models:/data/models`) "
                                      "or fix the path."))
    modelscope = is_on(env.get("VLLM_USE_MODELSCOPE"))
    if modelscope:
        py = ctx.try_fact("python")
        evidence.append(ev("env: VLLM_USE_MODELSCOPE", env.get("VLLM_USE_MODELSCOPE")))
        if py is not None and py.ok and py.dist("modelscope") is None:
            return ctx.fail(T("VLLM_USE_MODELSCOPE is set but the serving Python has no `modelscope` package: vLLM "
                              "stops with `No module named 'modelscope'`"), evidence,
                            remediation=T("`pip install modelscope` in the serving environment, or unset "
                                          "VLLM_USE_MODELSCOPE."))
        return ctx.unknown(T("{model} will be fetched from ModelScope at start-up: the doctor does not look into "
                             "the ModelScope cache or contact the hub", model=model), evidence)
    offline = [k for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
               if is_on(env.get(k))]
    if offline:
        evidence.append(ev(f"env: {offline[0]}", env.get(offline[0])))
        return ctx.fail(T("{model} is not in the Hugging Face cache and {var} is set: vLLM stops with "
                          "`OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/{model}`",
                          model=model, var=offline[0]), evidence,
                        remediation=T("Download it where the cache is (`huggingface-cli download {model}`, with "
                                      "HF_HOME as the server sees it), or pass a local directory.", model=model))
    return ctx.unknown(T("{model} is not in the Hugging Face cache: vLLM downloads it at start-up; whether it is "
                         "gated, misspelt or reachable from here is not seen (the doctor does not contact the hub)",
                         model=model), evidence)
