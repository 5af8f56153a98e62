"""NPU checks: card health, npu-smi/DCMI errors, device memory held by other processes, visible-device variables.

All of them read `npu-smi info` (fact `npu_smi`). A missing npu-smi is the driver checks' business: here it gives
`unknown` with the reason. A pasted or elided table (`...`) lists fewer chips than the machine has, so chip counts
are a lower bound and never alone a reason to fail.
"""

from __future__ import annotations

import re

from ascend_doctor.i18n import T, join
from ascend_doctor.knowledge.hardware import BUSY_HBM_FRACTION
from ascend_doctor.parsers.device_ids import parse_device_ids
from ascend_doctor.plugin import check, ev, if_shown, step

# HBM a chip uses with nothing running: 2871/32768 MB (8.8 %) on a 910B4 (triton-ascend docs, npu-smi 26.0.rc1),
# 3314/65536 MB on 910B3 and 4175/65536 MB on 910B1 (../shared/corpus/npu_smi_info). Above IDLE_FRACTION someone
# holds memory; above BUSY_FRACTION vLLM's default --gpu-memory-utilization 0.9 cannot be met on that chip.
IDLE_FRACTION = 0.15
BUSY_FRACTION = BUSY_HBM_FRACTION  # the one threshold, shared with `plan` (ascend_doctor.knowledge.hardware)

# DCMI return codes (hicann/driver dcmi_interface_api.h, docs .../return_codes.md).
DCMI_NAMES = {
    -8001: "DCMI_ERR_CODE_INVALID_PARAMETER",
    -8002: "DCMI_ERR_CODE_OPER_NOT_PERMITTED",
    -8003: "DCMI_ERR_CODE_MEM_OPERATE_FAIL",
    -8005: "DCMI_ERR_CODE_INNER_ERR",
    -8007: "DCMI_ERR_CODE_INVALID_DEVICE_ID",
    -8020: "DCMI_ERR_CODE_RESOURCE_OCCUPIED",
}

FIX_8020_HOST = (T("find who holds the NPU: `npu-smi info` on the host lists the processes; `docker ps` then `docker "
                   "inspect <id> | grep davinci` finds containers that mount /dev/davinciN; stop that container or "
                   "process (`docker stop <id>`), or give this workload other NPUs."))
FIX_8005_HOST = (T("reboot if the driver or firmware was upgraded since the last boot (see "
                   "/var/log/ascend_seclog/ascend_install.log); run npu-smi as root or as a user in the HwHiAiUser "
                   "group (`usermod -aG HwHiAiUser $USER`, then log in again); check `lsmod | grep drv_davinci` "
                   "shows the driver loaded."))
FIX_8005_CONTAINER = (T("start the container with the device nodes and driver mounts of vllm-ascend's docker run: "
                        "`--device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc --device "
                        "/dev/davinciN -v /usr/local/dcmi:/usr/local/dcmi -v "
                        "/usr/local/bin/npu-smi:/usr/local/bin/npu-smi -v "
                        "/usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ -v "
                        "/usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info -v "
                        "/etc/ascend_install.info:/etc/ascend_install.info`; run as root or a user in HwHiAiUser; "
                        "make sure no other container holds the same /dev/davinciN (`docker inspect <id> | grep "
                        "davinci`)."))
FIX_LIBS = (T("npu-smi cannot find the driver libraries: `export "
              "LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/driver:/usr/local/Ascend/driver/lib64/common:"
              "$LD_LIBRARY_PATH`; "
              "in a container mount them with `-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/`."))
FIX_PERMISSION = (T("run as root or as a user in the HwHiAiUser group (`usermod -aG HwHiAiUser $USER`), and check `ls "
                    "-l /dev/davinci* /usr/local/bin/npu-smi`."))


# Checks whose fix addresses a missing or failing npu-smi (the driver, the container's mounts): an NPU check that
# cannot look for that reason points at them instead of repeating their fix.
SMI_DIAGNOSED_BY = ["DRV101", "CTR102", "CTR104", "NPU102"]


def smi_source(smi) -> str:
    return f"cmd: {smi.tool} info"


def chip_label(c) -> str:
    """'NPU 3 chip 0 (910B3, 0000:01:00.0)'."""
    extra = ", ".join(x for x in (c.name, c.bus_id) if x)
    return f"NPU {c.npu_id} chip {c.chip_id}" + (f" ({extra})" if extra else "")


def table_excerpt(info) -> str:
    """The chip rows as one line each (what the checks looked at)."""
    lines = []
    for c in info.chips:
        mem = ""
        # a pasted table shows the totals, not what was in use at launch (ascend_doctor.triage.run): "?" then
        if c.hbm_total_mb:
            mem = f"HBM {if_shown(lambda: c.hbm_used_mb, '?')} / {c.hbm_total_mb} MB"
        elif c.memory_total_mb:
            mem = f"Memory {if_shown(lambda: c.memory_used_mb, '?')} / {c.memory_total_mb} MB"
        lines.append(f"{chip_label(c)}: Health {c.health}" + (f", {mem}" if mem else ""))
    if info.elided:
        lines.append("... (rows elided in this output: the chip list is a lower bound)")
    return "\n".join(lines)


def no_table(ctx, smi, what: str):
    """`unknown` for a check that needs the npu-smi table when there is none (the driver/NPU102 checks say why)."""
    cause = smi.reason() or "npu-smi gave no table"
    return ctx.unknown(T("cannot {what}: {cause}", what=what, cause=cause),
                       [ev(smi_source(smi), smi.reason() or smi.command.why_not)], cause=cause, see=SMI_DIAGNOSED_BY)


def logical_count(info) -> int:
    """Devices the runtime numbers 0..n-1: one per chip row (A3 and 300I Duo cards have two chips per NPU).

    Inside a container the runtime numbers the devices it was given from 0 while npu-smi keeps the host's NPU ids
    (vllm-ascend#3963 shows NPU 2 as the only card of a container); ASCEND_RT_VISIBLE_DEVICES takes the former.
    """
    return len(info.chips)


def physical_ids(info) -> list[int]:
    """Ids as /dev/davinciN and ASCEND_VISIBLE_DEVICES use them: the A3 Phy-ID, else the NPU id."""
    ids = {c.phy_id if c.phy_id is not None else c.npu_id for c in info.chips}
    return sorted(ids)


def dcmi_diagnosis(err, in_container: bool) -> tuple[str, str]:
    """(what it means, how to fix) for what npu-smi printed instead of a table."""
    code = err.code
    msg = err.message
    if code == -8020 or "device is used" in msg:
        return ("the NPU is held by another container or process (DCMI -8020 DCMI_ERR_CODE_RESOURCE_OCCUPIED)",
                FIX_8020_HOST)
    if code == -8005:
        what = T("DCMI could not initialise (-8005 DCMI_ERR_CODE_INNER_ERR)")
        if in_container:
            return (what + ": in a container this usually means the NPU device nodes or driver files are not "
                           "mounted, or another container holds the device", FIX_8005_CONTAINER)
        return (what + ": driver/firmware upgraded without a reboot, a non-root user outside the HwHiAiUser "
                       "group, or the driver not loaded", FIX_8005_HOST)
    if re.search(r"Invalid (card|chip|device) id", msg, re.I):
        return ("npu-smi rejected the card id: the card is not (or no longer) known to the driver",
                "list the ids with `npu-smi info -l`; if a card that used to answer is now rejected it has dropped "
                "out: check `npu-smi info -t health -i N` and the BMC logs, then reset/reboot.")
    if "shared libraries" in msg:
        return ("npu-smi cannot load the driver libraries", FIX_LIBS)
    if "permission denied" in msg.lower() or code == -8002:
        return ("npu-smi is not permitted to open the device", FIX_PERMISSION)
    if code is not None:
        name = DCMI_NAMES.get(code, "a DCMI/npu-smi return code")
        return (f"npu-smi failed with {code} ({name})",
                f"look up {code} in the DCMI return codes (Ascend DCMI API reference); " + FIX_8005_HOST)
    return ("npu-smi printed an error instead of the device table", FIX_8005_HOST)


def _scope(ctx):
    """The `npu_scope` fact (which chips the server will use), or None when it is not established: then every chip
    counts, as before a server is known."""
    return ctx.try_fact("npu_scope")


def _used(scope, npu_id: int, chip_id) -> bool:
    """Whether the server uses this chip (a process line without a chip id: any chip of that NPU)."""
    if scope is None or scope.chips is None:
        return True
    if chip_id is None:
        return any(n == npu_id for n, _ in scope.chips)
    return scope.uses(npu_id, chip_id)


@check("NPU101", "npu-health", severity="error", needs=["npu_smi", "npu_health", "npu_scope"])
def npu_health(ctx):
    """Every NPU chip reports Health OK

    What it checks: the Health column of `npu-smi info` for every chip, and for each NPU the detail of
    `npu-smi info -t health -i N` (Health Status, Error Code, Error Information) when it could be read. Anything but
    `OK` (Warning, Alarm, Critical, ...) fails, naming the NPU, the chip and the fault codes. A card that the table
    lists but `-t health -i N` rejects (`Invalid card id.`) has dropped out and fails too. Only the NPUs the server
    will use count (the container's /dev/davinciN, then ASCEND_RT_VISIBLE_DEVICES: the `npu_scope` fact); a fault on
    another NPU is named as information. Unknown when npu-smi is missing or printed no table (NPU102 and the driver
    checks say why).

    Why it matters: a chip in Alarm/Critical fails `torch.npu.set_device` or dies mid-inference (heartbeat lost,
    HBM ECC, over-temperature); with tensor parallelism one bad chip takes the whole engine down. Warning often
    precedes Alarm (power, temperature, a recoverable ECC burst).

    How to fix: read the fault codes: `npu-smi info -t health -i <NPU>` and look them up in the Ascend
    health-code reference; check `npu-smi info -t board -i <NPU>` and the BMC/iBMC event log; reset the card
    (`npu-smi set -t reset -i <NPU> -c 0`, as root, with nothing running on it) or reboot; replace hardware that
    keeps alarming. Keep unhealthy NPUs out of the deployment with ASCEND_RT_VISIBLE_DEVICES meanwhile.
    """
    smi = ctx.fact("npu_smi")
    if not smi.usable:
        return no_table(ctx, smi, T("read NPU health"))
    info = smi.info
    scope = _scope(ctx)
    health = ctx.try_fact("npu_health")
    by_npu = health.by_npu() if health is not None else {}
    evidence = [ev(smi_source(smi), table_excerpt(info))]
    problems, others = [], []
    for c in info.unhealthy():
        line = f"{chip_label(c)}: {c.health}"
        res = by_npu.get(c.npu_id)
        if res is not None and res.health is not None and res.health.health:
            h = res.health
            codes = " ".join(h.error_codes) or "none"
            line += T(" (error codes {codes}{information})", codes=codes,
                      information=f"; {'; '.join(h.error_information)}" if h.error_information else "")
        (problems if _used(scope, c.npu_id, c.chip_id) else others).append(line)
    listed_bad = {c.npu_id for c in info.unhealthy()}
    for npu, res in sorted(by_npu.items()):
        src = f"cmd: {smi.tool} info -t health -i {npu}"
        h = res.health
        if h is None:
            continue
        if h.error is not None:
            evidence.append(ev(src, h.error.message))
            if re.search(r"Invalid (card|chip|device) id", h.error.message, re.I):
                line = T("NPU {npu}: listed by `npu-smi info` but `-t health -i {npu}` answers '{message}' (the card "
                         "dropped out)", npu=npu, message=h.error.message)
                (problems if _used(scope, npu, None) else others).append(line)
            continue
        excerpt = (f"Health Status: {h.health}\nError Code: {' '.join(h.error_codes) or 'NA'}\n"
                   f"Error Information: {'; '.join(h.error_information) or 'NA'}")
        if h.health and h.health.upper() != "OK":
            evidence.append(ev(src, excerpt))
            if npu not in listed_bad:
                codes = " ".join(h.error_codes) or "none"
                line = T("NPU {npu}: `-t health` says {health} (error codes {codes}) although the table shows OK",
                         npu=npu, health=h.health, codes=codes)
                (problems if _used(scope, npu, None) else others).append(line)
    aside = T("; not this server's (outside {scope}): {others}", scope=scope.outside(), others=join("; ", others)) \
        if others else ""
    if problems:
        return ctx.fail(T("{n} unhealthy NPU chip(s): {problems}{aside}", n=len(problems),
                          problems=join("; ", problems), aside=aside), evidence,
                        unhealthy=[c.npu_id for c in info.unhealthy()])
    # An elided table only lower-bounds the counts: "8+" says so in any language.
    plus = "+" if info.elided else ""
    mine = [c for c in info.chips if _used(scope, c.npu_id, c.chip_id)]
    n_npu, n_chip = f"{len({c.npu_id for c in mine})}{plus}", f"{len(mine)}{plus}"
    missing = [n for n in (health.not_read() if health is not None else list(info.npu_ids())) if _used(scope, n, None)]
    if missing:
        why = []
        for npu in missing:
            res = by_npu.get(npu)
            # No result: a live run ran out of time before asking; a replay or a paste never had the answer.
            why.append(f"NPU {npu}: " + ("no answer (not asked in time, or not in the input)" if res is None else
                                         res.command.why_not or res.parse_error or "no answer"))
        evidence.append(ev("npu-smi info -t health -i N", "\n".join(why), ok=False))
        if health is None:
            return ctx.unknown(T("the table says Health OK for {npus} NPU(s), {chips} chip(s), but the `-t health` "
                                 "probe did not run: those NPUs were not looked at closely", npus=n_npu, chips=n_chip),
                               evidence, not_read=missing)
        return ctx.unknown(T("the table says Health OK for {npus} NPU(s), {chips} chip(s), but `-t health` was "
                             "not read for NPU {missing}: those NPUs were not looked at closely", npus=n_npu,
                             chips=n_chip, missing=", ".join(map(str, missing))), evidence,
                           not_read=missing)
    return ctx.ok(T("{npus} NPU(s), {chips} chip(s) report Health OK{aside}", npus=n_npu, chips=n_chip, aside=aside),
                  evidence)


@check("NPU102", "npu-smi-error", severity="error", needs=["npu_smi", "container"])
def npu_smi_error(ctx):
    """npu-smi answers without a DCMI error

    What it checks: whether `npu-smi info` printed its device table, or instead a DCMI failure (`dcmi module
    initialize failed. ret is -8005`, `dcmi model initialized failed, because the device is used. ret is -8020`),
    `Invalid card id.`, a missing driver library or a permission error; each is mapped to its cause. Unknown when
    npu-smi is not there at all (the driver and container checks cover that). Inside a container the same errors are
    diagnosed with the mounts by CTR104, so this check then skips.

    Why it matters: when npu-smi cannot initialise DCMI, the runtime usually cannot open the device either; vLLM
    then dies in `torch.npu.set_device` with a much less helpful message (507033, 507899, EE1001).

    How to fix: -8020: another container or process holds the NPU — `docker ps`, `docker inspect <id> | grep
    davinci`, stop it. -8005: reboot after a driver/firmware upgrade (/var/log/ascend_seclog/ascend_install.log), run
    as root or a user in HwHiAiUser (`usermod -aG HwHiAiUser $USER`), check the driver is loaded
    (`lsmod | grep drv_davinci`). Missing libraries: add /usr/local/Ascend/driver/lib64/driver and .../common to
    LD_LIBRARY_PATH.
    """
    smi = ctx.fact("npu_smi")
    if not smi.found:
        return ctx.unknown(smi.reason(), [ev(smi_source(smi), smi.command.why_not or T("not found"))],
                           cause=smi.reason(), see=SMI_DIAGNOSED_BY)
    ctr = ctx.try_fact("container")
    in_container = bool(ctr is not None and ctr.in_container)
    src = smi_source(smi)
    err = smi.info.error if smi.info is not None else None
    if err is None and smi.command.error == "permission_denied":
        if in_container:
            return ctx.skip(T("in a container: CTR104 diagnoses npu-smi failures with the mounts"),
                            [ev(src, smi.command.why_not)])
        return ctx.fail(T("npu-smi could not be run: {why}", why=smi.command.why_not), [ev(src, smi.command.why_not)],
                        remediation=FIX_PERMISSION, fix=[step("group-add")])
    if err is None and smi.command.returncode is not None and smi.command.returncode < 0:
        return ctx.fail(T("npu-smi did not answer: {why}", why=smi.command.why_not), [ev(src, smi.command.why_not)],
                        remediation=T("A crashing npu-smi points at the driver: `dmesg | grep -i -E 'davinci|drv_'`, "
                                      "check the driver and firmware match (DRV103) and reinstall the driver package "
                                      "(Ascend-hdk-*-npu-driver_*.run --full); a SIGKILL may also be the OOM killer."))
    if err is None:
        if smi.usable:
            ver = smi.info.driver_version or smi.info.tool_version or "?"
            return ctx.ok(T("npu-smi {version} lists {chips} chip(s)", version=ver, chips=len(smi.info.chips)),
                          [ev(src, f"Version: {ver}\n{table_excerpt(smi.info)}")])
        return ctx.unknown(T("npu-smi gave no table and no recognisable error: {why}", why=smi.reason()),
                           [ev(src, smi.command.stderr_tail or smi.command.why_not or smi.reason())])
    if in_container:
        return ctx.skip(T("in a container: CTR104 diagnoses this npu-smi error with the device nodes and mounts"),
                        [ev(src, err.message)])
    what, fix = dcmi_diagnosis(err, in_container=False)
    return ctx.fail(T("npu-smi failed: {what}", what=what), [ev(src, err.message + (f"\n{smi.command.stderr_tail}"
                                                                        if smi.command.stderr_tail
                                                                        and err.message not in smi.command.stderr_tail
                                                                        else ""))],
                    remediation=fix, code=err.code)


def _procs_on(npu: int, ps: list) -> str:
    """'NPU 0: PID 576489 python 60703 MB', or for many: 'NPU 0: 4 processes, 2744 MB (PID 1 a, PID 2 b, ...)'."""
    def one(p) -> str:
        return f"PID {p.pid} {p.name or '?'} {p.memory_mb if p.memory_mb is not None else '?'} MB"

    if len(ps) <= 2:
        return f"NPU {npu}: " + ", ".join(one(p) for p in ps)
    total = sum(p.memory_mb or 0 for p in ps)
    return (f"NPU {npu}: {len(ps)} processes, {total} MB (" + ", ".join(f"PID {p.pid} {p.name or '?'}"
                                                                       for p in ps[:3]) + ", ...)")


@check("NPU103", "npu-memory-in-use", severity="error", needs=["npu_smi", "npu_scope"])
def npu_memory_in_use(ctx):
    """No other process holds NPU memory

    What it checks: the process table of `npu-smi info` (PID, name, MB per NPU) and the HBM-Usage of every chip
    (Memory-Usage on cards without HBM, e.g. 310P). Run before `vllm serve`, any listed process belongs to someone
    else. Warns when processes are listed, or when a chip's memory use is above 15 % with no process listed
    (an idle chip uses 5-9 %; processes of other containers are not shown inside a container). Fails when a chip
    that processes hold, or any chip, has more than half of its memory in use: vLLM's default
    `--gpu-memory-utilization 0.9` cannot be met there. Only the NPUs the server will use count (the container's
    /dev/davinciN, then ASCEND_RT_VISIBLE_DEVICES: the `npu_scope` fact): memory another server holds on other NPUs
    is named, as information. If the listed process is the server you are diagnosing, ignore this finding.

    Why it matters: vLLM sizes its KV cache from the free device memory at start-up; memory held by a leftover
    worker, a notebook or another container makes it fail with `No available memory for the cache blocks` or
    an NPU out-of-memory, or silently shrinks the cache and the throughput.

    How to fix: stop the processes named in the evidence (`kill <PID>`; `npu-smi info` shows them, `ps -fp <PID>`
    tells whose they are; for other containers `docker ps` / `docker inspect <id> | grep davinci`), choose free NPUs
    with ASCEND_RT_VISIBLE_DEVICES, or lower `--gpu-memory-utilization` to what is actually free.
    """
    smi = ctx.fact("npu_smi")
    if not smi.usable:
        return no_table(ctx, smi, T("read NPU memory use"))
    info = smi.info
    scope = _scope(ctx)
    evidence = [ev(smi_source(smi), table_excerpt(info))]
    by_npu: dict[int, list] = {}
    theirs: dict[int, list] = {}  # processes on NPUs this server does not use
    for p in info.processes:
        (by_npu if _used(scope, p.npu_id, p.chip_id) else theirs).setdefault(p.npu_id, []).append(p)
    if by_npu:
        evidence.append(ev(f"{smi_source(smi)} (process table)", "\n".join(
            f"NPU {p.npu_id} chip {p.chip_id if p.chip_id is not None else '-'}: PID {p.pid} "
            f"{p.name or '?'} {p.memory_mb if p.memory_mb is not None else '?'} MB"
            + (f" (PID in container {p.container_pid})" if p.container_pid is not None else "")
            for p in info.processes)))
    busy, warm, held = [], [], []
    for c in info.chips:
        used, total = (c.hbm_used_mb, c.hbm_total_mb) if c.hbm_total_mb else (c.memory_used_mb, c.memory_total_mb)
        if not total or used is None:
            continue
        frac = used / total
        label = f"NPU {c.npu_id} chip {c.chip_id}: {used} / {total} MB ({frac:.0%})"
        if not _used(scope, c.npu_id, c.chip_id):
            if frac > IDLE_FRACTION:
                held.append(label)
        elif frac > BUSY_FRACTION:
            busy.append(label)
        elif frac > IDLE_FRACTION and c.npu_id not in by_npu:
            warm.append(label)
    procs = "; ".join(_procs_on(npu, ps) for npu, ps in sorted(by_npu.items()))
    pids = sorted({p.pid for ps in by_npu.values() for p in ps})
    aside = ""
    if held or theirs:
        whose = "; ".join(_procs_on(npu, ps) for npu, ps in sorted(theirs.items())) or T("no process listed")
        aside = T(" — outside this server's NPUs ({scope}): {chips} ({whose})", scope=scope.outside(),
                  chips="; ".join(held) or T("no memory in use"), whose=whose)
    if busy:
        if pids:
            return ctx.fail(T("more than half of the device memory is in use on {n} chip(s) ({chips}) held by "
                              "{pids} process(es): {procs}", n=len(busy), chips="; ".join(busy), pids=len(pids),
                              procs=procs) + aside, evidence, pids=pids)
        return ctx.fail(T("more than half of the device memory is in use on {n} chip(s) ({chips}) with no process "
                          "listed (held by another container or a process this user cannot see)", n=len(busy),
                          chips="; ".join(busy)) + aside, evidence, pids=pids)
    if pids:
        return ctx.warn(T("{n} process(es) already hold NPU memory: {procs}", n=len(pids), procs=procs) + aside,
                        evidence, pids=pids)
    if warm:
        return ctx.warn(T("device memory in use with no process listed: {chips} (another container, or a process "
                          "npu-smi does not show here)", chips="; ".join(warm)) + aside, evidence)
    n = sum(1 for c in info.chips if _used(scope, c.npu_id, c.chip_id))
    if info.has_process_table:
        return ctx.ok(T("no process holds NPU memory; {n} chip(s) near idle memory use", n=n) + aside, evidence)
    return ctx.ok(T("no process holds NPU memory; {n} chip(s) near idle memory use (this output has no process "
                    "table)", n=n) + aside, evidence)


def _dups(ids: list[int]) -> list[int]:
    return sorted({i for i in ids if ids.count(i) > 1})


def _id_list(ids) -> str:
    return ",".join(str(i) for i in ids) or "none"


@check("NPU104", "visible-devices", severity="error", needs=["npu_smi", "server_env", "devices"])
def visible_devices(ctx):
    """ASCEND_RT_VISIBLE_DEVICES / ASCEND_VISIBLE_DEVICES name NPUs that exist

    What it checks: ASCEND_RT_VISIBLE_DEVICES (read by the CANN runtime in the serving process: comma-separated
    logical ids, numbered from 0 over the devices this process can see — in a container that only has
    /dev/davinci4 and /dev/davinci5 they are 0,1) against the chips `npu-smi info` lists; and ASCEND_VISIBLE_DEVICES
    (read by Ascend Docker Runtime / the device plugin: physical ids, ranges `0-3` or `Ascend910-N`) against the
    /dev/davinciN nodes or the NPU/Phy-IDs present. An empty value, a non-number, a duplicate, an id out of range or
    more ids than devices fails with the exact value. An elided npu-smi paste only lower-bounds the count: ids above
    it then warn instead of failing. Passes when neither variable is set (every device is visible).

    Why it matters: the runtime refuses the whole list on a duplicate (EE2002 `... cannot be duplicated`) and an
    out-of-range id ends in `SetDevice ... error code is 107001` / `EE1001 Set visible device failed, invalid
    device=N` (vllm-ascend#168), after the model started loading.

    How to fix: list the ids that exist (`npu-smi info`; inside a container count from 0) and export unique ones,
    e.g. `export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3` for tensor-parallel 4; or unset it to use every NPU. For
    ASCEND_VISIBLE_DEVICES use ids of /dev/davinciN on the host, or let the Kubernetes device plugin set it.
    """
    smi = ctx.fact("npu_smi")
    env = ctx.fact("server_env") or {}
    rt = env.get("ASCEND_RT_VISIBLE_DEVICES")
    phys = env.get("ASCEND_VISIBLE_DEVICES")
    if rt is None and phys is None:
        if smi.usable:
            return ctx.ok(T("no visible-devices variable set: all {n} device(s) are visible", n=len(smi.info.chips)),
                          [ev("env", "ASCEND_RT_VISIBLE_DEVICES, ASCEND_VISIBLE_DEVICES: unset")])
        return ctx.ok(T("no visible-devices variable set"), [ev("env", "ASCEND_RT_VISIBLE_DEVICES, "
                                                                       "ASCEND_VISIBLE_DEVICES: unset")])
    if not smi.usable:
        return no_table(ctx, smi, T("compare the visible-devices variables with the NPUs present"))
    info = smi.info
    evidence = [ev(smi_source(smi), table_excerpt(info))]
    fails, warns = [], []
    if rt is not None:
        evidence.insert(0, ev("env: ASCEND_RT_VISIBLE_DEVICES", repr(rt)))
        count = logical_count(info)
        have = f"present: {count} device(s), logical ids 0..{count - 1}" + (" or more (elided table)"
                                                                           if info.elided else "")
        if not rt.strip():
            fails.append(T("ASCEND_RT_VISIBLE_DEVICES={rt} is set but empty: the runtime sees no NPU ({have})",
                           rt=repr(rt), have=have))
        else:
            ids, bad = parse_device_ids(rt, ranges=False)
            if bad:
                fails.append(T("ASCEND_RT_VISIBLE_DEVICES={rt}: not a device id: {bad} (comma-separated numbers only; "
                               "{have})", rt=repr(rt), bad=join(', ', bad), have=have))
            if _dups(ids):
                fails.append(T("ASCEND_RT_VISIBLE_DEVICES={rt} repeats {id_list} ({have})", rt=repr(rt),
                               id_list=_id_list(_dups(ids)), have=have))
            over = sorted({i for i in ids if i >= count})
            if over:
                line = f"ASCEND_RT_VISIBLE_DEVICES={rt!r} names {_id_list(over)} beyond the devices {have}"
                if len(set(ids)) > count:
                    line += f"; it asks for {len(set(ids))} devices"
                (warns if info.elided else fails).append(line)
    if phys is not None:
        evidence.insert(0, ev("env: ASCEND_VISIBLE_DEVICES", repr(phys)))
        devs = ctx.try_fact("devices")
        if devs is not None and devs.dev_listed and devs.davinci:
            present, where, lower_bound = devs.davinci, "/dev/davinciN", False
            evidence.append(ev("dir: /dev", "davinci" + ", davinci".join(str(i) for i in devs.davinci)))
        else:
            present, where, lower_bound = physical_ids(info), "npu-smi NPU/Phy-IDs", info.elided
        if not phys.strip():
            fails.append(T("ASCEND_VISIBLE_DEVICES={phys} is set but empty: the container runtime mounts no NPU",
                           phys=repr(phys)))
        else:
            ids, bad = parse_device_ids(phys, ranges=True)
            if bad:
                fails.append(T("ASCEND_VISIBLE_DEVICES={phys}: not a device id: {bad}", phys=repr(phys),
                               bad=join(', ', bad)))
            if _dups(ids):
                fails.append(T("ASCEND_VISIBLE_DEVICES={phys} repeats {id_list}", phys=repr(phys),
                               id_list=_id_list(_dups(ids))))
            missing = sorted(set(ids) - set(present))
            if missing:
                line = (f"ASCEND_VISIBLE_DEVICES={phys!r} names {_id_list(missing)} but the {where} present are "
                        f"{_id_list(present)}")
                (warns if lower_bound else fails).append(line)
    if fails:
        return ctx.fail(join("; ", fails + warns), evidence)
    if warns:
        return ctx.warn(T("{problems} — cannot confirm from an elided npu-smi table", problems=join("; ", warns)),
                        evidence)
    shown = ", ".join(f"{k}={v!r}" for k, v in (("ASCEND_RT_VISIBLE_DEVICES", rt), ("ASCEND_VISIBLE_DEVICES", phys))
                      if v is not None)
    return ctx.ok(T("{shown} names devices that exist", shown=shown), evidence)

