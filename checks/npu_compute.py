"""NPU201-NPU204 (stage="compute", `--compute`): the compute smoke ran on every rank, and each NPU holds memory and
multiplies correctly at the speed of its peers. Pure judgements of the `npu_compute` fact (ascend_doctor.compute);
the fused operators and the all-reduce are in npu_collective.py."""

from __future__ import annotations

from ascend_doctor.compute import judge as J
from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev

NEEDS = ["npu_compute"]


_FIXES = {
    "missing": T("A rank that never reported could not start its interpreter or import torch/torch_npu: run "
                 "`ASCEND_RT_VISIBLE_DEVICES=<n> <python> -c 'import torch, torch_npu; torch.npu.set_device(0)'` for "
                 "that NPU, and check `npu-smi info` lists it (NPU100, NPU104)."),
    "start": T("A rank that could not import torch/torch_npu or open its NPU: run `ASCEND_RT_VISIBLE_DEVICES=<n> "
               "<python> -c 'import torch, torch_npu; torch.npu.set_device(0)'` for that NPU, check that `npu-smi "
               "info` lists it healthy (NPU100, NPU101, NPU104), and explain the error code with `ascend-doctor "
               "triage`."),
    "crashed": T("A rank killed by a signal crashed inside torch/torch_npu or CANN: its stderr (faulthandler's stack, "
                 "above) names the call; check the CANN/torch_npu pair (CANN101, TORCH102), `npu-smi info -t health -i "
                 "<id>` and `dmesg` for that device."),
    "hung": T("A rank that hangs in the collective while its peers time out waiting: check that NPU's health "
              "(`npu-smi info -t health -i <id>`), its HCCL links (HCCL101-HCCL104) and rerun with "
              "`HCCL_ENTRY_LOG_ENABLE=1` to see the call it never returns from."),
    "error": T("Read the failing rank's error above: an NPU out-of-memory means another process holds HBM (NPU103); "
               "an aclnn/ATB error names the operator and the CANN error code (`ascend-doctor triage` explains it)."),
    "stopped": T("Give the run more time with --compute-timeout SECONDS if the ranks were still making progress; "
                 "otherwise fix the rank that ended first — the others were only waiting for it."),
    "exited": T("A rank that exited early without an error: run it by hand to see why (its stderr is above)."),
}


@check("NPU201", "compute-run", severity="critical", needs=NEEDS, stage="compute")
def compute_run(ctx):
    """Every rank of the compute smoke finished: none crashed, hung, went missing or ran out of time

    What it checks: `--compute` starts one rank per NPU in the serving interpreter (ascend_doctor/compute: HBM
    touch, matmul per dtype, the fused operators, an all-reduce), each under a deadline. Every rank must report each
    step and end normally. A rank killed by a signal, one that raised, one that never reported, one that hung in the
    collective while its peers timed out waiting for it, and one stopped at the budget are each named with the stage
    it was in.

    Why it matters: a model load takes minutes; an NPU that crashes on its first matmul, an operator library that
    segfaults (vllm-ascend#10136: basic torch_npu ops work, the engine core dies in a fused operator) or a ring that
    hangs shows here in seconds, with the device named, instead of as a dead EngineCore.

    How to fix: see the message: it names the rank, its stage and how it ended, and the fix for that kind.
    """
    f = ctx.fact("npu_compute")
    if not f.ran:
        return J.not_run(ctx, f)
    if f.launcher_error or not f.ranks:
        return ctx.fail(T("the compute smoke gave no record: {error}", error=f.launcher_error or "no rank"),
                        [ev(T("launcher stderr"), f.launcher_stderr)] if f.launcher_stderr else [])
    hung = set(f.hung_ranks())
    lines = []
    for r in f.ranks:
        how = "hung" if r.rank in hung else r.ending()
        excerpt = (f"{how}: stage={r.stage or '-'} exit={r.returncode} signal={r.signal or '-'} "
                   f"stopped={r.stopped or '-'} {r.seconds} s")
        if not r.done and r.stderr_tail:
            excerpt += "\n" + J.tail(r.stderr_tail, 12)
        lines.append(ev(J.where(f, r), excerpt, ok=r.done))
    if all(r.done for r in f.ranks):
        return ctx.ok(T("{world} rank(s) finished every step in {seconds} s (budget {budget} s) — {path}",
                        world=f.world, seconds=f.seconds, budget=f"{f.budget:g}", path=J.path_label(f)), lines)
    parts, first = J.story(f)
    bad = sum(1 for r in f.ranks if not r.done)
    return ctx.fail(T("{bad} of {world} rank(s) did not finish: {what}", bad=bad, world=f.world,
                      what=join("; ", parts)), lines, remediation=_FIXES[first])


@check("NPU202", "compute-memory", severity="error", needs=NEEDS, stage="compute")
def compute_memory(ctx):
    """Each NPU allocates its share of HBM and reads back what was written

    What it checks: every rank allocates the share of its device's total memory that
    the `compute/compute-smoke` table sets (`[npu] hbm_share`, 10%; 64 MiB per rank on the CPU path), fills it
    with one byte value and reads the minimum and maximum back. Both must be that value.

    Why it matters: an NPU whose memory is already held (a leftover process, another container) fails here with
    `NPU out of memory`, and a device whose HBM does not keep what is written corrupts weights silently.

    How to fix: free the NPU (`npu-smi info` shows who holds it; NPU103), or take a device that reads back wrong
    out of service (`npu-smi info -t health -i <id>`, the vendor's hardware diagnosis).
    """
    f = ctx.fact("npu_compute")
    skipped = J.not_run(ctx, f)
    if skipped is not None:
        return skipped
    seen, unseen = J.reported(f, "memory")
    lines = [ev(J.where(f, r), J.memory_line(s[-1]), ok=bool(s[-1].ok)) for r, s in seen]
    bad = [(r, s[-1]) for r, s in seen if not s[-1].ok]
    if bad:
        return ctx.fail(T("memory failed on rank(s) {ranks}: {what}", ranks=J.id_list(r.rank for r, _ in bad),
                          what=J.memory_line(bad[0][1])), lines,
                        remediation=T("Free the NPU (`npu-smi info` lists who holds HBM; NPU103) or take a device "
                                      "that reads back wrong out of service (`npu-smi info -t health -i <id>`)."))
    if not seen:
        return ctx.unknown(T("no rank reached the memory step (see NPU201)"))
    if unseen:
        return J.partial(ctx, f, unseen, T("memory written and read back"))
    size = J.human_bytes(seen[0][1][-1].get("bytes"))
    return ctx.ok(T("{n} rank(s) each wrote and read back {size} — {path}", n=len(seen), size=size,
                    path=J.path_label(f)), lines)


@check("NPU203", "matmul-correct", severity="critical", needs=NEEDS, stage="compute")
def matmul_correct(ctx):
    """Each NPU multiplies correctly in every dtype it supports

    What it checks: per rank and per dtype (bf16 and fp16 on 910B/A3, fp16 on 310P — from the chip table), a
    product of two random matrices against the same product in float64 on the CPU: max |out - ref| / max |ref| must
    be within the dtype's tolerance (the `compute/compute-smoke` table `[tolerance]`, four units in the last place).

    Why it matters: a chip, firmware or operator library that computes wrong does not crash: the server starts and
    answers garbage. One product per dtype catches it before the weights load.

    How to fix: a rank with a wrong result: take the NPU out of service and run the vendor's diagnosis
    (`npu-smi info -t health -i <id>`, `ascend-dmi`); an error instead of a result names the operator and the CANN
    error code (`ascend-doctor triage` explains it; check the CANN/torch_npu pair, CANN101 and TORCH102).
    """
    f = ctx.fact("npu_compute")
    skipped = J.not_run(ctx, f)
    if skipped is not None:
        return skipped
    seen, unseen, lines, bad = J.per_rank(f, "matmul", J.matmul_line)
    if bad:
        parts = J.group_failures(bad, lambda s: s.get("dtype"), J.wrong_or_error)
        return ctx.fail(T("matmul wrong or failed: {what}", what=join("; ", parts)), lines,
                        remediation=T("Take a rank with a wrong result out of service and run the vendor's diagnosis "
                                      "(`npu-smi info -t health -i <id>`); an error names the operator and its CANN "
                                      "code (`ascend-doctor triage`, CANN101, TORCH102)."))
    if not seen:
        return ctx.unknown(T("no rank reached the matmul step (see NPU201)"))
    if unseen:
        return J.partial(ctx, f, unseen, T("matmul correct"))
    return ctx.ok(T("matmul within tolerance in {dtypes} on {n} rank(s) — {path}", dtypes=", ".join(f.dtypes),
                    n=len(seen), path=J.path_label(f)), lines)


@check("NPU204", "matmul-speed", severity="warning", needs=NEEDS, stage="compute")
def matmul_speed(ctx):
    """No NPU multiplies much slower than its peers

    What it checks: the TFLOP/s of each rank's timed product per dtype against the median of all ranks: a rank
    more than `[slow] slower_than_median` (20%, the `compute/compute-smoke` table, after MindStudio
    msprechecker's matmul check) below the median is named. On an NPU the time is wall time around
    `torch.npu.synchronize()`; on the CPU path it is each rank's CPU time on one thread, and the limit is `[slow]
    cpu_path` (60%): ranks there share the host's cores, and a core of a busy VM can run at half its peer's speed.

    Why it matters: tensor parallelism runs at the pace of its slowest rank. One throttled NPU (power cap,
    temperature, a degraded link to its HBM) slows every request by the same factor and shows nowhere else.

    How to fix: compare the named NPU's power, temperature and clocks with its peers (`npu-smi info -t power -i
    <id>`, `-t temp`, `-t usages`), check for a power cap or a failing fan, and rerun; a rank that stays slow
    should be serviced or left out of the server (ASCEND_RT_VISIBLE_DEVICES).
    """
    f = ctx.fact("npu_compute")
    skipped = J.not_run(ctx, f)
    if skipped is not None:
        return skipped
    limit = ctx.knowledge.compute.slow.limit(f.cpu_path)
    seen, _ = J.reported(f, "matmul")
    lines, slow, summary = [], [], []
    for dtype in f.dtypes:
        figures = [(r, s.get("tflops")) for r, steps in seen for s in steps
                   if s.get("dtype") == dtype and isinstance(s.get("tflops"), (int, float))]
        mid = J.median_of([v for _, v in figures])
        if mid is None:
            continue
        floor = mid * (1 - limit)
        summary.append(f"{dtype} median {J.tflops(mid)}")
        for r, v in figures:
            lines.append(ev(f"{J.where(f, r)} {dtype}", f"{J.tflops(v)} TFLOP/s (median {J.tflops(mid)}, floor "
                                                        f"{J.tflops(floor)})", ok=v >= floor))
            if v < floor:
                slow.append(T("rank {rank} {dtype} {value} TFLOP/s, {pct}% below the median {median}", rank=r.rank,
                              dtype=dtype, value=J.tflops(v), pct=round(100 * (1 - v / mid)), median=J.tflops(mid)))
    if not summary:
        return ctx.unknown(T("no rank timed a matmul (see NPU201, NPU203)"))
    if slow:
        return ctx.warn(T("slower than the median by more than {limit}%: {what}",
                          limit=round(100 * limit), what=join("; ", slow)), lines,
                        remediation=T("Compare the named NPU's power, temperature and clocks with its peers "
                                      "(`npu-smi info -t power -i <id>`, `-t temp`); a rank that stays slow should be "
                                      "serviced or left out of ASCEND_RT_VISIBLE_DEVICES."))
    timed = {r.rank for r, steps in seen for s in steps if isinstance(s.get("tflops"), (int, float))}
    untimed = [r.rank for r in f.ranks if r.rank not in timed]
    if untimed:  # a partial look: the rank that did not time could be the slow one
        return ctx.unknown(T("rank(s) {timed} within {limit}% of the median ({figures} TFLOP/s); rank(s) {untimed} "
                             "not timed (see NPU201, NPU203)", timed=J.id_list(timed),
                             limit=round(100 * limit), figures="; ".join(summary),
                             untimed=J.id_list(untimed)), lines)
    if len(timed) < 2:
        return ctx.ok(T("one rank timed ({figures} TFLOP/s): no peer to compare with — {path}",
                        figures="; ".join(summary), path=J.path_label(f)), lines)
    return ctx.ok(T("every timed rank within {limit}% of the median ({figures} TFLOP/s) — {path}",
                    limit=round(100 * limit), figures="; ".join(summary),
                    path=J.path_label(f)), lines)
