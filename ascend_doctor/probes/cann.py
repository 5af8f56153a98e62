"""CANN toolkit, NNAL/ATB, NPU driver and firmware: where they are installed and which versions the files say.

CANN has moved over the years: `/usr/local/Ascend/ascend-toolkit/latest -> <ver>` (≤ 8.3), from 8.5
`/usr/local/Ascend/cann-<ver>` with `/usr/local/Ascend/cann` and `ascend-toolkit/latest` symlinks to it
(matrix-facts §3.2a), plus whatever `set_env.sh` exported (`ASCEND_HOME_PATH`, `ASCEND_TOOLKIT_HOME`,
`ASCEND_OPP_PATH`). vllm-ascend#10525 is a user whose `collect_env.py` printed an empty CANN version because it
looked in only one of them — so every candidate is recorded with where it resolves, and the disagreements are
listed rather than papered over. A missing CANN or driver is a fact (found=False), never an exception.
"""

from __future__ import annotations

import posixpath
import re
from typing import Optional

from pydantic import Field, computed_field

from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.parsers.ascend_files import (
    AscendInstallInfo,
    ComponentVersionInfo,
    DriverVersionInfo,
    FirmwareVersionInfo,
    InstallInfo,
    NnalVersionInfo,
    VersionCfg,
    cann_dir_version,
    parse_ascend_install_info,
    parse_component_version_info,
    parse_driver_version_info,
    parse_firmware_version_info,
    parse_install_info,
    parse_nnal_version_info,
    parse_version_cfg,
)
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import NOT_FOUND

ASCEND = "/usr/local/Ascend"
# Env vars set_env.sh exports that name the CANN root (ASCEND_OPP_PATH names <root>/opp).
ROOT_ENV_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_CUSTOM_PATH", "ASCEND_AICPU_PATH")
_ARCH_ALIASES = {"arm64": "aarch64", "aarch64": "aarch64", "x86_64": "x86_64", "amd64": "x86_64"}


def norm_arch(arch: Optional[str]) -> Optional[str]:
    """aarch64/arm64 -> aarch64, x86_64/amd64 -> x86_64 (the 200I DK names its dir arm64-linux)."""
    if not arch:
        return None
    return _ARCH_ALIASES.get(arch.strip().lower(), arch.strip().lower())


def _same_version(a: Optional[str], b: Optional[str]) -> bool:
    return (a or "").strip().lower() == (b or "").strip().lower()


def _err(res) -> str:
    return res.error_message or res.error or "unreadable"


# --- facts ------------------------------------------------------------------------------------------------------

class CannCandidate(Model):
    """One place CANN might be, and what is there."""

    path: str
    source: str = Field(description="Why it was looked at: default, env ASCEND_HOME_PATH, listing of ..., ...")
    exists: bool = False
    link_target: Optional[str] = Field(None, description="readlink of the path itself, when it is a symlink")
    resolved: Optional[str] = Field(None, description="Fully resolved real directory")


class CannInstall(Model):
    """One real CANN directory (several candidates may resolve to it) and what its files say."""

    root: str = Field(description="Resolved directory")
    aliases: list[str] = Field(default_factory=list, description="Candidate paths that resolve here")
    dir_version: Optional[str] = Field(None, description="Version in the directory name (8.0.0, cann-8.5.0 -> 8.5.0)")
    version_cfg_path: Optional[str] = None
    version_cfg: Optional[VersionCfg] = None
    version_cfg_error: Optional[str] = None
    install_info_path: Optional[str] = None
    install_info: Optional[InstallInfo] = None
    install_info_error: Optional[str] = None
    component_info: Optional[ComponentVersionInfo] = Field(None, description="Fallback: <root>/runtime/version.info")
    arch_dirs: list[str] = Field(default_factory=list, description="<arch>-linux directories present")
    arch: Optional[str] = Field(None, description="Toolkit arch (install info arch=, else the <arch>-linux dir)")
    version: Optional[str] = Field(None, description="CANN version: version.cfg, else install info, else dir name")
    version_source: Optional[str] = None


class NnalFact(Model):
    found: bool = False
    version_info_path: Optional[str] = None
    info: Optional[NnalVersionInfo] = None
    error: Optional[str] = None
    atb_home_path: Optional[str] = Field(None, description="$ATB_HOME_PATH (set by nnal/atb/set_env.sh)")
    cxx_abi: Optional[int] = Field(None, description="0 or 1, from the cxx_abi_N in ATB_HOME_PATH")
    searched: list[str] = Field(default_factory=list)
    cann_mismatch: Optional[bool] = Field(None, description="NNAL's version.info names another CANN than the active")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def version(self) -> Optional[str]:
        return self.info.version if self.info else None


class CannFact(Model):
    found: bool = False
    searched: list[str] = Field(default_factory=list, description="Every candidate path looked at")
    candidates: list[CannCandidate] = Field(default_factory=list)
    installs: list[CannInstall] = Field(default_factory=list)
    active: Optional[CannInstall] = Field(None, description="The install the environment/default `latest` uses")
    version: Optional[str] = Field(None, description="CANN version of the active install")
    arch: Optional[str] = Field(None, description="Toolkit arch of the active install (normalised)")
    host_arch: Optional[str] = None
    arch_mismatch: Optional[bool] = Field(None, description="Toolkit built for another arch than this host")
    env: dict[str, str] = Field(default_factory=dict, description="ASCEND_*/ATB_* variables seen")
    ld_library_path_has_toolkit: Optional[bool] = Field(
        None, description="LD_LIBRARY_PATH contains <active root>/lib64, i.e. set_env.sh was sourced")
    nnal: NnalFact = Field(default_factory=NnalFact)
    unreadable: list[str] = Field(default_factory=list, description="CANN version files that exist but could not "
                                                                    "be read (path: reason), when no install was")
    inconsistencies: list[str] = Field(
        default_factory=list, description="Disagreements inside the install (version files, symlinks, ASCEND_* "
                                          "variables); the arch and NNAL mismatches have their own fields")


class DriverFact(Model):
    found: bool = False
    driver_dir: str = f"{ASCEND}/driver"
    searched: list[str] = Field(default_factory=list)
    version_info: Optional[DriverVersionInfo] = None
    version_info_error: Optional[str] = None
    install_info: Optional[AscendInstallInfo] = Field(None, description="/etc/ascend_install.info")
    install_info_error: Optional[str] = None
    firmware_path: Optional[str] = None
    firmware: Optional[FirmwareVersionInfo] = None
    firmware_error: Optional[str] = None
    lib64_present: Optional[bool] = Field(None, description="<driver>/lib64 exists (None: could not tell)")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def version(self) -> Optional[str]:
        return self.version_info.version if self.version_info else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def firmware_version(self) -> Optional[str]:
        return self.firmware.version if self.firmware else None


# --- CANN ---------------------------------------------------------------------------------------------------------

def _resolve(host, path: str) -> CannCandidate:
    cand = CannCandidate(path=path, source="")
    link = host.readlink(path)
    if link.error is None:
        cand.exists = True
        cand.link_target = link.target
        resolved, hop = link.resolved, link
        # A hand-built snapshot may give only `target`: follow the chain (latest -> cann -> cann-8.5.0) ourselves.
        for _ in range(8):
            if resolved or not hop.target:
                break
            nxt = posixpath.normpath(posixpath.join(posixpath.dirname(hop.path), hop.target))
            hop = host.readlink(nxt)
            resolved = hop.resolved or (nxt if not hop.target else None)
        cand.resolved = resolved or path
    elif host.list_dir(path).ok or host.read_file(f"{path}/version.cfg").ok:
        cand.exists = True
        cand.resolved = path
    return cand


def _candidate_paths(host, env: dict[str, str]) -> list[tuple[str, str]]:
    """(path, why) in priority order: what the environment says first, then the vendor default layouts."""
    out: list[tuple[str, str]] = []
    for var in ROOT_ENV_VARS:
        if env.get(var):
            out.append((env[var].rstrip("/") or "/", f"env {var}"))
    opp = env.get("ASCEND_OPP_PATH", "").rstrip("/")
    if opp.endswith("/opp"):
        out.append((opp[: -len("/opp")], "env ASCEND_OPP_PATH"))
    out.append((f"{ASCEND}/ascend-toolkit/latest", "default"))
    out.append((f"{ASCEND}/cann", "default (CANN >= 8.5)"))
    top = host.list_dir(ASCEND)
    for e in sorted(top.entries or []):
        if re.match(r"^cann-\d", e):
            out.append((f"{ASCEND}/{e}", f"listing of {ASCEND}"))
    tk = host.list_dir(f"{ASCEND}/ascend-toolkit")
    for e in sorted(tk.entries or []):
        if re.match(r"^\d", e):
            out.append((f"{ASCEND}/ascend-toolkit/{e}", f"listing of {ASCEND}/ascend-toolkit"))
    if env.get("HOME"):  # non-root installs go to ~/Ascend
        out.append((f"{env['HOME'].rstrip('/')}/Ascend/ascend-toolkit/latest", "default (non-root install)"))
    out.append((f"{ASCEND}/nnae/latest", "default (NNAE runtime package)"))
    seen: set[str] = set()
    unique = []
    for p, why in out:
        if p not in seen:
            seen.add(p)
            unique.append((p, why))
    return unique


def _dir_version(root: str) -> Optional[str]:
    return cann_dir_version(posixpath.basename(root.rstrip("/")))


def _read_install(host, root: str, host_arch: Optional[str]) -> CannInstall:
    inst = CannInstall(root=root, dir_version=_dir_version(root))
    cfg_path = f"{root}/version.cfg"
    res = host.read_file(cfg_path)
    if res.ok:
        inst.version_cfg_path = cfg_path
        try:
            inst.version_cfg = parse_version_cfg(res.content)
        except ParseError as exc:
            inst.version_cfg_error = str(exc)
    elif res.error != NOT_FOUND:
        inst.version_cfg_path, inst.version_cfg_error = cfg_path, _err(res)

    listing = host.list_dir(root)
    if listing.ok:
        inst.arch_dirs = sorted(e for e in listing.entries if e.endswith("-linux"))
        arch_dirs = list(inst.arch_dirs)
    else:  # could not list: try the usual names, this host's arch first
        arch_dirs = [f"{a}-linux" for a in dict.fromkeys([host_arch or "aarch64", "aarch64", "x86_64"])]
    if host_arch:
        arch_dirs.sort(key=lambda d: norm_arch(d[: -len("-linux")]) != host_arch)
    for path in (f"{root}/{d}/{name}" for d in arch_dirs
                 for name in ("ascend_toolkit_install.info", "ascend_nnae_install.info")):
        r = host.read_file(path)
        if not r.ok:
            if r.error != NOT_FOUND and inst.install_info_error is None:
                inst.install_info_path, inst.install_info_error = path, _err(r)
            continue
        inst.install_info_path, inst.install_info_error = path, None
        try:
            inst.install_info = parse_install_info(r.content)
        except ParseError as exc:
            inst.install_info_error = str(exc)
        break

    if inst.install_info and inst.install_info.arch:
        inst.arch = norm_arch(inst.install_info.arch)
    elif len(inst.arch_dirs) == 1:
        inst.arch = norm_arch(inst.arch_dirs[0][: -len("-linux")])

    if inst.version_cfg and inst.version_cfg.cann_version:
        inst.version = inst.version_cfg.cann_version
        inst.version_source = f"version.cfg {inst.version_cfg.cann_version_source}"
    elif inst.install_info and inst.install_info.version:
        inst.version, inst.version_source = inst.install_info.version, inst.install_info_path
    else:
        r = host.read_file(f"{root}/runtime/version.info")
        if r.ok:
            try:
                inst.component_info = parse_component_version_info(r.content)
            except ParseError:
                pass
        if inst.component_info and inst.component_info.version_dir:
            inst.version, inst.version_source = inst.component_info.version_dir, f"{root}/runtime/version.info"
        elif inst.dir_version:
            inst.version, inst.version_source = inst.dir_version, "directory name"
    return inst


def _install_inconsistencies(inst: CannInstall, label: str) -> list[str]:
    out = []
    cfg_v = inst.version_cfg.cann_version if inst.version_cfg else None
    info_v = inst.install_info.version if inst.install_info else None
    if cfg_v and info_v and not _same_version(cfg_v, info_v):
        out.append(f"{label}: version.cfg says CANN {cfg_v} but {inst.install_info_path} says {info_v}")
    if inst.dir_version and inst.version and inst.version_source != "directory name" \
            and not _same_version(inst.dir_version, inst.version):
        out.append(f"{label} resolves to {inst.root}, a directory named for {inst.dir_version}, "
                   f"but its files say CANN {inst.version}")
    if inst.version_cfg:
        running = inst.version_cfg.running_versions()
        if len({v.lower() for v in running.values()}) > 1:
            parts = ", ".join(f"{k}={v}" for k, v in sorted(running.items()))
            out.append(f"{label}: version.cfg components run different versions (half-finished upgrade?): {parts}")
    return out


def _nnal(host, env: dict[str, str]) -> NnalFact:
    fact = NnalFact(atb_home_path=env.get("ATB_HOME_PATH") or None)
    paths: list[str] = []
    if fact.atb_home_path:
        m = re.search(r"cxx_abi_(\d)", fact.atb_home_path)
        fact.cxx_abi = int(m.group(1)) if m else None
        # ATB_HOME_PATH=/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1; version.info sits in .../atb/latest
        p = fact.atb_home_path.rstrip("/")
        for _ in range(3):
            paths.append(f"{p}/version.info")
            p = posixpath.dirname(p)
    paths.append(f"{ASCEND}/nnal/atb/latest/version.info")
    for path in dict.fromkeys(paths):
        fact.searched.append(path)
        r = host.read_file(path)
        if not r.ok:
            continue
        fact.found, fact.version_info_path = True, path
        try:
            fact.info = parse_nnal_version_info(r.content)
            fact.error = None
            break
        except ParseError as exc:
            fact.error = f"{path}: {exc}"
    return fact


@probe("cann")
def cann_probe(host, ctx) -> CannFact:
    """Find every CANN install, read its version files, and say which one this environment uses."""
    env = host.env()
    fact = CannFact(env={k: v for k, v in sorted(env.items()) if k.startswith(("ASCEND_", "ATB_"))})
    fact.host_arch = norm_arch(host.system().machine)
    by_root: dict[str, CannInstall] = {}
    order: list[str] = []
    for path, why in _candidate_paths(host, env):
        fact.searched.append(path)
        cand = _resolve(host, path)
        cand.source = why
        fact.candidates.append(cand)
        if not cand.exists:
            continue
        root = cand.resolved or path
        if root not in by_root:
            by_root[root] = _read_install(host, root, fact.host_arch)
            order.append(root)
        by_root[root].aliases.append(path)
    # A directory with no CANN file at all (e.g. an empty ASCEND_HOME_PATH) is not an install.
    fact.installs = [by_root[r] for r in order
                     if by_root[r].version_cfg or by_root[r].install_info or by_root[r].component_info]
    fact.found = bool(fact.installs)
    fact.nnal = _nnal(host, env)  # NNAL is found by its own paths, whether or not the toolkit is
    if not fact.found:
        # Files that are there but unreadable (permission denied …) are not "CANN is not installed".
        for r in order:
            inst = by_root[r]
            for path, err in ((inst.version_cfg_path, inst.version_cfg_error),
                              (inst.install_info_path, inst.install_info_error)):
                if path and err:
                    fact.unreadable.append(f"{path}: {err}")
        return fact
    fact.active = fact.installs[0]
    fact.version, fact.arch = fact.active.version, fact.active.arch
    if fact.arch and fact.host_arch:
        fact.arch_mismatch = fact.arch != fact.host_arch  # CANN103's business, not an `inconsistencies` line

    for inst in fact.installs:
        fact.inconsistencies.extend(_install_inconsistencies(inst, inst.aliases[0]))
    env_roots = {}
    for cand in fact.candidates:
        if cand.source.startswith("env ") and cand.exists:
            env_roots.setdefault(cand.resolved, cand.source[4:])
    if len(env_roots) > 1:
        fact.inconsistencies.append("environment variables point at different CANN installs: " + ", ".join(
            f"{var} -> {root}" for root, var in env_roots.items()))
    for cand in fact.candidates:
        if cand.source.startswith("env ") and not cand.exists:
            fact.inconsistencies.append(f"{cand.source[4:]}={cand.path} does not exist")

    lib_dirs = {f"{a.rstrip('/')}/lib64" for a in fact.active.aliases + [fact.active.root]}
    lib_dirs |= {f"{a.rstrip('/')}/{d}/lib64" for a in fact.active.aliases + [fact.active.root]
                 for d in fact.active.arch_dirs}
    ld = [p.rstrip("/") for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    fact.ld_library_path_has_toolkit = any(p in lib_dirs for p in ld)
    if fact.nnal.info and fact.nnal.info.version and fact.version:  # CANN105's business
        fact.nnal.cann_mismatch = not _same_version(fact.nnal.info.version, fact.version)
    return fact


# --- driver / firmware ----------------------------------------------------------------------------------------------

@probe("driver")
def driver_probe(host, ctx) -> DriverFact:
    """NPU driver and firmware versions from their version.info files, and /etc/ascend_install.info."""
    fact = DriverFact()
    res = host.read_file("/etc/ascend_install.info")
    if res.ok:
        try:
            fact.install_info = parse_ascend_install_info(res.content)
        except ParseError as exc:
            fact.install_info_error = str(exc)
    elif res.error != NOT_FOUND:
        fact.install_info_error = _err(res)
    prefixes = []
    if fact.install_info and fact.install_info.driver_install_path:
        prefixes.append(fact.install_info.driver_install_path.rstrip("/"))
    prefixes.append(ASCEND)
    for prefix in dict.fromkeys(prefixes):
        path = f"{prefix}/driver/version.info"
        fact.searched.append(path)
        r = host.read_file(path)
        if not r.ok:
            if r.error != NOT_FOUND:
                fact.version_info_error = f"{path}: {_err(r)}"
            continue
        fact.driver_dir = f"{prefix}/driver"
        try:
            fact.version_info = parse_driver_version_info(r.content)
            fact.found, fact.version_info_error = True, None
            break
        except ParseError as exc:
            fact.version_info_error = f"{path}: {exc}"
    fw_prefixes = []
    if fact.install_info and fact.install_info.firmware_install_path:
        fw_prefixes.append(fact.install_info.firmware_install_path.rstrip("/"))
    fw_prefixes.append(ASCEND)
    for prefix in dict.fromkeys(fw_prefixes):
        path = f"{prefix}/firmware/version.info"
        r = host.read_file(path)
        if not r.ok:
            if r.error != NOT_FOUND:
                fact.firmware_path, fact.firmware_error = path, _err(r)
            continue
        fact.firmware_path = path
        try:
            fact.firmware, fact.firmware_error = parse_firmware_version_info(r.content), None
            break
        except ParseError as exc:
            fact.firmware_error = str(exc)
    lib = host.list_dir(f"{fact.driver_dir}/lib64")
    if lib.ok:
        fact.lib64_present = True
    elif lib.error == NOT_FOUND:
        fact.lib64_present = False
    return fact
