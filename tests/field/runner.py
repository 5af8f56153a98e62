"""The field test set: each case rebuilds one user's failure from a public thread as a replayable host (a healthy
snapshot changed the way the thread shows, plus the serve command the user ran) and names the finding that must
catch it. The cases are data (tests/field/cases/*.toml), one per thread, so the catalogue (docs/failure-classes.md)
can list them and the summary can count the catch rate per class.

A case file:

    class = "A1"                      # the class id in docs/failure-classes.md
    thread = "https://github.com/…"   # the thread the case is built from (its own text, never invented output)
    quote = "…"                       # what the user pasted, which the host below reproduces
    base = "healthy-a2"               # examples/<base>.snapshot.json
    model = "Qwen/Qwen3-8B"           # optional: a model directory at /models/<name> with the catalogue's config.json
    model_w8a8 = true                 # optional: its msModelSlim W8A8_DYNAMIC conversion (with --quantization ascend)
    model_dir, model_config           # or one the catalogue does not hold (control_config: its healthy variant)
    control_serve                     # the control's command, when the fault is in the command itself
    [host.npu], [host.env]            # the machine's shape (chips, name, HBM; its environment; container signals;
    [host.files], [host.dirs]         # packages it has), for the case and its control alike
    [host.packages]
    remove_dirs = [...]               # directories the fault takes away (a mount that is missing)
    absent = [...]                    # paths `collect` looked for and recorded as missing
    serve = ["vllm", "serve", …]      # optional: the command exec would lint
    [env]                             # variables set ("" removes one)
    [files]                           # path -> text ("" removes the file)
    [dirs]                            # path -> entries
    [disk."/dev/shm"]                 # total_bytes, free_bytes
    [links]                           # symlink path -> target ("" removes the link)
    [packages]                        # distribution -> version ("" removes it), in the serving environment
    [npu]                             # npu-smi info redrawn: chips, name, hbm_used (per chip), procs, health
    [[commands]]                      # argv, stdout, stderr, returncode: replaces the recorded answer
    [expect]                          # code, status (one or a list), message and remediation (substrings)
    [[fleet]]                         # instead of one host: Ray nodes (name, ray = advertised resources, control_ray)
    [wire]                            # instead of a host: a server's answers, scenario key -> the response body
                                      # (JSON text) as the thread shows it; every other scenario, and the whole
                                      # control, answers with the real vLLM bytes of `wire_base` (tests/data/smoke/
                                      # recorded, default vllm-0.32.0-strict), judged as `smoke` judges them

A case whose expected status is `pass` is a guard: a sound setup from a thread that a check once judged wrong (the
field finds false positives too); the summary counts it apart from the catches.
"""

from __future__ import annotations

import copy
import json
import posixpath
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from ascend_doctor.knowledge.tomlread import read_toml
from tests.helpers import shipped

REPO = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "cases"
MODELS = REPO / "matrices" / "deploy" / "models"


@dataclass
class Case:
    path: Path
    data: dict

    @property
    def id(self) -> str:
        return self.path.stem

    @property
    def cls(self) -> str:
        return self.data["class"]

    @property
    def expect(self) -> dict:
        return self.data["expect"]

    @property
    def statuses(self) -> set[str]:
        st = self.expect["status"]
        return {st} if isinstance(st, str) else set(st)


def cases() -> list[Case]:
    return [Case(p, read_toml(p)) for p in sorted(CASES.glob("*.toml"))]


@lru_cache(maxsize=None)
def _base(name: str) -> str:
    return (REPO / "examples" / f"{name}.snapshot.json").read_text(encoding="utf-8")


def _model_files(snap: dict, name: str, w8a8: bool = False) -> str:
    """The catalogue's config.json at /models/<name>. `w8a8`: the msModelSlim W8A8_DYNAMIC conversion Ascend users
    serve (with --quantization ascend) of a checkpoint the hub ships in FP8, which vllm-ascend does not run before
    0.21 (REL-B27-*): the hub's quantization_config dropped, a quant_model_description.json beside it."""
    path = f"/models/{name.split('/')[-1]}"
    config = (MODELS / f"{name.replace('/', '--')}.json").read_text(encoding="utf-8")
    entries = ["config.json"]
    if w8a8:
        cfg = json.loads(config)
        cfg.pop("quantization_config", None)
        config = json.dumps(cfg, indent=2)
        snap["files"][f"{path}/quant_model_description.json"] = {
            "content": '{"model_quant_type": "W8A8_DYNAMIC", "version": "1.0.0"}'}
        entries.append("quant_model_description.json")
    snap["files"][f"{path}/config.json"] = {"content": config}
    snap["dirs"][path] = {"entries": entries}
    return path


def _command(c: dict) -> dict:
    return {"argv": list(c["argv"]), "returncode": int(c.get("returncode", 0)), "stdout": c.get("stdout", ""),
            "stderr": c.get("stderr", ""), "duration_s": 0.1, "error": c.get("error"),
            "error_message": c.get("error_message", "")}


def _npu_smi(snap: dict, npu: dict) -> None:
    """`npu-smi info` as the thread shows it (chip count, names, HBM in use, processes), drawn in the 98-column layout
    of examples/build_examples.py; /dev/davinciN follows the chip count."""
    from tests.fleet.nodes import _examples

    ex = _examples()
    n = int(npu.get("chips", 8))
    health = {int(k): v for k, v in (npu.get("health") or {}).items()}
    chips = ex.a2_chips(min(n, 8), name=npu.get("name", "910B3"), health_of=health)
    for i in range(8, n):  # a 16-NPU box: more chips on buses of their own
        chips.append({**chips[i % 8], "npu": i, "phy": i, "bus": f"0000:{0x90 + i:02X}:00.0",
                      "health": health.get(i, "OK")})
    used = npu.get("hbm_used")
    for i, c in enumerate(chips):
        if isinstance(used, list) and i < len(used):
            c["hbm_used"] = used[i]
        elif isinstance(used, int):
            c["hbm_used"] = used
        c["hbm_total"] = int(npu.get("hbm_total", c["hbm_total"]))
    procs = [dict(p) for p in npu.get("procs", [])]
    argv = ["npu-smi", "info"]
    snap["commands"] = [x for x in snap["commands"] if x["argv"] != argv] + [
        _command({"argv": argv, "stdout": ex.npu_smi_info(npu.get("version", "25.5.0"), chips, procs)})]
    entries = [e for e in snap["dirs"]["/dev"]["entries"] if not (e.startswith("davinci") and e[7:].isdigit())]
    snap["dirs"]["/dev"]["entries"] = sorted(entries + [f"davinci{i}" for i in range(n)])


def _packages(snap: dict, packages: dict, requires: dict) -> None:
    """Set (or with "" remove) distributions of the serving environment."""
    env = snap["python_envs"]["default"]
    for name, version in packages.items():
        env["distributions"] = [d for d in env["distributions"] if d["name"] != name]
        if version:
            env["distributions"].append({"name": name, "version": version, "requires": list(requires.get(name, [])),
                                         "location": env.get("purelib", "")})


def build(data: dict, with_fault: bool = True) -> tuple[dict, list[str]]:
    """The case's snapshot and serve command; `with_fault=False` is its control: the same base, model and command
    without the changes the thread shows."""
    snap = json.loads(_base(data.get("base", "healthy-a2")))
    snap.setdefault("files", {})
    snap.setdefault("dirs", {})
    if data.get("model"):
        _model_files(snap, data["model"], bool(data.get("model_w8a8")))
    if data.get("model_config"):  # a model the catalogue does not hold: its config.json as the thread gives it
        config = data["model_config"] if with_fault else data.get("control_config", data["model_config"])
        snap["files"][f"{data['model_dir']}/config.json"] = {"content": config}
        snap["dirs"][data["model_dir"]] = {"entries": ["config.json"]}
    shape = data.get("host") or {}  # the machine the thread ran on: its control runs there too
    if shape.get("npu"):
        _npu_smi(snap, shape["npu"])
    snap["env"].update(shape.get("env") or {})
    _packages(snap, shape.get("packages") or {}, {})
    for path, text in (shape.get("files") or {}).items():  # e.g. /.dockerenv: the thread ran in a container
        snap["files"][path] = {"content": text}
    for path, entries in (shape.get("dirs") or {}).items():
        snap["dirs"][path] = {"entries": list(entries)}
    serve = list(data.get("serve", []))
    if not with_fault:
        return snap, list(data.get("control_serve", serve))
    for k, v in (data.get("env") or {}).items():
        if v == "":
            snap["env"].pop(k, None)
        else:
            snap["env"][k] = v
    for path, text in (data.get("files") or {}).items():
        if text == "":
            snap["files"].pop(path, None)
        else:
            snap["files"][path] = {"content": text}
    for path, usage in (data.get("disk") or {}).items():
        snap.setdefault("disk", {})[path] = {"error": None, "error_message": "", **usage}
    for path, entries in (data.get("dirs") or {}).items():
        snap["dirs"][path] = {"entries": list(entries)}
    for path, target in (data.get("links") or {}).items():  # e.g. an older CANN layout: latest -> 8.0.RC3
        if target == "":
            snap.get("links", {}).pop(path, None)
            continue
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        snap.setdefault("links", {})[path] = {"target": target, "resolved": resolved, "error": None}
    for path in data.get("remove_dirs") or []:  # a directory the container does not have (not mounted)
        snap["dirs"].pop(path, None)
    for path in data.get("absent") or []:  # looked for by `collect` and recorded as missing (not just unrecorded)
        snap["dirs"][path] = {"entries": None, "error": "not_found", "error_message": "No such file or directory"}
        snap["files"].pop(path, None)
    _packages(snap, data.get("packages") or {}, data.get("requires") or {})
    for key in ("version", "soabi"):
        if (data.get("python") or {}).get(key):
            snap["python_envs"]["default"][key] = data["python"][key]
    if data.get("npu"):
        _npu_smi(snap, data["npu"])
    for c in data.get("commands") or []:
        snap["commands"] = [x for x in snap["commands"] if x["argv"] != list(c["argv"])] + [_command(c)]
    return snap, serve


def _run_fleet(data: dict, with_fault: bool):
    """A Ray fleet case: `[[fleet]]` nodes (name; `ray`: the resources Ray advertises, `control_ray` for the control)
    on the healthy base with their own hostnames and RoCE IPs, judged as `fleet --ray-address … [-- serve]` would."""
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.fleet.evaluate import FleetEvaluator
    from ascend_doctor.fleet.model import NodeResult
    from ascend_doctor.seam.snapshot import Snapshot
    from tests.fleet import nodes as N
    from tests.helpers import parse_serve

    results = []
    for i, node in enumerate(data["fleet"]):
        ray = node["ray"] if with_fault else node.get("control_ray", node["ray"])
        results.append(NodeResult(name=node["name"], snapshot=Snapshot.model_validate(N.node(node["name"], 11 + i)),
                                  source=f"ray node {i}", ray_resources=dict(ray)))
    serve = parse_serve(list(data["serve"]), shipped().matrix) if data.get("serve") else None
    return FleetEvaluator(_registry(), RunOptions(), serve=serve).report(results)


def _run_wire(data: dict, with_fault: bool):
    """A wire case: `smoke` against a scripted server on 127.0.0.1 that answers with the thread's response bodies
    (`[wire]`) over the recorded bytes of a real vLLM (`wire_base`); the control gets the recording alone."""
    from types import SimpleNamespace

    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.smoke.stage import evaluate_smoke, gather
    from tests.smoke.fault_server import ScriptedServer

    overrides = {key: {"status": 200, "headers": {"content-type": "application/json"}, "raw": body}
                 for key, body in data["wire"].items()} if with_fault else {}
    with ScriptedServer(recorded=data.get("wire_base", "vllm-0.32.0-strict"), overrides=overrides) as srv:
        facts = gather(srv.base_url, timeout=30.0)
    return SimpleNamespace(findings=evaluate_smoke(_registry(), facts, RunOptions()))


def run(data: dict, with_fault: bool = True):
    """The report `exec --replay SNAPSHOT -- SERVE…` (or `check --replay`) would give, in process; for a `fleet` case
    the fleet report; for a `wire` case the smoke's findings."""
    if data.get("fleet"):
        return _run_fleet(data, with_fault)
    if data.get("wire"):
        return _run_wire(data, with_fault)
    from ascend_doctor.core.engine import run_static
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.seam.snapshot import ReplayHost, Snapshot

    snap, serve = build(data, with_fault)
    host = ReplayHost(Snapshot.model_validate(copy.deepcopy(snap)))
    options = RunOptions(import_probe=True)
    stages: tuple[str, ...] = ("static",)
    if serve:
        options = options.model_copy(update={"serve_argv": list(serve)})
        stages = ("static", "serve")
    return run_static(host, _registry(), options, stages=stages)


@lru_cache(maxsize=1)
def _registry():
    from ascend_doctor.core.registry import load_registry

    return load_registry(entry_points=False)


def finding(report, code: str, node: Optional[str] = None) -> Optional[Any]:
    """The finding of `code` (on `node` in a fleet report; the worst one when no node is named)."""
    found = [f for f in report.findings if f.code == code and (node is None or f.node == node)]
    order = {"fail": 0, "error": 1, "warn": 2, "unknown": 3, "pass": 4, "skip": 5}
    return min(found, key=lambda f: order.get(f.status.value, 9)) if found else None
