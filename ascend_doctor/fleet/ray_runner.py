"""`fleet --ray-address`: one collect task per alive Ray node, pinned to it, bounded in time; snapshots come back.

Measured behaviour this follows (../shared/facts/ray-notes.md, Ray 2.60):
* `NodeAffinitySchedulingStrategy(node_id, soft=False)` always places the task on its node; `max_retries=0` makes a
  task on a node that dies fail (NodeDiedError) instead of waiting for Ray to declare the node dead.
* A *frozen* node never fails its task and `ray.cancel` does nothing: the driver loops on `ray.wait(timeout=…)`, drops
  refs whose node `ray.nodes()` reports dead or whose per-node deadline passed, and never blocks on them.
  `ray.shutdown()` can then block on the stuck task: the caller exits without it (`RayRun.stuck`).

Tasks ask for `num_cpus=0`: a node whose CPUs are all reserved by the running vLLM deployment is still checked.

Test/demo hook (never active unless the *driver* is given it): `fake` maps a node — by a custom resource name it
carries, its node id, or its hostname — to a snapshot file the task on that node reads and returns instead of
collecting (optionally after `delay_s`, touching `touch` when it starts, and shifting its clock by `clock_offset_s`).
The CLI reads that mapping only from `ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS` (JSON) on the driver, and the report says
which nodes were served that way (a note and FLEET101's message), so it can never pass silently for a real check.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import first_error
from ascend_doctor.core.options import RunOptions
from ascend_doctor.fleet.model import DEAD, TASK_ERROR, TIMEOUT, NodeResult, clock_estimate, node_label
from ascend_doctor.fleet.node_task import clock_on_node, collect_on_node
from ascend_doctor.i18n import T

FAKE_ENV = "ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS"
POLL_S = 0.5           # how often the driver re-reads ray.nodes() while tasks are pending
CLOCK_ROUNDS = 3       # extra tiny tasks per node for a tighter clock estimate (the first task pays worker start-up)
CLOCK_ROUND_TIMEOUT_S = 2.0
CONNECT_TIMEOUT_S = 30.0  # ray.init; a remote head's GCS normally answers in < 2 s


# ---------------------------------------------------------------------------------------------------- driver side
@dataclass
class RayRun:
    results: list[NodeResult] = field(default_factory=list)
    stuck: bool = False   # some task never finished: do not call ray.shutdown(), exit the process instead
    notes: list[str] = field(default_factory=list)


def _fake_for(node: dict, fake: dict[str, Any]) -> Optional[dict]:
    keys = [node.get("NodeID", ""), node.get("NodeManagerHostname", "")] + list((node.get("Resources") or {}).keys())
    for k in keys:
        if k in fake:
            spec = fake[k]
            return {"snapshot": spec} if isinstance(spec, str) else dict(spec)
    return None


def fake_from_env(environ: dict[str, str]) -> dict[str, Any]:
    """The test/demo mapping from ASCEND_DOCTOR_FLEET_FAKE_SNAPSHOTS, or {} (malformed JSON is an input error)."""
    raw = environ.get(FAKE_ENV)
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(T("{fake_env} is not valid JSON: {msg}", fake_env=FAKE_ENV, msg=exc.msg)) from None
    if not isinstance(data, dict):
        raise InputError(T("{fake_env} must be a JSON object mapping a node (resource, id, hostname) to a snapshot",
                           fake_env=FAKE_ENV))
    return data


def _classify(exc: BaseException) -> tuple[str, str]:
    name = type(exc).__name__
    if name in ("NodeDiedError", "WorkerCrashedError", "TaskUnschedulableError", "ActorDiedError",
                "OwnerDiedError", "ObjectLostError", "LocalRayletDiedError"):
        return DEAD, f"the node died during the run ({name})"
    first = str(exc).strip().splitlines()[-1] if str(exc).strip() else name
    return TASK_ERROR, f"the collect task failed: {name}: {first[:300]}"


class ConnectTimeout(InputError):
    """ray.init did not return in time; it keeps trying in a thread that cannot be stopped: exit the process."""


def init_ray(address: str, timeout: float = CONNECT_TIMEOUT_S) -> Any:
    """Connect to the cluster (InputError when Ray is missing or nothing answers there).

    ray.init on an address where no GCS listens retries for minutes, so it runs in a daemon thread bounded by
    `timeout`; on expiry ConnectTimeout tells the caller to leave without ray.shutdown().
    """
    try:
        import ray
    except ImportError:
        raise InputError(T("fleet --ray-address needs Ray: pip install 'ascend-doctor[fleet]'")) from None
    outcome: dict[str, BaseException] = {}

    def connect() -> None:
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False, ignore_reinit_error=True)
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    t = threading.Thread(target=connect, name="ray-init", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise ConnectTimeout(f"no Ray cluster answered at {address!r} within {timeout:g}s")
    exc = outcome.get("error")
    if exc is not None:
        if isinstance(exc, (ConnectionError, RuntimeError, ValueError)):
            raise InputError(T("cannot connect to the Ray cluster at {address}: {exc}", address=repr(address),
                               exc=exc)) from None
        raise exc
    return ray


def run_on_ray(address: str, options: RunOptions, node_timeout: float = 60.0,
               fake: Optional[dict[str, Any]] = None,
               on_result: Optional[Callable[[NodeResult], None]] = None,
               connect_timeout: float = CONNECT_TIMEOUT_S, evaluate_on_nodes: bool = True) -> RayRun:
    """Collect every alive node concurrently; a dead, dying or silent node becomes a NodeResult with an error.

    `on_result` is called with each node's result as it arrives (the CLI evaluates it there, while slower nodes are
    still collecting)."""
    t_init = time.monotonic()
    ray = init_ray(address, connect_timeout)
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    t_submit = time.monotonic()

    fake = fake or {}
    run = RayRun()
    alive = [n for n in ray.nodes() if n.get("Alive")]
    if not alive:
        raise InputError(T("the Ray cluster at {address} has no alive node", address=repr(address)))
    collect = ray.remote(num_cpus=0, max_retries=0)(collect_on_node)
    options_json = options.model_dump_json()
    matrix_texts = {}
    from ascend_doctor.seam.inputs import read_text

    for path in options.matrix:  # the driver's files: shipped, since the nodes judge themselves
        matrix_texts[path] = read_text(path, "config", strict=True)
    pending: dict[Any, NodeResult] = {}
    deadline: dict[str, float] = {}
    fakes: dict[str, Optional[dict]] = {}
    for n in alive:
        node_id = n["NodeID"]
        res = NodeResult(name=node_label(n.get("NodeManagerHostname"), node_id[:12]), ray_node_id=node_id,
                         address=n.get("NodeManagerAddress"), source=f"ray node {node_id[:12]}",
                         ray_resources=dict(n.get("Resources") or {}))
        fakes[node_id] = _fake_for(n, fake)
        strategy = NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
        res.sent_at = time.time()
        ref = collect.options(scheduling_strategy=strategy).remote(options_json, fakes[node_id], evaluate_on_nodes,
                                                                   matrix_texts or None)
        pending[ref] = res
        deadline[node_id] = time.monotonic() + node_timeout
        run.results.append(res)

    last_poll = time.monotonic()
    while pending:
        soonest = min(deadline[r.ray_node_id] for r in pending.values())
        wait_s = max(0.0, min(POLL_S, soonest - time.monotonic()))
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=wait_s)
        for ref in ready:
            res = pending.pop(ref)
            res.received_at = time.time()
            try:
                out = ray.get(ref, timeout=0)
            except Exception as exc:  # the task's failure is the node's finding, never the run's end
                res.error_kind, res.error = _classify(exc)
                continue
            _accept(res, out)
            if on_result is not None and res.reachable:
                on_result(res)
        now = time.monotonic()
        for ref, res in list(pending.items()):
            if now >= deadline[res.ray_node_id]:
                pending.pop(ref)
                res.error_kind = TIMEOUT
                res.error = (f"no answer within the per-node timeout of {node_timeout:g}s (the node is frozen, "
                             "overloaded, or a probe hangs there)")
                run.stuck = True
        if pending and now - last_poll >= POLL_S:
            last_poll = now
            dead = {n["NodeID"] for n in ray.nodes() if not n.get("Alive")}
            for ref, res in list(pending.items()):
                if res.ray_node_id in dead:
                    pending.pop(ref)
                    res.error_kind, res.error = DEAD, "Ray reports the node dead (it stopped answering during the run)"
                    run.stuck = True  # its task may never resolve
    t_clock = time.monotonic()
    _measure_clocks(ray, run, fakes)
    answered = sum(1 for r in run.results if r.reachable)
    run.notes.append(T("ray: connected in {connect}s; {answered} of {nodes} node(s) answered within {tasks}s; clocks "
                       "sampled in {clocks}s", connect=f"{t_submit - t_init:.2f}", answered=answered,
                       nodes=len(run.results), tasks=f"{t_clock - t_submit:.2f}",
                       clocks=f"{time.monotonic() - t_clock:.2f}"))
    return run


def _is_time(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))


def _is_summary(v: Any) -> bool:
    return isinstance(v, dict) and all(
        isinstance(g, str) and isinstance(items, dict)
        and all(isinstance(k, str) and (x is None or isinstance(x, str)) for k, x in items.items())
        for g, items in v.items())


def answer_problem(out: Any) -> Optional[str]:
    """Why a node's answer cannot be taken in, or None when it has the shape `collect_on_node` returns.

    What comes back from a node is whatever that node's Python made of it (another ascend-doctor version, a broken
    install, a hostile node): a list instead of a dict, a time that is text or NaN, a summary of numbers. Each would
    have raised in the driver and ended the whole run with exit 3; checked here, it costs only that node (FLEET101).
    """
    if not isinstance(out, dict):
        return f"the answer is a {type(out).__name__}, not a mapping"
    for key in ("started_at", "ended_at"):
        if not _is_time(out.get(key)):
            return f"{key} is not a finite time: {str(out.get(key))[:40]!r}"
    checks = {"fake": lambda v: isinstance(v, bool), "hostname": lambda v: v is None or isinstance(v, str),
              "findings": lambda v: isinstance(v, str), "summary": _is_summary,
              "notes": lambda v: isinstance(v, list) and all(isinstance(n, str) for n in v),
              "snapshot": lambda v: isinstance(v, str)}
    for key, ok in checks.items():
        if key in out and not ok(out[key]):
            return f"{key} has the wrong shape ({type(out[key]).__name__})"
    if "findings" in out and "summary" not in out:
        return "findings came without the facts summary"
    if "findings" not in out and "snapshot" not in out:
        return "neither findings nor a snapshot"
    return None


def _accept(res: NodeResult, out: Any) -> None:
    problem = answer_problem(out)
    if problem:
        res.error_kind, res.error = TASK_ERROR, f"the node sent an answer this ascend-doctor cannot read: {problem}"
        return
    res.started_at, res.ended_at, res.fake = out.get("started_at"), out.get("ended_at"), bool(out.get("fake"))
    if "findings" in out:  # the node judged itself
        res.evaluation = {"findings": out["findings"], "summary": out["summary"], "notes": list(out.get("notes") or [])}
        res.name = node_label(out.get("hostname"), res.name)
    else:
        from ascend_doctor.seam.snapshot import Snapshot

        try:
            res.snapshot = Snapshot.model_validate_json(out["snapshot"])
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            res.error_kind, res.error = TASK_ERROR, f"the node sent a snapshot this ascend-doctor cannot read: " \
                                                    f"{first_error(exc)}"
            return
        res.name = node_label(res.snapshot.system.hostname, res.name)
    if None not in (res.sent_at, res.started_at, res.ended_at, res.received_at):
        res.clock_offset_s, res.clock_uncertainty_s = clock_estimate(res.sent_at, res.started_at, res.ended_at,
                                                                     res.received_at)


def _measure_clocks(ray, run: RayRun, fakes: dict[str, Optional[dict]]) -> None:
    """A few tiny pinned tasks per answering node (its worker is warm now): keep the tightest clock estimate."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    answered = [r for r in run.results if r.reachable]
    if not answered:
        return
    probe = ray.remote(num_cpus=0, max_retries=0)(clock_on_node)
    for _ in range(CLOCK_ROUNDS):
        sent: dict[Any, tuple[NodeResult, float]] = {}
        for r in answered:
            offset = float((fakes.get(r.ray_node_id) or {}).get("clock_offset_s", 0.0))
            strategy = NodeAffinitySchedulingStrategy(node_id=r.ray_node_id, soft=False)
            t = time.time()
            sent[probe.options(scheduling_strategy=strategy).remote(offset)] = (r, t)
        ready, not_ready = ray.wait(list(sent), num_returns=len(sent), timeout=CLOCK_ROUND_TIMEOUT_S)
        if not_ready:
            run.stuck = True
        for ref in ready:
            received = time.time()
            r, t_sent = sent[ref]
            try:
                node_t = ray.get(ref, timeout=0)
            except Exception:
                continue
            off, unc = clock_estimate(t_sent, node_t, node_t, received)
            if r.clock_uncertainty_s is None or unc < r.clock_uncertainty_s:
                r.clock_offset_s, r.clock_uncertainty_s = off, unc
