"""Who ended a compute run, from the launcher's record alone (ascend_doctor.compute.facts and judge.story): the cases
whose timing only a loaded machine produces, so the CPU tier cannot be relied on to show them."""

from __future__ import annotations

from ascend_doctor.compute.facts import ComputeFact, parse_record
from ascend_doctor.compute.judge import story

# gloo's own words when an all-reduce peer never answers (torch 2.13 CPU, the CPU tier's run with rank 2 hung)
GLOO_TIMEOUT = ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] "
                "Timed out waiting 20000ms for send operation to complete")
# how gloo aborts a process when a throw escapes its transport (quoted in pytorch/gloo#232)
GLOO_ABORT = ("terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
              "  what():  [enforce fail at /root/project/gloo/transport/uv/pair.cc:234] op.buf. Cannot lock pointer "
              "to unbound buffer")


def _rank(rank: int, **end) -> dict:
    steps = [{"step": "import", "seconds": 3.0}, {"step": "rendezvous", "ok": True, "seconds": 0.2}]
    if end.pop("raised", False):
        steps.append({"step": "allreduce", "world": 4, "ok": False, "error": GLOO_TIMEOUT})
    base = {"rank": rank, "pid": 4000 + rank, "stage": "allreduce", "steps": steps, "returncode": 4, "signal": None,
            "stopped": None, "stderr_tail": "", "stage_seconds": 20.1, "seconds": 26.3}
    return {**base, **end}


def _fact(ranks: list[dict]) -> ComputeFact:
    return ComputeFact(ran=True, device="cpu", backend="gloo", world=4, budget=60.0, collective_timeout=20.0,
                       ranks=parse_record({"ranks": ranks}))


def _hung(rank: int) -> dict:
    return _rank(rank, returncode=-9, signal="SIGKILL", stopped="collective-timeout", stage_seconds=22.2)


def test_a_rank_that_raised_waiting_then_aborted_on_the_way_out_is_a_victim():
    """The CI run that showed it: rank 3 reported gloo's timeout, then gloo's teardown aborted the process."""
    f = _fact([_rank(0, raised=True), _rank(1, raised=True), _hung(2),
               _rank(3, raised=True, returncode=-6, signal="SIGABRT", stderr_tail=GLOO_ABORT)])
    culprits, victims = f.diagnosis()
    assert [(k, r.rank) for k, r in culprits] == [("hung", 2)]
    assert [r.rank for r in victims] == [0, 1, 3]
    parts, first = story(f)
    assert first == "hung"
    assert parts[-1].startswith("rank(s) 0-1, 3 were waiting for them in allreduce")


def test_a_rank_killed_in_the_collective_without_a_word_is_still_a_culprit():
    """No error reported before the signal: nothing says it only waited, so it is named as a crash."""
    f = _fact([_rank(0, raised=True), _rank(1, raised=True), _rank(2, raised=True),
               _rank(3, returncode=-11, signal="SIGSEGV", stderr_tail="Fatal Python error: Segmentation fault")])
    culprits, victims = f.diagnosis()
    assert [(k, r.rank) for k, r in culprits] == [("crashed", 3)]
    assert [r.rank for r in victims] == [0, 1, 2]
    assert story(f)[0][0] == "rank(s) 3 killed by SIGSEGV in allreduce"


def test_every_rank_raised_and_one_aborted_names_the_signal_with_the_error():
    """No culprit at all (a network that drops every wait): each rank's own error, the aborted one with its signal."""
    f = _fact([_rank(0, raised=True), _rank(1, raised=True), _rank(2, raised=True),
               _rank(3, raised=True, returncode=-6, signal="SIGABRT", stderr_tail=GLOO_ABORT)])
    parts, first = story(f)
    assert first == "error"
    assert parts == [f"rank(s) 0-2 failed in allreduce (exit 4): {GLOO_TIMEOUT}",
                     f"rank(s) 3 failed in allreduce (exit SIGABRT): {GLOO_TIMEOUT}"]


def _timed(device: str, tflops: list[float]) -> ComputeFact:
    """One bf16 product timed per rank, as the rank script reports it."""
    ranks = [{"rank": r, "pid": 4000 + r, "stage": "done", "returncode": 0, "signal": None, "stopped": None,
              "stderr_tail": "", "stage_seconds": 0.1, "seconds": 9.0,
              "steps": [{"step": "matmul", "dtype": "bfloat16", "ok": True, "tflops": v}]} for r, v in enumerate(tflops)]
    return ComputeFact(ran=True, device=device, backend="gloo" if device == "cpu" else "hccl", dtypes=["bfloat16"],
                       world=len(tflops), budget=60.0, ranks=parse_record({"ranks": ranks}))


# Eight CPU-path ranks on the 2-core CI VM (2026-12-06): the ranks on its slower vCPU ran at half the others' speed.
CI_VM_SPREAD = [0.381, 0.396, 0.47, 0.477, 0.529, 0.564, 0.64, 0.645]


def test_the_cpu_path_does_not_call_a_busy_core_a_slow_device():
    from tests.helpers import run_check

    cpu = run_check("NPU204", {"npu_compute": _timed("cpu", CI_VM_SPREAD)})
    assert cpu.status.value == "pass" and "within 60% of the median" in cpu.message
    npu = run_check("NPU204", {"npu_compute": _timed("npu", CI_VM_SPREAD)})  # as NPU figures: a 24% spread is named
    assert npu.status.value == "warn" and "rank 0 bfloat16 0.381 TFLOP/s, 24% below the median 0.503" in npu.message


def test_the_cpu_path_still_names_a_rank_doing_ten_times_the_work():
    from tests.helpers import run_check

    f = run_check("NPU204", {"npu_compute": _timed("cpu", [0.6, 0.31, 0.58, 0.3, 0.059, 0.31])})
    assert f.status.value == "warn" and "rank 4 bfloat16 0.059 TFLOP/s, 81% below the median 0.31" in f.message
