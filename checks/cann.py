"""CANN checks: the CANN toolkit — found, self-consistent, built for this CPU, sourced, NNAL/ATB, and its driver.

Facts: `cann` (every CANN install the probe found, the active one, LD_LIBRARY_PATH, NNAL), `driver`, `npu_smi`,
`python` (is vllm-ascend installed), `env`. CANN ↔ driver judgements come only from the matrix
(`matrix.cann_driver_compatible`): a pairing no source covers is unknown, never a failure.
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T
from ascend_doctor.plugin import FactUnavailable, check, ev, if_shown
from ascend_doctor.text.versions import try_parse_version, version_in

from ._driver import driver_version_of

TOOLKIT_SET_ENV = "/usr/local/Ascend/ascend-toolkit/set_env.sh"
CANN_SET_ENV = "/usr/local/Ascend/cann/set_env.sh"  # CANN >= 8.5 layout (matrix-facts §3.2a)
NNAL_SET_ENV = "/usr/local/Ascend/nnal/atb/set_env.sh"


def set_env_script(version: Optional[str]) -> str:
    """The set_env.sh to source for this CANN version (the cann/ layout from 8.5 on)."""
    v = try_parse_version(version)
    if v is not None and version_in(v, ">=8.5"):
        return CANN_SET_ENV
    return TOOLKIT_SET_ENV


def source_fix(version: Optional[str]) -> str:
    script = set_env_script(version)
    other = TOOLKIT_SET_ENV if script == CANN_SET_ENV else CANN_SET_ENV
    return (T("`source {script}` in the shell, unit or container entrypoint that starts `vllm serve` (`{other}` on "
              "{value} layouts), and `source {nnal_set_env}` when NNAL is installed; in a Dockerfile put both in the "
              "ENTRYPOINT script or ~/.bashrc of the serving user.", script=script, other=other,
              value=T("older") if script == CANN_SET_ENV else T("CANN >= 8.5"), nnal_set_env=NNAL_SET_ENV))


def cann_evidence(c) -> list:
    """Evidence for the active CANN install: where, which version and from which file, the arch (what a paste does
    not show is left out)."""
    if not c.found or c.active is None:
        return [ev(T("CANN paths searched"), "\n".join(if_shown(lambda: c.searched, [])) or T("none"))]
    a = c.active
    aliases = if_shown(lambda: a.aliases, [])
    source = if_shown(lambda: a.version_source)
    lines = [f"root: {a.root}" + (f" (via {', '.join(aliases)})" if aliases else ""),
             f"version: {a.version}" + (f" (from {source})" if source else "")]
    arch, dirs = if_shown(lambda: a.arch), if_shown(lambda: a.arch_dirs, [])
    if arch or dirs:
        lines.append(f"arch: {arch or '?'} (dirs: {', '.join(dirs) or '-'})")
    if len(c.installs) > 1:
        lines.append("other installs: " + ", ".join(f"{i.root} ({i.version})" for i in c.installs[1:]))
    where = if_shown(lambda: a.version_cfg_path) or if_shown(lambda: a.install_info_path) or a.root
    return [ev(f"file: {where}", "\n".join(lines))]


def no_cann(ctx, c, why: str = "CANN not found (see CANN101)"):
    """The outcome of a CANN check with no install to look at: skip when there is none, unknown when its files are
    there but unreadable (that is not "not installed")."""
    if c.unreadable:
        return ctx.unknown(T("CANN files could not be read (see CANN101): {unreadable}",
                             unreadable='; '.join(c.unreadable)),
                           cann_evidence(c), cause=T("CANN version files are unreadable"))
    return ctx.skip(why, cann_evidence(c))


@check("CANN101", "cann-installed", severity="critical", needs=["cann"])
def cann_installed(ctx):
    """The CANN toolkit is installed in a known layout

    What it checks: every place CANN can be — what set_env.sh exported (ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME,
    ASCEND_OPP_PATH …), /usr/local/Ascend/ascend-toolkit/latest (CANN ≤ 8.3), /usr/local/Ascend/cann and
    cann-<ver> (CANN ≥ 8.5), ~/Ascend for non-root installs, the NNAE runtime — and reads version.cfg /
    <arch>-linux/ascend_toolkit_install.info for the version.

    Why it matters: torch_npu and vllm-ascend load CANN's libraries (libascendcl.so, libhccl.so, the operator
    packages) at import; without CANN the import fails with `libascendcl.so: cannot open shared object file`.

    How to fix: install the CANN toolkit and kernels package the vllm-ascend release names (`ascend-doctor matrix
    pins --vllm-ascend X` prints it): `./Ascend-cann-toolkit_<ver>_linux-<arch>.run --install` and
    `./Ascend-cann-kernels-910b_<ver>_linux-<arch>.run --install`, or start from the `quay.io/ascend/cann` /
    `quay.io/ascend/vllm-ascend` image.
    """
    c = ctx.fact("cann")
    if not c.found and c.unreadable:
        return ctx.unknown(T("CANN files exist but could not be read: {unreadable} — run the doctor as the serving "
                             "user, or make them readable",
                             unreadable='; '.join(c.unreadable)), cann_evidence(c),
                           cause=T("CANN version files are unreadable"))
    if not c.found:
        return ctx.fail(T("CANN toolkit not found in any known location (searched: {searched})",
                          searched=', '.join(c.searched)),
                        cann_evidence(c))
    a = c.active
    return ctx.ok(T("CANN {version} at {root}", version=c.version or '(version unknown)', root=a.root),
                  cann_evidence(c))


@check("CANN102", "cann-consistent", severity="error", needs=["cann"])
def cann_consistent(ctx):
    """The CANN install agrees with itself (version files, symlinks, environment)

    What it checks: the disagreements the CANN probe found: version.cfg vs ascend_toolkit_install.info, a `latest`
    or `cann` symlink resolving to a directory named for another version, components of version.cfg running
    different versions (a half-finished upgrade), ASCEND_* variables pointing at different installs or at
    directories that do not exist.

    Why it matters: the version a tool reports (and that ascend-doctor judges) is then not the one whose libraries
    get loaded. vllm-ascend#10525: a user sourced /usr/local/Ascend/cann/set_env.sh and collect_env printed no
    CANN version, because it looked in the other layout. Mixed component versions fail at operator compile time.

    How to fix: finish or redo the upgrade so one CANN version is installed consistently
    (`./Ascend-cann-toolkit_<ver>_linux-<arch>.run --upgrade`), point `latest` at it, open a fresh shell and source
    only that install's set_env.sh; unset stale ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME / ASCEND_OPP_PATH.
    """
    c = ctx.fact("cann")
    if not c.found:
        return no_cann(ctx, c)
    issues = list(c.inconsistencies)
    evidence = cann_evidence(c)
    if c.env:
        evidence.append(ev("env: ASCEND_*", "\n".join(f"{k}={v}" for k, v in c.env.items())))
    if issues:
        evidence.append(ev("CANN probe", "\n".join(issues)))
        return ctx.fail(T("CANN install is inconsistent: {issues}{value}", issues=issues[0],
                          value=T(" (+{value} more)", value=len(issues) - 1) if len(issues) > 1 else ''), evidence)
    return ctx.ok(T("CANN {version}: version files, symlinks and environment agree", version=c.version), evidence)


@check("CANN103", "cann-arch", severity="critical", needs=["cann"])
def cann_arch(ctx):
    """The CANN toolkit is built for this machine's CPU architecture

    What it checks: the toolkit's arch (`arch=` in <arch>-linux/ascend_toolkit_install.info, else its single
    <arch>-linux directory) against `uname -m`.

    Why it matters: an x86_64 toolkit on an aarch64 Atlas 800 (or the reverse, e.g. copied from another host or a
    multi-arch image pulled for the wrong platform) cannot load a single library: every import of torch_npu fails.

    How to fix: install the CANN packages built for this architecture
    (`Ascend-cann-toolkit_<ver>_linux-aarch64.run` on Atlas 800 A2/A3), or pull the image for the right platform
    (`docker pull --platform linux/arm64 quay.io/ascend/vllm-ascend:<tag>`).
    """
    c = ctx.fact("cann")
    if not c.found:
        return no_cann(ctx, c)
    evidence = cann_evidence(c) + [ev("uname -m", c.host_arch or "unknown")]
    if c.arch_mismatch is None:
        return ctx.unknown(T("could not tell the toolkit arch ({arch}) or the host arch ({host_arch})",
                             arch=c.arch or 'no arch in install info', host_arch=c.host_arch or 'unknown'), evidence)
    if c.arch_mismatch:
        return ctx.fail(T("CANN at {root} is built for {arch} but this machine is {host_arch}", root=c.active.root,
                          arch=c.arch, host_arch=c.host_arch), evidence)
    return ctx.ok(T("CANN is built for {arch}, like this machine", arch=c.arch), evidence)


@check("CANN104", "cann-env-sourced", severity="error", needs=["cann", "server_env"])
def cann_env_sourced(ctx):
    """The CANN environment is sourced (set_env.sh) in the serving environment

    What it checks: LD_LIBRARY_PATH contains the active toolkit's lib64 (what `set_env.sh` adds). The doctor sees the
    environment it runs in: run it from the same shell, unit or container entrypoint as `vllm serve`.

    Why it matters: torch_npu finds libascendcl.so, libhccl.so and the operator packages only through the variables
    set_env.sh exports; without them `import torch_npu` fails with `ImportError: libhccl.so: cannot open shared
    object file` (Ascend/pytorch FAQ) or `libascendcl.so: cannot open shared object file`.

    How to fix: `source /usr/local/Ascend/ascend-toolkit/set_env.sh` (CANN ≤ 8.3) or
    `source /usr/local/Ascend/cann/set_env.sh` (CANN ≥ 8.5), plus `source /usr/local/Ascend/nnal/atb/set_env.sh`,
    in the shell, systemd unit (a wrapper script) or container entrypoint that starts `vllm serve`.
    """
    c = ctx.fact("cann")
    if not c.found:
        return no_cann(ctx, c)
    env = ctx.try_fact("server_env")
    ld = env.get("LD_LIBRARY_PATH") if env is not None else None
    seen = ld if ld is not None else ("(not set)" if env is not None else "(environment not available)")
    evidence = cann_evidence(c) + [ev("env: LD_LIBRARY_PATH", seen)]
    if c.ld_library_path_has_toolkit is None:
        return ctx.unknown(T("could not tell whether LD_LIBRARY_PATH holds the toolkit's lib64"), evidence)
    if not c.ld_library_path_has_toolkit:
        lib = f"{c.active.root}/lib64"
        return ctx.fail(T("CANN environment not sourced: LD_LIBRARY_PATH does not contain {lib}", lib=lib), evidence,
                        remediation=source_fix(c.version))
    return ctx.ok(T("CANN environment sourced (LD_LIBRARY_PATH has {root} lib64)", root=c.active.root), evidence)


@check("CANN105", "nnal-atb", severity="error", needs=["cann", "python", "driver", "npu_smi"])
def nnal_atb(ctx):
    """NNAL/ATB is installed and sourced where vllm-ascend needs it

    What it checks: when vllm-ascend is installed, that NNAL/ATB exists (/usr/local/Ascend/nnal/atb/latest/
    version.info, or where ATB_HOME_PATH points), that its set_env.sh was sourced (ATB_HOME_PATH set), and that it
    was built for the active CANN version.

    Why it matters: vllm-ascend's attention and fused operators come from ATB (libatb.so). Missing or not sourced:
    `ImportError: libatb.so: cannot open shared object file` or `RuntimeError: Failed to infer device type`
    (vllm-ascend#152, #130, FAQ). An ATB older than torch_npu expects: `undefined symbol: _ZN3atb…` (vllm-ascend#117).

    How to fix: install the NNAL package of the same CANN version
    (`./Ascend-cann-nnal_<cann-ver>_linux-<arch>.run --install`) and `source /usr/local/Ascend/nnal/atb/set_env.sh`
    after the toolkit's set_env.sh, in the environment that starts `vllm serve`.
    """
    c = ctx.fact("cann")
    py = ctx.try_fact("python")
    n = c.nnal
    va = py.dist("vllm-ascend") if py is not None else None
    lines = [f"searched: {', '.join(n.searched) or '-'}"]
    if n.found:
        lines.append(f"found: {n.version_info_path}: version {n.version or '?'}"
                     + (f" (build {n.info.build_version})" if n.info and n.info.build_version else ""))
    lines.append(f"ATB_HOME_PATH={n.atb_home_path or '(not set)'}")
    evidence = [ev("NNAL/ATB", "\n".join(lines))]
    if va is not None:
        evidence.append(ev(T("serving interpreter"), f"vllm-ascend {va.version}"))
    if py is not None and va is None:
        return ctx.skip(T("vllm-ascend is not installed: NNAL/ATB not needed"), evidence)
    if not n.found:
        if py is None:
            return ctx.unknown(T("NNAL/ATB not found, and whether vllm-ascend is installed could not be established"),
                               evidence)
        return ctx.fail(T("NNAL/ATB not found, but vllm-ascend needs it (libatb.so)"), evidence)
    if n.error:
        return ctx.warn(T("NNAL/ATB found but its version.info is unreadable: {error}", error=n.error), evidence)
    if not n.atb_home_path:
        return ctx.fail(T("NNAL/ATB {version} installed but not sourced (ATB_HOME_PATH not set): libatb.so will not "
                          "be found", version=n.version or ''), evidence,
                        remediation=T("`source {nnal_set_env}` after the CANN set_env.sh in the environment that "
                                      "starts `vllm serve`.",
                                      nnal_set_env=NNAL_SET_ENV))
    if n.version and c.version and n.cann_mismatch:
        return ctx.warn(T("NNAL/ATB {version} was built for another CANN than the active CANN {version2}",
                          version=n.version, version2=c.version),
                        evidence, remediation=T("Install Ascend-cann-nnal_{version}_linux-<arch>.run to match CANN "
                                                "{version}, then `source {nnal_set_env}`. After a CANN/NNAL upgrade "
                                                "also reinstall (or rebuild) vllm-ascend and torch_npu for it: "
                                                "EngineCore segfaults after such upgrades are reported in "
                                                "vllm-ascend#10136 and #16773.",
                                                version=c.version, nnal_set_env=NNAL_SET_ENV))
    return ctx.ok(T("NNAL/ATB {version} installed and sourced", version=n.version or '?'), evidence)


@check("CANN106", "cann-driver-compatible", severity="error", needs=["cann", "stack"])
def cann_driver_compatible(ctx):
    """CANN and the NPU driver (Ascend HDK) are a compatible pair

    What it checks: the active CANN version with the driver version, against the matrix: published CANN × HDK
    compatibility grids (hicann/release-management release notes) and the driver each CANN release was published
    with (Ascend/docs package_info.js). A pair no source covers is unknown — except a driver older than every HDK
    published for the CANN's whole minor line (CANN 8.5.x names only HDK 25.x; driver 24.1.x), which warns, marked
    inferred, with the sources. Only a published "N" cell fails: the field has seen such unpublished pairs fail
    (24.1 under CANN 8.3/8.5: AICore time-outs, vllm-ascend#4972; watchdog time-outs, #5468; 23.0.7 under CANN
    8.5.1: HCCL resource allocation, #9005) and serve (CANN 8.5 releases on hosts whose npu-smi reads 23.0.3 and
    23.0.6, #8350, #9666, #6909), and the inference broke where a grid was missing (CANN 8.2 ran on 24.1.rc3, #4586,
    before MindIE 2.1.RC1's grid was read in).

    Why it matters: CANN's runtime talks to the driver through a versioned interface; a CANN newer than the driver
    supports fails at device open (`aclInit`/`SetDevice` errors such as 507033/EE1001) or crashes importing
    torch_npu, and vllm-ascend features state HDK minimums (e.g. FULL_AND_PIECEWISE graph mode needs HDK 25.5.1+).

    How to fix: install the Ascend HDK driver/firmware released with your CANN (`ascend-doctor matrix pins
    --vllm-ascend X` lists it; https://www.hiascend.com/hardware/firmware-drivers), or install the CANN release
    that supports your driver. Drivers are backward compatible with older CANN within the published grid.
    """
    c = ctx.fact("cann")
    if not c.found or not c.version:
        return no_cann(ctx, c, "CANN not found or its version unknown (see CANN101)")
    drv_v, drv_ev = driver_version_of(ctx)
    evidence = cann_evidence(c) + [drv_ev]
    if drv_v is None:
        return ctx.unknown(T("no driver version to compare CANN with (see DRV101/DRV102)"), evidence)
    m = ctx.matrix
    pairing = m.cann_driver_compatible(c.version, drv_v)
    verdict, why = pairing.compatible, pairing.why
    evidence.append(ev("matrix: CANN ↔ HDK", ("INFERRED: " if pairing.inferred else "") + why))
    if verdict is True and pairing.inferred:
        return ctx.ok(T("CANN {version} with driver {drv_v}: compatible, inferred from its neighbours (no release "
                        "notes name CANN {version})", version=c.version, drv_v=drv_v), evidence)
    if verdict is True:
        return ctx.ok(T("CANN {version} with driver {drv_v}: compatible", version=c.version, drv_v=drv_v), evidence)
    if verdict is False:
        if pairing.inferred:  # unpublished, and the field has seen such pairs both time out and run: a warning
            return ctx.warn(T("CANN {version} may need a newer driver than {drv_v} (inferred, no published table "
                              "covers the pair): {why}", version=c.version, drv_v=drv_v, why=why),
                            evidence, inferred=True,
                            remediation=T("Install the Ascend HDK (driver and firmware) the CANN release notes name "
                                          "(`ascend-doctor matrix pins --vllm-ascend X` lists it), or a CANN release "
                                          "published with driver {drv_v}.",
                                          drv_v=drv_v))
        return ctx.fail(T("CANN {version} is NOT compatible with driver {drv_v}", version=c.version, drv_v=drv_v),
                        evidence)
    if m.newer_than_matrix("cann", c.version):
        return ctx.warn(T("CANN {version} is not in the matrix yet (newest known {newest_known}): its driver "
                          "requirements cannot be checked", version=c.version,
                          newest_known=m.newest_known('cann')), evidence,
                        remediation=T("Check the CANN release notes' compatibility table for driver {drv_v}, or layer "
                                      "a matrix row with `--matrix`.", drv_v=drv_v))
    pairs = m.hdk_for_cann(c.version)
    dv = try_parse_version(drv_v)
    listed = [try_parse_version(x) for h in pairs for x in h.driver]
    listed = [x for x in listed if x is not None]
    if dv is not None and listed and all(dv.main_key < x.main_key for x in listed):
        oldest = min(listed)
        return ctx.warn(T("driver {drv_v} is older than every driver CANN {version} was published with (oldest: "
                          "{oldest}); no published table says whether it works", drv_v=drv_v,
                          version=c.version, oldest=oldest), evidence)
    return ctx.unknown(T("CANN {version} with driver {drv_v}: no source covers this pair", version=c.version,
                         drv_v=drv_v), evidence)


# Paths CANN 8.5.0 deprecated and later releases remove (hicann/release-management@0436983 9.1.1/release-notes.md
# and the 9.2.0-beta.1/-beta.2 notes, "删除和废弃特性"): old path fragment -> what replaces it.
DEPRECATED_LAYOUT = (
    ("ascend-toolkit/latest/runtime/include", "${install_path}/cann/include (acl, aclnn, graph headers)"),
    ("ascend-toolkit/latest/lib64", "${install_path}/cann/lib64 (libascendcl.so -> libacl_rt.so, libacl_mdl.so, "
                                    "libacl_op_executor.so)"),
    ("ascend-toolkit/latest/compiler/python/func2graph", "${install_path}/cann/<arch>-linux/python"),
)
LAYOUT_REMOVAL = "2026-12-30"
LAYOUT_SOURCE = ("hicann/release-management@0436983:9.1.1/release-notes.md; "
                 "hicann/release-management@17483eb:9.2.0-beta.1/release-notes.md")


@check("CANN107", "cann-deprecated-layout", severity="warning", needs=["cann", "server_env", "serve_cmd"])
def cann_deprecated_layout(ctx):
    """The serving environment does not use the ascend-toolkit/latest paths CANN 8.5 deprecated

    What it checks: on CANN ≥ 8.5, every environment variable (LD_LIBRARY_PATH, CPATH, PYTHONPATH, …) and the
    `vllm serve` command line under `ascend-doctor exec` for `ascend-toolkit/latest/runtime/include`,
    `ascend-toolkit/latest/lib64` and `ascend-toolkit/latest/compiler/python/func2graph`.

    Why it matters: CANN 8.5.0 moved the toolkit to `/usr/local/Ascend/cann` and kept the old paths only as a
    deprecated compatibility layout; the CANN release notes schedule them for removal after 2026-12-30
    (hicann/release-management 9.1.1 and 9.2.0-beta notes). Builds, wrappers and environments that still point there
    (often through the old `ascend-toolkit/set_env.sh`) stop finding headers and libascendcl.so on the next CANN
    (vllm-ascend#10525: collect_env prints an empty CANN version; #6336: platform_config not found).

    How to fix: `source /usr/local/Ascend/cann/set_env.sh` instead of ascend-toolkit/set_env.sh, and replace the old
    paths in scripts and Dockerfiles with the `cann/` ones the finding names.
    """
    c = ctx.fact("cann")
    if not c.found:
        return no_cann(ctx, c)
    v = try_parse_version(c.version)
    if v is None:
        return ctx.unknown(T("CANN version {version} is not a version: cannot tell which layout applies",
                             version=repr(c.version)),
                           cann_evidence(c))
    if not version_in(v, ">=8.5"):
        return ctx.skip(T("CANN {version} predates the 8.5 layout: ascend-toolkit/latest is its only layout",
                          version=c.version),
                        cann_evidence(c))
    env = ctx.try_fact("server_env")
    if env is None:
        return ctx.unknown(T("the serving environment was not available"), cann_evidence(c))
    listing = getattr(env, "listing", None)  # a paste shows some variables; the layout lives in LD_LIBRARY_PATH
    if listing is not None and not listing.shows("LD_LIBRARY_PATH"):
        raise FactUnavailable("server_env.LD_LIBRARY_PATH", listing.reason("LD_LIBRARY_PATH"))
    places = [(f"env {k}", str(val)) for k, val in sorted(env.items())]
    cmd = ctx.try_fact("serve_cmd")
    if cmd is not None and getattr(cmd, "display", None):
        places.append(("the vllm serve command line", cmd.display))
    hits = []
    for where, text in places:
        for old, new in DEPRECATED_LAYOUT:
            if old in text:
                hits.append((where, old, new))
    if not hits:
        return ctx.ok(T("no deprecated ascend-toolkit/latest path in the {n_env} environment variables{value}",
                        n_env=len(env), value=T(" or the serve command") if cmd is not None else ''), cann_evidence(c))
    evidence = cann_evidence(c) + [ev(where, f"{old} (replaced by {new})") for where, old, new in hits]
    used = sorted({old for _w, old, _n in hits})
    wheres = sorted({w for w, _o, _n in hits})
    return ctx.warn(T("still in use in {wheres}: the ascend-toolkit/latest layout CANN 8.5 deprecated ({used}); CANN "
                      "releases after {layout_removal} remove it [source: {layout_source}]",
                      wheres=', '.join(wheres), used=', '.join(used),
                      layout_removal=LAYOUT_REMOVAL, layout_source=LAYOUT_SOURCE), evidence,
                    remediation=T("`source {cann_set_env}` instead of {toolkit_set_env}, and point scripts at "
                                  "{deprecated_layout}.", cann_set_env=CANN_SET_ENV,
                                  toolkit_set_env=TOOLKIT_SET_ENV,
                                  deprecated_layout='; '.join((f'{new} instead of {old}' for old,
                                      new in DEPRECATED_LAYOUT if old in used))), removal=LAYOUT_REMOVAL, paths=used)


@check("CANN108", "cann-kernels-for-chip", severity="error", needs=["cann", "npu_smi", "opp_kernels"])
def cann_kernels_for_chip(ctx):
    """The operator kernels of the active CANN cover this host's chips

    What it checks: the SoC directories under `$ASCEND_OPP_PATH/built-in/op_impl/ai_core/tbe/kernel/config/`
    against the chips npu-smi lists (910B -> ascend910b, A3 -> ascend910_93, 300I Duo -> ascend310p, 950 ->
    ascend910_95, first-generation 910 -> ascend910: CANN's own SoC table). From CANN 8.5 the op libraries can carry
    their kernels inside, so there a missing directory is `unknown`, not `fail`.

    Why it matters: the kernels are a package of their own (Ascend-cann-kernels-910b…, from CANN 8.5 the chip's ops
    package), installed beside the toolkit. Without the chip's directory, CANN looks fine and torch_npu imports, but
    the first operator the model runs fails: `call aclnnSwiGlu failed, detail:EZ1001: … Get path and read
    binary_info_config.json failed, please check if the opp_kernel package is installed!` (vllm-ascend#237 — a
    910ProB on an install with 910B kernels — and #1440).

    How to fix: install the kernels (ops) package of the same CANN version for this chip, or run the image built for
    it; a chip vllm-ascend does not support (HW107) has no kernels in its images at all.
    """
    from ascend_doctor.knowledge.hardware import families

    fams = families(ctx.fact("npu_smi"))
    if fams is None:
        return ctx.unknown(T("npu-smi gave no chip table: which kernels this host needs is not known"))
    kern = ctx.fact("opp_kernels")
    evidence = [ev(f"dir: {kern.config_dir}", ", ".join(kern.socs) if kern.socs else
                   ("missing" if kern.missing else kern.error or "empty")),
                ev(T("npu-smi chips"), "; ".join(f"{f}: {len(n)}x {n[0]}" for f, n in sorted(fams.items())))]
    if kern.socs is None:
        return ctx.unknown(T("{path} could not be listed: {why}", path=kern.config_dir, why=kern.error), evidence)
    layout = ctx.knowledge.kernels
    needed = {layout.kernel_dirs[f]: sorted(set(n)) for f, n in fams.items() if f in layout.kernel_dirs}
    lacking = {d: chips for d, chips in needed.items() if d not in kern.socs}
    if not lacking and "?" in fams:
        return ctx.unknown(T("chip name(s) {names} map to no kernel directory the doctor knows",
                             names=", ".join(sorted(set(fams["?"])))), evidence)
    cann = ctx.fact("cann").version
    v = try_parse_version(cann)
    if lacking and (v is None or v >= try_parse_version(layout.static_kernels_from)):
        # The op libraries (libopapi_math/nn/...) can carry their kernels inside (the `deploy/kernels` table):
        # a missing directory no longer proves the kernels absent.
        return ctx.unknown(T("{path} has no {lacking} directory, but CANN {version} can carry kernels inside its op "
                             "libraries, so this does not prove them missing", path=kern.config_dir,
                             lacking=", ".join(sorted(lacking)), version=cann or "?"), evidence)
    if lacking:
        have = (", ".join(kern.socs) if kern.socs else
                T("nothing (the directory is missing)") if kern.missing else T("no SoC directory"))
        return ctx.fail(T("the operator kernels in {path} cover {have}, not {lacking}: every aclnn call fails with "
                          "`Get path and read binary_info_config.json failed, please check if the opp_kernel package "
                          "is installed!`", path=kern.config_dir, have=have,
                          lacking=", ".join(f"{d} ({', '.join(c)})" for d, c in sorted(lacking.items()))),
                        evidence, remediation=T("Install the kernels (ops) package of CANN {version} for {chips} "
                                                "(for CANN 8.0-8.3 Ascend-cann-kernels-<chip>_{version}_linux-"
                                                "<arch>.run, e.g. -910b), or run the vllm-ascend image built for "
                                                "this chip.",
                                                version=cann,
                                                chips=", ".join(sorted({c for v in lacking.values() for c in v}))))
    return ctx.ok(T("the operator kernels cover {dirs}", dirs=", ".join(sorted(needed))), evidence)
