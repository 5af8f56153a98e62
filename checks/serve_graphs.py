"""SERVE312: the ACL graphs a `vllm serve` command captures against the stream budget of the installed HDK driver.
The model and its numbers: ascend_doctor/deploy/graphs.py and the `serve/graph-budget` table."""

from __future__ import annotations

from ascend_doctor.deploy.arch import mtp_layers, read_architecture, text_config
from ascend_doctor.deploy.graphs import Layout, budget_sizes, capture_list, sample
from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.versions import SpecifierSet, try_parse_version

from ._serve import ascend_release, cmd_or_skip, int_opt, model_config, unreadable


@check("SERVE312", "serve-graph-stream-budget", severity="error", stage="serve",
       needs=["serve_cmd", "serve_model", "python", "stack", "server_env"])
def graph_stream_budget(ctx):
    """The ACL graphs this command captures fit the stream budget of the installed NPU driver

    What it checks: with vllm-ascend v0.21.0rc1 or later (which no longer shrinks the capture list) on an HDK driver
    before 25.5.1, and graph mode on: the capture sizes vLLM will use (`cudagraph_capture_sizes`, or the default
    list up to the release's own ceiling — `--max-num-seqs` x (1 + speculative tokens), without vLLM's x 2 — and
    `--max-num-batched-tokens`) against the number the old
    stream budget holds for this model and layout — vllm-ascend's own formula from v0.20.2rc1 (2048 streams less
    248 kept free; each piecewise graph takes one stream per layer plus one, and as many again for a draft model's
    or MTP head's layers; TP and DP groups take more).
    `--enforce-eager`, `cudagraph_mode` NONE, FULL or FULL_DECODE_ONLY, and drivers from 25.5.1 on pass.

    Why it matters: above the budget the capture stops minutes into the start with `AclmdlRICaptureBegin … error
    code is 207008` / `Stream resources are insufficient` or `Alloc sq cq fail` (FAQ 17, vllm-ascend#9691, #8393,
    PR #10555). Up to v0.20.2rc1 the plugin pruned the list to fit; from v0.21.0rc1 it needs HDK 25.5.1+.

    How to fix: upgrade the NPU driver and firmware to HDK 25.5.1 or newer; until then capture fewer graphs — the
    `cudagraph_capture_sizes` the finding names (the subset the old pruning picked), `"cudagraph_mode":
    "FULL_DECODE_ONLY"`, or `--enforce-eager`.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    g = ctx.knowledge.graph_budget
    b = g.budget
    va, out = ascend_release(ctx, T("the graph budget"))
    if out:
        return out
    if not SpecifierSet(b.vllm_ascend).contains(va.version):
        return ctx.skip(T("vllm-ascend {version} shrinks the capture list to the driver's stream budget itself "
                          "(update_aclgraph_sizes, up to v0.20.2rc1)", version=va.version))
    graph, how = cmd.graph_capture()
    if not graph:
        return ctx.ok(T("no graph is captured ({how})", how=how))
    driver = ctx.fact("stack").stack.driver
    dv = try_parse_version(driver)
    if dv is None:
        return ctx.unknown(T("the NPU driver version is not known ({driver}): whether it keeps the old stream budget "
                             "cannot be told", driver=driver or T("not found, see DRV101")))
    if dv >= try_parse_version(b.driver_below):
        return ctx.ok(T("HDK driver {driver} has no old stream budget ({below} and later)", driver=driver,
                        below=b.driver_below))
    comp, err = cmd.json_value("compilation_config")
    spec, spec_err = cmd.json_value("speculative_config")
    if err or spec_err:
        return ctx.unknown(T("cannot read the command's graph settings: {error}", error=err or spec_err))
    comp, spec = comp or {}, spec or {}
    mode = str(comp.get("cudagraph_mode") or "").upper()
    if mode in ("FULL", "FULL_DECODE_ONLY"):  # FAQ 17's mitigations: no per-layer pieces
        return ctx.ok(T("cudagraph_mode {mode} captures whole graphs, not one piece per layer: the mitigation FAQ 17 "
                        "gives for driver {driver}", mode=mode, driver=driver))
    return _judge(ctx, cmd, comp, spec, driver, va.version, g)


def _judge(ctx, cmd, comp: dict, spec: dict, driver: str, version: str, g):
    m = ctx.try_fact("serve_model")
    if m is None or not m.config:
        why = unreadable(m)
        return ctx.unknown(T("the model's config.json cannot be read ({why}): its depth decides how many graphs fit",
                             why=why), cause=why)
    cfg = model_config(ctx, m)
    layers = text_config(cfg).get("num_hidden_layers")
    if not isinstance(layers, int) or isinstance(layers, bool) or layers <= 0:
        return ctx.unknown(T("{path}/config.json gives no num_hidden_layers", path=m.path))
    method = str(spec.get("method") or "")
    tokens = spec.get("num_speculative_tokens") if isinstance(spec.get("num_speculative_tokens"), int) else 0
    draft = 0
    if method == "mtp" or method.endswith("_mtp"):
        draft = mtp_layers(cfg) or 1
    elif spec.get("model"):  # update_aclgraph_sizes: + the draft's get_total_num_hidden_layers() + 1 per graph
        draft = text_config(m.draft_config or {}).get("num_hidden_layers")
        if not isinstance(draft, int) or isinstance(draft, bool) or draft <= 0:
            return ctx.unknown(T("the draft model {model} adds its own layers to every graph, and its depth is not "
                                 "known: {why}", model=spec.get("model"), why=m.draft_why_not or T(
                                     "its config.json gives no num_hidden_layers")))
    env = ctx.fact("server_env")
    extra, _ = cmd.json_value("additional_config")
    try:
        lay = Layout(layers=layers, draft_layers=draft, tp=int_opt(cmd, "tensor_parallel_size", 1),
                     dp=int_opt(cmd, "data_parallel_size", 1), expert_parallel=cmd.flag("enable_expert_parallel"),
                     moe=read_architecture(cfg).is_moe, aiv=env.get("HCCL_OP_EXPANSION_MODE") == "AIV",
                     overlap_shared_expert=bool((extra or {}).get("multistream_overlap_shared_expert")),
                     pcp=int_opt(cmd, "prefill_context_parallel_size", 1),
                     dcp=int_opt(cmd, "decode_context_parallel_size", 1))
        caps = capture_list(comp, cmd.int_opt("max_num_seqs"), cmd.int_opt("max_num_batched_tokens"), tokens,
                            g.defaults, version)
    except ValueError as exc:
        return ctx.unknown(T("cannot read the parallel layout: {error}", error=str(exc)))
    fit, formula = budget_sizes(g.budget, lay)
    evidence = [ev(T("capture sizes"), f"{len(caps.sizes)}: {caps.how}\n{caps.sizes}"),
                ev("old stream budget (vllm-ascend v0.20.2rc1 update_aclgraph_sizes)", formula),
                ev(T("versions"), f"vllm-ascend {version}, driver {driver}")]
    if len(caps.sizes) <= fit:
        return ctx.ok(T("{n} capture sizes fit the stream budget of driver {driver}: at most {fit} for this model and "
                        "layout", n=len(caps.sizes), driver=driver, fit=fit), evidence)
    keep = sample(caps.sizes, fit)
    fix = T("Upgrade the NPU driver and firmware to HDK {below} or newer. Until then capture fewer graphs: "
            "--compilation-config '{{\"cudagraph_capture_sizes\": {keep}}}' (the {fit} sizes vllm-ascend's old "
            "pruning would keep), or \"cudagraph_mode\": \"FULL_DECODE_ONLY\", or --enforce-eager.",
            below=g.budget.driver_below, keep=keep, fit=fit) if fit else T(
        "Upgrade the NPU driver and firmware to HDK {below} or newer, or start with --enforce-eager: not one "
        "piecewise capture size fits this layout on driver {driver}.", below=g.budget.driver_below, driver=driver)
    return ctx.fail(T("vllm-ascend {version} captures {n} sizes ({how}), but driver {driver} has streams for {fit} "
                      "with {layers} layers{layout}: the capture stops with `error code is 207008` (Stream resources "
                      "are insufficient)", version=version, n=len(caps.sizes), how=caps.how, driver=driver, fit=fit,
                      layers=lay.layers, layout=f", TP {lay.tp}" + (f", DP {lay.dp}" if lay.dp > 1 else "")),
                    evidence, remediation=fix)
