"""VLLM checks: vLLM ↔ vllm-ascend, the installed release's pins vs what is installed, advisories (pip check: VLLM104
in vllm_pipcheck.py).

Facts: `python` (distributions from metadata), `env` (VLLM_VERSION), `cann`, `driver`, `npu_smi`. Every verdict comes
from a matrix query (`vllm_ascend_release`, `nearest_release`, `releases_for_vllm`, `compare_stack`,
`matching_advisories`) and cites the row's source; a vllm-ascend newer than the matrix is a warning, never a
failure.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ascend_doctor.i18n import T, capitalized, join, known
from ascend_doctor.plugin import FactUnavailable, check, ev, if_shown, step
from ascend_doctor.seam.host import normalize_name
from ascend_doctor.text.textsafe import clipped
from ascend_doctor.text.versions import try_parse_version, version_in

from ._hardware import one_family
from ._vllm import (
    JUDGED_DISTS,
    ROW_FIELD,
    install_vllm,
    installed_release,
    pip_spec,
    release_evidence,
    stack_versions,
    torch_clobbered,
)


def _is_dev_build(version: str) -> bool:
    """A dev/editable/local vLLM build (`0.11.0+empty`, `0.1.dev1+gbdb2cdd`, `0.13.1.dev5+g12ab.d2026`)."""
    v = try_parse_version(version)
    return v is None or v.local is not None or bool(re.search(r"\.?dev\d*", version, re.I))


def vllm_version_seen(ctx, py) -> Tuple[Optional[str], Optional[str], list]:
    """(installed vLLM version, VLLM_VERSION override, evidence). vllm-ascend uses VLLM_VERSION instead of
    vllm.__version__ when it is set (vllm_ascend/envs.py, utils.py vllm_version_is)."""
    vl = py.vllm_dist()
    env = ctx.try_fact("server_env") or {}
    try:
        override, unshown = (env.get("VLLM_VERSION") or "").strip() or None, None
    except FactUnavailable as exc:  # a paste that does not show it: judged on the installed vLLM, and said so
        override, unshown = None, exc.reason
    where = if_shown(lambda: vl.location) if vl else None
    evidence = [ev("distribution: vllm", f"{vl.version}" + (f" ({where})" if where else ""))
                if vl else ev("distribution: vllm", "not installed")]
    if override:
        evidence.append(ev("env: VLLM_VERSION", override))
    elif unshown:
        evidence.append(ev("env: VLLM_VERSION", T("not shown ({why}); judged on the installed vLLM, which it would "
                                                  "replace if set", why=unshown)))
    return (vl.version if vl else None), override, evidence


STACK_DISTS = ("vllm", "vllm-ascend", "torch", "torch-npu")


@check("VLLM100", "serving-stack-installed", severity="critical", needs=["python", "serving_python"])
def serving_stack_installed(ctx):
    """The interpreter judged as the serving one has vLLM, vllm-ascend, torch and torch_npu installed

    What it checks: the interpreter the run judges — `--python`, the one of the `vllm serve` command line (`exec`),
    or the one the doctor found: a running `vllm serve`, the `vllm` entry point on PATH (its `#!` line), the active
    venv or conda env, the vllm-ascend image's `/usr/local/python3.*`, else its own — has the four distributions of
    the serving stack. The report header's "serving python" line names it and how it was chosen.

    Why it matters: every torch/vLLM check judges what is installed in that interpreter. Installed the usual way, in
    its own venv, the doctor would otherwise judge an interpreter without the stack: each of those checks skips
    ("vllm-ascend is not installed") and the run still says OK without vLLM ever being looked at.

    How to fix: pass the interpreter that runs `vllm serve` with `--python /path/to/bin/python` (the finding lists
    the candidates found, and which of them have vLLM); or install the missing distributions into the judged one.
    """
    chosen = ctx.fact("serving_python")
    py = ctx.fact("python")
    have = {"vllm": py.vllm_dist(), "vllm-ascend": py.dist("vllm-ascend"), "torch": py.dist("torch"),
            "torch-npu": py.dist("torch-npu")}
    where = py.executable or chosen.path or "?"
    how = known(chosen.how) + (f": {chosen.detail}" if chosen.detail else "")
    evidence = [ev(f"serving python: {where}", T("chosen by {how}", how=how))]
    for c in chosen.candidates:
        state = (T("vLLM {version}", version=c.vllm) if c.vllm else T("no vLLM")) if c.asked else T("not asked")
        evidence.append(ev(f"candidate: {c.path}", f"{known(c.how)}" + (f" ({c.detail})" if c.detail else "")
                           + f" — {state}"))
    if chosen.looked:
        evidence.append(ev(T("looked, found nothing"), join("; ", chosen.looked)))
    missing = [name for name in STACK_DISTS if have[name] is None]
    if not missing:
        return ctx.ok(T("{where} has {installed}", where=where, installed=", ".join(
            f"{name} {have[name].version}" for name in STACK_DISTS)), evidence)
    others = [c for c in chosen.candidates if c.vllm and c.path != chosen.path]
    fix = T("Pass the interpreter that serves: {options}.", options=" or ".join(f"`--python {c.path}`"
                                                                                 for c in others)) if others else \
        T("Pass the interpreter that runs `vllm serve` with `--python /path/to/bin/python` (in a container: the "
          "image's, e.g. /usr/local/python3.11.10/bin/python3), or install {missing} into {where}.",
          missing=", ".join(missing), where=where)
    return ctx.fail(T("the judged interpreter {where} ({how}) has no {missing}: the torch and vLLM checks cannot "
                      "judge a serving stack it does not have", where=where, how=how, missing=", ".join(missing)),
                    evidence, remediation=fix)


@check("VLLM101", "vllm-ascend-pair", severity="critical", needs=["python", "server_env"])
def vllm_ascend_pair(ctx):
    """vLLM is the release the installed vllm-ascend targets

    What it checks: the installed vllm (or VLLM_VERSION when set) against the vLLM release(s) of the installed
    vllm-ascend's matrix row (vllm-ascend's versioning policy, tags' Dockerfiles). vllm-ascend does not declare
    vllm in its package metadata, so pip never checks this. A `VLLM_TARGET_DEVICE=empty` build (`0.13.0+empty`, the
    documented install) is judged by its release; dev/editable builds (`0.1.dev1+g…`) cannot be judged: vllm-ascend
    itself needs VLLM_VERSION for them.

    Why it matters: vllm-ascend patches vLLM internals that move every release; the wrong vLLM fails at start-up with
    `ImportError: cannot import name 'set_random_seed' from 'vllm.utils.torch_utils'` (vllm-ascend ≥ 0.14 on vLLM
    0.13), `No module named 'vllm.v1.attention.backends…'` (#9305) and similar (#7058, #9672). A dev vLLM version
    string makes vllm-ascend raise `Invalid vllm version … Set the environment variable VLLM_VERSION` (FAQ).

    How to fix: install the vLLM release the row names, built without CUDA:
    `git clone --depth 1 --branch vX.Y.Z https://github.com/vllm-project/vllm && cd vllm &&
    VLLM_TARGET_DEVICE=empty pip install -v .`; or install the vllm-ascend release made for your vLLM
    (`ascend-doctor matrix show`); for a source build of vLLM `export VLLM_VERSION=X.Y.Z` (the release it is based on).
    """
    py = ctx.fact("python")
    va = py.dist("vllm-ascend")
    if va is None:
        return ctx.skip(T("vllm-ascend is not installed"))
    installed, override, evidence = vllm_version_seen(ctx, py)
    where = if_shown(lambda: va.location)
    evidence.insert(0, ev("distribution: vllm-ascend", va.version + (f" ({where})" if where else "")))
    m = ctx.matrix
    if installed is None:
        row = m.vllm_ascend_release(va.version)
        want = row.vllm[0] if row else "the release vllm-ascend targets"
        return ctx.fail(T("vllm-ascend {version} is installed but vllm is not (vllm-ascend is a vLLM plugin)",
                          version=va.version),
                        evidence + ([release_evidence(row)] if row else []),
                        remediation=T("Install vLLM {want}: {format}.", want=want, format=install_vllm(want)))
    row, relation = m.nearest_release(va.version)
    if relation == "unparseable":
        return ctx.unknown(T("vllm-ascend version {version} is not a version", version=repr(va.version)), evidence)
    if relation != "exact":
        known = m.releases_for_vllm(override or installed)
        hint = T("; releases made for vLLM {override}: {known}", override=override or installed,
                 known=', '.join((r.version for r in known))) \
            if known else ""
        if relation == "newer-than-matrix":
            return ctx.warn(T("vllm-ascend {version} is not in the matrix yet (newest known {version2}): its vLLM "
                              "cannot be checked{hint}", version=va.version,
                              version2=row.version, hint=hint), evidence,
                            remediation=T("Check vllm-ascend's docs/source/community/versioning_policy.md for the "
                                          "vLLM this release targets, or layer a matrix row with `--matrix`."))
        return ctx.unknown(T("vllm-ascend {version} is not in the matrix (nearest known {version2}){hint}",
                             version=va.version, version2=row.version, hint=hint),
                           evidence)
    evidence.append(release_evidence(row))
    seen = override or installed
    if _is_dev_build(installed) and not override:
        v = try_parse_version(installed)
        is_dev = v is None or "dev" in installed.lower()
        base_ok = v is not None and any(version_in(v, f"=={x}") for x in row.vllm)
        if base_ok and not is_dev:
            # `0.13.0+empty` is what vLLM's own setup records for `VLLM_TARGET_DEVICE=empty pip install .`, the
            # build vllm-ascend's installation guide prescribes: the documented path, judged by its release.
            return ctx.ok(T("vllm-ascend {version} with vLLM {installed}: a VLLM_TARGET_DEVICE=empty build of {vllm}, "
                            "the release it targets", version=va.version,
                            installed=installed, vllm=row.vllm[0]), evidence)
        if is_dev:  # `0.1.dev1+gbdb2cdd`: a git checkout without release tags
            hint = (T("`export VLLM_VERSION=<the vLLM release it is built from>` (vllm-ascend {version} targets vLLM "
                      "{vllm})", version=va.version, vllm=' or '.join(row.vllm)))
            why = (f"vLLM {installed} is a dev/editable build: its version cannot be judged against vllm-ascend "
                   f"{va.version} (which targets vLLM {' or '.join(row.vllm)}), and vllm-ascend fails with "
                   f"`Invalid vllm version … Set the environment variable VLLM_VERSION`; set {hint}")
        else:
            hint = ""
            why = ""
        if why:
            return ctx.warn(why, evidence,
                            remediation=T("Set {hint} in the serving environment, or install the vLLM release itself: "
                                          "{format}.", hint=hint,
                                          format=install_vllm(row.vllm[0])))
        # a local label on another release (`0.12.0+empty` for a 0.13 plugin): judged by its base below
    sv = try_parse_version(seen)
    if sv is None:
        return ctx.unknown(T("vLLM version {seen} is not a version", seen=repr(seen)), evidence)
    if any(version_in(sv, f"=={x}") for x in row.vllm):
        via = T(" (VLLM_VERSION={override}; installed {installed})", override=override,
                installed=installed) if override else ""
        return ctx.ok(T("vllm-ascend {version} with vLLM {seen}{via}: the release it targets", version=va.version,
                        seen=seen, via=via), evidence)
    others = m.releases_for_vllm(seen)
    # The other release with its own pins: `pip install vllm-ascend==X` alone keeps the torch/torch_npu of the
    # newer release, which the older one rejects (VLLM102/VLLM104 on the result, #22).
    alt = (T("; or install the release made for vLLM {seen} with its pins: `ascend-doctor matrix pins --vllm-ascend "
             "{version} > pins.txt && pip install -c pins.txt vllm-ascend=={version} {pinned}`", seen=seen,
             version=others[-1].version, pinned=" ".join(
                 dist for dist, field in ROW_FIELD.items() if getattr(others[-1], field))) if others else "")
    return ctx.fail(T("vllm-ascend {version} targets vLLM {vllm}, but vLLM {seen} is {value}", version=va.version,
                      vllm=' or '.join(row.vllm), seen=seen,
                      value=T("declared with VLLM_VERSION") if override else T("installed")), evidence,
                    remediation=T("Install vLLM {vllm}: {format}{alt}.", vllm=row.vllm[0],
                                  format=install_vllm(row.vllm[0]), alt=alt))


PIP_COMPONENTS = ("torch", "torch-npu", "triton-ascend", "transformers")
# The pip-installed pins of a release row, by distribution (the matrix's own STACK_FIELDS, not a second copy).
def _index_urls(m, items) -> List[str]:
    """The indexes of the pins PyPI does not have (triton-ascend 3.2.1/3.2.2: the matrix's package-index.toml)."""
    urls: List[str] = []
    for i in items:
        if i.component in PIP_COMPONENTS and i.expected and i.status in ("mismatch", "unknown"):
            row = m.index_for(i.component, i.expected[0])
            if row is not None and row.index_url and row.index_url not in urls:
                urls.append(row.index_url)
    return urls


def _extra_index(m, items) -> str:
    """` --extra-index-url URL` for each of them, so the printed command works as written; "" when PyPI has them."""
    return "".join(f" --extra-index-url {u}" for u in _index_urls(m, items))


def _pins_step(m, items, machine: Optional[str]):
    """The fix step of VLLM102: the row's pins of the packages that differ or are missing, and what they replace."""
    wrong = [i for i in items if i.component in PIP_COMPONENTS and i.expected
             and (i.status == "mismatch" or (i.status == "unknown" and i.installed is None))]
    if not wrong:
        return []
    return [step("pip-install", packages=[(i.component, i.expected[0]) for i in wrong],
                 was={i.component: i.installed for i in wrong if i.installed}, index_urls=_index_urls(m, items),
                 machine=machine)]


def _as_the_image_installs(items, images, release: str, family: Optional[str], machine: Optional[str]) -> None:
    """Mark the items whose installed version is what the release's official image for this family installs (its
    recipe's `==` pin: torch-npu 2.8.0.post1 in the v0.13.0rc2 image, where requirements.txt pins 2.8.0): the
    release's own build, not a deviation from it (h38n: the image was held against its own package's pin)."""
    recipe = images.find(release, family) if images is not None else None
    pins = recipe.pinned(machine) if recipe is not None else {}
    for i in items:
        want, v = pins.get(i.component), try_parse_version(i.installed or "")
        if i.status in ("alternative", "mismatch") and want and v is not None and version_in(v, f"=={want}"):
            i.status, i.image = "image", recipe.id


def _sort_items(items, family: Optional[str], row, py=None):
    """VLLM102's reading of compare_stack: (evidence lines, fails, warns, notes, pip specs for the fix). With a
    partial package list (a paste's filtered list: `py.lists`), a pinned distribution it does not name is not listed,
    not missing."""
    lines, fails, warns, notes, pip_fix = [], [], [], [], []
    for i in items:
        exp = " | ".join(i.expected) if i.expected else "-"
        lines.append(f"{i.component}: installed {i.installed or '-'}, row {exp} -> {i.status}"
                     + (f" (custom ops built against {i.built_for}, require {i.requires})" if i.built_for else ""))
        if i.status == "mismatch":
            pv = try_parse_version(i.installed or "")
            ops = bool(i.requires) and pv is not None and not version_in(pv, i.requires)
            fails.append(T("{component} {installed} (row: {exp})", component=i.component, installed=i.installed,
                           exp=exp) + (T("; its compiled ops were built against CANN {built_for} and require CANN "
                                         "{requires} (csrc/version.info)", built_for=i.built_for,
                                         requires=i.requires) if ops else ""))
            if i.component in PIP_COMPONENTS:
                pip_fix.append(pip_spec(i))
        elif i.status == "alternative":
            warns.append(T("{component} {installed} is only what another vllm-ascend document names (the package pins "
                           "{expected}; CONFLICT in vllm-ascend's docs: {conflict})",
                           component=i.component, installed=i.installed, expected=i.expected[0], conflict=i.conflict))
        elif i.status == "not-shipped":
            notes.append(T("{component}: the {family} image of vllm-ascend {version} does not ship it",
                           component=i.component, family=family, version=row.version))
        elif i.status == "build":
            notes.append(T("{component} {installed} is a build of {expected} (as official images ship): judged as its "
                           "public release", component=i.component, installed=i.installed,
                           expected=i.expected[0]))
        elif i.status == "image":
            notes.append(T("{component} {installed} is what the official {image} image installs", component=i.component,
                           installed=i.installed, image=i.image))
        elif i.status == "final":
            notes.append(T("{component} {installed} is the final release of {expected}, which the {family} image "
                           "ships: judged as it", component=i.component, installed=i.installed,
                           expected=i.expected[0], family=family or "vllm-ascend"))
        elif i.status == "unknown" and i.installed is None:
            if i.component in PIP_COMPONENTS and py is not None and not py.lists(i.component):
                notes.append(T("{component}: not listed (row: {exp})", component=i.component, exp=exp))
            elif i.component in PIP_COMPONENTS:
                fails.append(T("{component} not installed (row: {exp})", component=i.component, exp=exp))
                pip_fix.append(pip_spec(i))
            else:
                notes.append(T("{component} unknown (not found)", component=i.component))
        elif i.status == "unknown":
            notes.append(T("{component} {installed} is not a version", component=i.component,
                           installed=repr(i.installed)))
    return lines, fails, warns, notes, pip_fix


@check("VLLM102", "release-pins", severity="error", needs=["python", "cann", "npu_smi", "npu_family"])
def release_pins(ctx):
    """The installed stack matches the installed vllm-ascend release's pins

    What it checks: torch, torch_npu, triton-ascend, transformers, Python and CANN against the installed
    vllm-ascend's matrix row (its requirements pins, versioning-policy matrix, Dockerfile CANN), as the release's
    image for this host's chip carries them (the chip from npu-smi; in a paste without its table, the family of the
    image it names, `…:v0.21.0rc1-310p`): the -310p image has its own CANN in several releases and no
    triton-ascend from v0.19.1rc1 on (whether triton-ascend may be there is HW104's call, not a pin). Where
    vllm-ascend's own documents disagree (e.g. v0.13.0: README says CANN 8.3.rc2, installation guide 8.5.0) the row
    carries both values and the conflict is reported as such.

    Why it matters: vllm-ascend's compiled custom ops and patches target exactly this stack. A newer transformers or
    an older CANN fails at start-up or at the first request. The usual torch mismatch has one cause: vLLM's PyPI
    package pins the CUDA torch of its release (vLLM 0.13.0 -> torch 2.9.0, 0.23.0 -> 2.11.0, 0.30.0 -> 2.13.0),
    which is newer than vllm-ascend's for almost every pairing (only the 0.7.x and 0.10.0rc1/0.10.1rc1 pairings
    agree), so installing vLLM after vllm-ascend replaces torch (pip: `vllm-ascend X requires torch==…, but you have
    torch … which is incompatible`; vllm-ascend#5710, #8286, #1188, #7587). The finding says when the installed
    torch is exactly the installed vLLM's pin.

    How to fix: reinstall the pins the finding prints (e.g. `pip install torch==2.8.0 torch-npu==2.8.0.post2
    triton-ascend==3.2.0 'transformers>=4.57.4,<5'`), or generate a constraints file:
    `ascend-doctor matrix pins --vllm-ascend X > constraints.txt && pip install -c constraints.txt vllm-ascend==X`;
    install the CANN release named there; use a Python the row allows.
    """
    py, va, row, skip = installed_release(ctx)
    if skip:
        return skip
    m = ctx.matrix
    c = ctx.try_fact("cann")
    versions: Dict[str, str] = {"vllm-ascend": va.version, "python": py.version}
    for name in PIP_COMPONENTS:
        d = py.listed(name)
        if d is not None:
            versions[name] = d.version
    if c is not None and c.found and c.version:
        versions["cann"] = c.version
    family = one_family(ctx)  # npu-smi's; a paste without its table: the family its image's suffix names
    items = [i for i in m.compare_stack(versions, family) if i.component != "vllm"]  # vLLM: VLLM101
    _as_the_image_installs(items, ctx.knowledge.images, row.version, family, if_shown(lambda: py.machine))
    evidence = [release_evidence(row)]
    lines, fails, warns, notes, pip_fix = _sort_items(items, family, row, py)
    evidence.append(ev(f"installed vs vllm-ascend {row.version}", "\n".join(lines)))
    cause = torch_clobbered(m, py, items)
    if cause:
        fails.append(cause)
    if fails:
        fix = []
        if pip_fix:
            fix.append(T("run `pip install {pip_fix}{extra_index}`, then `python -m pip check`",
                         pip_fix=' '.join(pip_fix), extra_index=_extra_index(m, items)))
        if any(f.startswith("python ") for f in fails):
            fix.append(T("create the venv from a Python within {python} (e.g. `python3.11 -m venv /opt/vllm`)",
                         python=row.python))
        if any(f.startswith("cann ") for f in fails):
            fix.append(T("install CANN {cann} (toolkit, kernels, NNAL; image quay.io/ascend/cann), or, if CANN was "
                         "upgraded on purpose, a vllm-ascend release built for it: its compiled ops target one CANN "
                         "(segfaults after CANN/NNAL upgrades: vllm-ascend#10136, #16773)",
                         cann=row.pins_for("cann", family)[0]))
        fix.append(T("or all at once: `ascend-doctor matrix pins --vllm-ascend {version} > c.txt && pip install -c "
                     "c.txt vllm-ascend=={version}`", version=row.version))
        text = T("{fix}.", fix=join("; ", fix))
        return ctx.fail(T("vllm-ascend {version} was built for another stack: {fails}{value}", version=va.version,
                          fails=join('; ', fails), value=T("; also: {warns}",
                                                           warns=join('; ', warns)) if warns else ''),
                        evidence,
                        remediation=capitalized(text), fix=_pins_step(m, items, if_shown(lambda: py.machine) or ""))
    if warns:
        return ctx.warn(join("; ", warns), evidence,
                        remediation=T("Prefer what the vllm-ascend {version} package pins (`ascend-doctor matrix pins "
                                      "--vllm-ascend {version}`).",
                                      version=row.version))
    checked = [i.component for i in items if i.status in ("ok", "alternative", "build", "final", "image")]
    if not checked:
        return ctx.unknown(T("nothing of vllm-ascend {version}'s stack could be compared", version=row.version),
                           evidence)
    return ctx.ok(T("{checked} match vllm-ascend {version}{value}", checked=', '.join(checked), version=row.version,
                    value=T(" ({notes})", notes=join('; ', notes)) if notes else ''), evidence)


def _for_these_weights(ctx, cmd, hits: list) -> tuple[list, list, str]:
    """(advisories kept, advisories dropped, how the model is known to be quantized): those about unquantized weights
    (`weights = "unquantized"`) are dropped for a quantized model; kept when the model is not known (they may apply)."""
    from ascend_doctor.knowledge.serve_features import quantized_sign

    only = [a for a in hits if a.weights == "unquantized"]
    sign = quantized_sign(cmd, {}, ctx.try_fact("serve_model"), by_name=True) if only else None
    stated = getattr(ctx.try_fact("paste"), "quantization", None) if only and not sign else None
    if stated is not None:  # triage: a line of the paste that says how the model is quantized (`model: X (W8A8)`)
        sign = f"{clipped(stated.value, 20)}, paste line {stated.lines}"
    if not sign:
        return hits, [], ""
    return [a for a in hits if a not in only], only, sign


@check("VLLM103", "advisories", severity="error",
       needs=["python", "cann", "stack", "serve_cmd", "serve_model", "paste"])
def advisories(ctx):
    """No known-bad combination (advisory) matches the installed stack

    What it checks: every advisory row of the matrix (the matrix's advisories.toml) against the installed versions:
    all Python distributions, CANN, the NPU driver and firmware, Python, and the CPU architecture. Each matching
    advisory is reported with its id, symptom, fix and source. With a `vllm serve` command (exec), an advisory that
    a serve check judges on the command itself (`judged_by`: the graph budget, SERVE312) is left to that check, and
    one about unquantized weights only (`weights`: NZ slowing bf16 models) is dropped for a quantized model.

    Why it matters: some combinations pass every version rule yet fail in a known way, e.g. vllm-ascend ≥ 0.14.0rc1
    on vLLM 0.13.0 → `ImportError: cannot import name 'set_random_seed' from 'vllm.utils.torch_utils'` (ADV-2026-001),
    or vLLM from PyPI replacing the torch vllm-ascend pins (vllm-ascend#5710).

    How to fix: apply the fix each advisory names (`ascend-doctor matrix pins --vllm-ascend X` prints a consistent
    stack).
    """
    m = ctx.matrix
    versions, unseen = stack_versions(ctx, {normalize_name(k) for a in m.advisories for k in a.when})
    shown = {k: versions[k] for k in JUDGED_DISTS + ("cann", "driver", "firmware", "python", "machine")
             if k in versions}
    evidence = [ev(T("versions judged"), "\n".join(f"{k} {v}" for k, v in shown.items()))]
    hits = m.matching_advisories(versions)
    cmd = ctx.try_fact("serve_cmd")  # with a command, a check that reads it judges `judged_by` rows (SERVE312)
    handed = [a for a in hits if a.judged_by] if cmd is not None and cmd.recognized else []
    hits = [a for a in hits if a not in handed]
    evidence += [ev(f"advisory {a.id}", f"judged with the command line by {a.judged_by}") for a in handed]
    hits, dropped, sign = _for_these_weights(ctx, cmd, hits)
    evidence += [ev(f"advisory {a.id}", f"concerns unquantized weights; the served model is quantized: {sign}")
                 for a in dropped]
    if not hits and dropped:
        return ctx.ok(T("no advisory applies: {ids} match(es) these versions but concern(s) unquantized weights, and "
                        "the served model is quantized ({sign})", ids=", ".join(a.id for a in dropped), sign=sign),
                      evidence)
    if not hits and handed:
        return ctx.ok(T("no advisory to report: {ids} match(es) this stack and depend(s) on the command, which "
                        "{checks} judge(s)", ids=", ".join(a.id for a in handed),
                        checks=", ".join(sorted({a.judged_by for a in handed}))), evidence)
    if not hits and unseen:  # a paste: what it does not show could still match
        return ctx.ok(T("none of the {n_advisories} advisories matches what is known of this stack (not seen: "
                        "{unseen})", n_advisories=len(m.advisories), unseen=join(", ", unseen)), evidence)
    if not hits:
        return ctx.ok(T("none of the {n_advisories} advisories matches this stack", n_advisories=len(m.advisories)),
                      evidence)
    for a in hits:
        evidence.append(ev(f"advisory {a.id} [{a.severity}]",
                           f"{a.title}\nwhen: {', '.join(f'{k} {v}' for k, v in a.when.items())}"
                           + (f" on {', '.join(a.machine)}" if a.machine else "")
                           + "\nsymptom: " + "\n         ".join(a.symptom)
                           + f"\nfix: {a.fix}\nsource: {'; '.join(a.source)}"))
    msg = join("; ", [T("{id} [{severity}] {title} (seen: {seen}; symptom: {symptom})", id=a.id,
                        severity=a.severity, title=known(a.title), symptom=a.symptom[0],
                        seen=", ".join(f"{k} {versions[k]}" for k in a.when if k in versions)) for a in hits])
    fix = join("\n", [T("{id}: {fix}", id=a.id, fix=known(a.fix)) for a in hits])
    if any(a.severity in ("critical", "error") for a in hits):
        return ctx.fail(T("{n_hits} known-bad combination(s): {msg}", n_hits=len(hits), msg=msg),
                        evidence, remediation=fix,
                        advisories=[a.id for a in hits])
    return ctx.warn(T("{n_hits} advisory(ies) apply: {msg}", n_hits=len(hits), msg=msg), evidence, remediation=fix,
                    advisories=[a.id for a in hits])
