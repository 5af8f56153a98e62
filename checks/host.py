"""HOST checks: the machine under the stack — interpreter, SELinux, limits, shared memory, RAM, disk, clock, PCIe.

Thresholds come from the `host-policy` table (ctx.policy), never from code.
"""

from __future__ import annotations

import math

from ascend_doctor.i18n import T, join
from ascend_doctor.plugin import check, ev, step
from ascend_doctor.text.units import GIB, speed_gts
from ascend_doctor.text.units import human_bytes as _gib


@check("HOST101", "python-interpreter", severity="error", needs=["python"])
def python_interpreter(ctx):
    """The serving Python is a 64-bit CPython with a standard ABI

    What it checks: the interpreter given with --python (default: the one running the doctor) — implementation,
    version, SOABI/ABI flags, pointer size, machine, glibc — read by running a stdlib-only script in it.

    Why it matters: torch_npu and vllm-ascend ship only CPython wheels for 64-bit aarch64/x86_64 with the default
    ABI. A 32-bit, PyPy, debug (`d`) or free-threaded (`t`) interpreter cannot load them, and pip silently falls back
    to building from source, which fails far from the cause.

    How to fix: create the serving environment from a 64-bit CPython 3.10/3.11 (the vllm-ascend images use
    3.11): e.g. `python3.11 -m venv /opt/vllm && /opt/vllm/bin/pip install vllm-ascend`, then point the doctor at it
    with `--python /opt/vllm/bin/python`.
    """
    py = ctx.fact("python")
    desc = (f"{py.implementation} {py.version} ({py.machine}, {py.pointer_bits}-bit, SOABI {py.soabi}, "
            f"abiflags {py.abiflags!r}, {py.libc or 'libc ?'} {py.libc_version})")
    evidence = [ev(f"python: {py.executable}", desc)]
    problems = []
    if py.implementation != "CPython":
        problems.append(T("{implementation} is not CPython", implementation=py.implementation))
    if py.pointer_bits is not None and py.pointer_bits < ctx.policy.python_bits.minimum:
        problems.append(T("{pointer_bits}-bit interpreter", pointer_bits=py.pointer_bits))
    if "d" in (py.abiflags or ""):
        problems.append(T("debug build (abiflags 'd')"))
    if "t" in (py.abiflags or ""):
        problems.append(T("free-threaded build (abiflags 't'): no torch_npu wheels"))
    if py.machine and py.machine not in ("aarch64", "x86_64", "arm64", "AMD64"):
        problems.append(T("machine {machine} has no torch_npu wheels", machine=py.machine))
    if problems:
        return ctx.fail(T("Interpreter cannot load torch_npu/vllm-ascend wheels: {problems}",
                          problems=join("; ", problems)), evidence)
    return ctx.ok(desc, evidence)


@check("HOST102", "selinux-mode", severity="error", needs=["selinux", "container"])
def selinux_mode(ctx):
    """SELinux is permissive or disabled

    What it checks: /sys/fs/selinux/enforce (the kernel's own state), `getenforce` where present, and SELINUX= in
    /etc/selinux/config. When the sources disagree (the kernel says enforcing, getenforce says something else or
    nothing readable) the worse one counts and the finding says so. Inside a container SELinux is the host's: only
    a visible /sys/fs/selinux speaks for it, the image's /etc/selinux/config does not.

    Why it matters: with SELinux enforcing, the NPU device nodes (/dev/davinci*, /dev/devmm_svm, /dev/hisi_hdc)
    and the driver's shared memory are denied to the serving process or its container; the symptom is
    `dcmi module initialize failed` or a device-open error long after start-up.

    How to fix: `setenforce 0` now, and `SELINUX=permissive` (or `disabled`) in /etc/selinux/config so it survives
    a reboot — or write a policy module that allows the Ascend devices if enforcing is mandatory (then waive this
    check in ascend-doctor.toml with the reason).
    """
    s = ctx.fact("selinux")
    ctr = ctx.try_fact("container")
    in_container = bool(ctr is not None and ctr.in_container)
    fix = [] if in_container else [step("selinux-permissive")]  # in a container the mode is the host's
    evidence = []
    if s.enforce_file is not None:
        evidence.append(ev("file: /sys/fs/selinux/enforce", s.enforce_file))
    elif s.enforce_error:
        evidence.append(ev("file: /sys/fs/selinux/enforce", f"unreadable: {s.enforce_error}"))
    if s.getenforce is not None:
        evidence.append(ev("cmd: getenforce", s.getenforce + ("" if s.getenforce_mode else "  (not a mode)")))
    elif s.getenforce_error:
        evidence.append(ev("cmd: getenforce", s.getenforce_error))
    if s.config_mode and not in_container:
        evidence.append(ev("file: /etc/selinux/config", f"SELINUX={s.config_mode}"))
    kernel, tool = s.kernel_mode, s.getenforce_mode
    if in_container and kernel is None and tool == "disabled":
        # Without a visible selinuxfs getenforce prints Disabled whatever the host enforces: it says nothing here.
        tool = None
    if kernel and tool and kernel != tool and "enforcing" in (kernel, tool):
        return ctx.fail(T("SELinux sources disagree: /sys/fs/selinux/enforce says {kernel}, getenforce says {tool}; "
                          "judged enforcing until both agree", kernel=kernel, tool=tool), evidence, fix=fix)
    if kernel == "enforcing":
        if s.getenforce is not None and tool is None:
            return ctx.fail(T("SELinux is enforcing (/sys/fs/selinux/enforce = 1; getenforce printed {printed}, "
                              "which is not a mode)", printed=repr(s.getenforce)), evidence, fix=fix)
        return ctx.fail(T("SELinux is enforcing"), evidence, fix=fix)
    if kernel is None and tool == "enforcing":
        return ctx.fail(T("SELinux is enforcing (getenforce)"), evidence, fix=fix)
    mode = kernel or tool
    if mode is None:
        if in_container:
            return ctx.unknown(T("inside a container: SELinux is the host's, and /sys/fs/selinux is not visible "
                                 "here — run `ascend-doctor check` on the host"), evidence + [ctr_signals(ctr)],
                               cause=T("inside a container: host facts are not visible"))
        if s.enforce_error or s.getenforce_error or s.getenforce is not None or s.kernel_has_selinux:
            why = s.enforce_error or s.getenforce_error or (f"getenforce printed {s.getenforce!r}"
                                                            if s.getenforce is not None else "no readable source")
            return ctx.unknown(T("SELinux state could not be determined: {why}", why=why), evidence)
        if s.config_mode == "enforcing":
            return ctx.unknown(T("the kernel shows no SELinux, but /etc/selinux/config says enforcing"), evidence)
        evidence.append(ev("file: /sys/fs/selinux", "No such file or directory"))
        return ctx.ok(T("SELinux is disabled (the kernel has no SELinux)"), evidence)
    if kernel and tool and kernel != tool:
        return ctx.warn(T("SELinux sources disagree: /sys/fs/selinux/enforce says {kernel}, getenforce says {tool}",
                          kernel=kernel, tool=tool),
                        evidence, remediation=T("Check `getenforce` and `cat /sys/fs/selinux/enforce` on the host; "
                                                "one of them is stale or from another namespace."))
    if s.config_mode == "enforcing" and not in_container:
        return ctx.warn(T("SELinux is {mode} now but /etc/selinux/config says enforcing: it returns at the next "
                          "boot", mode=mode),
                        evidence, remediation=T("Set SELINUX=permissive in /etc/selinux/config."))
    return ctx.ok(T("SELinux is {mode}", mode=mode), evidence)


def ctr_signals(ctr):
    return ev(T("container signals"), T("runtime {runtime}; {signals}", runtime=ctr.runtime or "?",
                                        signals="; ".join(ctr.signals) or T("none")))


@check("HOST103", "open-files-limit", severity="error", needs=["limits", "container"])
def open_files_limit(ctx):
    """Open-file limit (ulimit -n) is high enough for vLLM

    What it checks: the soft and hard `Max open files` of this process (/proc/self/limits) against the host policy
    (the `host-policy` table, seed checklist: >= 65535). Run the doctor the way the server runs (same unit,
    container or shell) so it sees the same limits.

    Why it matters: vLLM holds a descriptor per client socket, per ZMQ queue and per shared-memory segment of every
    worker; at 1024 a loaded multi-NPU server fails with `OSError: [Errno 24] Too many open files`.

    How to fix: `ulimit -n 65535` before `vllm serve`; `LimitNOFILE=65535` in the systemd unit; `docker run
    --ulimit nofile=65535:65535`; in Kubernetes, raise the container runtime's default (containerd `LimitNOFILE`).
    """
    lim = ctx.fact("limits")
    pol = ctx.policy
    evidence = [ev("file: /proc/self/limits", lim.raw_line)]
    soft_ok = lim.nofile_soft is None or lim.nofile_soft >= pol.nofile_soft.minimum
    hard_ok = lim.nofile_hard is None or lim.nofile_hard >= pol.nofile_hard.minimum
    soft, hard = lim.nofile_soft or "unlimited", lim.nofile_hard or "unlimited"
    if not hard_ok:
        minimum = int(pol.nofile_hard.minimum)
        ctr = ctx.try_fact("container")
        if ctr is not None and ctr.in_container:  # #40 item 16: root inside cannot raise it either (EPERM)
            return ctx.fail(T("open-file limit soft {soft}, hard {hard}: hard limit below {minimum}, set by the "
                              "container runtime (not even root inside the container can raise it)", soft=soft,
                              hard=hard, minimum=minimum), evidence + [ctr_signals(ctr)],
                            remediation=T("Start the container with `docker run --ulimit nofile={minimum}:{minimum}` "
                                          "(Kubernetes: raise LimitNOFILE of the container runtime's service, e.g. "
                                          "containerd).", minimum=minimum))
        return ctx.fail(T("open-file limit soft {soft}, hard {hard}: hard limit below {minimum} (only root raises a "
                          "hard limit)", soft=soft, hard=hard, minimum=minimum), evidence,
                        remediation=T("As root: `LimitNOFILE={minimum}` in the server's systemd unit, or `* hard "
                                      "nofile {minimum}` in /etc/security/limits.conf and a new login; then `ulimit "
                                      "-n {minimum}` before `vllm serve`.", minimum=minimum))
    if not soft_ok:
        return ctx.fail(T("open-file limit soft {soft}, hard {hard}: soft limit below {minimum}", soft=soft,
                          hard=hard, minimum=int(pol.nofile_soft.minimum)), evidence,
                        remediation=T("`ulimit -n {minimum}` in the serving shell or unit (the hard limit {hard} "
                                      "allows it).", minimum=int(pol.nofile_soft.minimum), hard=hard))
    return ctx.ok(T("open-file limit soft {soft}, hard {hard}", soft=soft, hard=hard), evidence)


@check("HOST104", "dev-shm-size", severity="error", needs=["shm", "container"])
def dev_shm_size(ctx):
    """/dev/shm is large enough for multi-NPU workers

    What it checks: the size of the /dev/shm tmpfs against the host policy (vllm-ascend documents
    `docker run --shm-size=1g` as the minimum; large TP/PP deployments use more).

    Why it matters: tensor-parallel workers exchange tensors and the multiprocessing queues through /dev/shm.
    Docker's default of 64 MiB makes workers die with `Bus error` or hang at start-up.

    How to fix: `docker run --shm-size=16g …` (or at least `--shm-size=1g`); in Kubernetes mount an
    `emptyDir: {medium: Memory, sizeLimit: 16Gi}` at /dev/shm; on a host, `mount -o remount,size=16G /dev/shm`.
    """
    shm = ctx.fact("shm")
    pol = ctx.policy.shm_gib
    if not shm.mounted:
        return ctx.fail(T("/dev/shm does not exist"), [ev("path: /dev/shm", T("not found"))])
    evidence = [ev("statvfs: /dev/shm", f"size {_gib(shm.total_bytes)}, free {_gib(shm.free_bytes)}"
                                        + (f"\n{shm.mount_line}" if shm.mount_line else ""))]
    if shm.total_bytes < pol.minimum * GIB:
        ctr = ctx.try_fact("container")
        # On a host a remount resizes it; a container's /dev/shm is set by `docker run --shm-size` (advice only).
        fix = [] if ctr is None or ctr.in_container else [
            step("shm-size", size_gib=int(math.ceil(max(pol.recommended or 0, pol.minimum))))]
        return ctx.fail(T("/dev/shm is {size}, below the {minimum} GiB minimum", size=_gib(shm.total_bytes),
                          minimum=f"{pol.minimum:g}"), evidence, fix=fix)
    if pol.recommended and shm.total_bytes < pol.recommended * GIB:
        return ctx.warn(T("/dev/shm is {size}: enough to start, below the recommended {recommended} GiB for large "
                          "tensor-parallel deployments", size=_gib(shm.total_bytes),
                          recommended=f"{pol.recommended:g}"), evidence)
    return ctx.ok(T("/dev/shm is {size}", size=_gib(shm.total_bytes)), evidence)


@check("HOST105", "host-memory", severity="warning", needs=["memory", "container"])
def host_memory(ctx):
    """Enough host memory is available to load the model

    What it checks: MemTotal and MemAvailable in /proc/meminfo against the host policy — and, since /proc/meminfo
    shows the host's memory inside a container, the container's cgroup memory limit (cgroup v2 memory.max or v1
    memory.limit_in_bytes) and usage: the smaller of the two is what the server can use.

    Why it matters: weights are read through host memory (safetensors mmap, page cache) before they reach HBM;
    without headroom the load swaps for an hour or the kernel OOM-kills the server during start-up.

    How to fix: stop what else runs on the host, give the container a larger memory limit (`docker run --memory`,
    the pod's `resources.limits.memory`), or load from faster local disk; check `free -g` and the memory limit of
    the pod/container.
    """
    m = ctx.fact("memory")
    ctr = ctx.try_fact("container")
    in_container = bool(ctr is not None and ctr.in_container)
    pol = ctx.policy.mem_available_gib
    evidence = [ev("file: /proc/meminfo", f"MemTotal: {m.total_kib} kB\nMemAvailable: {m.available_kib} kB")]
    if m.available_kib is None:
        return ctx.unknown(T("MemAvailable not reported by this kernel"), evidence)
    total, avail, limited = m.usable()
    scope = ""
    if m.cgroup_limit_bytes is not None:
        used = m.cgroup_usage_bytes or 0
        evidence.append(ev(f"file: {m.cgroup_file}", f"limit {_gib(m.cgroup_limit_bytes)}, in use {_gib(used)}"))
        if limited:
            scope = " (the container's memory limit)"
    elif in_container and m.cgroup_error:
        scope = (" — judged by the host's /proc/meminfo: the container's memory limit could not be read "
                 f"({m.cgroup_error})")
    msg = T("{gib} available of {gib2}{scope}", gib=_gib(avail), gib2=_gib(total), scope=scope)
    if avail < pol.minimum * GIB:
        return ctx.fail(T("only {msg} (policy minimum {minimum} GiB)", msg=msg, minimum=format(pol.minimum, "g")),
                        evidence)
    if pol.recommended and avail < pol.recommended * GIB:
        return ctx.warn(T("{msg}: below the recommended {recommended} GiB for large models", msg=msg,
                          recommended=format(pol.recommended, "g")), evidence)
    return ctx.ok(msg, evidence)


@check("HOST106", "disk-space", severity="error", needs=["disk"])
def disk_space(ctx):
    """Free disk space where the model and caches live

    What it checks: free space on the file systems of --model-dir, the Hugging Face cache (HF_HUB_CACHE / HF_HOME)
    and the ModelScope cache (MODELSCOPE_CACHE), against the host policy; a directory not yet created is measured at
    its nearest existing parent.

    Why it matters: a download or a compile cache that fills the disk half-way leaves a truncated safetensors file
    and a server that fails to load with a misleading deserialisation error.

    How to fix: free space (`du -sh ~/.cache/huggingface/hub/*`), or point the caches at a larger volume:
    `export HF_HOME=/data/hf MODELSCOPE_CACHE=/data/modelscope`.
    """
    d = ctx.fact("disk")
    pol = ctx.policy.disk_free_gib
    evidence, low, tight = [], [], []
    for p in d.places:
        if p.free_bytes is None:
            evidence.append(ev(f"statvfs: {p.measured_path or p.path}", f"{p.role}: {p.error}"))
            continue
        where = p.path if p.measured_path == p.path else f"{p.path} (measured at {p.measured_path})"
        evidence.append(ev(f"statvfs: {p.measured_path}", f"{p.role} {where}: {_gib(p.free_bytes)} free of "
                                                          f"{_gib(p.total_bytes)}"))
        if p.free_bytes < pol.minimum * GIB:
            low.append(T("{role} {gib} free", role=p.role, gib=_gib(p.free_bytes)))
        elif pol.recommended and p.free_bytes < pol.recommended * GIB:
            tight.append(T("{role} {gib} free", role=p.role, gib=_gib(p.free_bytes)))
    if not any(p.free_bytes is not None for p in d.places):
        return ctx.unknown(T("could not measure free space anywhere"), evidence)
    if low:
        return ctx.fail(T("below {minimum} GiB: {low}", minimum=format(pol.minimum, "g"), low=join('; ', low)),
                        evidence)
    if tight:
        return ctx.warn(T("below the recommended {recommended} GiB: {tight}", recommended=format(pol.recommended, "g"),
                          tight=join('; ', tight)), evidence)
    return ctx.ok(T("enough free space for model and caches"), evidence)


@check("HOST107", "time-sync", severity="warning", needs=["timesync", "container"])
def time_sync(ctx):
    """The system clock is synchronised

    What it checks: `timedatectl show` (NTPSynchronized), then `chronyc tracking` (Leap status), then `ntpstat`, then
    systemd-timesyncd's flag file. Unknown when none of them exists (common inside containers: check the host).

    Why it matters: multi-node HCCL and Ray rely on timeouts and heartbeats; a drifting clock makes logs from
    different nodes impossible to line up and can trip TLS and token expiry for model downloads.

    How to fix: enable a time service: `timedatectl set-ntp true` (systemd-timesyncd) or
    `systemctl enable --now chronyd` with your site's NTP servers in /etc/chrony.conf.
    """
    t = ctx.fact("timesync")
    ctr = ctx.try_fact("container")
    evidence = [ev(T("time sync sources"), join("\n", t.seen))]
    if t.synchronized is None:
        if ctr is not None and ctr.in_container:
            return ctx.unknown(T("inside a container: the clock is the host's and no time-sync service answers "
                                 "here — run `ascend-doctor check` on the host"), evidence + [ctr_signals(ctr)],
                               cause=T("inside a container: host facts are not visible"))
        return ctx.unknown(T("no time-sync service could be asked (timedatectl, chronyc, ntpstat absent)"),
                           evidence)
    if not t.synchronized:
        # The service of the source that answered (on a chrony host, never timedatectl's timesyncd).
        via = {"systemd (timedatectl)": "timedatectl", "chrony": "chronyd", "ntpd (ntpstat)": "ntpd"}.get(t.via)
        return ctx.fail(T("clock is not synchronised ({via})", via=t.via), evidence,
                        fix=[step("time-sync", via=via)] if via else [])
    return ctx.ok(T("clock synchronised ({via})", via=t.via), evidence)


@check("HOST108", "gcc-version", severity="info", needs=["gcc"])
def gcc_version(ctx):
    """gcc is available for source builds (information)

    What it checks: `gcc --version`. Only matters when vllm-ascend, its custom ops or triton-ascend kernels are built
    from source; prebuilt wheels and the official images do not need it.

    Why it matters: installing vllm-ascend from an sdist (0.7.x/0.8.x and several later releases are sdist-only on
    PyPI) compiles C++ ops; without a compiler pip fails with a long CMake error.

    How to fix: install a compiler (`apt-get install -y gcc g++` or `yum install -y gcc gcc-c++`), or install a wheel
    / use the official quay.io/ascend/vllm-ascend image.
    """
    g = ctx.fact("gcc")
    if not g.found:
        return ctx.warn(T("gcc not found: source builds of vllm-ascend will fail (wheels and images are fine)"),
                        [ev("cmd: gcc --version", T("command not found"))])
    return ctx.ok(T("gcc {version}", version=g.version or '?'), [ev("cmd: gcc --version", g.first_line)])


@check("HOST109", "container-runtime", severity="info", needs=["container"])
def container_runtime(ctx):
    """Container or bare host (information other checks use)

    What it checks: /.dockerenv, /run/.containerenv, the `container` env var, /proc/1/cgroup and
    KUBERNETES_SERVICE_HOST.

    Why it matters: inside a container the NPU devices, the driver directory and npu-smi exist only if they were
    mounted; the container checks use this fact to tell "not mounted" from "not installed".

    How to fix: nothing to fix; this check reports what the doctor believes. If it is wrong, say so in a bug
    report with `ascend-doctor collect` output.
    """
    c = ctx.fact("container")
    evidence = [ev(T("container signals"), "\n".join(c.signals) or T("none"))]
    if c.in_container:
        return ctx.ok(T("running in a container ({runtime}){value}", runtime=c.runtime or 'runtime unknown',
                        value=T(" under Kubernetes") if c.kubernetes and c.runtime != 'kubernetes' else ''), evidence)
    return ctx.ok(T("running on the host (no container signals)"), evidence)


@check("HOST110", "pcie-link", severity="error", needs=["pcie", "container"])
def pcie_link(ctx):
    """PCIe links of the Huawei devices run at full width and speed

    What it checks: for every PCI function of vendor 0x19e5 (Huawei: Ascend NPUs, their NICs),
    current_link_width/speed against max_link_width/speed in /sys/bus/pci/devices/<slot>/.

    Why it matters: a card that trained at x8 or at a lower generation (bad riser, dusty slot, BIOS setting) halves
    host↔device bandwidth: model loading and KV offload crawl on that NPU, and tensor-parallel steps wait for it.
    Width never changes at run time, so a narrow link is a hardware fault; speed may drop at idle on some
    platforms (ASPM), so a lower speed alone is a warning.

    How to fix: reseat the card or move it to a full-width slot named in the evidence; check the BIOS PCIe settings
    (link speed "Auto"/Gen4, ASPM off for accelerators); `lspci -vv -s <slot> | grep -E 'LnkCap|LnkSta'` confirms.
    """
    p = ctx.fact("pcie")
    ctr = ctx.try_fact("container")
    in_container = bool(ctr is not None and ctr.in_container)
    if not p.sysfs_readable or (in_container and not p.listed):
        if in_container:
            return ctx.unknown(T("inside a container: the host's PCIe links are not visible here "
                                 "(/sys/bus/pci/devices is not readable or empty) — run `ascend-doctor check` on the "
                                 "host"),
                               [ctr_signals(ctr)], cause=T("inside a container: host facts are not visible"))
        return ctx.unknown(T("/sys/bus/pci/devices is not readable"))
    if not p.devices:
        return ctx.skip(T("no Huawei (0x19e5) PCI devices among the {listed} PCI functions of this machine",
                          listed=p.listed))
    narrow, slow, evidence = [], [], []
    for d in p.devices:
        line = (f"{d.slot} device {d.device_id} class {d.pci_class}: width x{d.current_width}/x{d.max_width}, "
                f"speed {d.current_speed or '?'} / {d.max_speed or '?'}")
        bad = False
        if d.current_width and d.max_width and d.current_width < d.max_width:
            narrow.append(T("{slot} x{current_width}/x{max_width}", slot=d.slot, current_width=d.current_width,
                            max_width=d.max_width))
            bad = True
        cs, ms = speed_gts(d.current_speed), speed_gts(d.max_speed)
        if cs and ms and cs < ms:
            slow.append(T("{slot} {current_speed} / {max_speed}", slot=d.slot, current_speed=d.current_speed,
                          max_speed=d.max_speed))
            bad = True
        evidence.append(ev(f"sysfs: /sys/bus/pci/devices/{d.slot}", line, ok=not bad))
    if narrow:
        return ctx.fail(T("PCIe link width downgraded: {links}", links=join("; ", narrow)), evidence)
    if slow:
        return ctx.warn(T("PCIe link speed below maximum (idle power saving, or a slot fault): {links}",
                          links=join("; ", slow)), evidence)
    return ctx.ok(T("{n} Huawei PCI function(s) at full link width and speed", n=len(p.devices)), evidence)
