"""The `npu_compute` probe: run the compute smoke (ascend_doctor.compute) in the serving interpreter and type what it
reported. Only the compute checks (stage "compute", `--compute`) ask for it: it allocates HBM and keeps every NPU
busy for seconds, so a plain `check` never starts it.

Which path runs:
- torch_npu installed in the serving interpreter: the NPU path, one rank per NPU this server will use
  (ASCEND_RT_VISIBLE_DEVICES, else every chip npu-smi lists), dtypes from the chip table (bf16 only where the chip
  has it), backend hccl;
- no torch_npu and no NPU on the host (no /dev/davinciN, no npu-smi table): the CPU path with gloo — the same code
  with another device name, for a build machine or CI. Its findings say "cpu": no NPU was tested;
- no torch_npu but NPUs present: not run — a CPU rehearsal would look like a result for NPUs it never touched.
It does not run on NPUs that npu-smi shows in use: the HBM it allocates belongs to somebody's server.
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.compute.facts import ComputeFact, parse_record
from ascend_doctor.compute.launcher import MARKER, launcher_argv
from ascend_doctor.compute.policy import ComputePolicy
from ascend_doctor.facts.scope import planned_device_count, used_chips
from ascend_doctor.probes import probe
from ascend_doctor.probes.serving import serving_executable
from ascend_doctor.seam.host import REPLAY_COMMAND_MISS, TIMEOUT
from ascend_doctor.text.jsonread import loads

LAUNCHER_MARGIN_S = 15.0  # the doctor's own deadline on the launcher: its budget plus this (the ranks are stopped
#                           at the budget; the launcher then needs a moment to reap them and print)


def compute_budget(options, policy: ComputePolicy, device: str = "npu") -> float:
    """--compute-timeout, else the path's budget from the compute policy (the `compute/compute-smoke` table)."""
    return options.compute_timeout or getattr(policy, device).budget_s


def _chip(npu_smi, chips) -> tuple[Optional[str], Optional[str], list[str]]:
    """(chip name, family, dtypes to test) from npu-smi's first chip and the chip table (`deploy/chips`);
    fp16 alone when the chip is unknown — every Ascend chip vLLM runs on has it, bf16 only some (not 310P)."""
    from ascend_doctor.deploy.chips import find_chip

    if npu_smi is None or not getattr(npu_smi, "usable", False):
        return None, None, ["float16"]
    name = npu_smi.info.chips[0].name
    chip = find_chip(name, chips)
    if chip is None:
        return name, None, ["float16"]
    return name, chip.family, (["bfloat16", "float16"] if chip.bf16 else ["float16"])


def _config(policy: ComputePolicy, device: str, world: int, dtypes: list[str], budget: float,
            family: Optional[str] = None) -> dict:
    sizes = getattr(policy, device)
    return {
        "world": world, "device": device, "backend": "hccl" if device == "npu" else "gloo",
        "master_addr": "127.0.0.1", "budget": budget, "grace": policy.grace_s,
        "collective_timeout": min(sizes.collective_timeout_s, budget),
        "hbm_share": sizes.hbm_share, "cpu_bytes": sizes.memory_bytes, "dtypes": dtypes,
        "tolerance": {d: policy.tolerance.of(d) for d in dtypes},
        "check_n": sizes.check_n, "bench_n": sizes.bench_n, "bench_seconds": sizes.bench_seconds,
        "bench_max_iters": sizes.bench_max_iters, "allreduce_bytes": sizes.allreduce_bytes,
        "allreduce_iters": sizes.allreduce_iters,
        "ops": [{"name": o.name, "library": o.library if device == "npu" else "aten", "exact": o.exact,
                 "call": o.npu_call if device == "npu" else o.cpu_call}
                for o in policy.op if device == "cpu" or not o.families or family in o.families],
    }


def plan_run(ctx, exe: str) -> tuple[Optional[dict], str]:
    """(the launcher's orders, '') or (None, why it cannot run here: a `ComputeFact.skipped` code)."""
    py = ctx.fact("python")
    if py.dist("torch") is None:
        return None, "no-torch"
    policy = ctx.knowledge.compute
    smi = ctx.try_fact("npu_smi")
    devices = ctx.try_fact("devices")
    npus_here = bool(getattr(devices, "davinci", None)) or bool(smi is not None and smi.usable)
    if py.dist("torch_npu") is None:
        if npus_here:
            return None, "no-torch-npu"
        world = ctx.options.compute_ranks or policy.cpu.default_ranks
        return _config(policy, "cpu", world, ["bfloat16", "float16"], compute_budget(ctx.options, policy, "cpu")), ""
    env = ctx.try_fact("server_env") or {}
    mine, _how = used_chips(env, smi, devices)  # the NPUs the server will use: another server's are not ours to test
    if mine is not None and any((p.npu_id, p.chip_id) in {(c.npu_id, c.chip_id) for c in mine}
                                or (p.chip_id is None and p.npu_id in {c.npu_id for c in mine})
                                for p in smi.info.processes):
        return None, "npus-busy"
    world = ctx.options.compute_ranks or planned_device_count(env, smi)
    if not world:
        return None, "no-count"
    chip, family, dtypes = _chip(smi, ctx.knowledge.chips)
    cfg = _config(policy, "npu", world, dtypes, compute_budget(ctx.options, policy, "npu"), family)
    cfg["chip"] = chip
    rt = env.get("ASCEND_RT_VISIBLE_DEVICES")
    if rt is not None and rt.strip():  # the ranks run where the server will: its devices, numbered from 0
        cfg["env"] = {"ASCEND_RT_VISIBLE_DEVICES": rt}
    return cfg, ""


def run_launcher(host, exe: str, cfg: dict) -> ComputeFact:
    """Run the launcher with these orders and type its record (the probe's work; a fleet node calls it too)."""
    fact = ComputeFact(ran=True, python=exe, device=cfg["device"], backend=cfg["backend"], chip=cfg.get("chip"),
                       dtypes=cfg["dtypes"], world=cfg["world"], global_world=cfg.get("global_world") or cfg["world"],
                       budget=cfg["budget"], collective_timeout=cfg["collective_timeout"], config=cfg)
    res = host.run(launcher_argv(exe, cfg), timeout=cfg["budget"] + LAUNCHER_MARGIN_S)
    if REPLAY_COMMAND_MISS in (res.error_message or ""):  # a snapshot: `collect` never runs the compute smoke
        return ComputeFact(ran=False, skipped="not-recorded", python=exe)
    record = None
    for line in res.stdout.splitlines():
        if line.startswith(MARKER + " "):
            try:
                record = loads(line.split(" ", 1)[1])
            except ValueError:
                continue
    if not isinstance(record, dict):
        fact.launcher_error = res.why_not() if (res.error or not res.ok) else "it printed no record"
        if res.error == TIMEOUT:
            fact.launcher_error = f"killed after {cfg['budget'] + LAUNCHER_MARGIN_S:g} s without a record"
        fact.launcher_stderr = "\n".join(res.stderr.strip().splitlines()[-25:])
        return fact
    try:
        fact.ranks = parse_record(record)
    except ValueError as exc:  # pydantic's ValidationError: another doctor version's launcher, or a damaged line
        fact.launcher_error = f"its record is unreadable: {str(exc).splitlines()[0][:300]}"
        return fact
    fact.seconds = record.get("seconds") if isinstance(record.get("seconds"), (int, float)) else None
    return fact


def skipped_fact(ctx, exe: str, why: str) -> ComputeFact:
    """The fact of a host where the compute smoke does not run, and why (with the processes holding the NPUs)."""
    smi = ctx.try_fact("npu_smi")
    held = [f"NPU {p.npu_id}: pid {p.pid} {p.name}".strip() for p in smi.info.processes] \
        if why == "npus-busy" and smi is not None and smi.info is not None else []
    return ComputeFact(ran=False, skipped=why, python=exe, busy=held)


@probe("npu_compute", reads=("python", "serving_python", "npu_smi", "devices", "server_env"),
       collected=False,
       min_timeout=lambda store: compute_budget(store.options, store.knowledge.compute) + LAUNCHER_MARGIN_S + 5)
def compute_probe(host, ctx) -> ComputeFact:
    """The compute smoke: one rank per NPU computes, runs the fused operators and all-reduces (it allocates HBM)."""
    exe = serving_executable(ctx)
    cfg, why = plan_run(ctx, exe)
    if cfg is None:
        return skipped_fact(ctx, exe, why)
    return run_launcher(host, exe, cfg)
