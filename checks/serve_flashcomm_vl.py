"""SERVE321: FlashComm1 on a VL model that the installed vllm-ascend release neither refuses nor supports — from the
`serve/flashcomm-vl` table (ascend_doctor.knowledge.flashcomm_vl: the release's own guide and code)."""

from __future__ import annotations

import posixpath

from ascend_doctor.deploy.arch import text_config
from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.flashcomm_vl import adapted_for, model_class
from ascend_doctor.knowledge.sequence_parallel import has_experts
from ascend_doctor.plugin import check, ev

from ._serve import cmd_or_skip, fc1_switches, judged_release, model_config, unreadable

ADAPTED = {"qwen3_vl": "Qwen3-VL (patch_qwen3vl.py)", "mla": "VL models with MLA (ops/mla.py)"}
CLASS = {"vl_dense": "VL + Dense", "vl_moe": "VL + MoE"}


@check("SERVE321", "serve-flashcomm1-vl", severity="warning", stage="serve",
       needs=["serve_cmd", "python", "server_env", "serve_model"])
def flashcomm1_vl(ctx):
    """FlashComm1 is not on for a VL model the installed vllm-ascend release does not support it for

    What it checks: when a switch the installed vllm-ascend release reads turns FlashComm1 on (as SERVE318 reads
    them) and the model is a VL model (config.json has `vision_config` or `thinker_config`), that the release
    supports FlashComm1 for it: its code adapts FlashComm1 to that model (Qwen3-VL from 0.13.0rc2 on the v0.13.0
    branch and from 0.18.0; VL models with MLA, such as Kimi-K2.5, from 0.18.0rc1), or the support matrix of its
    sequence-parallelism guide marks the model's class (`VL + Dense`, `VL + MoE`) with the modes it runs in (0.23.0,
    0.25.1rc1-0.26.0rc1), not `x` (0.15.0rc1-0.22.1rc1, 0.23.0rc1, 0.24.0rc1). A release without a guide is judged
    by the first later one, and says so. The release's own tutorials count too: the model one of them serves with
    FlashComm1 on passes, and where they serve another VL model of the same class the guide's `x` and the tutorial
    disagree, which is unknown. Releases that refuse it at start (0.11.0rc2-0.14.0rc1 except the 0.13.0rc2 line,
    0.15.0rc1-0.17.0rc1) are REL-B16's and SERVE318's to fail, not judged here.

    Why it matters: FlashComm1 splits the hidden states across the TP ranks with custom ops written for text models;
    a VL model's vision path adds full-sequence tensors to them. Where the release does not refuse the combination
    it starts and then fails: a dynamo shape mismatch at start-up (`The size of tensor a ((s59//2)) must match the
    size of tensor b`) or a slice error at the first batch (`src size = [64, 5120], slice size = [32, 5120]`). The
    guide says FlashComm1 "is difficult to support VL-class models" and offers sequence parallelism by pass for
    them; launch scripts copied from a text model's tutorial turn FlashComm1 on for Qwen3.5 and Omni models.

    How to fix: turn FlashComm1 off for this model (`VLLM_ASCEND_ENABLE_FLASHCOMM1=0`, `"enable_flashcomm1": false`
    in `--additional-config`); where the guide marks sequence parallelism `graph` for the model's class, use it
    instead (`--compilation-config '{"pass_config": {"enable_sp": true}}'`).
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    va, stand_in, out = judged_release(ctx, T("the FlashComm1 rules"))
    if out is not None:
        return out
    release = stand_in or va
    sp = ctx.knowledge.sequence_parallel.sp_of(release)
    row = ctx.knowledge.flashcomm_vl.row_of(release)
    if sp is None or not sp.switches or row is None:
        return ctx.skip(T("what vllm-ascend {release} does with FlashComm1 on a VL model is not recorded",
                          release=release))
    if row.refuses:
        return ctx.skip(T("vllm-ascend {release} refuses FlashComm1 for a VL model at start (judged by SERVE318 and "
                          "the release rules)", release=release))
    on, seen, out = fc1_switches(ctx, cmd, sp)
    if out:
        return out
    evidence = [ev(T("switches"), join(", ", seen) if seen else T("none given"))]
    if on is None:
        return ctx.unknown(T("whether FlashComm1 is on is not known: {seen}", seen=join(", ", seen)), evidence)
    if not on:
        return ctx.ok(T("FlashComm1 is off in vllm-ascend {release} ({seen})", release=release,
                        seen=join(", ", seen) if seen else T("no switch given")), evidence)
    m = ctx.try_fact("serve_model")
    why = unreadable(m)
    if why:
        return ctx.unknown(T("FlashComm1 is on ({by}); whether the model is a VL model is not known (its config.json: "
                             "{why})", by=seen[0], why=why), evidence)
    cfg = model_config(ctx, m)
    quantized = bool(cmd.get("quantization")) or "quantization_config" in cfg
    return _judge(ctx, cfg, row, release, seen[0], quantized, evidence)


def _judge(ctx, cfg: dict, row, release: str, by: str, quantized: bool, evidence: list):
    key = "thinker_config" if "thinker_config" in cfg else "vision_config" if "vision_config" in cfg else None
    model_type = str(cfg.get("model_type") or "")
    if key is None:
        return ctx.ok(T("FlashComm1 is on ({by}) for a model that is not a VL model (config.json has no vision_config "
                        "or thinker_config)", by=by), evidence)
    text = text_config(cfg)
    seen = T("model_type {type}, config.json has {key}", type=model_type or "?", key=key)
    covered = adapted_for(row, model_type, "kv_lora_rank" in text)
    if covered:
        return ctx.ok(T("FlashComm1 is on ({by}) for a VL model ({seen}); vllm-ascend {release} adapts it to {what}",
                        by=by, seen=seen, release=release, what=ADAPTED[covered]),
                      evidence + [ev("serve/flashcomm-vl", row.source[-1])])
    column = model_class(True, has_experts(text))
    same, kin = _tutorials(ctx, row, ctx.fact("serve_cmd").model or "", column)
    if same:
        return ctx.ok(T("FlashComm1 is on ({by}) for a VL model ({seen}): vllm-ascend {release}'s own tutorial serves "
                        "{model} with it", by=by, seen=seen, release=release, model=same), evidence)
    guide_row, guide_release = ctx.knowledge.flashcomm_vl.guide_for(release)
    if guide_row is None:
        return ctx.skip(T("no sequence-parallelism guide of vllm-ascend {release} or later says whether FlashComm1 "
                          "runs a VL model", release=release))
    cells = guide_row.guide_quantized if quantized else guide_row.guide
    cell = cells.get("flashcomm1", {}).get(column)
    where = next((s for s in guide_row.source if "sequence_parallelism.md" in s), guide_row.source[0])
    evidence.append(ev("serve/flashcomm-vl", where))
    whose = (T("vllm-ascend {release}'s guide", release=release) if guide_release == release else
             T("the guide of vllm-ascend {later} (vllm-ascend {release} has none; the first later one speaks for it)",
               later=guide_release, release=release))
    if cell is None:
        return ctx.skip(T("{whose} has no Flash Comm V1 cell for {column}", whose=whose, column=CLASS[column]))
    if cell.strip().lower() != "x":
        return ctx.ok(T("FlashComm1 is on ({by}) for a VL model ({seen}): {whose} runs it for {column} ({cell})",
                        by=by, seen=seen, whose=whose, column=CLASS[column], cell=cell), evidence)
    if kin:  # the guide's `x` and the release's own tutorials disagree for this class: not picked
        return ctx.unknown(T("FlashComm1 is on ({by}) for a VL model ({seen}): {whose} marks Flash Comm V1 "
                             "unsupported (`x`) for {column}, but vllm-ascend {release}'s own tutorials serve {models} "
                             "({column}) with it; which holds for this model is not known", by=by, seen=seen,
                             whose=whose, column=CLASS[column], release=release, models=join(", ", kin)), evidence)
    adapted = join(", ", [ADAPTED[a] for a in row.adapted]) if row.adapted else T("no VL model")
    fix = T("Turn FlashComm1 off for this model (VLLM_ASCEND_ENABLE_FLASHCOMM1=0, \"enable_flashcomm1\": false in "
            "--additional-config).")
    if cells.get("sp", {}).get(column, "x").strip().lower() != "x":
        fix += T(" The guide runs sequence parallelism by pass for {column} instead: --compilation-config "
                 "'{{\"pass_config\": {{\"enable_sp\": true}}}}'.", column=CLASS[column])
    return ctx.warn(T("FlashComm1 is on ({by}) for a VL model ({seen}): {whose} marks Flash Comm V1 unsupported "
                      "(`x`) for {column}{quant}, and the release adapts it only to {adapted}; vllm-ascend {release} "
                      "does not refuse it at start, so it fails later (a shape mismatch in the compiled graph or a "
                      "slice error at the first batch)", by=by, seen=seen, whose=whose, column=CLASS[column],
                      quant=T(" with quantization") if quantized else "", adapted=adapted, release=release),
                    evidence, remediation=fix)


def _tutorials(ctx, row, served: str, column: str) -> tuple:
    """(the served model's name when one of the release's own tutorials serves it with FlashComm1 on, else '';
    the VL models of the same class those tutorials serve with it). A tutorial's model is known by its catalogue
    entry (its directory named as the published model or a converted copy of it); one the catalogue lacks is not
    counted."""
    from ascend_doctor.core.errors import InputError
    from ascend_doctor.deploy.catalogue import catalogue_files, find_model, published_name

    mine = published_name(posixpath.basename(served.rstrip("/"))).lower()
    kin = []
    for name in row.tutorials:
        base = published_name(name)
        if mine and base.lower() == mine:
            return name, []
        entry = find_model(base, ctx.knowledge.catalogue)
        try:
            cfg = catalogue_files(entry).config if entry is not None else None
        except InputError:
            cfg = None
        if isinstance(cfg, dict) and ("vision_config" in cfg or "thinker_config" in cfg) and \
                model_class(True, has_experts(text_config(cfg))) == column:
            kin.append(name)
    return "", kin
