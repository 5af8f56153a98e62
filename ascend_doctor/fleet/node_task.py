"""What runs on each Ray node. Kept apart from the driver code and importing only the stdlib at module level: a
fresh Ray worker imports this module to unpickle the task, and on a busy node every import is start-up latency.

Each node judges itself: it runs every static check on its own machine (the probes run once) and sends back its
findings, its facts summary (what the FLEET checks compare across nodes) and its notes — a few tens of KiB. The driver
only merges them and runs the FLEET checks, so a 1,000-node fleet costs the driver milliseconds per node, not a full
evaluation each. With `--checks-dir` (code that exists only on the driver) the node sends its snapshot instead and
the driver evaluates it.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Optional


def evaluate_host(host, options) -> dict:
    """Static checks and the FLEET facts summary of `host`, from one set of probe runs (also used by the benchmark
    and the tests to produce what a node sends)."""
    from ascend_doctor.core.engine import run_static
    from ascend_doctor.core.errors import FactUnavailable
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.facts import FactStore
    from ascend_doctor.fleet.facts import FLEET_FACTS, Unavailable, summarize
    from ascend_doctor.text.redact import redact_tree
    from ascend_doctor.text.textsafe import dump_json

    store = FactStore(host, options)
    store.start_all(FLEET_FACTS)
    report = run_static(host, load_registry(options.checks_dirs), options, facts=store)
    facts = {}
    for name in FLEET_FACTS:
        try:
            facts[name] = store.fact(name)
        except FactUnavailable as exc:
            facts[name] = Unavailable(exc.reason)
    # Redacted here: only this node knows its own secret values (its environment registered them).
    return {"findings": dump_json(redact_tree([f.model_dump(mode="json") for f in report.findings]), indent=None),
            "notes": redact_tree(list(report.notes)), "summary": redact_tree(summarize(facts)),
            "hostname": report.host.hostname if report.host.hostname != "unknown" else None}


def _with_matrix(options, matrix_texts: Optional[dict]):
    """The driver's --matrix files, written here (their paths exist only on the driver)."""
    if not matrix_texts:
        return options
    d = tempfile.mkdtemp(prefix="ascend-doctor-matrix-")
    paths = []
    for i, (name, text) in enumerate(matrix_texts.items()):
        p = os.path.join(d, f"{i:02d}-{os.path.basename(name)}")
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(text)
        paths.append(p)
    return options.model_copy(update={"matrix": paths})


def collect_on_node(options_json: str, fake: Optional[dict] = None, evaluate: bool = True,
                    matrix_texts: Optional[dict] = None) -> dict:
    """Judge this node (or, without `evaluate`, collect its snapshot) and say when, by this node's clock. The test
    hook `fake` serves a snapshot file instead of this machine."""
    offset = float((fake or {}).get("clock_offset_s", 0.0))
    started = time.time() + offset
    from ascend_doctor.core.options import RunOptions

    options = _with_matrix(RunOptions.model_validate_json(options_json), matrix_texts)
    out: dict = {"fake": bool(fake)}
    if fake:
        if fake.get("touch"):
            with open(fake["touch"], "w") as fh:
                fh.write(str(os.getpid()))
        if fake.get("delay_s"):
            time.sleep(float(fake["delay_s"]))
        with open(fake["snapshot"], encoding="utf-8") as fh:
            text = fh.read()
        if evaluate:
            from ascend_doctor.seam.snapshot import ReplayHost, Snapshot

            out.update(evaluate_host(ReplayHost(Snapshot.model_validate_json(text), label="node"), options))
        else:
            out["snapshot"] = text
    else:
        from ascend_doctor.seam.localhost import LocalHost
        from ascend_doctor.seam.strays import contain, release

        contain()  # for this task only: the Ray worker lives on after it (seam/strays.py)
        try:
            if evaluate:
                out.update(evaluate_host(LocalHost(), options))
            else:
                from ascend_doctor.seam.collect import collect_snapshot

                out["snapshot"] = collect_snapshot(LocalHost(), options,
                                                   description="ascend-doctor fleet (Ray collect task)").dump()
        finally:
            release()
    out.update(started_at=started, ended_at=time.time() + offset)
    return out


def clock_on_node(offset: float = 0.0) -> float:
    """This node's wall clock (plus the test hook's offset)."""
    return time.time() + offset


def plan_compute_on_node(options_json: str) -> dict:
    """`fleet --compute`, step 1 on each node: its own compute orders (its NPUs, its serving interpreter) and a free
    port, so the driver can number the ranks of all nodes before any of them starts. Always this machine: a
    snapshot cannot compute."""
    import socket

    from ascend_doctor.core.errors import FactUnavailable
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.facts import FactStore
    from ascend_doctor.probes.compute import plan_run, skipped_fact
    from ascend_doctor.seam.localhost import LocalHost

    options = RunOptions.model_validate_json(options_json)
    store = FactStore(LocalHost(), options)
    try:
        from ascend_doctor.probes.serving import serving_executable

        exe = serving_executable(store)
        cfg, why = plan_run(store, exe)
    except FactUnavailable as exc:
        return {"error": f"the serving python cannot be read: {exc.reason}"}
    s = socket.socket()
    s.bind(("", 0))
    port = s.getsockname()[1]
    s.close()
    out: dict = {"cfg": cfg, "python": exe, "port": port}
    if cfg is None:
        out["skipped_fact"] = skipped_fact(store, exe, why).model_dump_json()
    return out


def compute_on_node(exe: str, cfg: dict) -> dict:
    """`fleet --compute`, step 2: run this node's launcher with the ranks the driver gave it; its record and what
    its children left behind (killed)."""
    from ascend_doctor.probes.compute import run_launcher
    from ascend_doctor.seam.localhost import LocalHost

    host = LocalHost()
    fact = run_launcher(host, exe, cfg)
    return {"fact": fact.model_dump_json(), "notes": [str(n) for n in host.reap_strays()]}
