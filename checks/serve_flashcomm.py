"""SERVE318: what the installed vllm-ascend release refuses at start when its sequence parallelism (FlashComm1) is on
— TP 1, or a MoE model without expert parallelism — with the switches that turn it on in that release, from the
`serve/sequence-parallel` table (ascend_doctor.knowledge.sequence_parallel)."""

from __future__ import annotations

from ascend_doctor.deploy.arch import text_config
from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.sequence_parallel import has_experts
from ascend_doctor.plugin import check, ev

from ._serve import cmd_or_skip, fc1_switches, int_opt, judged_release, model_config, unreadable


def _row(ctx):
    """(the sequence-parallel row of the installed release or of the release standing for it, the stand-in or
    None, outcome or None)."""
    va, stand_in, out = judged_release(ctx, T("the FlashComm1 rules"))
    if out is not None:
        return None, None, out
    row = ctx.knowledge.sequence_parallel.sp_of(stand_in or va)
    if row is None or not row.refuses:
        return None, None, ctx.skip(T("what vllm-ascend {release} refuses with FlashComm1 on is not recorded",
                                      release=stand_in or va))
    return row, stand_in, None


@check("SERVE318", "serve-flashcomm1-layout", severity="error", stage="serve",
       needs=["serve_cmd", "python", "server_env", "serve_model"])
def flashcomm1_layout(ctx):
    """FlashComm1 is on only with the layout the installed vllm-ascend release accepts

    What it checks: when a switch the installed vllm-ascend release reads turns its sequence parallelism
    (FlashComm1) on — `VLLM_ASCEND_ENABLE_FLASHCOMM1=1`, `--additional-config` `enable_flashcomm1` (0.20.2rc1 on;
    given, it decides), `pass_config.enable_sp` (0.13-0.14 lines), shared-expert DP (before 0.26.0rc1) — that
    `--tensor-parallel-size` is above 1, that a MoE model (a config.json key naming experts, vllm-ascend's own
    test) runs with `--enable-expert-parallel`, and (0.15.0rc1-0.17.0rc1) that the model is not a VL model (a
    `vision_config` or `thinker_config`). The switches and the refusals of each release are the
    `serve/sequence-parallel` rows, read in its source (0.13.0rc1 to 0.26.x refuse; from 0.27.1rc1 FlashComm1 is
    turned off instead, not judged).

    Why it matters: vllm-ascend stops at start with `AssertionError: Flash Comm v1 is only supported when tp_size >
    1.`, `Flash Comm v1 requires enable_expert_parallel=True for MoE models.` or `Flash Comm V1 is not supported
    for VL models.`. FlashComm1 is in many vllm-ascend tutorials and launch scripts, which get copied to a
    single-card, dense or multimodal setup, and the switch moved
    between the environment and `--additional-config` across releases.

    How to fix: serve with `--tensor-parallel-size` 2 or more (and `--enable-expert-parallel` for a MoE model), or
    turn FlashComm1 off (`VLLM_ASCEND_ENABLE_FLASHCOMM1=0`, `"enable_flashcomm1": false`).
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    row, stand_in, out = _row(ctx)
    if out:
        return out
    on, seen, out = fc1_switches(ctx, cmd, row)
    if out:
        return out
    release = stand_in or ctx.fact("python").dist("vllm-ascend").version
    evidence = [ev(T("switches"), join(", ", seen) if seen else T("none given")),
                ev("serve/sequence-parallel", row.source[0])]
    if on is None:
        return ctx.unknown(T("whether FlashComm1 is on is not known: {seen}", seen=join(", ", seen)), evidence)
    if not on:
        return ctx.ok(T("FlashComm1 is off in vllm-ascend {release} ({seen})", release=release,
                        seen=join(", ", seen) if seen else T("no switch given")), evidence)
    return _judge(ctx, cmd, row, release, stand_in, seen, evidence)


def _judge(ctx, cmd, row, release: str, stand_in, seen: list, evidence: list):
    try:
        tp = int_opt(cmd, "tensor_parallel_size", 1)
    except ValueError as exc:
        return ctx.unknown(T("cannot read the parallel layout: {error}", error=str(exc)), evidence)
    on_by = seen[0]
    problems, fixes, unseen = [], [], []
    if "tp1" in row.refuses and tp <= 1 and cmd.partial and not cmd.has("tensor_parallel_size"):
        unseen.append(T("the TP size (--tensor-parallel-size is not among the options the source shows)"))
    elif "tp1" in row.refuses and tp <= 1:
        problems.append(T("FlashComm1 is on ({by}) with --tensor-parallel-size {tp}: vllm-ascend {release} stops "
                          "with `Flash Comm v1 is only supported when tp_size > 1.`", by=on_by, tp=tp, release=release))
        fixes.append(T("serve with --tensor-parallel-size 2 or more"))
    if "moe_without_ep" in row.refuses and not cmd.flag("enable_expert_parallel") and cmd.partial \
            and not cmd.has("enable_expert_parallel"):
        unseen.append(T("whether --enable-expert-parallel is given (the source shows only part of the command)"))
    elif "moe_without_ep" in row.refuses and not cmd.flag("enable_expert_parallel"):
        m = ctx.try_fact("serve_model")
        why = unreadable(m)
        if why:
            unseen.append(T("whether the model is MoE (its config.json: {why})", why=why))
        elif has_experts(text_config(model_config(ctx, m))):
            problems.append(T("FlashComm1 is on ({by}) for a MoE model without --enable-expert-parallel: "
                              "vllm-ascend {release} stops with `Flash Comm v1 requires enable_expert_parallel=True "
                              "for MoE models.`", by=on_by, release=release))
            fixes.append(T("add --enable-expert-parallel"))
    if "vl_model" in row.refuses:
        m = ctx.try_fact("serve_model")
        why = unreadable(m)
        cfg = None if why else model_config(ctx, m)
        if why:
            unseen.append(T("whether the model is a VL model (its config.json: {why})", why=why))
        elif "vision_config" in cfg or "thinker_config" in cfg:
            problems.append(T("FlashComm1 is on ({by}) for a VL model (config.json has {key}): vllm-ascend {release} "
                              "stops with `Flash Comm V1 is not supported for VL models.`", by=on_by, release=release,
                              key="thinker_config" if "thinker_config" in cfg else "vision_config"))
            fixes.append(T("for a VL model, turn it off"))
    if problems:
        fix = T("Turn FlashComm1 off (VLLM_ASCEND_ENABLE_FLASHCOMM1=0, \"enable_flashcomm1\": false in "
                "--additional-config), or {fixes}.", fixes=join("; ", fixes))
        message = join("; ", problems)
        if stand_in:
            return ctx.warn(message + T(" (judged by the rules of vllm-ascend {release}, which stands for this "
                                        "development build)", release=stand_in), evidence, remediation=fix)
        return ctx.fail(message, evidence, remediation=fix)
    said = T("FlashComm1 is on ({by}) with a layout vllm-ascend {release} accepts (TP {tp})", by=on_by,
             release=release, tp=tp)
    if unseen:
        return ctx.unknown(said + T(" (not judged: {parts})", parts=join("; ", unseen)), evidence)
    return ctx.ok(said, evidence)
