"""One `triage` run: a paste in, the report out (the same contract as `check`, plus its `triage` summary).

The facts a paste can state faithfully become the checks' facts: the serving python (its version and the
distributions pip/conda/collect_env list — without their requirements), the environment block of collect_env, the
`npu-smi info` table, the CANN version, the driver version, the `vllm serve` command line. Every other fact is
marked missing with the reason ("the paste has no npu-smi info"), so its checks answer unknown; no probe runs and
nothing on this machine is read. Only checks whose every input a paste can give are run (JUDGED); the host checks
(SELinux, ulimit, /dev/shm, PCIe…) need the machine itself and are listed as not judged.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any, Optional

from ascend_doctor import __version__
from ascend_doctor.core.evaluator import evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.i18n import T
from ascend_doctor.report import HostSummary, Report, TriageSection, TriageSummary, build_report
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.triage.paste import PasteFacts, read_paste

# Static checks a paste can answer, and what each needs from it (beyond the `paste` fact itself).
JUDGED = ("VLLM101", "VLLM102", "VLLM103", "TORCH101", "TORCH102", "TORCH103", "CANN106", "NPU101", "NPU103", "ENV101",
          "ENV102", "SERVE101", "SERVE102", "SERVE103", "SERVE104", "SERVE105")
# Checks that read the absence of a package as "not installed": only with a complete list (pip list / pip freeze).
NEED_FULL_PACKAGE_LIST = ("VLLM102",)
NOT_JUDGED = {
    "VLLM104": T("pip check needs each distribution's requirements, which no paste lists"),
    "HCCL105": T("collect_env does not print every HCCL_* variable, so an unset timeout cannot be told from an "
                 "unprinted one"),
    "HOST": T("host settings (SELinux, ulimit, /dev/shm, memory, disk, time sync, PCIe) need the machine itself"),
    "CTR": T("container device mounts need the machine itself"),
    "TORCH104": T("the torch_npu import probe runs on the machine (a traceback in the paste is read by TRIAGE102)"),
    "VLLM105": T("the platform probe runs on the machine"),
    "HCCL101-104": T("NPU network checks need `hccn_tool -i N ...` for every device and /etc/hccn.conf"),
}


def _python(paste: PasteFacts) -> Optional[PythonEnv]:
    if not paste.packages and not paste.versions:
        return None
    dists: dict[str, Distribution] = {}
    for name, seen in paste.packages.items():
        dists[name] = Distribution(name=name, version=seen[0].value)
    for comp, dist in (("vllm", "vllm"), ("vllm_ascend", "vllm-ascend"), ("torch", "torch"),
                       ("torch_npu", "torch-npu")):
        s = paste.first(comp)
        if s is not None and dist not in dists:
            dists[dist] = Distribution(name=dist, version=s.value)
    if not dists:
        return None
    py = paste.python_version.value if paste.python_version else ""
    return PythonEnv(executable="(python of the paste)", version=py, implementation="CPython" if py else "",
                     machine=paste.machine or "", distributions=list(dists.values()),
                     listed_only=not paste.packages_complete)


def _health(paste: PasteFacts, smi) -> Any:
    """The `-t health -i N` outputs the paste holds; the table's other NPUs count as not read."""
    from ascend_doctor.core.errors import ParseError
    from ascend_doctor.parsers.npu_smi_detail import parse_npu_smi_health
    from ascend_doctor.probes.npu import CommandSummary, NpuHealthFact, NpuHealthResult

    results = []
    for npu, seen in sorted(paste.health_texts.items()):
        res = NpuHealthResult(npu_id=npu, command=CommandSummary(argv=["npu-smi", "info", "-t", "health", "-i",
                                                                       str(npu)], returncode=0))
        try:
            res.health = parse_npu_smi_health(seen.value)
        except ParseError as exc:
            res.parse_error = f"{exc} (paste lines {seen.lines})"
        results.append(res)
    listed = smi.info.npu_ids() if smi.info is not None else []
    return NpuHealthFact(results=results, unanswered=[n for n in listed if n not in paste.health_texts])


def presets(paste: PasteFacts, knowledge) -> tuple[dict[str, Any], dict[str, str]]:
    """(facts the paste states, facts it lacks -> why); `knowledge` parses the paste's serve command."""
    from ascend_doctor.knowledge.serve_options import parse_serve as parse_serve_command
    from ascend_doctor.parsers.ascend_files import DriverVersionInfo
    from ascend_doctor.probes.cann import CannFact, CannInstall, DriverFact

    have: dict[str, Any] = {"paste": paste}
    lack: dict[str, str] = {}
    py = _python(paste)
    if py is not None:
        have["python"] = py
    else:
        lack["python"] = T("the paste lists no Python packages (no collect_env, pip list or pip freeze)")
    if paste.env:
        have["env"] = {k: s.value for k, s in paste.env.items()}
    else:
        lack["env"] = T("the paste has no environment-variable block (collect_env's `ENV Variables:`)")
    cann = paste.first("cann")
    if cann is not None:
        root = paste.cann_path.value if paste.cann_path else "(CANN of the paste)"
        inst = CannInstall(root=root, dir_version=None)
        have["cann"] = CannFact(found=True, installs=[inst], active=inst, version=cann.value)
    else:
        lack["cann"] = T("the paste does not say which CANN is installed")
    if paste.npu_smi_text is not None:
        from ascend_doctor.core.errors import ParseError
        from ascend_doctor.parsers.npu_smi import parse_npu_smi_info
        from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact

        fact = NpuSmiFact(found=True, tool="npu-smi", command=CommandSummary(argv=["npu-smi", "info"], returncode=0))
        try:
            fact.info = parse_npu_smi_info(paste.npu_smi_text)
        except ParseError as exc:
            fact.parse_error = f"{exc} (paste lines {paste.npu_smi_lines})"
        have["npu_smi"] = fact
        if paste.health_texts:
            have["npu_health"] = _health(paste, fact)
    else:
        lack["npu_smi"] = T("the paste has no `npu-smi info` table")
    if paste.driver_version is not None:
        have["driver"] = DriverFact(found=True, version_info=DriverVersionInfo(version=paste.driver_version.value))
    else:
        lack["driver"] = T("the paste does not give the driver version (npu-smi info or driver version.info)")
    if paste.serve_argv:
        have["serve_cmd"] = parse_serve_command(paste.serve_argv, knowledge.matrix)
    else:
        lack["serve_cmd"] = T("the paste has no `vllm serve` command line")
    lack.setdefault("npu_health", "the paste has no `npu-smi info -t health -i N` output")
    for name in ("vllm_files", "serve_model", "devices", "container", "hccn"):
        lack.setdefault(name, "a paste cannot show this; it is read on the machine")
    return have, lack


def _seen(paste: PasteFacts) -> dict[str, str]:
    out = {}
    for comp, seen in paste.versions.items():
        s = seen[0]
        out[comp] = f"{s.value} ({s.source}, line {s.lines})"
    if paste.python_version:
        v = paste.python_version
        out["python"] = f"{v.value} ({v.source}, line {v.lines})"
    if paste.driver_version:
        d = paste.driver_version
        out["driver"] = f"{d.value} ({d.source}, line {d.lines})"
    return out


def triage_text(text: str, source: str, registry, options: Optional[RunOptions] = None) -> Report:
    """The report for one paste."""
    from ascend_doctor.triage.answer import missing_pieces, rank
    from ascend_doctor.triage.logs import log_matches

    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    options = options or RunOptions()
    paste = read_paste(text)
    from ascend_doctor.knowledge.door import Knowledge

    knowledge = Knowledge.for_options(options)
    have, lack = presets(paste, knowledge)
    store = FactStore.given(have, missing=lack, options=options, knowledge=knowledge)
    checks = [c for c in registry.select(options.select, options.ignore, stage=("static", "serve", "triage"))
              if c.code in JUDGED or c.stage == "triage"]
    if "serve_cmd" not in have:
        checks = [c for c in checks if not c.code.startswith("SERVE")]
    not_judged = dict(NOT_JUDGED)
    if not paste.packages_complete:
        checks = [c for c in checks if c.code not in NEED_FULL_PACKAGE_LIST]
        for code in NEED_FULL_PACKAGE_LIST:
            not_judged[code] = T("collect_env lists only some packages, so a missing pin cannot be told from an "
                                 "unlisted one: paste `python -m pip list` to compare every pin")
    findings = evaluate(checks, store, options)
    matches = log_matches(paste, knowledge.signatures)
    root, why, others = rank(findings, paste, matches)
    missing = missing_pieces(paste)
    from ascend_doctor.facts.stack import stack_of

    summary = HostSummary(hostname="paste", machine=paste.machine or "", source=f"paste:{source}")
    summary.stack = stack_of(store)
    notes = []
    if paste.package_rows_dropped:
        from ascend_doctor.triage.paste import MAX_PACKAGE_ROWS

        notes.append(T("the paste lists more than {limit} packages: {dropped} more rows were not read (no real "
                       "environment has that many)", limit=f"{MAX_PACKAGE_ROWS:,}",
                       dropped=f"{paste.package_rows_dropped:,}"))
    if paste.machines > 1:
        notes.append(T("the paste holds {n} environment reports; only the first is judged — paste each machine "
                       "separately", n=paste.machines))
    report = build_report(tool_version=__version__, host=summary, started_at=started_at,
                          duration_s=time.monotonic() - t0, fail_on=options.fail_on, findings=findings,
                          command="triage", notes=notes, fail_on_unknown=options.fail_on_unknown)
    report.triage = TriageSummary(
        source=source, lines=paste.line_count, machines=paste.machines,
        sections=[TriageSection(kind=s.kind, lines=s.lines, label=s.label) for s in paste.sections],
        seen=_seen(paste), root_cause=root, root_cause_why=why, others=others, missing=missing,
        not_judged=[f"{k}: {v}" for k, v in not_judged.items()])
    report.triage.keep_texts(root_cause_why=why, missing=missing,
                             not_judged=[T("{code}: {why}", code=k, why=v) for k, v in not_judged.items()])
    return report
