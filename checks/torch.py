"""TORCH checks: torch ↔ torch_npu, torch_npu ↔ CANN, the Python ABI the wheels exist for, and a real import.

Facts: `python` (installed distributions from metadata; nothing is imported in-process), `cann`, and
`import_probe` (`import torch, torch_npu` in a child of the serving interpreter, with a timeout). Pairings come
from the matrix (Ascend/pytorch COMPATIBILITY tables, PyPI wheel tags, vllm-ascend release rows).
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from packaging.requirements import InvalidRequirement, Requirement

from ascend_doctor.i18n import T, join, known
from ascend_doctor.knowledge.depcheck import marker_environment
from ascend_doctor.plugin import check, ev, if_shown, step
from ascend_doctor.seam.host import normalize_name
from ascend_doctor.text.versions import final_of, try_parse_version, version_in


def dist_evidence(py, *names: str) -> list:
    """One evidence line per distribution: name, version, and where it is installed."""
    lines = []
    for n in names:
        d = py.listed(n)
        where = if_shown(lambda: d.location) if d else None
        lines.append(f"{n} {d.version}" + (f" ({where})" if where else "") if d else
                     T("{name}: not installed", name=n) if py.lists(n) else T("{name}: not listed", name=n))
    return [ev(f"distributions: {py.executable or 'python'}", join("\n", lines))]


def _row_source(row) -> str:
    return "; ".join(row.source)


def _torch_requirement(py, dist) -> Optional[str]:
    """The specifier torch_npu's metadata puts on torch (Requires-Dist), evaluated for this interpreter."""
    env = marker_environment(py)
    for line in dist.requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if normalize_name(req.name) != "torch":
            continue
        if req.marker is not None:
            try:
                if not req.marker.evaluate(env):
                    continue
            except Exception:
                continue
        return str(req.specifier)
    return None


@check("TORCH101", "torch-npu-pair", severity="critical", needs=["python"])
def torch_npu_pair(ctx):
    """torch and torch_npu are a matching pair

    What it checks: the installed torch against the torch that the installed torch_npu requires — its own
    `Requires-Dist: torch==…` and the torch of its row in Ascend/pytorch's compatibility table (matrix).

    Why it matters: torch_npu is a C++ extension compiled against one exact torch release. With another torch the
    import fails with undefined symbols in libtorch_npu.so, or worse imports and misbehaves. The classic cause is
    `pip install vllm` pulling the CUDA torch vLLM pins over the one torch_npu needs (vllm-ascend#5710, #7587).

    How to fix: reinstall the pair from one row: e.g. `pip install torch==2.9.0 torch-npu==2.9.0` (on x86 add
    `--extra-index-url https://download.pytorch.org/whl/cpu` so pip does not pull a CUDA torch); after installing
    vLLM, reinstall the pair and run `python -m pip check`.
    """
    py = ctx.fact("python")
    torch, npu = py.listed("torch"), py.dist("torch-npu")
    evidence = dist_evidence(py, "torch", "torch-npu")
    if npu is None:
        return ctx.skip(T("torch_npu is not installed{value}", value='' if torch else T(" (nor torch)")), evidence)
    row = ctx.matrix.torch_npu_row(npu.version)
    want_meta = if_shown(lambda: _torch_requirement(py, npu))  # a paste lists versions, not Requires-Dist
    if row is not None:
        evidence.append(ev(f"matrix: torch_npu {row.version} row", f"torch {row.torch}; CANN "
                           f"{', '.join(row.cann) or '-'} [source: {_row_source(row)}]"))
    if want_meta:
        evidence.append(ev(f"metadata: torch-npu {npu.version} Requires-Dist", f"torch{want_meta}"))
    want_torch = row.torch if row is not None else None
    pin = want_torch or (want_meta.lstrip("=") if want_meta and want_meta.startswith("==") else None)
    fix = (T("`pip install torch=={pin} torch-npu=={version}` (on x86 add --extra-index-url "
             "https://download.pytorch.org/whl/cpu), then `python -m pip check`.", pin=pin,
             version=npu.version)) if pin else None
    steps = [step("pip-install", packages=[("torch", pin), ("torch-npu", npu.version)],
                  was={"torch-npu": npu.version, **({"torch": torch.version} if torch else {})},
                  machine=if_shown(lambda: py.machine) or "")] if pin else []
    if torch is None and not py.lists("torch"):  # a filtered list (`pip list | grep npu`): torch may well be there
        return ctx.unknown(T("torch_npu {version} is listed but torch is not: the list is not the whole "
                             "installation (paste `python -m pip list`)", version=npu.version), evidence)
    if torch is None:
        return ctx.fail(T("torch_npu {version} is installed but torch is not", version=npu.version),
                        evidence, remediation=fix, fix=steps)
    problems = []
    if want_meta and try_parse_version(torch.version) and not version_in(torch.version, want_meta):
        problems.append(T("torch_npu {version} requires torch{want_meta}", version=npu.version, want_meta=want_meta))
    if want_torch and try_parse_version(torch.version) and not version_in(torch.version, f"=={want_torch}"):
        problems.append(T("the compatibility table pairs torch_npu {version} with torch {want_torch}",
                          version=row.version, want_torch=want_torch))
    if problems:
        return ctx.fail(T("torch {version} does not match torch_npu {version2}: {problems}", version=torch.version,
                          version2=npu.version, problems=join('; ', problems)),
                        evidence, remediation=fix, fix=steps)
    if want_meta or want_torch:
        local = try_parse_version(npu.version)
        note = (f" (a local build, +{local.local}: judged by its public version)" if local is not None and local.local
                else "")
        return ctx.ok(T("torch {version} matches torch_npu {version2}{note}", version=torch.version,
                        version2=npu.version, note=note), evidence)
    if ctx.matrix.newer_than_matrix("torch-npu", npu.version):
        return ctx.warn(T("torch_npu {version} is not in the matrix yet (newest known {newest_known}) and declares no "
                          "torch requirement: the pair cannot be checked", version=npu.version,
                          newest_known=ctx.matrix.newest_known('torch-npu')), evidence,
                        remediation=T("Install the torch release torch_npu's release notes name, or layer a matrix "
                                      "row with `--matrix`."))
    return ctx.unknown(T("torch_npu {version} is not in the matrix and declares no torch requirement",
                         version=npu.version), evidence)


def _documented_pairs(m, npu_version: str, cann: str, images=None) -> List[str]:
    """Sources that name this torch_npu together with this CANN (torch_npu table row, vllm-ascend release rows, an
    official image whose recipe pins the torch_npu over that CANN base image, or over the beta this CANN is the final
    release of: a build the release ships)."""
    v = try_parse_version(cann)
    out = []
    row = m.torch_npu_row(npu_version)
    if row is not None and any(version_in(v, f"=={x}") for x in row.cann):
        out.append(f"Ascend/pytorch table: torch_npu {row.version} ↔ CANN {', '.join(row.cann)} "
                   f"[source: {_row_source(row)}]")
    nv = try_parse_version(npu_version)
    for r in m.releases:
        if any(version_in(nv, f"=={x}") for x in r.torch_npu) and any(version_in(v, f"=={x}") for x in r.cann):
            out.append(f"vllm-ascend {r.version}: torch_npu {', '.join(r.torch_npu)} ↔ CANN {', '.join(r.cann)} "
                       f"[source: {_row_source(r)}]")
    for img in images.image if images is not None and v is not None and nv is not None else ():
        pin = img.installs.get("torch-npu", "")
        same = img.cann and (version_in(v, f"=={img.cann}") or final_of(v, img.cann))
        if same and pin.startswith("==") and version_in(nv, pin):
            final = f" (CANN {cann} is its final release)" if not version_in(v, f"=={img.cann}") else ""
            out.append(f"the official image {img.id}: torch_npu {pin[2:]} over CANN {img.cann}{final} "
                       f"[source: {img.source}]")
            break
    return out


def _torch_npu_for_cann(m, cann: str, torch: Optional[str]):
    """The newest torch_npu row paired with this CANN, preferring PyPI wheels and the installed torch."""
    v = try_parse_version(cann)
    if v is None:
        return None
    rows = [r for r in m.torch_npu if any(version_in(v, f"=={x}") for x in r.cann)]
    rows = [r for r in rows if r.pypi == "wheels"] or rows  # prefer what `pip install` can actually fetch
    same = [r for r in rows if torch and try_parse_version(torch) and version_in(torch, f"=={r.torch}")]
    pick = same or rows
    return max(pick, key=lambda r: try_parse_version(r.version)) if pick else None


@check("TORCH102", "torch-npu-cann", severity="error", needs=["python", "cann"])
def torch_npu_cann(ctx):
    """torch_npu is built for the installed CANN

    What it checks: the installed torch_npu against the active CANN version: the CANN of its row in Ascend/pytorch's
    compatibility table, and the torch_npu/CANN pairs vllm-ascend releases ship. A CANN older than the one torch_npu
    was built for fails; a newer or undocumented one warns.

    Why it matters: torch_npu links CANN and NNAL symbols of the release it was built against. Newer torch_npu on
    older CANN/NNAL: `ImportError … libtorch_npu.so: undefined symbol: _ZN3atb15CreateOperation…`
    (vllm-ascend#117, #750). vllm-ascend v0.18.0 release notes: "If CANN has been upgraded to 9.0.0, please upgrade
    TorchNPU to 2.9.0.post2".

    How to fix: install the torch_npu built for your CANN (Ascend/pytorch COMPATIBILITY.md; e.g. CANN 8.5.0 →
    `pip install torch==2.9.0 torch-npu==2.9.0`), or upgrade CANN (toolkit, kernels and NNAL together) to the one
    your torch_npu names.
    """
    py = ctx.fact("python")
    c = ctx.fact("cann")
    npu = py.dist("torch-npu")
    evidence = dist_evidence(py, "torch-npu")
    if npu is None:
        return ctx.skip(T("torch_npu is not installed"), evidence)
    if not c.found or not c.version:
        if c.unreadable:
            return ctx.unknown(T("CANN files could not be read (see CANN101): {unreadable}",
                                 unreadable='; '.join(c.unreadable)), evidence,
                               cause=T("CANN version files are unreadable"))
        return ctx.skip(T("CANN not found or its version unknown (see CANN101)"), evidence)
    source = if_shown(lambda: c.active.version_source)
    evidence.append(ev(f"CANN at {c.active.root}", f"version {c.version}" + (f" (from {source})" if source else "")))
    if try_parse_version(c.version) is None:  # a paste's "9.0.x": no release to pair with
        return ctx.unknown(T("CANN {version} is not a release number: which CANN torch_npu {version2} runs on cannot "
                             "be judged", version=c.version, version2=npu.version), evidence)
    m = ctx.matrix
    pairs = _documented_pairs(m, npu.version, c.version, ctx.knowledge.images)
    if pairs:
        evidence.append(ev("matrix", "\n".join(pairs)))
        return ctx.ok(T("torch_npu {version} with CANN {version2} is a documented pair", version=npu.version,
                        version2=c.version), evidence)
    row = m.torch_npu_row(npu.version)
    if row is None or not row.cann:
        if m.newer_than_matrix("torch-npu", npu.version):
            return ctx.warn(T("torch_npu {version} is not in the matrix yet: its CANN cannot be checked",
                              version=npu.version), evidence,
                            remediation=T("Check Ascend/pytorch COMPATIBILITY.md for the CANN this torch_npu needs."))
        return ctx.unknown(T("no source in the matrix pairs torch_npu {version} with a CANN release",
                             version=npu.version), evidence)
    evidence.append(ev(f"matrix: torch_npu {row.version} row", f"CANN {', '.join(row.cann)} "
                                                                 f"[source: {_row_source(row)}]"))
    cv = try_parse_version(c.version)
    paired = [try_parse_version(x) for x in row.cann]
    paired = [p for p in paired if p is not None]
    torch = py.listed("torch")
    alt = _torch_npu_for_cann(m, c.version, torch.version if torch else None)
    other = (f"`pip install torch=={alt.torch} torch-npu=={alt.version}` (built for CANN {', '.join(alt.cann)}; "
             f"source: {_row_source(alt)})" if alt else f"the torch_npu built for CANN {c.version} "
                                                           "(Ascend/pytorch COMPATIBILITY.md)")
    fix = T("Install CANN {cann} (toolkit, kernels and NNAL) for torch_npu {version}, or {other}.", cann=row.cann[0],
            version=npu.version, other=other)
    if cv is not None and paired and all(cv.main_key < p.main_key for p in paired):
        return ctx.fail(T("CANN {version} is older than the CANN {cann} torch_npu {version2} is built for "
                          "(undefined-symbol errors at import)", version=c.version,
                          cann=', '.join(row.cann), version2=npu.version), evidence, remediation=fix)
    return ctx.warn(T("torch_npu {version} is documented with CANN {cann}, not {version2}: not a tested pair",
                      version=npu.version, cann=', '.join(row.cann), version2=c.version), evidence, remediation=fix)


def _cp_tag(py) -> Optional[str]:
    m = re.match(r"^cpython-(\d)(\d+)", if_shown(lambda: py.soabi) or "")
    if m:
        return f"cp{m.group(1)}{m.group(2)}"
    m = re.match(r"^(\d+)\.(\d+)", py.version or "")
    return f"cp{m.group(1)}{m.group(2)}" if m else None


@check("TORCH103", "python-supported", severity="error", needs=["python"])
def python_supported(ctx):
    """The serving Python is one torch and torch_npu ship for

    What it checks: the interpreter's version against the Pythons the installed PyTorch release supports
    (Ascend/pytorch COMPATIBILITY "PyTorch and Python versions") and the CPython tag (from SOABI, e.g. cp311) against
    the wheels PyPI has for the installed torch_npu on this machine's architecture.

    Why it matters: torch_npu wheels exist per CPython minor version; e.g. torch_npu 2.8.0 has no cp312 wheel, so
    vllm-ascend 0.12.0rc1/0.13.0rc1 cannot be installed from PyPI on Python 3.12. An unsupported interpreter means a
    torch_npu from an unofficial source or a failed install.

    How to fix: create the serving venv from a supported CPython (the vllm-ascend images use 3.11 up to 0.20 and
    3.12 from 0.21): `python3.11 -m venv /opt/vllm && /opt/vllm/bin/pip install torch==<ver> torch-npu==<ver>`.
    """
    py = ctx.fact("python")
    torch, npu = py.listed("torch"), py.listed("torch-npu")
    tag = _cp_tag(py)
    soabi, machine = if_shown(lambda: py.soabi), if_shown(lambda: py.machine)
    evidence = ([ev(f"python: {py.executable}", f"Python {py.version}, SOABI {soabi or '?'} -> {tag or '?'}, "
                                                f"{machine or '?'}")] if py.version else [])
    evidence += dist_evidence(py, "torch", "torch-npu")
    if torch is None and npu is None:
        py.dist("torch"), py.dist("torch-npu")  # a partial list that names neither: unknown, not "not installed"
        return ctx.skip(T("neither torch nor torch_npu is installed"), evidence)
    if not py.version:
        return ctx.unknown(T("the Python version is not known (a paste without collect_env or `python --version`)"),
                           evidence)
    m = ctx.matrix
    fails, warns, oks = [], [], []
    if torch is not None:
        ok = m.python_ok_for_torch(torch.version, py.version)
        for r in m.torch_python:  # the row that answered, for its source
            if try_parse_version(torch.version) and version_in(torch.version, f"=={r.torch}"):
                evidence.append(ev(f"matrix: PyTorch {r.torch} Pythons", f"{', '.join(r.python)} "
                                                                         f"[source: {_row_source(r)}]"))
                break
        if ok is False:
            fails.append(T("PyTorch {version} does not support Python {version2}", version=torch.version,
                           version2=py.version))
        elif ok:
            oks.append(T("PyTorch {version} supports Python {version2}", version=torch.version, version2=py.version))
    if npu is not None and tag:
        arch = machine if machine in ("aarch64", "x86_64") else None
        has = m.torch_npu_wheel_has_cp(npu.version, tag, arch)
        row = m.torch_npu_row(npu.version)
        if has is False:
            avail = ", ".join(row.wheel_cp) if row is not None else "?"
            warns.append(T("PyPI has no {tag}{value} wheel of torch_npu {version} (wheels: {avail}): this torch_npu "
                           "came from another source", tag=tag,
                           value=T("/{arch}", arch=arch) if arch else '', version=npu.version, avail=avail))
        elif has:
            oks.append(T("torch_npu {version} ships {tag} wheels", version=npu.version, tag=tag))
        if row is not None:
            evidence.append(ev(f"matrix: torch_npu {row.version} row", f"wheels {', '.join(row.wheel_cp) or '-'} "
                                                                       f"[source: {_row_source(row)}]"))
    if fails:
        return ctx.fail(join("; ", fails + warns), evidence)
    if warns:
        return ctx.warn(join("; ", warns), evidence)
    if not oks:
        return ctx.unknown(T("the matrix does not say which Pythons torch {version} / torch_npu {version2} support",
                             version=torch.version if torch else T("(not listed)"),
                             version2=npu.version if npu else T("(not listed)")), evidence)
    return ctx.ok(join("; ", oks), evidence)


# Likely causes of an import failure, for when the shared signature catalogue cannot say (matrix-facts §5).
IMPORT_CAUSES: List[Tuple[str, str, str, str]] = [
    (r"_ZN3atb|atb::", T("torch_npu is newer than the installed NNAL/ATB (undefined atb:: symbol)"),
     T("Install the NNAL (Ascend-cann-nnal) of the CANN version your torch_npu is built for, or the torch_npu that "
       "matches your CANN/NNAL (Ascend/pytorch COMPATIBILITY.md)."), "vllm-project/vllm-ascend#117, #750"),
    (r"_ZN3Mki",
     T("torch_npu and NNAL/ATB are from different CANN releases (undefined Mki symbol in libtbe_adapter.so)"),
     T("Install the NNAL built for your CANN and the torch_npu the compatibility table pairs with it."),
     "Ascend/pytorch#99"),
    (r"libatb\.so", T("NNAL/ATB is not installed or its set_env.sh was not sourced"),
     T("Install Ascend-cann-nnal and `source /usr/local/Ascend/nnal/atb/set_env.sh`."),
     "vllm-project/vllm-ascend#152, #130"),
    (r"libascend_hal\.so|libdrvdsmi|libdcmi\.so",
     T("the NPU driver's libraries are not visible (driver not installed or lib64 not mounted into the container)"),
     T("Mount `-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/` (and /usr/local/dcmi) or install "
       "the driver; make sure LD_LIBRARY_PATH contains /usr/local/Ascend/driver/lib64."),
     "vllm-project/vllm-ascend docs/source/installation.md (docker run mounts)"),
    (r"libascendcl\.so|libhccl\.so|libacl_op_compiler\.so|libge_runner\.so|libopapi\.so|libruntime\.so",
     T("the CANN environment is not sourced (set_env.sh) or CANN is not installed"),
     T("`source /usr/local/Ascend/ascend-toolkit/set_env.sh` (CANN >= 8.5: `source /usr/local/Ascend/cann/set_env.sh`) "
       "before starting Python."), "Ascend/pytorch docs/zh/installation_guide/faq.md (问题2)"),
    (r"No module named 'torch_npu\._C'", T("Python imported torch_npu from its source tree (the current directory)"),
     T("Run from another directory than the Ascend/pytorch checkout."), "Ascend/pytorch docs FAQ (问题4)"),
    (r"Failed to infer device type", T("torch_npu did not load (CANN/NNAL environment not sourced)"),
     T("Source the CANN and NNAL set_env.sh scripts in the serving environment."), "vllm-project/vllm-ascend#130"),
]


def _diagnose(text: str, catalogue) -> Optional[Tuple[str, str, str, str]]:
    """(cause, fix, source, excerpt) for an import failure: the shared signature catalogue first, then our table."""
    from ascend_doctor.knowledge.signatures import diagnose

    try:
        matches = diagnose(text, catalogue)
    except Exception:  # a fault of the matcher degrades the explanation to the causes known here, not the verdict
        matches = []
    if matches:
        s = matches[0].signature
        return known(s.meaning), known(s.fix), s.source, matches[0].excerpt
    for pattern, cause, fix, source in IMPORT_CAUSES:
        mm = re.search(pattern, text)
        if mm:
            line = next((ln for ln in text.splitlines() if re.search(pattern, ln)), mm.group(0))
            return cause, fix, source, line.strip()[:300]
    return None


# Findings that, when they fail, explain a failed import or device open (aclInit/set-device 507033, EL0004 …): the
# report points at them ("first fix what CTR101 reports above", #22) instead of repeating a generic fix.
DEVICE_CAUSES = ["NPU100", "CTR101", "CTR102", "DRV101", "NPU102", "NPU103", "CANN104", "CANN106"]


@check("TORCH104", "torch-npu-import", severity="critical", needs=["import_probe"])
def torch_npu_import(ctx):
    """`import torch, torch_npu` works and sees the NPUs (isolated child process)

    What it checks: runs `import torch; import torch_npu; torch.npu.device_count()` in a child of the serving
    interpreter with a timeout, and reads how far it got: a crash (signal), an exception, a hang, or no NPU visible.
    The error text is matched against known causes.

    Why it matters: this is the first thing `vllm serve` does. A segfault here is typically CANN vs driver
    mismatch; a `cannot open shared object file` is an environment that was not sourced; a hang is a device held by
    another process or a wedged driver. Version checks can miss all of these.

    How to fix: follow the likely cause in the finding; the usual ones: `source /usr/local/Ascend/ascend-toolkit/
    set_env.sh` and `source /usr/local/Ascend/nnal/atb/set_env.sh`; the torch_npu built for your CANN; the HDK driver
    released with your CANN; free the device (`npu-smi info` shows who holds it).
    """
    f = ctx.fact("import_probe")
    if not f.ran:
        return ctx.skip(T("import probe did not run: {skipped_reason}", skipped_reason=f.skipped_reason or 'skipped'))
    evidence = [ev(f"cmd: {f.python} -c 'import torch, torch_npu'",
                   f"stage reached: {f.stage or '-'}; returncode {f.returncode}"
                   + (f"; signal {f.signal}" if f.signal else "") + ("; TIMED OUT" if f.timed_out else "")
                   + (f"; {f.seconds:.1f}s" if f.seconds is not None else ""))]
    if f.error:
        evidence.append(ev(T("exception"), f"{f.error_type}: {f.error}"))
    if f.stderr_tail:
        evidence.append(ev(T("stderr (last lines)"), f.stderr_tail))
    text = "\n".join(x for x in (f"{f.error_type or ''}: {f.error or ''}", f.stderr_tail) if x)
    # Only a failed import has something to diagnose (the catalogue costs ~0.3 s to load: not on the happy path).
    failed = bool(f.error or f.signal or f.timed_out or (f.returncode not in (0, None)))
    found = _diagnose(text, ctx.knowledge.signatures) if failed else None
    stage = f.stage or "start"
    if found:
        evidence.append(ev(f"known cause [source: {found[2]}]", found[3]))
    if f.timed_out and f.limit_s is not None and f.limit_s < f.default_limit_s:
        # A limit the user lowered: a cold torch_npu import takes 10-30 s, so running out of it proves nothing.
        return ctx.unknown(T("importing torch/torch_npu did not finish within {limit} s (--import-timeout; stage "
                             "'{stage}'): too short to tell a slow import from a hung one — raise it (default "
                             "{default} s) to judge", limit=f"{f.limit_s:g}", stage=stage,
                             default=f"{f.default_limit_s:g}"), evidence)
    if f.timed_out:
        return ctx.fail(T("importing torch/torch_npu hung at stage '{stage}' (timed out): the NPU is likely held by "
                          "another process or the driver is wedged", stage=stage), evidence,
                        remediation=found[1] if found else
                        T("Check `npu-smi info` for processes holding the NPUs and stop them; if npu-smi itself "
                          "hangs, the driver needs a reset/reboot."), see=DEVICE_CAUSES)
    if f.signal:
        cause = found[0] if found else T("CANN and the NPU driver do not match (a segfault in the import is the "
                                         "typical symptom), or torch_npu was built for another CANN")
        return ctx.fail(T("importing torch/torch_npu crashed with {signal} at stage '{stage}': {cause}",
                          signal=f.signal, stage=stage, cause=cause), evidence,
                        remediation=found[1] if found else
                        T("Install the HDK driver released with your CANN (see CANN106) and the torch_npu built for "
                          "your CANN (see TORCH102)."), see=DEVICE_CAUSES)
    if f.error_type:
        cause = found[0] if found else T("see the exception")
        what = {"torch": T("importing torch"), "device": T("asking torch.npu for devices")}.get(
            stage, T("importing torch_npu"))
        return ctx.fail(T("{what} failed ({error_type}: {splitlines}) — likely cause: {cause}", what=what,
                          error_type=f.error_type, splitlines=(f.error or '').splitlines()[0][:200] if f.error else '',
                          cause=cause),
                        evidence, remediation=found[1] if found else None, see=DEVICE_CAUSES)
    if f.returncode not in (0, None) or f.stage != "done":
        return ctx.fail(T("the import child exited with {returncode} at stage '{stage}' without a result{value}",
                          returncode=f.returncode, stage=stage,
                          value=T(" — likely cause: {found}", found=found[0]) if found else ''), evidence,
                        remediation=found[1] if found else None, see=DEVICE_CAUSES)
    if not f.npu_available or not f.device_count:
        return ctx.fail(T("torch {torch} / torch_npu {torch_npu} imported, but no NPU is visible "
                          "(device_count={device_count})", torch=f.torch,
                          torch_npu=f.torch_npu, device_count=f.device_count), evidence,
                        remediation=T("In a container pass `--device /dev/davinciN --device /dev/davinci_manager "
                                      "--device /dev/devmm_svm --device /dev/hisi_hdc`; check "
                                      "ASCEND_RT_VISIBLE_DEVICES and `npu-smi info`."))
    return ctx.ok(T("torch {torch} and torch_npu {torch_npu} import; {device_count} NPU(s) visible", torch=f.torch,
                    torch_npu=f.torch_npu, device_count=f.device_count), evidence)
