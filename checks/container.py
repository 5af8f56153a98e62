"""CTR checks: inside a container, the NPU device nodes and driver files exist only if they were passed in.

Flags are those of vllm-ascend's `docker run` (docs/source/installation.md; ../shared/facts/matrix-facts.md §6.3).
On the bare host every CTR check skips: there the driver installation itself is checked by other families.
"""

from __future__ import annotations

import re

from ascend_doctor.deploy.container import CORE_NODES, DAVINCI_FLAG, DEVICE_FLAGS, HCCN_FLAG, MOUNT_FLAGS
from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev

K8S_HINT = T("in Kubernetes, request the NPUs from the Ascend device plugin (MindCluster) instead of hostPath "
             "mounts: `resources: {{limits: {{huawei.com/Ascend910: 8}}}}` (huawei.com/Ascend310P on 300I Duo); the "
             "plugin and Ascend Docker Runtime then add the device nodes and driver mounts")


def not_in_container(ctx, ctr):
    return ctx.skip(T("not in a container ({signals}): nothing is mounted, the host's own devices and driver are used",
                      signals=', '.join(ctr.signals) or T('no container signals')))


def ctr_evidence(ctr):
    return ev(T("container signals"), T("runtime {runtime}; {signals}", runtime=ctr.runtime or "?",
                                        signals="; ".join(ctr.signals) or T("none")))


def dev_excerpt(devs) -> str:
    names = [f"davinci{i}" for i in devs.davinci] + [n for n, present in devs.nodes.items() if present]
    return T("Ascend nodes in /dev: {names}", names=", ".join(names) or T("none"))


def missing_nodes(devs) -> tuple[list[str], list[str]]:
    """(missing device nodes, their --device flags). Atlas 200I boards (/dev/ascend_manager) use their own set."""
    missing, flags = [], []
    if not devs.davinci:
        missing.append("/dev/davinciN")
        flags.append(DAVINCI_FLAG)
    wanted = ("ascend_manager",) if devs.has("ascend_manager") else CORE_NODES
    for n in wanted:
        if not devs.has(n):
            missing.append(f"/dev/{n}")
            flags.append(DEVICE_FLAGS[n])
    return missing, flags


def broken_mounts(devs, npu_smi_found_elsewhere: bool) -> list[tuple[str, str, str]]:
    """(key, what is wrong, flag) for each driver path the container lacks."""
    out = []
    for key, state, want in (("dcmi", devs.dcmi, "dir"), ("driver_lib64", devs.driver_lib64, "dir"),
                             ("driver_version_info", devs.driver_version_info, "file"),
                             ("ascend_install_info", devs.ascend_install_info, "file")):
        if not state.exists:
            out.append((key, T("{path} is missing", path=state.path), MOUNT_FLAGS[key]))
        elif want == "file" and state.kind == "dir":
            out.append((key, T("{path} is a directory, not a file: the -v source did not exist on the host (docker "
                               "created an empty directory)", path=state.path), MOUNT_FLAGS[key]))
        elif want == "dir" and state.kind == "dir" and state.entries == 0:
            out.append((key, T("{path} is an empty directory: the -v source is empty or did not exist on the host",
                               path=state.path), MOUNT_FLAGS[key]))
    if not devs.npu_smi_present and not npu_smi_found_elsewhere:
        as_dir = [p.path for p in devs.npu_smi if p.exists and p.kind == "dir"]
        what = (T("{as_dir} is a directory, not the npu-smi program: the -v source did not exist on the host",
                  as_dir=as_dir[0])
                if as_dir else T("npu-smi is missing (/usr/local/bin/npu-smi, /usr/local/sbin/npu-smi)"))
        out.append(("npu_smi", what, MOUNT_FLAGS["npu_smi"]))
    return out


@check("CTR101", "container-device-nodes", severity="error", needs=["container", "devices"])
def container_device_nodes(ctx):
    """The container has the NPU device nodes

    What it checks: in a container, /dev holds at least one /dev/davinciN and /dev/davinci_manager, /dev/devmm_svm,
    /dev/hisi_hdc (on Atlas 200I boards, which have /dev/ascend_manager, davinciN and /dev/ascend_manager). Skips on
    the bare host.

    Why it matters: without the nodes the container sees no NPU at all: npu-smi fails with DCMI -8005, torch_npu
    reports no device and vLLM falls back to CPU or dies in `torch.npu.set_device`. davinci_manager, devmm_svm
    (shared virtual memory) and hisi_hdc (host-device channel) are needed in addition to the per-card node.

    How to fix: add the missing flags to `docker run`: `--device /dev/davinci0 --device /dev/davinci_manager
    --device /dev/devmm_svm --device /dev/hisi_hdc` (one --device per NPU: /dev/davinci0 ... /dev/davinci7 on an
    A2, ... 15 on an A3); in Kubernetes request `huawei.com/Ascend910: N` from the Ascend device plugin instead.
    """
    ctr = ctx.fact("container")
    if not ctr.in_container:
        return not_in_container(ctx, ctr)
    devs = ctx.fact("devices")
    if not devs.dev_listed:
        return ctx.unknown(T("/dev could not be listed: {dev_error}", dev_error=devs.dev_error), [ctr_evidence(ctr)])
    evidence = [ev("dir: /dev", dev_excerpt(devs)), ctr_evidence(ctr)]
    missing, flags = missing_nodes(devs)
    if missing:
        fix = T("add to `docker run`: {flags}", flags=' '.join(flags))
        if ctr.kubernetes:
            fix = K8S_HINT + "; with plain docker: " + " ".join(flags)
        else:
            fix += T("; {hint}", hint=K8S_HINT)
        return ctx.fail(T("device node(s) missing in the container: {missing}", missing=', '.join(missing)), evidence,
                        remediation=fix, missing=missing)
    nodes = [n for n in (CORE_NODES + ("ascend_manager",)) if devs.has(n)]
    return ctx.ok(T("{n_davinci} NPU node(s) (davinci{davinci}) and {nodes} present", n_davinci=len(devs.davinci),
                    davinci=','.join((str(i) for i in devs.davinci)), nodes=', '.join(nodes)), evidence)


@check("CTR102", "container-driver-mounts", severity="error", needs=["container", "devices", "npu_smi"])
def container_driver_mounts(ctx):
    """The host driver files are mounted into the container

    What it checks: in a container, /usr/local/dcmi, npu-smi (/usr/local/bin or /usr/local/sbin, or on PATH),
    /usr/local/Ascend/driver/lib64/, /usr/local/Ascend/driver/version.info and /etc/ascend_install.info exist, with
    the right kind: `docker run -v SRC:DST` whose SRC is missing on the host creates an empty directory at DST, so a
    directory where a file belongs, or an empty lib64, fails too. Skips on the bare host.

    Why it matters: the NPU driver lives on the host; the container's CANN and torch_npu load libascend_hal.so and
    friends from driver/lib64, npu-smi needs /usr/local/dcmi, and CANN/vllm-ascend read the driver version from
    version.info and the install path from /etc/ascend_install.info. Without them: `libascend_hal.so: cannot open
    shared object file`, DCMI -8005, or a version check that cannot tell the driver.

    How to fix: add the `-v` flags named in the finding, as in vllm-ascend's docker run:
    `-v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi
    -v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/
    -v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info
    -v /etc/ascend_install.info:/etc/ascend_install.info` (check each source exists on the host first), or run with
    Ascend Docker Runtime / the Kubernetes device plugin, which mount them.
    """
    ctr = ctx.fact("container")
    if not ctr.in_container:
        return not_in_container(ctx, ctr)
    devs = ctx.fact("devices")
    smi = ctx.try_fact("npu_smi")
    elsewhere = bool(smi is not None and smi.found and smi.tool == "npu-smi")
    states = [devs.dcmi, *devs.npu_smi, devs.driver_lib64, devs.driver_version_info, devs.ascend_install_info]
    evidence = [ev(T("driver paths"), join("\n", [s.describe() for s in states])
                   + ("\nnpu-smi on PATH: answered `npu-smi info`" if elsewhere else "")), ctr_evidence(ctr)]
    broken = broken_mounts(devs, elsewhere)
    if broken:
        fix = T("add to `docker run`: {broken} (each source must exist on the host: `ls -ld` it there)",
                broken=' '.join((flag for _, _, flag in broken)))
        if ctr.kubernetes:
            fix += T("; {hint}", hint=K8S_HINT)
        return ctx.fail(T("driver files not mounted: {broken}", broken=join("; ", [w for _, w, _ in broken])), evidence,
                        remediation=fix, missing=[k for k, _, _ in broken])
    return ctx.ok(T("driver mounts present: /usr/local/dcmi, npu-smi, driver/lib64 ({entries} entries), "
                    "driver/version.info, /etc/ascend_install.info",
                    entries=devs.driver_lib64.entries), evidence)


@check("CTR103", "container-hccn-tool", severity="warning", needs=["container", "devices", "npu_scope"])
def container_hccn_tool(ctx):
    """hccn_tool is mounted when the container will use more than one NPU

    What it checks: in a container, /usr/local/Ascend/driver/tools/hccn_tool exists — but only asks for it when
    HCCL will run: more than one NPU is visible (the /dev/davinciN nodes, or ASCEND_RT_VISIBLE_DEVICES / the chips
    npu-smi lists) or a multi-node variable is set (HCCL_IF_IP, HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME,
    TP_SOCKET_IFNAME, RAY_ADDRESS). With a single NPU and none of those, it skips: nothing to verify. Skips on the
    bare host. A warning, not an error: vLLM runs without it; what is lost is the ability to check the RoCE links
    (the HCCL checks) from inside the container.

    Why it matters: vllm-ascend's multi-node checklist (`hccn_tool -i N -link -g` UP, `-net_health -g` success) is
    the only way to see a down or misconfigured NPU network port before HCCL times out (EI0006) at start-up.

    How to fix: add `-v /usr/local/Ascend/driver/tools/hccn_tool:/usr/local/Ascend/driver/tools/hccn_tool` to
    `docker run` (vllm-ascend's all-cards image command does), or run the HCCL checks on the host.
    """
    ctr = ctx.fact("container")
    if not ctr.in_container:
        return not_in_container(ctx, ctr)
    devs = ctx.fact("devices")
    state = devs.hccn_tool
    evidence = [ev("path: /usr/local/Ascend/driver/tools/hccn_tool", state.describe())]
    if state.exists and state.kind != "dir":
        return ctx.ok(T("hccn_tool is mounted"), evidence)
    scope = ctx.fact("npu_scope")
    counts = [n for n in (len(devs.davinci) if devs.dev_listed else None, scope.count) if n is not None]
    hints = [name for name, _ in scope.hints]
    evidence.append(ev("dir: /dev", dev_excerpt(devs)))
    if hints:
        evidence.append(ev("env", "\n".join(f"{name}={value}" for name, value in scope.hints)))
    why = []
    if counts and max(counts) > 1:
        why.append(f"{max(counts)} NPUs visible")
    if hints:
        why.append("multi-node variables set: " + ", ".join(hints))
    what = T("hccn_tool is a directory (its -v source was missing on the host)") if state.exists else \
        T("hccn_tool is not mounted")
    if why:
        return ctx.warn(T("{what} although HCCL will run ({why}): the NPU network ports cannot be checked from this "
                          "container", what=what, why='; '.join(why)),
                        evidence, remediation=T("add `{hccn_flag}` to docker run.",
                                                                               hccn_flag=HCCN_FLAG))
    if not counts:
        return ctx.unknown(T("{what}; cannot tell how many NPUs this container will use", what=what), evidence)
    if max(counts) == 0:
        return ctx.skip(T("{what}; no NPU is visible in this container at all (CTR101 reports the device nodes)",
                          what=what),
                        evidence)
    return ctx.skip(T("{what}; not needed with a single NPU and no multi-node variables", what=what), evidence)


@check("CTR104", "container-npu-smi-error", severity="error", needs=["container", "npu_smi", "devices"])
def container_npu_smi_error(ctx):
    """npu-smi works inside the container (DCMI errors mapped to mounts and sharing)

    What it checks: in a container, that `npu-smi info` prints its table. A DCMI error is tied to the container's
    cause: -8020 (`because the device is used`) = another container or process holds the NPU; -8005 = a device node or
    driver mount is missing (named, with its flag) or, when all are present, the user is not root/HwHiAiUser or
    another container holds the device; a missing shared library = driver/lib64 not mounted. Skips on the bare host
    (NPU102 covers it) and when npu-smi is not in the container (CTR102 reports the mount).

    Why it matters: npu-smi fails in a container for the same reasons the runtime will: vLLM would stop later in
    `torch.npu.set_device` with 507033/507899 and no hint that the container was started wrongly.

    How to fix: -8020: on the host `docker ps` and `docker inspect <id> | grep davinci` to find the container that
    holds the NPU, stop it, or give each container its own /dev/davinciN (in Kubernetes let the device plugin
    allocate `huawei.com/Ascend910`). -8005: add the missing `--device`/`-v` flags of vllm-ascend's docker run, run as
    root or add the container user to the host's HwHiAiUser group id (`--group-add <gid of HwHiAiUser>`), reboot the
    host after a driver upgrade.
    """
    ctr = ctx.fact("container")
    if not ctr.in_container:
        return ctx.skip(T("not in a container: NPU102 reports npu-smi errors on the host"))
    smi = ctx.fact("npu_smi")
    if not smi.found:
        return ctx.skip(T("npu-smi is not in the container: CTR102 reports the missing mount"),
                        [ev(f"cmd: {smi.tool} info", smi.command.why_not or T("not found"))])
    src = f"cmd: {smi.tool} info"
    err = smi.info.error if smi.info is not None else None
    evidence = [ctr_evidence(ctr)]
    if err is None and smi.command.error == "permission_denied":
        return ctx.fail(T("npu-smi cannot be run in the container: {why_not}", why_not=smi.command.why_not),
                        [ev(src, smi.command.why_not), *evidence],
                        remediation=T("run the container as root (`--user root`) or add the HwHiAiUser group "
                                      "(`--group-add $(getent group HwHiAiUser | cut -d: -f3)` on the host)."))
    if err is None:
        if smi.usable:
            return ctx.ok(T("npu-smi works in the container ({n_chips} chip(s))", n_chips=len(smi.info.chips)),
                          [ev(src, f"Version: {smi.info.driver_version or '?'}, {len(smi.info.chips)} chip(s)"),
                           *evidence])
        return ctx.unknown(T("npu-smi gave no table and no recognisable error: {smi}", smi=smi.reason()), evidence)
    evidence.insert(0, ev(src, err.message))
    devs = ctx.try_fact("devices")
    if devs is not None:
        evidence.append(ev("dir: /dev", dev_excerpt(devs)))
    code = err.code
    if code == -8020 or "device is used" in err.message:
        return ctx.fail(T("npu-smi: DCMI -8020, the NPU is held by another container or process on this host"),
                        evidence, code=code,
                        remediation=T("on the host: `docker ps`, then `docker inspect <id> | grep davinci` for each "
                                      "container to find the one that holds the same /dev/davinciN; stop it (`docker "
                                      "stop <id>`) or give each container its own NPUs; {k8s_hint}. If the other "
                                      "containers only mount the device without using it, MindCluster's FAQ runs the "
                                      "job with --privileged.", k8s_hint=K8S_HINT))
    if "shared libraries" in err.message:
        return ctx.fail(T("npu-smi cannot load the driver libraries: driver/lib64 is not mounted"), evidence,
                        code=code, remediation=T("add `{mount_flags}` to docker run.",
                                                 mount_flags=MOUNT_FLAGS['driver_lib64']))
    if code == -8005 or "initiali" in err.message:
        if devs is None or not devs.dev_listed:
            return ctx.fail(T("npu-smi: DCMI -8005 in a container (device nodes or driver mounts missing, or the "
                              "device held elsewhere; /dev could not be inspected)"), evidence, code=code)
        missing, flags = missing_nodes(devs)
        broken = broken_mounts(devs, npu_smi_found_elsewhere=True)
        if missing or broken:
            all_flags = flags + [f for _, _, f in broken]
            return ctx.fail(T("npu-smi: DCMI -8005 because the container lacks {value}",
                              value=join(", ", missing + [w for _, w, _ in broken])), evidence, code=code,
                            remediation=T("add to `docker run`: {all_flags}", all_flags=' '.join(all_flags)))
        return ctx.fail(T("npu-smi: DCMI -8005 although the device nodes and driver mounts are present: the container "
                          "user is not root/HwHiAiUser, another container holds the NPU, or the host driver was "
                          "upgraded without a reboot"), evidence, code=code,
                        remediation=T("run as root or `--group-add <gid of HwHiAiUser on the host>`; check `docker "
                                      "inspect <id> | grep davinci` for other containers holding the NPU; on the "
                                      "host check /var/log/ascend_seclog/ascend_install.log and reboot after a "
                                      "driver/firmware upgrade."))
    if re.search(r"permission denied", err.message, re.I):
        return ctx.fail(T("npu-smi: {message}", message=err.message), evidence, code=code,
                        remediation=T("run as root or add the HwHiAiUser group (`--group-add <gid>`)."))
    return ctx.fail(T("npu-smi failed in the container: {message}", message=err.message), evidence, code=code)


@check("CTR105", "container-hccl-topology", severity="error", needs=["container", "devices", "npu_scope", "npu_smi"])
def container_hccl_topology(ctx):
    """On Atlas 350 (950), HCCL's topology files and root info are inside the container

    What it checks: in a container on 950-family NPUs where HCCL will run (more than one NPU, or a multi-node
    variable), that `/usr/local/Ascend/driver/topo/950/` is there with files and `/etc/hccl_rootinfo.json` exists.

    Why it matters: HCCL on the 950 reads its topology from the driver directory: with only `driver/lib64` mounted
    the communicator fails at start with `Config_Error_Ranktable(E10014): Value …/driver/topo/950/atlas_350_3.json
    for ranktable variable topo_file path is invalid` / EI0014 (vllm-ascend#11052, vllm-project/recipes PR #907).

    How to fix: mount the whole driver directory and the root info file (what `ascend-doctor plan` writes for 950):
    `-v /usr/local/Ascend/driver:/usr/local/Ascend/driver -v /etc/hccl_rootinfo.json:/etc/hccl_rootinfo.json`.
    """
    from ascend_doctor.deploy.container import WHOLE_DRIVER_FLAGS
    from ascend_doctor.knowledge.hardware import families

    ctr = ctx.fact("container")
    if not ctr.in_container:
        return not_in_container(ctx, ctr)
    scope = ctx.fact("npu_scope")
    if scope.single:
        return ctx.skip(T("HCCL is not used: {scope}", scope=scope.describe()))
    smi = ctx.fact("npu_smi")
    fams = families(smi)
    if fams is None:
        why = smi.reason() or "npu-smi gave no chip table"
        return ctx.unknown(T("cannot tell the hardware family: {why}", why=why), cause=why,
                           see=["DRV101", "CTR102", "CTR104", "NPU102"])
    if "A5" not in fams:
        return ctx.skip(T("only the 950 family reads HCCL topology files from the driver directory ({families})",
                          families=", ".join(sorted(fams)) or "-"))
    devs = ctx.fact("devices")
    states = [s for s in (devs.driver_topo_950, devs.hccl_rootinfo) if s is not None]
    evidence = [ev(T("paths"), join("\n", [s.describe() for s in states])),
                ev(T("npu-smi chips"), ", ".join(fams["A5"]))]
    if len(states) < 2 or any(not s.recorded for s in states):
        return ctx.unknown(T("the snapshot did not record the driver's topo directory or /etc/hccl_rootinfo.json"),
                           evidence)
    topo, rootinfo = states
    missing = [s.path for s in (topo, rootinfo) if not s.exists or (s is topo and not s.entries)]
    if missing:
        return ctx.fail(T("HCCL on the 950 needs {missing} in the container: the communicator fails with "
                          "`Config_Error_Ranktable(E10014): … topo_file path is invalid`", missing=", ".join(missing)),
                        evidence, remediation=T("Mount the whole driver directory and the root info: `{flags}`.",
                                                flags=" ".join(WHOLE_DRIVER_FLAGS)))
    return ctx.ok(T("the 950 topology files ({n}) and /etc/hccl_rootinfo.json are in the container", n=topo.entries),
                  evidence)
