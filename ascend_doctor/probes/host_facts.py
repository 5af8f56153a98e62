"""Host-level facts: interpreter, SELinux, limits, /dev/shm, memory, disk, time sync, gcc, container, PCIe links.

Everything goes through the `host` seam, so the same code reads this machine, a fake root, or a snapshot.
"""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import Localized, T
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import NOT_FOUND, NOT_RECORDED, PythonEnv
from ascend_doctor.text.numbers import int_or_none

HUAWEI_PCI_VENDOR = "0x19e5"


@probe("system")
def system_probe(host, ctx):
    """The machine: hostname, OS, kernel and architecture."""
    return host.system()


@probe("env")
def env_probe(host, ctx) -> dict:
    """The environment the doctor runs in (run it the way `vllm serve` runs), or the snapshot's."""
    return host.env()


@probe("python", reads=("serving_python",))
def python_probe(host, ctx) -> PythonEnv:
    """The serving interpreter (`serving_python`: --python, the command's, or the one found) and its installed
    distributions, from metadata only."""
    chosen = ctx.fact("serving_python")
    env = chosen.env or host.python_env(chosen.path, timeout=ctx.options.probe_timeout)
    if not env.ok:
        raise FactUnavailable("python", env.error_message or env.error or "interpreter did not answer")
    return env


# SELinux -----------------------------------------------------------------------------------------------------------
SELINUX_MODES = ("enforcing", "permissive", "disabled")


class SelinuxFact(Model):
    """What each source says; the check reconciles them (they can disagree, and one may be unreadable)."""

    enforce_file: Optional[str] = Field(None, description="content of /sys/fs/selinux/enforce ('1' enforcing)")
    enforce_error: Optional[str] = Field(None, description="why /sys/fs/selinux/enforce could not be read, when it "
                                                           "exists (permission denied, …)")
    config_mode: Optional[str] = Field(None, description="SELINUX= in /etc/selinux/config")
    getenforce: Optional[str] = Field(None, description="getenforce's first line, as printed")
    getenforce_error: Optional[str] = Field(None, description="why getenforce gave no answer (timed out, crashed, "
                                                              "exited N) — None when it answered or is not installed")
    kernel_has_selinux: bool = False

    @property
    def kernel_mode(self) -> Optional[str]:
        """The kernel's own state from /sys/fs/selinux/enforce: the authoritative source."""
        if self.enforce_file is None:
            return None
        return {"1": "enforcing", "0": "permissive"}.get(self.enforce_file.strip())

    @property
    def getenforce_mode(self) -> Optional[str]:
        """getenforce's answer when it is one of the three words (anything else is unparseable)."""
        word = (self.getenforce or "").strip().lower()
        return word if word in SELINUX_MODES else None

    @property
    def mode(self) -> Optional[str]:
        """One mode for summaries (diff, fleet): the kernel's, else getenforce's, else 'disabled' when the kernel has
        no SELinux and no config names one; None when nothing tells. HOST102 also judges disagreements."""
        if self.kernel_mode:
            return self.kernel_mode
        if self.getenforce_mode:
            return self.getenforce_mode
        if not self.kernel_has_selinux and self.config_mode is None and self.enforce_error is None \
                and self.getenforce is None and self.getenforce_error is None:
            return "disabled"
        return None


@probe("selinux")
def selinux_probe(host, ctx) -> SelinuxFact:
    """SELinux as the kernel, getenforce and /etc/selinux/config each say it."""
    fact = SelinuxFact()
    enforce = host.read_file("/sys/fs/selinux/enforce")
    if enforce.ok:
        fact.enforce_file = enforce.content.strip()
        fact.kernel_has_selinux = True
    else:
        if enforce.error not in (NOT_FOUND, NOT_RECORDED, None):
            fact.enforce_error = enforce.error_message or enforce.error  # it is there, we may not read it
        fact.kernel_has_selinux = host.list_dir("/sys/fs/selinux").ok or fact.enforce_error is not None
    cfg = host.read_file("/etc/selinux/config")
    if cfg.ok:
        m = re.search(r"^\s*SELINUX\s*=\s*(\w+)", cfg.content, re.MULTILINE)
        fact.config_mode = m.group(1).lower() if m else None
    res = host.run(["getenforce"], timeout=min(ctx.options.probe_timeout, 5))
    if res.ok and res.stdout.strip():
        fact.getenforce = res.stdout.strip().splitlines()[0]
    elif res.error != NOT_FOUND:
        fact.getenforce_error = res.why_not() or "printed nothing"
    return fact


# Limits --------------------------------------------------------------------------------------------------------------
class LimitsFact(Model):
    nofile_soft: Optional[int] = None  # None = unlimited
    nofile_hard: Optional[int] = None
    raw_line: str = ""


def _limit(v: str) -> Optional[int]:
    if v == "unlimited":
        return None
    n = int_or_none(v)
    if n is None:
        raise FactUnavailable("limits", T("/proc/self/limits: unreadable limit {v}", v=repr(v[:40])))
    return n


@probe("limits")
def limits_probe(host, ctx) -> LimitsFact:
    """Open-file limits of this process: the shell/unit that runs the doctor runs `vllm serve` the same way."""
    res = host.read_file("/proc/self/limits")
    if not res.ok:
        raise FactUnavailable("limits", T("/proc/self/limits: {error_message}",
                                          error_message=res.error_message or res.error))
    for line in res.content.splitlines():
        m = re.match(r"^Max open files\s+(\S+)\s+(\S+)", line)
        if m:
            return LimitsFact(nofile_soft=_limit(m.group(1)), nofile_hard=_limit(m.group(2)), raw_line=line.strip())
    raise FactUnavailable("limits", T("no 'Max open files' line in /proc/self/limits"))


# /dev/shm, memory, disk ----------------------------------------------------------------------------------------------
class ShmFact(Model):
    total_bytes: Optional[int] = None
    free_bytes: Optional[int] = None
    mounted: bool = True
    mount_line: str = ""


@probe("shm")
def shm_probe(host, ctx) -> ShmFact:
    """Size and free space of /dev/shm, and how it is mounted."""
    du = host.disk_usage("/dev/shm")
    mounts = host.read_file("/proc/mounts")
    line = ""
    if mounts.ok:
        line = next((ln for ln in mounts.content.splitlines() if len(ln.split()) > 1 and ln.split()[1] == "/dev/shm"),
                    "")
    if du.error:
        if du.error == NOT_FOUND:
            return ShmFact(mounted=False, mount_line=line)
        raise FactUnavailable("shm", T("/dev/shm: {error_message}", error_message=du.error_message or du.error))
    return ShmFact(total_bytes=du.total_bytes, free_bytes=du.free_bytes, mount_line=line)


class MemoryFact(Model):
    total_kib: int
    available_kib: Optional[int] = None
    hugepages_total: Optional[int] = None
    hugepage_size_kib: Optional[int] = None
    cgroup_limit_bytes: Optional[int] = Field(None, description="memory limit of this cgroup (container), when set")
    cgroup_usage_bytes: Optional[int] = Field(None, description="what the cgroup uses now")
    cgroup_file: Optional[str] = Field(None, description="where the limit was read (v2 memory.max or v1 limit)")
    cgroup_error: Optional[str] = Field(None, description="why no cgroup limit could be read (no file: not limited "
                                                          "or not visible)")

    def usable(self) -> tuple[int, Optional[int], bool]:
        """(total, available, whether the container's limit decided) in bytes: /proc/meminfo shows the host's memory
        inside a container, so a cgroup limit below it is the total, and what the cgroup has left caps what is
        available (None when MemAvailable is not reported and no limit caps it)."""
        total = self.total_kib * 1024
        avail = None if self.available_kib is None else self.available_kib * 1024
        limit = self.cgroup_limit_bytes
        if limit is not None and limit < total:
            room = max(limit - (self.cgroup_usage_bytes or 0), 0)
            return limit, room if avail is None else min(avail, room), True
        return total, avail, False

# cgroup v2, then v1: /proc/meminfo shows the host's memory inside a container; the cgroup limit is what the server
# may really use.
CGROUP_MEMORY = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                 ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))
UNLIMITED_V1 = 1 << 60  # v1 reports "no limit" as a page-rounded 2**63-1

@probe("memory")
def memory_probe(host, ctx) -> MemoryFact:
    """Total and available host memory, from /proc/meminfo."""
    res = host.read_file("/proc/meminfo")
    if not res.ok:
        raise FactUnavailable("memory", T("/proc/meminfo: {error_message}",
                                          error_message=res.error_message or res.error))
    vals = {}
    for line in res.content.splitlines():
        m = re.match(r"^(\w+):\s+(\d+)", line)
        n = int_or_none(m.group(2)) if m else None
        if n is not None:
            vals[m.group(1)] = n
    if "MemTotal" not in vals:
        raise FactUnavailable("memory", T("no MemTotal in /proc/meminfo"))
    fact = MemoryFact(total_kib=vals["MemTotal"], available_kib=vals.get("MemAvailable"),
                      hugepages_total=vals.get("HugePages_Total"), hugepage_size_kib=vals.get("Hugepagesize"))
    errors = []
    for limit_path, usage_path in CGROUP_MEMORY:
        lim = host.read_file(limit_path)
        if not lim.ok:
            if lim.error not in (NOT_FOUND, NOT_RECORDED):
                errors.append(f"{limit_path}: {lim.error_message or lim.error}")
            continue
        fact.cgroup_file = limit_path
        value = lim.content.strip()
        limit = None if value == "max" else int_or_none(value)
        if limit is not None and limit < UNLIMITED_V1:
            fact.cgroup_limit_bytes = limit
            use = host.read_file(usage_path)
            fact.cgroup_usage_bytes = int_or_none(use.content.strip()) if use.ok else None
        break
    else:
        fact.cgroup_error = "; ".join(errors) or "no cgroup memory limit file (memory.max, memory.limit_in_bytes)"
    return fact


class DiskPlace(Model):
    role: str
    path: str
    measured_path: str = ""
    total_bytes: Optional[int] = None
    free_bytes: Optional[int] = None
    error: Optional[str] = None


class DiskFact(Model):
    places: list[DiskPlace] = Field(default_factory=list)


def _disk_places(env: dict, model_dir: Optional[str]) -> list[tuple[str, str]]:
    home = env.get("HOME", "/root")
    hf = env.get("HF_HUB_CACHE") or (env["HF_HOME"] + "/hub" if env.get("HF_HOME") else home + "/.cache/huggingface")
    ms = env.get("MODELSCOPE_CACHE") or home + "/.cache/modelscope"
    places = []
    if model_dir:
        places.append(("model dir (--model-dir)", model_dir))
    places.append(("Hugging Face cache", hf))
    places.append(("ModelScope cache", ms))
    if env.get("VLLM_CACHE_ROOT"):
        places.append(("vLLM cache", env["VLLM_CACHE_ROOT"]))
    return places


@probe("disk")
def disk_probe(host, ctx) -> DiskFact:
    """Free space where weights and caches live; a path not created yet is measured at its nearest parent."""
    fact = DiskFact()
    for role, path in _disk_places(host.env(), ctx.options.model_dir):
        probe_path = path
        du = host.disk_usage(probe_path)
        while du.error in (NOT_FOUND, NOT_RECORDED) and probe_path not in ("/", ""):
            probe_path = probe_path.rstrip("/").rsplit("/", 1)[0] or "/"
            du = host.disk_usage(probe_path)
        fact.places.append(DiskPlace(role=role, path=path, measured_path=probe_path, total_bytes=du.total_bytes,
                                     free_bytes=du.free_bytes, error=du.error_message or du.error))
    return fact


# Time synchronisation ------------------------------------------------------------------------------------------------
class TimeSyncFact(Model):
    synchronized: Optional[bool] = None
    via: str = ""
    seen: list[Localized] = Field(default_factory=list, description="what each source said (for evidence)")


@probe("timesync")
def timesync_probe(host, ctx) -> TimeSyncFact:
    """Ask timedatectl, then chrony, then ntpd; `synchronized=None` when none of them can tell."""
    t = min(ctx.options.probe_timeout, 5)
    fact = TimeSyncFact()
    res = host.run(["timedatectl", "show", "-p", "NTPSynchronized", "-p", "NTP"], timeout=t)
    if res.ok and "NTPSynchronized=" in res.stdout:
        vals = dict(ln.split("=", 1) for ln in res.stdout.splitlines() if "=" in ln)
        fact.seen.append(f"timedatectl: {res.stdout.strip()}")
        fact.synchronized, fact.via = vals.get("NTPSynchronized") == "yes", "systemd (timedatectl)"
        if fact.synchronized:
            return fact
    else:
        fact.seen.append(T("{tool}: {why}", tool="timedatectl", why=res.why_not() or T("no NTPSynchronized field")))
    res = host.run(["chronyc", "tracking"], timeout=t)
    if res.ok:
        m = re.search(r"Leap status\s*:\s*(.+)", res.stdout)
        fact.seen.append("chronyc tracking: " + (m.group(0) if m else res.stdout.strip()[:200]))
        if m:
            fact.synchronized, fact.via = m.group(1).strip().lower() == "normal", "chrony"
            return fact
    else:
        fact.seen.append(T("{tool}: {why}", tool="chronyc", why=res.why_not()))
    res = host.run(["ntpstat"], timeout=t)
    if res.error is None and res.returncode is not None:
        fact.seen.append(f"ntpstat: exit {res.returncode}: {res.stdout.strip()[:200]}")
        # ntpstat exit codes: 0 synchronised, 1 not synchronised, 2 cannot tell
        if res.returncode in (0, 1):
            fact.synchronized, fact.via = res.returncode == 0, "ntpd (ntpstat)"
            return fact
    else:
        fact.seen.append(T("{tool}: {why}", tool="ntpstat", why=res.why_not()))
    flag = host.read_file("/run/systemd/timesync/synchronized")
    if flag.ok:
        fact.seen.append("/run/systemd/timesync/synchronized exists")
        fact.synchronized, fact.via = True, "systemd-timesyncd"
    return fact


# gcc ------------------------------------------------------------------------------------------------------------------
class GccFact(Model):
    found: bool
    version: Optional[str] = None
    first_line: str = ""


@probe("gcc")
def gcc_probe(host, ctx) -> GccFact:
    """The gcc on PATH and its version (torch_npu and CANN's operator compiler build with it)."""
    res = host.run(["gcc", "--version"], timeout=min(ctx.options.probe_timeout, 5))
    if res.error == NOT_FOUND:
        return GccFact(found=False)
    if not res.ok:
        raise FactUnavailable("gcc", res.why_not())
    first = res.stdout.strip().splitlines()[0] if res.stdout.strip() else ""
    m = re.search(r"(?<!\d)(\d+\.\d+(?:\.\d+)?)\s*$", first) or re.search(r"\s(\d+\.\d+\.\d+)", first)
    return GccFact(found=True, version=m.group(1) if m else None, first_line=first)


# Container -----------------------------------------------------------------------------------------------------------
class ContainerFact(Model):
    in_container: bool
    runtime: Optional[str] = Field(None, description="docker | podman | containerd | kubernetes | lxc | None")
    image: Optional[str] = Field(None, description="The image, when the runtime says (podman's /run/.containerenv)")
    kubernetes: bool = False
    signals: list[str] = Field(default_factory=list)


@probe("container")
def container_probe(host, ctx) -> ContainerFact:
    """Container or bare host, from the marks runtimes leave (/.dockerenv, /run/.containerenv, cgroup paths, env)."""
    signals: list[str] = []
    runtime: Optional[str] = None
    env = host.env()
    if host.read_file("/.dockerenv").ok:
        signals.append("/.dockerenv exists")
        runtime = "docker"
    image = None
    podman = host.read_file("/run/.containerenv")
    if podman.ok:
        signals.append("/run/.containerenv exists")
        runtime = "podman"
        m = re.search(r'^image="([^"]*)"', podman.content or "", re.MULTILINE)  # podman writes name, id, image
        image = m.group(1) or None if m else None
    if env.get("container"):
        signals.append(f"env container={env['container']}")
        runtime = runtime or env["container"]
    cg = host.read_file("/proc/1/cgroup")
    if cg.ok:
        for word, name in (("kubepods", "kubernetes"), ("docker", "docker"), ("containerd", "containerd"),
                           ("libpod", "podman"), ("lxc", "lxc")):
            if word in cg.content:
                signals.append(f"/proc/1/cgroup mentions {word}")
                runtime = runtime or name
                break
    kube = bool(env.get("KUBERNETES_SERVICE_HOST"))
    if kube:
        signals.append("env KUBERNETES_SERVICE_HOST is set")
    return ContainerFact(in_container=bool(signals), runtime=runtime or ("kubernetes" if kube else None),
                         kubernetes=kube or runtime == "kubernetes", signals=signals, image=image)


# PCIe -----------------------------------------------------------------------------------------------------------------
class PcieLink(Model):
    slot: str
    device_id: str = ""
    pci_class: str = ""
    current_width: Optional[int] = None
    max_width: Optional[int] = None
    current_speed: str = ""
    max_speed: str = ""


class PcieFact(Model):
    sysfs_readable: bool
    listed: int = Field(0, description="PCI functions sysfs lists (0 in a container that masks /sys)")
    devices: list[PcieLink] = Field(default_factory=list)


@probe("pcie")
def pcie_probe(host, ctx) -> PcieFact:
    """Link width/speed of every Huawei (vendor 0x19e5) PCI function, from sysfs."""
    base = "/sys/bus/pci/devices"
    listing = host.list_dir(base)
    if not listing.ok:
        return PcieFact(sysfs_readable=False)
    fact = PcieFact(sysfs_readable=True, listed=len(listing.entries or []))
    for slot in listing.entries:
        vendor = host.read_file(f"{base}/{slot}/vendor")
        if not vendor.ok or vendor.content.strip().lower() != HUAWEI_PCI_VENDOR:
            continue

        def rd(name: str) -> str:
            r = host.read_file(f"{base}/{slot}/{name}")
            return r.content.strip() if r.ok else ""

        def num(name: str) -> Optional[int]:
            v = rd(name)
            return int_or_none(v)

        fact.devices.append(PcieLink(slot=slot, device_id=rd("device"), pci_class=rd("class"),
                                     current_width=num("current_link_width"), max_width=num("max_link_width"),
                                     current_speed=rd("current_link_speed"), max_speed=rd("max_link_speed")))
    return fact
