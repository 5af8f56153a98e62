"""NPU205-NPU206 (stage="compute", `--compute`): the operator libraries vllm-ascend calls on its hot path give right
results on every NPU, and the NPUs all-reduce correctly. Pure judgements of the `npu_compute` fact; the run itself,
memory and matmul are in npu_compute.py."""

from __future__ import annotations

from ascend_doctor.compute import judge as J
from ascend_doctor.compute.facts import COLLECTIVE_STAGES
from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev

NEEDS = ["npu_compute"]


@check("NPU205", "fused-ops", severity="critical", needs=NEEDS, stage="compute")
def fused_ops(ctx):
    """The fused operators vllm-ascend calls on every forward give right results on every NPU

    What it checks: per rank, each operator in the `compute/compute-smoke` table `[[op]]` against a plain torch
    reference on the CPU: `torch_npu.npu_rms_norm` (aclnn: aclnnRmsNorm, every layer's norm) within the dtype's
    tolerance, and `torch_npu._npu_reshape_and_cache` (ATB: the paged KV-cache write of every step up to v0.23;
    A2/A3) exactly.
    The CPU path runs torch's own kernels of the same operations in their place.

    Why it matters: the operator libraries are separate packages (the CANN ops and kernels, NNAL for ATB) and can be
    missing, mismatched or broken while a plain add works: vllm-ascend#10136 printed "basic torch-npu op OK" and
    then died with `Failed core proc(s): {'EngineCore': -11}`; an ATB library that does not match torch_npu fails to
    load with `undefined symbol` (Ascend/pytorch#99) or `setup failed!` (vllm-ascend#393, #3563).

    How to fix: an error naming NNAL or an `undefined symbol` in libop_plugin_atb.so/libtbe_adapter.so: install the
    NNAL release that matches the CANN toolkit and `source /usr/local/Ascend/nnal/atb/set_env.sh`; an aclnn error
    code (EZ1001, 561xxx): check the CANN kernels package against the CANN toolkit (CANN101, CANN102); a wrong
    result on one NPU only: take it out of service.
    """
    f = ctx.fact("npu_compute")
    skipped = J.not_run(ctx, f)
    if skipped is not None:
        return skipped
    seen, unseen, lines, bad = J.per_rank(f, "op", J.op_line)
    if bad:
        parts = J.group_failures(bad, lambda s: f"{s.get('call')} [{s.get('library')}]", J.wrong_or_error)
        return ctx.fail(T("fused operator wrong or failed: {what}", what=join("; ", parts)), lines,
                        remediation=T("An error naming NNAL or an undefined symbol in libop_plugin_atb.so: install "
                                      "the NNAL release matching the CANN toolkit and `source "
                                      "/usr/local/Ascend/nnal/atb/set_env.sh`; an aclnn error code: check the CANN "
                                      "kernels package against the toolkit (CANN101, CANN102)."))
    if not seen:
        return ctx.unknown(T("no rank reached the operator step (see NPU201)"))
    ops = sorted({f"{s.get('call')} [{s.get('library')}]" for _, steps in seen for s in steps})
    if unseen:
        return ctx.unknown(T("operators right on rank(s) {seen_ranks}; rank(s) {unseen} never reached this step (see "
                             "NPU201)", seen_ranks=J.id_list(r.rank for r, _ in seen),
                             unseen=J.id_list(r.rank for r in unseen)), lines)
    skipped_ops = [o.name for o in ctx.knowledge.compute.op if o.name not in {s.get("name") for _, st in seen
                                                                              for s in st}]
    note = T(" (not run on this chip: {ops})", ops=", ".join(skipped_ops)) if skipped_ops else ""
    return ctx.ok(T("{ops} right on {n} rank(s){note} — {path}", ops="; ".join(ops), n=len(seen), note=note,
                    path=J.path_label(f)), lines)


@check("NPU206", "allreduce", severity="critical", needs=NEEDS, stage="compute")
def allreduce(ctx):
    """Every NPU takes part in an all-reduce that returns the right sum, and its bus bandwidth is reported

    What it checks: all ranks join one process group (hccl on NPUs, gloo on the CPU path) and all-reduce a vector
    holding their rank + 1: every element must come back as 1 + 2 + … + world. Then a larger buffer
    (`allreduce_bytes`, 64 MiB on NPUs) is timed: algorithm bandwidth = bytes / time, bus bandwidth = algbw ×
    2(n-1)/n (nccl-tests' definition; HCCL's hccl_test prints only the algorithm figure). A rank that never joins,
    crashes or hangs is named; the survivors are stopped instead of waiting for HCCL's own timeouts
    (HCCL_CONNECT_TIMEOUT 120 s, HCCL_EXEC_TIMEOUT 1836 s).

    Why it matters: tensor parallelism all-reduces after every layer. A ring that does not form fails the start
    after the model has loaded (`hcclCommInitRootInfoConfig … error code is 1`, vllm-ascend#2712); a rank that does
    not answer shows as `EI0006 Getting socket times out` (#486, #5461) or `EI0002 … Notify register times out`
    (#3413) minutes later.

    How to fix: a wrong sum: take the NPUs out of service and run the vendor diagnosis; a rank that never joined or
    hung: check its health and HCCL links (`hccn_tool -i <id> -link -g`, HCCL101-HCCL104) and that no other job
    holds the HCCL ports (HCCL106); a timeout with every rank waiting: raise --compute-timeout only if the ranks were
    still starting, otherwise check the network with HCCL_ENTRY_LOG_ENABLE=1.
    """
    f = ctx.fact("npu_compute")
    skipped = J.not_run(ctx, f)
    if skipped is not None:
        return skipped
    seen, unseen = J.reported(f, "allreduce")
    lines = [ev(J.where(f, r), J.allreduce_line(s[-1]), ok=bool(s[-1].ok)) for r, s in seen]
    wrong = [(r, s[-1]) for r, s in seen if not s[-1].ok and not s[-1].error]
    culprits, victims = f.diagnosis()
    inside = [(k, r) for k, r in culprits if r.stage_kind in COLLECTIVE_STAGES]
    before = [r for k, r in culprits if r.stage_kind not in COLLECTIVE_STAGES and r.stage != "done"]
    if wrong or inside:
        parts = J.group_failures(wrong, lambda s: T("sum"), J.allreduce_line)
        groups: dict = {}
        for kind, r in inside:
            key, msg = J.culprit(f, kind, r)
            groups.setdefault(key, [msg, []])[1].append(r.rank)
            lines.append(ev(J.where(f, r), J.tail(r.stderr_tail, 8) or (r.stage or ""), ok=False))
        parts += [T("rank(s) {ranks} {what}", ranks=J.id_list(ranks), what=msg) for msg, ranks in groups.values()]
        if victims:
            parts.append(T("rank(s) {ranks} were waiting for them and were stopped or timed out",
                           ranks=J.id_list(r.rank for r in victims)))
        return ctx.fail(T("the all-reduce across {world} rank(s) did not complete correctly: {what}",
                          world=f.all_ranks, what=join("; ", parts)), lines,
                        remediation=T("Check the named rank's health and HCCL links (`hccn_tool -i <id> -link -g`, "
                                      "HCCL101-HCCL104) and that no other job holds the HCCL ports (HCCL106); a wrong "
                                      "sum: take the NPUs out of service."))
    if before:
        return ctx.unknown(T("the all-reduce could not be tested: rank(s) {ranks} ended before the collective (see "
                             "NPU201)", ranks=J.id_list(r.rank for r in before)), lines)
    if unseen or not seen:
        return ctx.unknown(T("the all-reduce was not seen on rank(s) {unseen} (see NPU201)",
                             unseen=J.id_list(r.rank for r in unseen)), lines)
    bus = [s[-1].get("busbw_gbps") for _, s in seen if isinstance(s[-1].get("busbw_gbps"), (int, float))]
    size = J.human_bytes(seen[0][1][-1].get("bytes"))
    span = "?" if not bus else (f"{min(bus):g}" if min(bus) == max(bus) else f"{min(bus):g}-{max(bus):g}")
    return ctx.ok(T("{world} rank(s) all-reduced the right sum; {size}: bus bandwidth {span} GB/s — {path}",
                    world=f.all_ranks, size=size, span=span, path=J.path_label(f)), lines)
