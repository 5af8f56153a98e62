"""What the compute checks share: which ranks reported a step and which did not (a partial look says so), rank lists
written compactly, the median the slow-rank rule compares with, and the figures each rank's evidence line carries."""

from __future__ import annotations

from statistics import median
from typing import Callable, Iterable, Optional

from ascend_doctor.compute.facts import ComputeFact, RankRun, Step
from ascend_doctor.i18n import T
from ascend_doctor.text.units import human_bytes


def id_list(ids: Iterable[int]) -> str:
    """Rank numbers as a person writes them: `0-2, 4, 6-7`."""
    ids = sorted(set(ids))
    out, start = [], None
    for i, v in enumerate(ids):
        if start is None:
            start = v
        if i + 1 == len(ids) or ids[i + 1] != v + 1:
            out.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ", ".join(out)


def reported(fact: ComputeFact, step: str) -> tuple[list[tuple[RankRun, list[Step]]], list[RankRun]]:
    """([(rank, its `step` records)] for the ranks that reported `step`, [ranks that did not])."""
    seen, unseen = [], []
    for r in fact.ranks:
        steps = r.steps_of(step)
        (seen.append((r, steps)) if steps else unseen.append(r))
    return seen, unseen


def group_failures(bad, label: Callable, what: Callable, limit: int = 6) -> list:
    """Failures that read the same on several ranks, once with their ranks: [T("rank(s) 0-7 bfloat16: …")]. `bad`
    holds (rank, step) pairs; `label(step)` names the case, `what(step)` says what went wrong."""
    groups: dict = {}
    for r, s in bad:
        msg = what(s)
        groups.setdefault((str(label(s)), str(msg)), [[], label(s), msg])[0].append(r.rank)
    return [T("rank(s) {ranks} {label}: {what}", ranks=id_list(ranks), label=lab, what=msg)
            for ranks, lab, msg in list(groups.values())[:limit]]


def per_rank(f: ComputeFact, step: str, line: Callable) -> tuple[list, list, list, list]:
    """(ranks that reported `step` with their records, ranks that did not, one evidence line per rank, the failing
    (rank, record) pairs) — what NPU202-NPU205 start from."""
    from ascend_doctor.core.evaluator import ev

    seen, unseen = reported(f, step)
    lines = [ev(where(f, r), "\n".join(line(s) for s in steps), ok=all(s.ok for s in steps)) for r, steps in seen]
    bad = [(r, s) for r, steps in seen for s in steps if not s.ok]
    return seen, unseen, lines, bad


def wrong_or_error(s: Step):
    """What went wrong in a checked step: its error, else how far its result was off."""
    return s.error or T("max relative error {err} above {tol}", err=f"{s.get('max_rel_err'):.3g}",
                        tol=f"{s.get('tolerance'):.3g}")


def median_of(values: list[float]) -> Optional[float]:
    return median(values) if values else None


def where(fact: ComputeFact, rank: RankRun) -> str:
    """`rank 3 (npu:3, Ascend910B3)` — what a reader needs to find the device."""
    dev = next((s for s in rank.steps if s.step == "device"), None)
    name = dev.get("device") if dev is not None else ("npu:%d" % rank.rank if fact.device == "npu" else "cpu")
    chip = dev.get("name") if dev is not None and fact.device == "npu" else None
    return f"rank {rank.rank} ({name}{', ' + chip if chip else ''})"


def tflops(x: Optional[float]) -> str:
    if x is None:
        return "?"
    return f"{x:.1f}" if x >= 10 else f"{x:.3g}"


def matmul_line(s: Step) -> str:
    if s.error:
        return f"{s.get('dtype')}: {s.error}"
    return (f"{s.get('dtype')}: max rel. error {s.get('max_rel_err', float('nan')):.2e} (tolerance "
            f"{s.get('tolerance', float('nan')):.2e}); {tflops(s.get('tflops'))} TFLOP/s "
            f"({s.get('iters')} x {s.get('n')}^3 in {s.get('seconds')} s)")


def memory_line(s: Step) -> str:
    size = human_bytes(s.get("bytes"))
    total = s.get("total")
    share = f" of {human_bytes(total)}" if total else ""
    if s.error:
        return f"{size}{share}: {s.error}"
    free = s.get("free")
    if not s.ok and s.get("read_back") is None and free is not None:
        return f"{size}{share} wanted, {human_bytes(free)} free: not tried"
    return f"{size}{share} written and read back as {s.get('read_back')} in {s.get('seconds')} s"


def op_line(s: Step) -> str:
    head = f"{s.get('call')} [{s.get('library')}, {s.get('dtype')}]"
    if s.error:
        return f"{head}: {s.error}"
    return f"{head}: max rel. error {s.get('max_rel_err', float('nan')):.2e} (tolerance {s.get('tolerance'):.2e})"


def allreduce_line(s: Step) -> str:
    if s.error:
        return s.error
    seen = s.get("seen")
    return (f"sum {seen} (expected {s.get('expected')}); {human_bytes(s.get('bytes'))} in {s.get('seconds')} s: "
            f"algbw {s.get('algbw_gbps')} GB/s, busbw {s.get('busbw_gbps')} GB/s")


def tail(text: str, lines: int = 6) -> str:
    kept = [line for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def path_label(f):
    """Which path ran, for ok messages: a CPU rehearsal must never read like an NPU result."""
    if f.cpu_path:
        return T("CPU path ({backend}): no NPU was tested", backend=f.backend)
    return T("NPU path ({backend}, {chip})", backend=f.backend, chip=f.chip or "chip unknown")


def not_run(ctx, f):
    """The unknown outcome when the compute smoke did not run here (and why), or None when it ran."""
    if f.ran and not f.launcher_error and f.ranks:
        return None
    if not f.ran:
        reasons = {
            "no-torch": T("the compute smoke did not run: torch is not installed in {python}", python=f.python),
            "no-torch-npu": T("the compute smoke did not run: torch_npu is not installed in {python}, so the NPUs of "
                              "this host cannot be tested (a CPU rehearsal would prove nothing about them)",
                              python=f.python),
            "npus-busy": T("the compute smoke did not run: npu-smi shows processes on the NPUs ({processes}); it "
                           "allocates HBM and would disturb them — run it before the server starts or on an idle "
                           "node", processes="; ".join(f.busy[:8])),
            "not-recorded": T("the compute smoke did not run: the snapshot holds no compute record (`collect` never "
                              "runs it: it allocates HBM) — run `--compute` on the machine itself"),
            "no-count": T("the compute smoke did not run: npu-smi gave no table and ASCEND_RT_VISIBLE_DEVICES is not "
                          "set, so the number of NPUs is unknown — pass --compute-ranks N"),
        }
        return ctx.unknown(reasons.get(f.skipped) or T("the compute smoke did not run"))
    return ctx.unknown(T("the compute smoke gave no rank record (see NPU201)"))


def partial(ctx, f, unseen, what):
    """Unknown for the ranks that never reached this step: a partial look names what it did not see."""
    return ctx.unknown(T("{what} on rank(s) {seen_ranks}; rank(s) {unseen} never reached this step (see NPU201)",
                         what=what, seen_ranks=id_list(r.rank for r in f.ranks if r not in unseen),
                         unseen=id_list(r.rank for r in unseen)))


def culprit(f, kind, r):
    """What one rank that ended the run did, as (grouping key, message with {ranks} left to fill)."""
    stage = r.stage or "start"
    if kind == "missing" and r.start_error:
        return ("start", r.start_error), T("could not start: {error}", error=r.start_error)
    if kind == "missing":
        return ("missing", r.returncode), T("never reported a step (exit {code})", code=r.returncode)
    if kind == "crashed":
        return ("crashed", r.signal, stage), T("killed by {signal} in {stage}", signal=r.signal, stage=stage)
    if kind == "hung":
        return ("hung", stage), T("hung in {stage}: silent for {seconds} s while its peers raised waiting for it, "
                                  "then stopped", stage=stage, seconds=f"{r.stage_seconds or 0:g}")
    if kind == "error":
        err = r.last_error() or "?"
        code = r.signal or r.returncode  # a signal here came after it reported the error (see facts.diagnosis)
        return ("error", stage, code, err), T("failed in {stage} (exit {code}): {error}", stage=stage, code=code,
                                              error=err)
    if kind == "stopped" and r.stopped == "budget":
        return ("budget", stage), T("still in {stage} at the {budget} s budget, stopped", stage=stage,
                                    budget=f"{f.budget:g}")
    if kind == "stopped":
        return ("stuck", stage), T("stopped after {seconds} s in {stage} without progress", stage=stage,
                                   seconds=f"{r.stage_seconds or 0:g}")
    return ("exited", stage, r.returncode), T("exited (code {code}) in {stage} before finishing", stage=stage,
                                              code=r.returncode)


def story(f):
    """(message parts, the kind whose fix comes first): the ranks that ended the run, grouped where they read the
    same, then the ranks that were only waiting for them."""
    culprits, victims = f.diagnosis()
    groups: dict = {}
    for kind, r in culprits:
        key, msg = culprit(f, kind, r)
        if kind in ("error", "exited") and r.stage in ("import", "device"):
            kind = "start"  # it could not import torch/torch_npu or open its NPU: the start-up fix, not the op one
        groups.setdefault(key, [kind, msg, []])[2].append(r.rank)
    parts = [T("rank(s) {ranks} {what}", ranks=id_list(ranks), what=msg) for _, msg, ranks in groups.values()]
    if victims:
        stages = sorted({r.stage or "start" for r in victims})
        parts.append(T("rank(s) {ranks} were waiting for them in {stages} and were stopped or timed out",
                       ranks=id_list(r.rank for r in victims), stages=", ".join(stages)))
    kinds = [k for k, _, _ in groups.values()]
    first = next((k for k in ("missing", "start", "crashed", "hung", "error", "exited", "stopped") if k in kinds),
                 "stopped")
    return parts, first
