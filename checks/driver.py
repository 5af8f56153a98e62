"""DRV checks: the NPU driver and firmware (Ascend HDK) under CANN — present, readable, matched to each other, and new
enough for the CANN the installed vllm-ascend release is built for.

Facts: `driver` (/usr/local/Ascend/driver/version.info, /etc/ascend_install.info, firmware version.info) and
`npu_smi` (the `Version:` in the `npu-smi info` header). Formats: matrix-facts §3.2 (d)-(g).
"""

from __future__ import annotations

from typing import Optional

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev, if_shown
from ascend_doctor.text.versions import try_parse_version

from ._driver import driver_version_of
from ._hardware import one_family
from ._vllm import installed_release

DRIVER_INSTALL_FIX = T(
    "Install the Ascend HDK driver and firmware for your board from https://www.hiascend.com/hardware/firmware-drivers "
    "(as root: `./Ascend-hdk-910b-npu-driver_<ver>_linux-<arch>.run --full --install-for-all`, then "
    "`./Ascend-hdk-910b-npu-firmware_<fw>.run --full`, then reboot). In a container, mount the host's driver: "
    "`-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ "
    "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info "
    "-v /etc/ascend_install.info:/etc/ascend_install.info -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi "
    "-v /usr/local/dcmi:/usr/local/dcmi` plus `--device /dev/davinci_manager --device /dev/devmm_svm "
    "--device /dev/hisi_hdc --device /dev/davinciN`."
)


def driver_version_info_evidence(drv) -> list:
    """Evidence lines for the driver's version.info (what was read, or where it was looked for)."""
    if drv.version_info is not None:
        vi = drv.version_info
        lines = [f"Version={vi.version}"]
        if if_shown(lambda: vi.package_version):
            lines.append(f"package_version={vi.package_version}")
        if if_shown(lambda: vi.innerversion):
            lines.append(f"Innerversion={vi.innerversion}")
        if if_shown(lambda: vi.compatible_version_fw):
            lines.append(f"compatible_version_fw=[{vi.compatible_version_fw.raw}]")
        where = if_shown(lambda: drv.driver_dir)
        return [ev(f"file: {where}/version.info" if where else T("driver version (the paste)"), "\n".join(lines))]
    what = drv.version_info_error or T("not found")
    lines = [what if p in what else T("{path}: not found", path=p) for p in drv.searched]
    return [ev(T("files searched"), join("\n", lines) or T("no path searched"))]


def _smi_version(smi) -> Optional[str]:
    if smi is None or smi.info is None:
        return None
    return smi.info.driver_version or smi.info.tool_version


def _smi_evidence(smi) -> list:
    if smi is None:
        return []
    if not smi.found:
        return [ev(f"cmd: {smi.tool} info", T("command not found"))]
    v = _smi_version(smi)
    if v:
        return [ev(f"cmd: {smi.tool} info", f"Version: {v}")]
    return [ev(f"cmd: {smi.tool} info", smi.reason() or T("no version in the header"))]


@check("DRV101", "driver-present", severity="critical", needs=["driver", "npu_smi"])
def driver_present(ctx):
    """An Ascend NPU driver is installed (or mounted into this container)

    What it checks: /usr/local/Ascend/driver/version.info (or the Driver_Install_Path_Param of
    /etc/ascend_install.info), the driver's lib64 directory, and whether `npu-smi` exists. No driver file and no
    npu-smi means this machine (or container) has no Ascend driver.

    Why it matters: without the driver nothing can open an NPU: torch_npu fails at import or at the first
    `torch.npu` call, and vllm-ascend falls back to errors like `RuntimeError: Failed to infer device type`. Inside
    a container the driver is not installed but bind-mounted from the host; a missing mount looks exactly like a
    machine without NPUs.

    How to fix: Install the Ascend HDK driver and firmware for your board from
    https://www.hiascend.com/hardware/firmware-drivers (as root:
    `./Ascend-hdk-910b-npu-driver_<ver>_linux-<arch>.run --full --install-for-all`, then
    `./Ascend-hdk-910b-npu-firmware_<fw>.run --full`, then reboot). In a container, mount the host's driver:
    `-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/
    -v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info
    -v /etc/ascend_install.info:/etc/ascend_install.info -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi
    -v /usr/local/dcmi:/usr/local/dcmi` plus the /dev/davinci* devices (see vllm-ascend's installation guide).
    """
    drv = ctx.fact("driver")
    smi = ctx.try_fact("npu_smi")
    evidence = driver_version_info_evidence(drv) + _smi_evidence(smi)
    if drv.found:
        return ctx.ok(T("Ascend driver {version} found at {path}", version=drv.version, path=drv.driver_dir), evidence)
    smi_found = smi is not None and smi.found
    file_there = bool(drv.version_info_error)  # present but unreadable / unparseable
    if drv.lib64_present:
        evidence.append(ev(f"dir: {drv.driver_dir}/lib64", "present"))
    if smi_found or file_there or drv.lib64_present:
        seen = [s for s, on in (("npu-smi", smi_found), (f"{drv.driver_dir}/lib64", drv.lib64_present),
                                ("an unreadable version.info", file_there)) if on]
        return ctx.warn(T("Ascend driver present ({seen}) but its version.info could not be read: the driver "
                          "version cannot be checked", seen=", ".join(seen)), evidence,
                        remediation=T("Mount or restore /usr/local/Ascend/driver/version.info "
                                      "(`-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/"
                                      "version.info` in `docker run`) and make it readable by the serving user."))
    if smi is None:
        return ctx.unknown(T("no driver version.info found, and whether npu-smi exists could not be established"),
                           evidence)
    return ctx.fail(T("No Ascend driver found: no /usr/local/Ascend/driver/version.info and no npu-smi on this "
                      "machine (or in this container)"), evidence, remediation=DRIVER_INSTALL_FIX)


@check("DRV102", "driver-version", severity="error", needs=["driver", "npu_smi"])
def driver_version(ctx):
    """The NPU driver version can be read and the loaded driver matches the installed one

    What it checks: `Version=` in the driver's version.info parses as an Ascend version (e.g. `24.1.rc3`,
    `25.0.rc1.1`, `25.5.1`), and agrees with the `Version:` that `npu-smi info` reports for the loaded driver.

    Why it matters: every later judgement (CANN ↔ driver, firmware range, advisories) needs the driver version. A
    version.info that disagrees with npu-smi means the driver was upgraded on disk but the old kernel module is still
    loaded (no reboot yet), or the container mounts another host's version.info: user-space and kernel parts then
    disagree and device initialisation fails with errors far from the cause.

    How to fix: reboot after a driver upgrade so that npu-smi and /usr/local/Ascend/driver/version.info agree; in a
    container mount the host's
    /usr/local/Ascend/driver/version.info read-only. Reinstall the driver package if version.info is damaged.
    """
    drv = ctx.fact("driver")
    smi = ctx.try_fact("npu_smi")
    evidence = driver_version_info_evidence(drv) + _smi_evidence(smi)
    smi_v = _smi_version(smi)
    if not drv.found:
        if drv.version_info_error:
            return ctx.fail(T("driver version.info is unreadable: {error}", error=drv.version_info_error), evidence)
        if smi_v:
            return ctx.warn(T("driver version.info not found; npu-smi reports driver {version} (mount "
                              "/usr/local/Ascend/driver/version.info so tools that read it, e.g. torch_npu's "
                              "get_cann_version('DRIVER'), see it)", version=smi_v), evidence)
        return ctx.skip(T("no Ascend driver found (see DRV101)"), evidence)
    v = drv.version
    if not v or try_parse_version(v) is None:
        return ctx.fail(T("driver version.info has an unreadable Version={value}", value=repr(v)), evidence)
    if smi_v and try_parse_version(smi_v) is not None and \
            try_parse_version(smi_v).main_key != try_parse_version(v).main_key:
        return ctx.fail(T("installed driver {installed} ({path}/version.info) but npu-smi reports {loaded}: the "
                          "loaded driver is not the installed one (reboot pending, or another host's version.info)",
                          installed=v, path=drv.driver_dir, loaded=smi_v), evidence)
    newer = ctx.matrix.newer_than_matrix("driver", v)
    if newer:
        return ctx.ok(T("driver {version} (newer than every driver in the matrix, newest known {newest})",
                        version=v, newest=ctx.matrix.newest_known("driver")), evidence)
    if smi_v:
        return ctx.ok(T("driver {version}, npu-smi agrees", version=v), evidence)
    return ctx.ok(T("driver {version}", version=v), evidence)


def _in_range(v, lo: str, hi: str) -> Optional[bool]:
    """Vendor range `[lo,hi]`; a bound ending with `.` means "this prefix" (`[24.1,24.1.]` = any 24.1.x)."""
    low, high = try_parse_version(lo.rstrip(".")), try_parse_version(hi.rstrip("."))
    if low is None or high is None:
        return None
    text = str(v).lower()
    if hi.endswith(".") and text.startswith(hi.lower()):
        return True
    above = v >= low or text.startswith(lo.rstrip(".").lower() + ".")
    below = v <= high or text.startswith(hi.rstrip(".").lower() + ".")
    return above and below


@check("DRV103", "firmware-compatible", severity="error", needs=["driver"])
def firmware_compatible(ctx):
    """The NPU firmware is within the range the driver accepts

    What it checks: the firmware version (/usr/local/Ascend/firmware/version.info `Version=`) against the driver's
    `compatible_version_fw=[min,max]` (driver version.info). The firmware's own `compatible_version_drv` list is
    shown as evidence but not judged (its bound syntax is undocumented).

    Why it matters: driver and firmware ship together in one Ascend HDK release; upgrading only one of them leaves a
    pair the vendor never supports, and the cards fail to initialise (npu-smi shows them unhealthy or missing) or
    fail under load.

    How to fix: install the firmware from the same Ascend HDK release as the driver
    (`./Ascend-hdk-<board>-npu-firmware_<ver>.run --full`; on upgrade the HDK guide installs the firmware first,
    then the driver) and reboot. Check with `cat /usr/local/Ascend/firmware/version.info` and
    `cat /usr/local/Ascend/driver/version.info`.
    """
    drv = ctx.fact("driver")
    if not drv.found:
        return ctx.skip(T("no readable Ascend driver version.info (see DRV101/DRV102)"),
                        driver_version_info_evidence(drv))
    evidence = driver_version_info_evidence(drv)
    if drv.firmware is None or not drv.firmware_version:
        why = drv.firmware_error or "not found (containers usually do not mount it: run the check on the host)"
        evidence.append(ev(f"file: {drv.firmware_path or '/usr/local/Ascend/firmware/version.info'}", why))
        return ctx.unknown(T("firmware version unknown: {why}", why=why), evidence)
    fw = drv.firmware
    fw_lines = [f"Version={fw.version}"] + ([f"package_version={fw.package_version}"] if fw.package_version else [])
    if fw.compatible_version_drv:
        fw_lines.append("compatible_version_drv=" + ",".join(f"[{r.raw}]" for r in fw.compatible_version_drv))
    evidence.append(ev(f"file: {drv.firmware_path}", "\n".join(fw_lines)))
    fw_v = try_parse_version(fw.version)
    rng = drv.version_info.compatible_version_fw
    # Only the driver's numeric [min,max] firmware range decides. The firmware's own compatible_version_drv list is
    # evidence only: its trailing-dot bounds are not documented, and a real HDK 23.0.7 pair ([23.0.0,23.0.0.] listed
    # by the firmware shipped with driver 23.0.7; Ascend/mind-cluster faultdiag fixture) contradicts a prefix reading.
    if rng is None or fw_v is None:
        return ctx.unknown(T("firmware {firmware}: the driver's version.info has no readable compatible_version_fw "
                             "range to check it against", firmware=fw.version), evidence)
    ok = _in_range(fw_v, rng.min, rng.max)
    if ok is None:
        return ctx.unknown(T("the driver's compatible_version_fw [{range}] is not a version range", range=rng.raw),
                           evidence)
    if not ok:
        return ctx.fail(T("firmware {firmware} is outside the range driver {driver} accepts (compatible_version_fw "
                          "[{range}])", firmware=fw.version, driver=drv.version, range=rng.raw), evidence)
    return ctx.ok(T("firmware {firmware} is within the range driver {driver} accepts [{range}]", firmware=fw.version,
                    driver=drv.version, range=rng.raw), evidence)


@check("DRV104", "driver-for-release", severity="error", needs=["python", "stack", "cann", "npu_family", "npu_smi"])
def driver_for_release(ctx):
    """The NPU driver runs the CANN the installed vllm-ascend release is built for

    What it checks: the CANN release(s) the installed vllm-ascend's matrix row names (its Dockerfile, installation
    guide and README; the image's CANN for this chip family where it has its own) against the driver version, with
    the CANN ↔ HDK pairing CANN106 uses (published grids, the HDK each CANN shipped with, MindIE's grid for CANN
    8.2.RC1, the generation rule): a published "N" fails; the generation rule's inference warns, as in CANN106 (the
    field has seen such pairs both time out and serve). It judges the release's CANN, not the installed one: it
    answers when no CANN is seen (a paste with the versions and the driver but no CANN line) and when the installed
    CANN is not the release's (VLLM102 then asks for the release's CANN: this says whether the driver will run it).
    When the installed CANN is the release's, CANN106 judges that pair and this check stands aside.

    Why it matters: vllm-ascend's compiled operators and its image are built on one CANN, and that CANN needs an HDK
    of its generation. A 24.1 driver under the CANN 8.3.RC2 of vllm-ascend 0.11.0-0.12.x starts, then times out in
    AICore kernels (`aicore execution times out`, 507014; maintainers in vllm-ascend#4972 point to HDK 25.3.RC1);
    a CANN further ahead of the driver fails at device open or importing torch_npu (CANN106).

    How to fix: install the Ascend HDK (driver and firmware) the release's CANN was published with (`ascend-doctor
    matrix pins --vllm-ascend X` names it; https://www.hiascend.com/hardware/firmware-drivers), or stay on the
    driver and install the newest vllm-ascend release whose CANN it runs (`ascend-doctor plan --keep-driver`).
    """
    _py, _va, row, skip = installed_release(ctx)
    if skip:
        return skip
    m = ctx.matrix
    drv_v, drv_ev = driver_version_of(ctx)
    if drv_v is None:  # DRV101/DRV102 report a driver not found or unreadable
        return ctx.skip(T("no driver version to compare vllm-ascend {version}'s CANN with (see DRV101/DRV102)",
                          version=row.version), [drv_ev])
    family = one_family(ctx)
    canns = row.pins_for("cann", family)
    c = ctx.try_fact("cann")
    installed = if_shown(lambda: c.version if c is not None and c.found else None)
    if installed and any(_same(installed, x) for x in canns):
        return ctx.skip(T("the installed CANN {cann} is vllm-ascend {version}'s: CANN106 judges it with driver "
                          "{driver}", cann=installed, version=row.version, driver=drv_v))
    verdicts = [(x, m.cann_driver_compatible(x, drv_v)) for x in canns]
    evidence = [drv_ev, ev(f"vllm-ascend {row.version}: CANN",
                           " | ".join(canns) + f" [source: {'; '.join(row.source)}]")]
    evidence += [ev(f"matrix: CANN {x} ↔ HDK", ("INFERRED: " if p.inferred else "") + p.why) for x, p in verdicts]
    runs = [x for x, p in verdicts if p.compatible is True]
    if runs:
        return ctx.ok(T("driver {driver} runs CANN {cann}, which vllm-ascend {version} is built for",
                        driver=drv_v, cann=runs[0], version=row.version), evidence)
    if any(p.compatible is None for _x, p in verdicts):
        return ctx.unknown(T("no source says whether driver {driver} runs CANN {cann} (vllm-ascend {version}'s)",
                             driver=drv_v, cann=" | ".join(canns), version=row.version), evidence)
    inferred = any(p.inferred for _x, p in verdicts)
    seen = T(" (the installed CANN is {cann})", cann=installed) if installed else T(" (no CANN version was seen)")
    if inferred:  # from silence: no table pairs the CANN's line with a driver this old (CANN106's reading)
        text = T("vllm-ascend {version} is built for CANN {cann}, and no published table pairs that CANN with a "
                 "driver as old as {driver} (inferred){seen}", version=row.version, cann=" | ".join(canns),
                 driver=drv_v, seen=seen)
    else:
        text = T("vllm-ascend {version} is built for CANN {cann}, which the published table says does not run on "
                 "driver {driver}{seen}", version=row.version, cann=" | ".join(canns), driver=drv_v, seen=seen)
    fix = T("Install the Ascend HDK CANN {cann} was published with (`ascend-doctor matrix pins --vllm-ascend "
            "{version}` names it), or keep driver {driver} and install the newest vllm-ascend whose CANN it runs "
            "(`ascend-doctor plan --keep-driver`).", cann=canns[0], version=row.version, driver=drv_v)
    if inferred:
        return ctx.warn(text, evidence, remediation=fix, inferred=True)
    return ctx.fail(text, evidence, remediation=fix)


def _same(a: str, b: str) -> bool:
    va, vb = try_parse_version(a), try_parse_version(b)
    return va is not None and vb is not None and va.main_key == vb.main_key
