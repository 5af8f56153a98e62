"""One `triage` run: a paste in, the report out (the same contract as `check`, plus its `triage` summary).

A paste is a host seen through what its author printed. Everything it states faithfully becomes the facts the checks
read, in the same store: the serving python (its version and the distributions pip/conda/collect_env list), the
environment block of collect_env, the `npu-smi info` table and its health views, the CANN and driver versions, the
`vllm serve` command line. A fact the paste cannot give is missing with the reason; a fact it gives only in part is
marked so (`ascend_doctor.facts.partial`: a pip list names versions, never requirements; collect_env prints only some
variables), and reading an unshown part is unknown, never an empty value.

Every check of the static, serve and triage stages runs through the one evaluator — no list kept by hand: a check
that found what it reads in the paste answers; one that asked for something the paste lacks is `skip`, "not in the
paste", with what was missing (and the check's own words). No probe runs and nothing on this machine is read.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from typing import Any, Optional

from packaging.utils import canonicalize_name

from ascend_doctor import __version__
from ascend_doctor.core.evaluator import evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.facts.partial import Shown
from ascend_doctor.facts.server_env import EnvListing, ListedEnv
from ascend_doctor.i18n import T
from ascend_doctor.parsers.npu_smi import NpuChip
from ascend_doctor.report import HostSummary, Report, Status, TriageSection, TriageSummary, build_report
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.text.textsafe import clipped
from ascend_doctor.text.versions import try_parse_version
from ascend_doctor.triage.paste import CUT_VALUE, PasteFacts, read_paste

STAGES = ("static", "serve", "triage")
# Sections the report lists (a log of 20,000 tracebacks is 20,000 sections; the first ones say where to look).
MAX_SECTIONS = 200
# Facts derived from others in any store: never "lacking" themselves (they fail with their inputs' reason).
DERIVED = ("stack", "npu_scope", "server_env")

# What each collect_env prints of the environment (its get_env_vars): vLLM's own variables (vllm.envs, which holds
# VLLM_* and LD_LIBRARY_PATH) and a few prefixes; names that look secret are dropped.
#   vllm-ascend collect_env.py: report_prefix = ("TORCH", "PYTORCH", "ASCEND_", "ATB_")
#   vLLM collect_env.py:        report_prefix = ("TORCH", "NCCL", "PYTORCH", "CUDA", "CUBLAS", "CUDNN", "OMP_",
#                                                "MKL_", "NVIDIA")
# The pip/conda lines collect_env keeps (DEFAULT_PIP_PATTERNS, a substring of the line; the patterns both vLLM's
# and vllm-ascend's collect_env.py use): a distribution whose name holds one and is not listed is not installed.
COLLECT_ENV_PIP_PATTERNS = ("torch", "numpy", "transformers", "zmq", "onnx", "optree")
_SECRET_TERMS = ("secret", "token", "api", "access", "password")
LISTINGS = {
    "vllm-ascend": EnvListing("vllm-ascend's collect_env", ("VLLM_", "TORCH", "PYTORCH", "ASCEND_", "ATB_"),
                              names=("LD_LIBRARY_PATH",), hidden_terms=_SECRET_TERMS),
    "vllm": EnvListing("vLLM's collect_env", ("VLLM_", "TORCH", "NCCL", "PYTORCH", "CUDA", "CUBLAS", "CUDNN", "OMP_",
                                              "MKL_", "NVIDIA"),
                       names=("LD_LIBRARY_PATH",), hidden_terms=_SECRET_TERMS),
}


def _image_recipe(paste: PasteFacts, images) -> Any:
    """The recipe of the official image the paste names (serve/images), when no full package list says what is
    installed; None otherwise. The image's own tag suffix gives its chip family (`-310p`), else the A2 build."""
    if paste.image is None or paste.packages_complete or paste.collect_env_packages or images is None:
        return None
    return images.find(paste.image.value, paste.image_family.value if paste.image_family else None,
                       paste.image_os or "ubuntu")


def _from_recipe(paste: PasteFacts, recipe) -> list[str]:
    """Put the packages the image's recipe pins into the paste (where the paste names none of them) and return the
    ones the recipe says the image does not hold — each sourced to the recipe, never over the paste's own words."""
    from ascend_doctor.triage.paste import Seen

    source = T("the recipe of the {image} image ({where})", image=recipe.id, where=recipe.source)
    if paste.python_version is None and recipe.python:  # the base image's interpreter: vLLM runs in it
        paste.python_version = Seen(value=recipe.python, lines=paste.image.lines, source=source)
    for name, version in recipe.pinned(paste.machine).items():
        comp = name.replace("-", "_")
        if name not in paste.packages and paste.first(comp) is None:
            paste.packages[name] = [Seen(value=version, lines=paste.image.lines, source=source)]
    return [n for n in recipe.absent(paste.machine) if n not in paste.packages
            and paste.first(n.replace("-", "_")) is None and canonicalize_name(n) not in paste.pip_named]


def _python(paste: PasteFacts, absent: Optional[list[str]] = None) -> Optional[PythonEnv]:
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
                     listed_only=not paste.packages_complete, pointer_bits=paste.python_bits, absent=absent or [],
                     listed_patterns=list(COLLECT_ENV_PIP_PATTERNS) if paste.collect_env_packages else [])


def _python_shown(paste: PasteFacts) -> Shown:
    """What a paste shows of the serving python: names and versions, never requirements, locations or the ABI."""
    paths = ["executable", "distributions.name", "distributions.version", "listed_only", "listed_patterns", "absent",
             "ok", "error", "error_message"]
    if paste.python_version:
        paths += ["version", "implementation"]
    if paste.machine:
        paths.append("machine")
    if paste.python_bits:
        paths.append("pointer_bits")
    return Shown(paths, T("the paste does not show this of the serving python (a package list gives names and "
                          "versions; collect_env the Python version)"))


# What a paste shows of CANN and the driver: a version (and where CANN lives when a path is printed), nothing of
# NNAL, the toolkit's arch, its version files or whether set_env.sh was sourced; nothing of the firmware.
CANN_SHOWN = ("found", "version", "installs.root", "installs.version", "active.root", "active.version")
# What a pasted `npu-smi info` table shows of the NPUs at launch: the chips, their health, totals and the driver —
# not what was in use. A paste is one moment, often taken while the reported server ran (its own workers then hold
# the memory): memory use, AI Core load and the process table are not the NPUs' state before `vllm serve`.
NPU_SMI_MOMENT = ("hbm_used_mb", "memory_used_mb", "aicore_pct", "hugepages_used")
NPU_SMI_SHOWN = ("found", "tool", "command", "parse_error", "usable",
                 *(f"info.{k}" for k in ("tool_version", "driver_version", "error", "layout", "has_process_table",
                                         "elided", "warnings")),
                 *(f"info.chips.{k}" for k in NpuChip.model_fields if k not in NPU_SMI_MOMENT))
DRIVER_SHOWN = ("found", "version", "version_info.version")


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


def _variant_vllm(recipe, images) -> Optional[str]:
    """The vLLM of an image variant whose recipe records another vLLM than the release's Ubuntu A2 image (the
    v0.11.0rc3 openEuler build holds vLLM 0.11.2, its Dockerfile.openEuler at the tag; h38r); None otherwise. Where
    every variant agrees the matrix's pair stands: the recipes are read from the PyPI sdists, and one sdist's
    Dockerfile is not its tag's (vllm_ascend-0.21.0rc1.tar.gz: VLLM_TAG v0.22.1; the tag v0.21.0rc1: v0.21.0)."""
    default = images.find(recipe.release, None, "ubuntu") if images is not None else None
    if try_parse_version(recipe.vllm or "") is None or default is None or default.vllm == recipe.vllm:
        return None
    return recipe.vllm


def _image_vllm(paste: PasteFacts, matrix, recipe=None, images=None) -> None:
    """The vLLM an official vllm-ascend image ships — a variant's own (_variant_vllm), else the release's one paired
    vLLM in the matrix — when the paste names the image, states no other vllm-ascend release (a `vllm-ascend 版本:
    …` line that agrees is fine) and no vLLM version (in place). A paste that names a release in prose gets none: a
    pip install of vllm-ascend brings whatever vLLM the user installed."""
    from ascend_doctor.triage.paste import Seen

    seen, stated = paste.image, paste.first("vllm_ascend")
    if seen is None or stated is None or stated.value.lower().lstrip("v") != seen.value \
            or paste.first("vllm") is not None or "vllm" in paste.packages:
        return
    if recipe is not None and _variant_vllm(recipe, images) is not None:
        paste.versions["vllm"] = [Seen(value=recipe.vllm, lines=seen.lines,
                                       source=f"the vLLM of the vllm-ascend {recipe.id} image")]
        return
    row = matrix.vllm_ascend_release(seen.value)
    if row is not None and len(row.vllm) == 1:
        paste.versions["vllm"] = [Seen(value=row.vllm[0], lines=seen.lines, source=f"the vLLM of the vllm-ascend "
                                                                                   f"{seen.value} image")]


# An out-of-memory error line (torch_npu's, CANN's 207018, vLLM's KV-cache sizing): beside it, a pasted table's memory
# use is the evidence of that failure (NPU103 then explains it, ascend_doctor.triage.answer).
_MEMORY_ERROR = re.compile(r"out of memory|\b207018\b|No available memory for the cache blocks", re.I)


def _memory_error(paste: PasteFacts) -> bool:
    """Whether the paste holds an out-of-memory error: then the table's memory use and processes are read as what
    the failure saw, not as a moment of unknown time."""
    return bool(_MEMORY_ERROR.search(paste.text))


def _cann(paste: PasteFacts, recipe, have: dict, lack: dict, partial: dict) -> None:
    """The `cann` fact of a paste: the version it states, else the CANN base image of the official image it names."""
    from ascend_doctor.probes.cann import CannFact, CannInstall

    cann = paste.first("cann")
    if cann is None and recipe is not None and recipe.cann:  # the CANN the image is built FROM
        from ascend_doctor.triage.paste import Seen

        cann = Seen(value=recipe.cann, lines=paste.image.lines, source=T(
            "the CANN base image of the {image} image's recipe", image=recipe.id))
        paste.versions["cann"] = [cann]
    if cann is None:
        lack["cann"] = T("the paste does not say which CANN is installed")
        return
    root = paste.cann_path.value if paste.cann_path else "(CANN of the paste)"
    inst = CannInstall(root=root, dir_version=None, version=cann.value)
    have["cann"] = CannFact(found=True, installs=[inst], active=inst, version=cann.value)
    partial["cann"] = Shown(CANN_SHOWN, T("the paste gives the CANN version only (not NNAL/ATB, the toolkit's "
                                          "arch, its version files or whether set_env.sh was sourced)"))


def _npu_smi(paste: PasteFacts, have: dict, lack: dict, partial: dict) -> None:
    """The `npu_smi` fact of a pasted table (its occupancy hidden unless an out-of-memory error explains it) and the
    health outputs beside it."""
    if paste.npu_smi_text is None:
        lack["npu_smi"] = T("the paste has no `npu-smi info` table")
        return
    from ascend_doctor.core.errors import ParseError
    from ascend_doctor.parsers.npu_smi import parse_npu_smi_info
    from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact

    fact = NpuSmiFact(found=True, tool="npu-smi", command=CommandSummary(argv=["npu-smi", "info"], returncode=0))
    try:
        fact.info = parse_npu_smi_info(paste.npu_smi_text, fragment=paste.npu_smi_fragment)
    except ParseError as exc:
        fact.parse_error = f"{exc} (paste lines {paste.npu_smi_lines})"
    have["npu_smi"] = fact
    if not _memory_error(paste):  # an out-of-memory error beside the table: its memory use is the evidence
        partial["npu_smi"] = Shown(NPU_SMI_SHOWN, T(
            "a pasted `npu-smi info` table is one moment, often taken while the reported server ran: the "
            "memory, load and processes it shows are not the NPUs' state at launch (run `npu-smi info` on the "
            "host before `vllm serve`, or `ascend-doctor check` there)"))
    if paste.health_texts:
        have["npu_health"] = _health(paste, fact)


def _serve(paste: PasteFacts, knowledge, have: dict, partial: dict, lack: dict) -> None:
    """The `serve_cmd` fact of the paste's command (and the catalogue model it names): what the paste elides or
    leaves to the shell is given but not shown, never a wrong value or a positional argument."""
    from ascend_doctor.knowledge.serve_options import parse_serve as parse_serve_command
    from ascend_doctor.parsers.serve_cmdline import is_expansion, shell_expansions
    from ascend_doctor.triage.model import model_fact

    vllm = paste.first("vllm") or next(iter(paste.packages.get("vllm", [])), None)
    cmd = parse_serve_command(paste.serve_argv, knowledge.matrix, vllm_version=vllm.value if vllm else None)
    # the paste reader takes an elision after an option for its value; after a flag (`--enable-prefix-caching \`
    # then `...  # the rest not shown`, h38o) argparse would read it as the model: it stands for options left out
    flags = {o for o in paste.serve_cut if isinstance(cmd.options.get(o.lstrip("-").replace("-", "_")), bool)}
    given = paste.serve_argv
    argv = [w for k, w in enumerate(given) if not (w == CUT_VALUE and k and given[k - 1] in flags)]
    if len(argv) < len(given):
        cmd = parse_serve_command(argv, knowledge.matrix, vllm_version=vllm.value if vllm else None)
    words = [a for a in cmd.unknown_args if a != CUT_VALUE and not is_expansion(a)]
    if paste.serve_commented and words:  # `# the vllm serve command was not captured`: prose that names it
        paste.sections = [s for s in paste.sections if s.kind != "serve_command"]
        lack["serve_cmd"] = T("the only `vllm serve` of the paste is in a comment that reads as prose, not as a "
                              "command (words vLLM would not take: {words})",
                              words=" ".join(clipped(w, 40) for w in words[:6]))
        return
    # an elision after a flag (`--enforce-eager ... --port 8000`) stands for options left out, not a value
    cut = [d for d in (o.lstrip("-").replace("-", "_") for o in paste.serve_cut)
           if not isinstance(cmd.options.get(d), bool)]
    # a word that is a shell expansion by itself (`$EXTRA_ARGS`, `"$@"`) stands for options the paste does not
    # resolve: no positional argument, and the command is open (h38g: SERVE105 failed one)
    spread = [a for a in cmd.unknown_args if is_expansion(a)]
    paste.serve_open = paste.serve_open or bool(spread)
    have["serve_cmd"] = cmd.model_copy(update={"cut": cut, "unexpanded": shell_expansions(cmd.options),
                                               "partial": paste.serve_open,
                                               "entry": "LLM()" if paste.serve_offline else cmd.entry,
                                               "unknown_args": [a for a in cmd.unknown_args
                                                                if a != CUT_VALUE and a not in spread]})
    named = paste.model_named.value if paste.model_named else None
    known = model_fact(cmd, knowledge.catalogue, named) if cmd.recognized else None
    if known is not None:
        have["serve_model"], partial["serve_model"] = known


def presets(paste: PasteFacts, knowledge) -> tuple[dict[str, Any], dict[str, str], dict[str, Shown]]:
    """(facts the paste states, facts it lacks -> why, facts it shows in part -> what it shows); `knowledge`
    parses the paste's serve command."""
    from ascend_doctor.parsers.ascend_files import DriverVersionInfo
    from ascend_doctor.probes import load_probes
    from ascend_doctor.probes.cann import DriverFact

    have: dict[str, Any] = {"paste": paste}
    lack: dict[str, str] = {}
    partial: dict[str, Shown] = {}
    recipe = _image_recipe(paste, knowledge.images)
    _image_vllm(paste, knowledge.matrix, recipe, knowledge.images)
    absent = _from_recipe(paste, recipe) if recipe is not None else []
    # a part the paste says is not installed, and names no version of
    absent += [d for d in (c.replace("_", "-") for c in paste.absent if paste.first(c) is None) if d not in absent]
    py = _python(paste, absent)
    if py is not None:
        have["python"] = py
        partial["python"] = _python_shown(paste)
    else:
        lack["python"] = T("the paste lists no Python packages (no collect_env, pip list or pip freeze)")
    if paste.env:
        listing = LISTINGS.get(paste.env_form, LISTINGS["vllm-ascend"])
        # what collect_env measured; export lines beside it are not merged (they may be another shell's)
        have["env"] = ListedEnv({k: s.value for k, s in paste.env.items()}, listing)
    elif paste.exports:  # the variables the author sets; whether any other is set is not shown
        have["env"] = ListedEnv({k: s.value for k, s in paste.exports.items()},
                                EnvListing(T("the paste's `export` and `docker run -e` lines"), (), paste.exports))
    else:  # nothing shown: every variable unknown, but the command line's own `K=V` still count (server_env)
        have["env"] = ListedEnv({}, EnvListing(T("the paste"), (), why=T(
            "the paste has no environment-variable block (collect_env's `ENV Variables:`)")))
    _cann(paste, recipe, have, lack, partial)
    _npu_smi(paste, have, lack, partial)
    _family(paste, have, lack)
    if paste.driver_version is not None:
        have["driver"] = DriverFact(found=True, version_info=DriverVersionInfo(version=paste.driver_version.value))
        partial["driver"] = Shown(DRIVER_SHOWN, T("the paste gives the driver version only (not the firmware or "
                                                  "the driver's files)"))
    else:
        lack["driver"] = T("the paste does not give the driver version (npu-smi info or driver version.info)")
    if paste.serve_argv:
        _serve(paste, knowledge, have, partial, lack)
    else:
        lack["serve_cmd"] = T("the paste has no `vllm serve` command line")
    lack.setdefault("npu_health", T("the paste has no `npu-smi info -t health -i N` output"))
    for name in sorted(load_probes()):
        if name not in have and name not in DERIVED:
            lack.setdefault(name, T("a paste cannot show this ({fact}); it is read on the machine", fact=name))
    return have, lack, partial


def not_in_paste(findings: list, lack: dict[str, str]) -> dict[str, list[str]]:
    """Turn each `unknown` that comes from what the paste lacks into `skip` "not in the paste" (in place): the
    check asked for a fact the paste does not have, or for a part of one it does not show. Returns reason -> codes,
    for the report's "not judged" list. An unknown whose check had what it asked for (a version not in the matrix)
    stays unknown: that is a finding about the paste's stack, not about the paste."""
    from ascend_doctor.report import finding_level

    grouped: dict[str, list[str]] = {}
    for f in findings:
        if f.status != Status.UNKNOWN:
            continue
        unread = {k: v for k, v in f._unread.items() if k in lack or "." in k}
        if not unread:
            continue
        reasons = list(dict.fromkeys(str(v) for v in unread.values()))
        said = f.message
        f.status = Status.SKIP
        f.level = finding_level(f.status, f.severity)
        msg = T("not in the paste: {reasons}", reasons="; ".join(f"{k} — {v}" for k, v in unread.items()))
        from ascend_doctor.i18n import split

        f.message, f.message_template, f.message_fields = split(msg)
        f.details = {**f.details, "not_in_paste": sorted(unread), "lacked": reasons, "check_said": said}
        for r in reasons:
            grouped.setdefault(r, []).append(f.code)
    return grouped


def _older_release(paste: PasteFacts, matrix) -> Optional[tuple[str, str]]:
    """(the paste's vllm-ascend, the newest release the matrix knows) when the paste's is older; else None."""
    from ascend_doctor.text.versions import try_parse_version

    seen, newest = paste.first("vllm_ascend"), matrix.newest_known("vllm-ascend")
    have = try_parse_version(seen.value) if seen is not None else None
    if have is None or newest is None or have >= try_parse_version(newest):
        return None
    return seen.value, newest


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


def _family(paste, have: dict, lack: dict) -> None:
    """The `npu_family` fact of a paste: npu-smi's families where its table names a known chip, else the family the
    official image it names is built for (`-310p`, `-a3`) — also beside a table cut before its chip names or rows —
    else the table's unknown chips, else missing with the reason."""
    from ascend_doctor.core.errors import FactUnavailable
    from ascend_doctor.probes.npu import NpuFamilyFact, family_of

    smi, told, why = have.get("npu_smi"), None, None
    if smi is not None:
        try:
            told = family_of(smi)
        except FactUnavailable as exc:
            why = exc.reason
    if told is not None and set(told.families) - {"?"}:
        have["npu_family"] = told
    elif paste.image_family is not None:  # the build the user runs names the family the chips belong to
        have["npu_family"] = NpuFamilyFact(families={paste.image_family.value: []}, source=T(
            "the family of {image} (paste line {line}; {table})", image=paste.image_family.source,
            line=paste.image_family.lines, table=T("no npu-smi table") if smi is None else T(
                "the npu-smi table names no chip of a known family")))
    elif told is not None:
        have["npu_family"] = told
    else:
        lack["npu_family"] = why or T("the paste has no `npu-smi info` table and names no image built for one chip "
                                      "family (-310p, -a3)")


def _open_command(findings: list, checks: dict, offline: bool = False) -> None:
    """A command the paste shows only in part (an elided `...`, a line continuation or a quoted value the paste ends
    on), or an offline `LLM(...)` launch (`offline`, which holds none of the options only a server takes): what a
    check of the command passed or skipped may rest on an option the paste does not show, so it is not known (in
    place). A failure stands: it rests on what the paste does show."""
    from ascend_doctor.report import Status, finding_level

    for f in findings:
        c = checks.get(f.code)
        if c is None or "serve_cmd" not in c.needs or f.status not in (Status.PASS, Status.SKIP):
            continue
        f.message = T("the launch is an offline LLM(...) call, read as the vllm serve options it stands for; the "
                      "options only a server takes are not in it: {said}", said=f.message) if offline else \
            T("the paste shows only part of the command (it goes on past an elided `...` or the paste's "
              "end), and options it does not show may change this: {said}", said=f.message)
        f.status = Status.UNKNOWN
        f.level = finding_level(f.status, f.severity)


def triage_text(text: str, source: str, registry, options: Optional[RunOptions] = None) -> Report:
    """The report for one paste."""
    from ascend_doctor.triage.answer import missing_pieces, rank, to_confirm
    from ascend_doctor.triage.logs import log_matches

    started_at, t0 = datetime.now(timezone.utc), time.monotonic()
    options = options or RunOptions()
    paste = read_paste(text)
    from ascend_doctor.knowledge.door import Knowledge

    knowledge = Knowledge.for_options(options)
    have, lack, partial = presets(paste, knowledge)
    store = FactStore.given(have, missing=lack, options=options, knowledge=knowledge, partial=partial)
    checks = registry.select(options.select, options.ignore, stage=STAGES)
    findings = evaluate(checks, store, options)
    if "serve_model" in have:  # the catalogue's config stands in for the model: which failures it made
        from ascend_doctor.triage.model import PREFIX, model_findings, soften

        by_code = {c.code: c for c in checks}
        again = model_findings(findings, by_code)
        if again:
            bare = FactStore.given({k: v for k, v in have.items() if k != "serve_model"},
                                   missing={**lack, "serve_model": T("the paste shows none of the model's files")},
                                   options=options, knowledge=knowledge, partial=partial)
            without = evaluate(again, bare, options)
        soften(findings, by_code, have["serve_model"].path.removeprefix(PREFIX), without if again else [])
    if paste.serve_open:
        _open_command(findings, {c.code: c for c in checks}, offline=paste.serve_offline)
    not_judged = not_in_paste(findings, lack)
    matches = log_matches(paste, knowledge.signatures)
    root, why, others = rank(findings, paste, matches, _older_release(paste, knowledge.matrix))
    leads = []  # leads, not answers: docs/research/triage-2026-12 measured fix matching as an answer at 0 of 38
    explained = any(m["kind"] == "error" and not m.get("wrapper") for m in matches)  # a signature has its fix
    if root == "TRIAGE102" and not explained and any("vllm_ascend/" in f for t in paste.tracebacks for f in t.frames):
        from ascend_doctor.triage.fixes import later_fixes

        fixed = later_fixes(paste, knowledge.release_fixes)  # the raising function's fixes the release lacks
        if fixed is not None:
            leads.append(fixed)
    missing = to_confirm(root, findings, matches) + missing_pieces(paste)
    from ascend_doctor.facts.stack import stack_of

    summary = HostSummary(hostname="paste", machine=paste.machine or "", source=f"paste:{source}")
    summary.stack = stack_of(store)
    notes = []
    if paste.package_rows_dropped:
        from ascend_doctor.triage.paste import MAX_PACKAGE_ROWS

        notes.append(T("the paste lists more than {limit} packages: {dropped} more rows were not read (no real "
                       "environment has that many)", limit=f"{MAX_PACKAGE_ROWS:,}",
                       dropped=f"{paste.package_rows_dropped:,}"))
    if len(paste.sections) > MAX_SECTIONS:
        notes.append(T("the paste has {n} sections (tracebacks, tables, lists); the report lists the first {limit}",
                       n=f"{len(paste.sections):,}", limit=MAX_SECTIONS))
    if paste.machines > 1:
        notes.append(T("the paste holds {n} environment reports; only the first is judged — paste each machine "
                       "separately", n=paste.machines))
    report = build_report(tool_version=__version__, host=summary, started_at=started_at,
                          duration_s=time.monotonic() - t0, fail_on=options.fail_on, findings=findings,
                          command="triage", notes=notes, fail_on_unknown=options.fail_on_unknown)
    report.triage = TriageSummary(
        source=source, lines=paste.line_count, machines=paste.machines,
        sections=[TriageSection(kind=s.kind, lines=s.lines, label=s.label) for s in paste.sections[:MAX_SECTIONS]],
        seen=_seen(paste), root_cause=root, root_cause_why=why, others=others, missing=missing,
        not_judged=[f"{', '.join(codes)}: {why}" for why, codes in not_judged.items()], leads=leads)
    report.triage.keep_texts(root_cause_why=why, missing=missing, leads=leads,
                             not_judged=[T("{code}: {why}", code=", ".join(codes), why=why)
                                         for why, codes in not_judged.items()])
    return report
