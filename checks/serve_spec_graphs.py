"""SERVE317: the speculative tokens against the sizes vLLM captures FULL decode graphs at — the rounding of the
installed vLLM and the switches that make vllm-ascend's sequence parallelism join it, from the `serve/sequence-parallel`
table (ascend_doctor.knowledge.sequence_parallel)."""

from __future__ import annotations

from typing import Any, Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.sequence_parallel import sequence_parallel
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.switches import is_on

from ._serve import cmd_or_skip, int_opt, paired_of, serving_versions, sp_layout

_MAX_TOKENS = 1024  # a num_speculative_tokens beyond any drafter's: not judged


def _settings(ctx, cmd):
    """((speculative tokens, cudagraph_mode or None, --compilation-config, evidence), None) or (None, outcome)."""
    if not cmd.has("speculative_config"):
        return None, ctx.skip(T("no --speculative-config: every decode step is one token per request"))
    spec, err = cmd.json_with_dotted("speculative_config")
    comp, comp_err = cmd.json_with_dotted("compilation_config")
    if err or comp_err:
        return None, ctx.unknown(T("cannot read the command's graph settings: {error}", error=err or comp_err))
    n = spec.get("num_speculative_tokens")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= _MAX_TOKENS:
        return None, ctx.skip(T("--speculative-config gives no num_speculative_tokens (1 to {most}): not judged",
                                most=_MAX_TOKENS))
    evidence = [ev(T("command line"), cmd.source("speculative_config"))]
    if cmd.has("compilation_config"):
        evidence.append(ev(T("command line"), cmd.source("compilation_config")))
    mode = comp.get("cudagraph_mode")
    return (n, str(mode).upper() if isinstance(mode, str) else None, comp, evidence), None


def _sizes_top(comp: dict) -> Optional[int]:
    """The largest capture size the command allows (max_cudagraph_capture_size, else its largest listed size)."""
    top = comp.get("max_cudagraph_capture_size")
    if isinstance(top, int) and not isinstance(top, bool):
        return top
    sizes = [s for s in comp.get("cudagraph_capture_sizes") or [] if isinstance(s, int) and not isinstance(s, bool)]
    return max(sizes) if sizes else None


def _good_tokens(n: int, tp: int) -> list[int]:
    """The speculative token counts nearest `n` whose n + 1 divides TP or is a multiple of it (searched up to 4096:
    a TP read off a paste can be any number)."""
    good = [k for k in range(1, min(max(2 * n, tp) + 2, 4097)) if tp % (k + 1) == 0 or (k + 1) % tp == 0]
    return sorted(good, key=lambda k: (abs(k - n), k))[:2]


@check("SERVE317", "serve-spec-graph-sizes", severity="error", stage="serve",
       needs=["serve_cmd", "python", "server_env"])
def spec_graph_sizes(ctx):
    """The speculative tokens fit the sizes vLLM captures FULL decode graphs at

    What it checks: with `--speculative-config` (`num_speculative_tokens` n) and a `cudagraph_mode` whose decode
    graphs are FULL, vLLM keeps only capture sizes that are multiples of n + 1; with sequence parallelism on and
    TP > 1 the multiple is max(n + 1, TP), and vLLM refuses when that is not a multiple of both. On Ascend, whether
    sequence parallelism joins is vllm-ascend's FlashComm1 switch of the installed release (the
    `VLLM_ASCEND_ENABLE_FLASHCOMM1` variable, `--additional-config` `enable_flashcomm1`, shared-expert DP, per
    release); from 0.29.0rc1 vllm-ascend aligns the sizes to lcm(n + 1, TP) itself. It also checks that the largest
    capture size allowed (`max_cudagraph_capture_size`, or the largest of `cudagraph_capture_sizes`) is at least
    the multiple. The rules of each vLLM and vllm-ascend release are the `serve/sequence-parallel` rows, read in their
    sources; a release no row covers is not judged.

    Why it matters: the engine stops while it initialises the KV cache, minutes into the start, with `Can't
    determine cudagraph shapes that are both a multiple of 6 (num_speculative_tokens + 1) required by spec-decode
    and 4 (tensor_parallel_size) required by sequence parallelism` (vllm#29036, vllm-ascend#6846 — the DSpark
    tutorial of vllm-ascend 0.25.1rc1: TP 4, 5 speculative tokens, FlashComm1) or `No valid cudagraph sizes after
    rounding to multiple of …` (vllm#28315).

    How to fix: choose `num_speculative_tokens` so that n + 1 divides TP or is a multiple of it (the finding names
    the nearest), or turn sequence parallelism off, or capture the decode graphs PIECEWISE; for the second error
    raise `max_cudagraph_capture_size` (or add a capture size) to at least the multiple.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    settings, out = _settings(ctx, cmd)
    if out:
        return out
    n, mode, comp, evidence = settings
    if cmd.flag("enforce_eager") or mode == "NONE":
        return ctx.ok(T("no graph is captured ({how}): the speculative tokens round nothing",
                        how="--enforce-eager" if cmd.flag("enforce_eager") else "cudagraph_mode NONE"), evidence)
    versions = serving_versions(ctx)
    if not versions["vllm"]:
        return ctx.skip(T("vLLM is not installed in the serving python: its graph sizes do not apply"))
    rounding = ctx.knowledge.sequence_parallel.rounding_of(versions["vllm"])
    if rounding is None:
        return ctx.unknown(T("how vLLM {version} rounds the decode graphs for speculative decoding is not recorded "
                             "(serve/sequence-parallel)", version=versions["vllm"]), evidence)
    if is_on(ctx.fact("server_env").get("VLLM_USE_V2_MODEL_RUNNER")):
        return ctx.skip(T("VLLM_USE_V2_MODEL_RUNNER is on: Model Runner V2 sizes its graphs itself"))
    try:
        tp = int_opt(cmd, "tensor_parallel_size", 1)
    except ValueError as exc:
        return ctx.unknown(T("cannot read the parallel layout: {error}", error=str(exc)), evidence)
    return _judge(ctx, cmd, n, mode, comp, tp, rounding, versions, evidence)


def _sp(ctx, cmd, comp: dict, versions: dict) -> tuple[Optional[bool], bool, str, Any]:
    """(sequence parallelism on, off or not known; vllm-ascend aligns the sizes itself; what decided it; the
    stand-in release or None)."""
    va = versions["vllm-ascend"]
    if not va:
        return None, False, T("vllm-ascend is not installed: sequence parallelism is not judged"), None
    stand_in = paired_of(ctx)
    release = stand_in or va
    row = ctx.knowledge.sequence_parallel.sp_of(release)
    if row is None:
        return None, False, T("which switches turn sequence parallelism on in vllm-ascend {release} is not "
                              "recorded", release=release), stand_in
    if row.aligned:
        return None, True, T("vllm-ascend {release} aligns the sizes to lcm(n + 1, TP) itself", release=release), \
            stand_in
    if not row.graph_sizes:
        return None, False, T("whether sequence parallelism reaches vLLM's graph-size rounding in vllm-ascend "
                              "{release} is not recorded", release=release), stand_in
    additional, _ = cmd.json_value("additional_config")
    on, seen = sequence_parallel(row, ctx.fact("server_env"), additional, comp.get("pass_config"), sp_layout(cmd))
    said = join(", ", seen) if seen else T("no switch of vllm-ascend {release} given", release=release)
    state = T("sequence parallelism on") if on else T("sequence parallelism off") if on is False else T(
        "sequence parallelism not known")
    return on, False, T("{state} ({said})", state=state, said=said), stand_in


def _problems(n: int, tp: int, comp: dict, rounding, sp_state, vllm: str) -> tuple[list, list, int, Optional[int]]:
    """(what vLLM refuses, what was not judged, the multiple the decode sizes need — 0 when sequence parallelism
    leaves none —, the largest size allowed)."""
    sp, aligned, sp_said = sp_state
    q, problems, notes, multiple = n + 1, [], [], n + 1
    if tp > 1 and rounding.sp_multiple and not aligned:
        if sp is None and (tp % q and q % tp):
            notes.append(T("with sequence parallelism it would need a multiple of both {q} and TP {tp}: {said}",
                           q=q, tp=tp, said=sp_said))
        elif sp:
            multiple = max(q, tp)
            if multiple % q or multiple % tp:
                multiple = 0
                problems.append(T("num_speculative_tokens {n} with TP {tp} and {said}: vLLM {vllm} stops with "
                                  "`Can't determine cudagraph shapes that are both a multiple of {q} "
                                  "(num_speculative_tokens + 1) required by spec-decode and {tp} "
                                  "(tensor_parallel_size) required by sequence parallelism`", n=n, tp=tp,
                                  said=sp_said, vllm=vllm, q=q))
    elif aligned and tp > 1:
        notes.append(sp_said)
    top = _sizes_top(comp)
    if multiple and top is not None and multiple > top:
        problems.append(T("the largest capture size allowed is {top}, below the multiple {m} the decode graphs need: "
                          "vLLM {vllm} stops with `No valid cudagraph sizes after rounding to multiple of {m}`",
                          top=top, m=multiple, vllm=vllm))
    return problems, notes, multiple, top


def _judge(ctx, cmd, n: int, mode: Optional[str], comp: dict, tp: int, rounding, versions: dict, evidence: list):
    vllm = versions["vllm"]
    if mode is not None and mode not in rounding.modes:
        return ctx.ok(T("cudagraph_mode {mode}: vLLM {vllm} rounds the decode graphs of {modes} only", mode=mode,
                        vllm=vllm, modes=", ".join(rounding.modes)), evidence)
    sp, aligned, sp_said, stand_in = _sp(ctx, cmd, comp, versions)
    evidence.append(ev(T("versions"), f"vLLM {vllm}, vllm-ascend {versions['vllm-ascend'] or '-'}"
                       + (f" (judged as {stand_in})" if stand_in else "")))
    evidence.append(ev("serve/sequence-parallel", rounding.source[0]))
    problems, notes, multiple, top = _problems(n, tp, comp, rounding, (sp, aligned, sp_said), vllm)
    if problems and mode is None:
        return ctx.unknown(T("if the release's default cudagraph_mode captures FULL decode graphs: {problem}; the "
                             "default is not recorded here: set cudagraph_mode in --compilation-config",
                             problem=join("; ", problems)), evidence)
    if problems:
        return _finding(ctx, problems, n, tp, multiple, stand_in, evidence)
    said = (T("num_speculative_tokens {n}: FULL decode graphs at multiples of {m}", n=n, m=multiple) if mode else
            T("num_speculative_tokens {n}: if the release's default mode captures FULL decode graphs, at multiples "
              "of {m}", n=n, m=multiple))
    if top is not None:
        said += T(", up to {top}", top=top)
    return ctx.ok(said + (T(" (not judged: {parts})", parts=join("; ", notes)) if notes else ""), evidence)


def _finding(ctx, problems: list, n: int, tp: int, multiple: int, stand_in, evidence):
    if not multiple:
        fix = T("Use \"num_speculative_tokens\" {good} (n + 1 then divides TP {tp} or is a multiple of it), or turn "
                "sequence parallelism off, or set \"cudagraph_mode\": \"PIECEWISE\".",
                good=" or ".join(str(k) for k in _good_tokens(n, tp)), tp=tp)
    else:
        fix = T("Set \"max_cudagraph_capture_size\" to at least {m} in --compilation-config (or add a capture size "
                "of {m}), or lower num_speculative_tokens.", m=multiple)
    message = join("; ", problems)
    if stand_in:
        return ctx.warn(message + T(" (judged by the rules of vllm-ascend {release}, which stands for this "
                                    "development build)", release=stand_in), evidence, remediation=fix)
    return ctx.fail(message, evidence, remediation=fix)
