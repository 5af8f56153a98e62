"""Parsers for the version files that CANN, the NPU driver, the firmware and NNAL/ATB leave on disk.

Formats and real values: ../shared/facts/matrix-facts.md §3.2. Every version stays a string here; ordering and
comparison belong to `ascend_doctor.text.versions`. Pasted copies of these files often carry shell prompts, `cat`
command lines, user labels and `cat -n` numbering (with the tab already turned into spaces, vllm-ascend#451), so
each parser keeps what looks like its own key lines, lists the rest in `ignored`, and raises ParseError only when
nothing it knows is there.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Optional

from pydantic import Field

from ascend_doctor.core.errors import ParseError
from ascend_doctor.core.model import Model
from ascend_doctor.parsers import clean_paste, parser_kind
from ascend_doctor.text.numbers import int_or_none
from ascend_doctor.text.versions import split_cfg_value

# `cat -n` prints "%6d\t"; pasted through a browser the tab often becomes two spaces (vllm-ascend#451).
_LINE_NO = re.compile(r"^\s*\d{1,5}(?:\t| {2,})(?=\S)")
# The value is stripped in code: a lazy `(.*?)\s*$` rescans every run of spaces, quadratic in its length, and a key
# ending in spaces is only tried where its run of spaces starts (`(?<!\s)`) for the same reason (#23).
_KV_EQ = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*=(.*)$")
_KV_COLON = re.compile(r"^\s*([A-Za-z][\w .()/-]*?)(?<!\s)\s+:(.*)$")
_CAT_CMD = re.compile(r"^(?:.*?[#$>]\s+)?cat\s+(?:-\w+\s+)*(\S+)")


def _segments(text: str) -> list[tuple[str, list[str]]]:
    """Split a paste into single files: at `cat <path>` lines and where `cat -n` numbering restarts at 1.

    Returns (path or "", cleaned lines) per file; a plain single file comes back as one segment.
    """
    if not isinstance(text, str):
        raise ParseError("input is not text")
    out: list[tuple[str, list[str]]] = []
    for path, body in split_cat_sections(text):
        lines = clean_paste(body).split("\n")
        nonempty = [ln for ln in lines if ln.strip()]
        numbered = [ln for ln in nonempty if _LINE_NO.match(ln)]
        if not nonempty or len(numbered) * 2 < len(nonempty):
            out.append((path, lines))
            continue
        current: list[str] = []
        seen_numbered = False
        for ln in lines:
            m = _LINE_NO.match(ln)
            if m and int_or_none(m.group(0).split()[0]) == 1 and seen_numbered:
                out.append((path, current))
                current = []
            seen_numbered = seen_numbered or bool(m)
            current.append(_LINE_NO.sub("", ln, count=1) if m else ln)
        out.append((path, current))
    return out or [("", [])]


def _one_of(text: str, parse_lines, wanted: str):
    """Run `parse_lines` on the file in `text`; in a bundle of several files, on the first one it accepts.

    Segments whose `cat` path contains `wanted` are tried first.
    """
    segs = _segments(text)
    if len(segs) == 1:
        return _flag(parse_lines(segs[0][1]), text)
    ordered = sorted(segs, key=lambda s: wanted not in s[0])
    first_error: Optional[ParseError] = None
    for _, lines in ordered:
        try:
            return _flag(parse_lines(lines), "\n".join(lines))
        except ParseError as exc:
            first_error = first_error or exc
    raise first_error or ParseError("empty input")


def _flag(parsed, text: str):
    if isinstance(parsed, KeyValueFile):
        parsed.problems = _problems(text)
    return parsed


def _pairs(lines: list[str], pattern: re.Pattern = _KV_EQ) -> tuple[list[tuple[str, str]], list[str]]:
    """(key, value) pairs in file order, and the non-empty lines that were not pairs."""
    pairs: list[tuple[str, str]] = []
    ignored: list[str] = []
    for ln in lines:
        if not ln.strip() or ln.strip().startswith("#"):
            continue
        m = pattern.match(ln)
        if m:
            pairs.append((m.group(1).strip(), m.group(2).strip()))
        else:
            ignored.append(ln.strip())
    return pairs, ignored


def _first(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Key -> first value; a bundle of several pasted files keeps the first file's value for a repeated key."""
    out: dict[str, str] = {}
    for k, v in pairs:
        out.setdefault(k, v)
    return out


def _get(d: dict[str, str], key: str) -> Optional[str]:
    """Exact key first, then case-insensitively (drivers write `Innerversion`, notes write `innerversion`)."""
    if key in d:
        return d[key] or None
    low = key.lower()
    for k, v in d.items():
        if k.lower() == low:
            return v or None
    return None


def _strip_quotes(v: str) -> str:
    return v[1:-1] if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'" else v


class KeyValueFile(Model):
    """A parsed key=value (or `key : value`) file: what it says, and what makes the reading doubtful."""

    problems: list[str] = Field(default_factory=list, description="undecodable bytes in values (U+FFFD), a last "
                                                                  "line cut off: the values may be partial")


def _problems(text: str) -> list[str]:
    """Why a key=value reading of `text` may be partial: U+FFFD in a line (bytes that were not UTF-8 where a version
    belongs), and a last line with no newline whose value is empty or stops at a separator (a truncated file)."""
    out = []
    for no, ln in enumerate(text.split("\n"), start=1):
        if "\ufffd" in ln:
            out.append(f"line {no} holds undecodable bytes (U+FFFD): {ln.strip()[:80]!r}")
    last = text.rstrip(" ").split("\n")[-1] if text and not text.endswith("\n") else ""
    m = re.match(r"^\s*[A-Za-z_][\w .()/-]*?(?<!\s)\s*[=:]\s*(.*)$", last)
    if m and (not m.group(1).strip() or m.group(1).rstrip()[-1:] in ".-_,[:"):
        out.append(f"the last line {last.strip()[:80]!r} has no newline and stops mid-value: the file looks "
                   "truncated")
    return out


class VersionRange(Model):
    """One `[...]` group of a compatible_version* list: `[V100R001C19]` (min == max) or `[7.0.0,7.5.99]`.

    Bounds are verbatim; a trailing dot (`[23.0.rc3,23.0.rc3.]`) is the vendor's "this prefix" marker.
    """

    min: str
    max: str
    raw: str


def parse_ranges(value: Optional[str]) -> list[VersionRange]:
    """`[a],[b,c]` -> [VersionRange(a,a), VersionRange(b,c)]; a bare value without brackets counts as one group."""
    if not value:
        return []
    groups = re.findall(r"\[([^\[\]]*)\]", value) or [value]  # `[^[]]`: linear on "[[[["
    out = []
    for g in groups:
        parts = [p.strip() for p in g.split(",")]
        parts = [p for p in parts if p] or [""]
        if parts == [""]:
            continue
        out.append(VersionRange(min=parts[0], max=parts[-1], raw=g.strip()))
    return out


# --- version.cfg ------------------------------------------------------------------------------------------------

class CfgVersion(Model):
    """One `[<internal>:<CANN>]` value: `[7.6.0.1.220:8.0.0]` -> internal 7.6.0.1.220, version 8.0.0."""

    raw: str
    internal: Optional[str] = None
    version: Optional[str] = None


class ComponentVersions(Model):
    running: Optional[CfgVersion] = None
    upgrade: Optional[CfgVersion] = None
    installed: Optional[CfgVersion] = None


class VersionCfg(KeyValueFile):
    """CANN `version.cfg` (`<root>/version.cfg`, e.g. /usr/local/Ascend/ascend-toolkit/latest/version.cfg)."""

    format_version: Optional[str] = Field(None, description="From the `# version: 1.0` header line, if present")
    components: dict[str, ComponentVersions] = Field(default_factory=dict,
                                                     description="runtime, compiler, hccl, opp, toolkit, ...")
    cann_version: Optional[str] = Field(None, description="CANN version of the install (toolkit_running first)")
    cann_version_source: Optional[str] = Field(None, description="Which key cann_version was taken from")
    ignored: list[str] = Field(default_factory=list)

    def running_versions(self) -> dict[str, str]:
        """Component -> running CANN version, for spotting a half-upgraded install."""
        return {name: c.running.version for name, c in self.components.items() if c.running and c.running.version}


def cfg_value(raw: str) -> CfgVersion:
    """`[7.6.0.1.220:8.0.0]` -> CfgVersion (the split is versions.split_cfg_value's, the one place that knows it)."""
    internal, version = split_cfg_value(raw)
    return CfgVersion(raw=raw, internal=internal, version=version)


_CFG_KEY = re.compile(r"^([a-z][a-z0-9_]*?)_(running|upgrade|installed)_version$")


@parser_kind("version-cfg", expects="a CANN version.cfg (`toolkit_running_version=[7.6.0.1.220:8.0.0]` lines)")
def parse_version_cfg(text: str) -> VersionCfg:
    """Parse CANN `version.cfg` (new `# version: 1.0` form and the old headerless one)."""
    cfg = _one_of(text, _version_cfg, "version.cfg")
    if cfg.format_version is None:
        # clean_paste drops `# ...` lines as root prompts, so the header is looked for in the raw text.
        m = re.search(r"^\s*(?:\d+\s+)?#\s*version\s*:\s*(\S+)", text, re.MULTILINE)
        cfg.format_version = m.group(1) if m else None
    return cfg


def _version_cfg(lines: list[str]) -> VersionCfg:
    fmt = None
    for ln in lines:
        m = re.match(r"^\s*#\s*version\s*:\s*(\S+)", ln)
        if m:
            fmt = m.group(1)
            break
    pairs, ignored = _pairs(lines)
    components: dict[str, ComponentVersions] = {}
    for key, value in pairs:
        m = _CFG_KEY.match(key)
        if not m:
            ignored.append(f"{key}={value}")
            continue
        comp = components.setdefault(m.group(1), ComponentVersions())
        if getattr(comp, m.group(2)) is None:
            setattr(comp, m.group(2), cfg_value(value))
    if not components:
        raise ParseError("no `<component>_running_version=[...]` lines: not a CANN version.cfg")
    cfg = VersionCfg(format_version=fmt, components=components, ignored=ignored)
    cfg.cann_version, cfg.cann_version_source = _pick_cann_version(components)
    return cfg


def _pick_cann_version(components: dict[str, ComponentVersions]) -> tuple[Optional[str], Optional[str]]:
    """toolkit running > toolkit installed/upgrade > the most common running version of any component."""
    tk = components.get("toolkit")
    if tk:
        for state in ("running", "installed", "upgrade"):
            v = getattr(tk, state)
            if v and v.version:
                return v.version, f"toolkit_{state}_version"
    for state in ("running", "installed", "upgrade"):
        counts = Counter(getattr(c, state).version for c in components.values()
                         if getattr(c, state) and getattr(c, state).version)
        if counts:
            version = counts.most_common(1)[0][0]
            name = next(n for n, c in components.items()
                        if getattr(c, state) and getattr(c, state).version == version)
            return version, f"{name}_{state}_version"
    return None, None


# --- *_install.info (toolkit, nnae, toolbox) ---------------------------------------------------------------------

class InstallInfo(KeyValueFile):
    """`ascend_toolkit_install.info` (also `ascend_nnae_install.info`, `ascend_tool_box_install.info`)."""

    package_name: Optional[str] = None
    version: Optional[str] = None
    innerversion: Optional[str] = None
    compatible_version: list[VersionRange] = Field(default_factory=list)
    arch: Optional[str] = None
    os: Optional[str] = None
    path: Optional[str] = None
    extra: dict[str, str] = Field(default_factory=dict)
    ignored: list[str] = Field(default_factory=list)


_INSTALL_KEYS = ("package_name", "version", "innerversion", "compatible_version", "arch", "os", "path")


@parser_kind("toolkit-install-info",
             expects="an ascend_toolkit_install.info (`package_name=`, `version=`, `arch=` lines)")
def parse_install_info(text: str) -> InstallInfo:
    """Parse `<root>/<arch>-linux/ascend_toolkit_install.info` and its nnae/toolbox siblings."""
    return _one_of(text, _install_info, "_install.info")


def _install_info(lines: list[str]) -> InstallInfo:
    pairs, ignored = _pairs(lines)
    d = _first(pairs)
    # Lower-case keys only: a driver version.info pasted before it has `Version=`, which is not this file's.
    if not any(k in d for k in ("version", "package_name", "innerversion")):
        raise ParseError("no `version=`/`package_name=` lines: not an *_install.info file")
    return InstallInfo(
        package_name=d.get("package_name") or None,
        version=d.get("version") or None,
        innerversion=d.get("innerversion") or None,
        compatible_version=parse_ranges(d.get("compatible_version")),
        arch=d.get("arch") or None,
        os=d.get("os") or None,
        path=d.get("path") or None,
        extra={k: v for k, v in d.items() if k not in _INSTALL_KEYS},
        ignored=ignored,
    )


# --- driver / firmware version.info -------------------------------------------------------------------------------

class DriverVersionInfo(KeyValueFile):
    """`/usr/local/Ascend/driver/version.info`."""

    version: Optional[str] = None
    package_version: Optional[str] = None
    ascendhal_version: Optional[str] = None
    innerversion: Optional[str] = None
    compatible_version: list[VersionRange] = Field(default_factory=list)
    compatible_version_fw: Optional[VersionRange] = Field(None, description="Firmware range this driver accepts")
    extra: dict[str, str] = Field(default_factory=dict, description="aicpu_version, tdt_version, ... verbatim")
    ignored: list[str] = Field(default_factory=list)


_DRIVER_KEYS = {"version", "package_version", "ascendhal_version", "innerversion", "compatible_version",
                "compatible_version_fw"}


@parser_kind("driver-version-info", expects="the driver's version.info (`Version=24.1.rc3`, `ascendhal_version=` ...)")
def parse_driver_version_info(text: str) -> DriverVersionInfo:
    """Parse the NPU driver's `version.info`."""
    return _one_of(text, _driver_version_info, "driver/")


def _driver_version_info(lines: list[str]) -> DriverVersionInfo:
    pairs, ignored = _pairs(lines)
    d = _first(pairs)
    # Capital `Version=`: the lower-case `version=` of an *_install.info is not a driver version.
    version = d.get("Version") or None
    if version is None or "firmware_version" in d or "version_dir" in d:
        raise ParseError("no `Version=` line: not a driver version.info")
    fw = parse_ranges(_get(d, "compatible_version_fw"))
    return DriverVersionInfo(
        version=version,
        package_version=_get(d, "package_version"),
        ascendhal_version=_get(d, "ascendhal_version"),
        innerversion=_get(d, "Innerversion"),
        compatible_version=parse_ranges(_get(d, "compatible_version")),
        compatible_version_fw=fw[0] if fw else None,
        extra={k: v for k, v in d.items() if k.lower() not in _DRIVER_KEYS},
        ignored=ignored,
    )


class FirmwareVersionInfo(KeyValueFile):
    """`/usr/local/Ascend/firmware/version.info`."""

    version: Optional[str] = None
    firmware_version: Optional[str] = None
    package_version: Optional[str] = Field(None, description="The HDK (driver) package this firmware shipped in")
    compatible_version_drv: list[VersionRange] = Field(default_factory=list)
    extra: dict[str, str] = Field(default_factory=dict)
    ignored: list[str] = Field(default_factory=list)


@parser_kind("firmware-version-info",
             expects="the firmware's version.info (`Version=7.1.0.11.220`, `firmware_version=`)")
def parse_firmware_version_info(text: str) -> FirmwareVersionInfo:
    """Parse the NPU firmware's `version.info`."""
    return _one_of(text, _firmware_version_info, "firmware/")


def _firmware_version_info(lines: list[str]) -> FirmwareVersionInfo:
    pairs, ignored = _pairs(lines)
    d = _first(pairs)
    version = d.get("Version") or None
    # The driver's file also has `Version=`; only the firmware's has these keys.
    if version is None or not ("firmware_version" in d or "compatible_version_drv" in d):
        raise ParseError("no `Version=` with `firmware_version=` lines: not a firmware version.info")
    return FirmwareVersionInfo(
        version=version,
        firmware_version=_get(d, "firmware_version"),
        package_version=_get(d, "package_version"),
        compatible_version_drv=parse_ranges(_get(d, "compatible_version_drv")),
        extra={k: v for k, v in d.items()
               if k.lower() not in {"version", "firmware_version", "package_version", "compatible_version_drv"}},
        ignored=ignored,
    )


# --- per-component CANN version.info ------------------------------------------------------------------------------

class ComponentVersionInfo(KeyValueFile):
    """`<cann root>/<component>/version.info`, e.g. toolkit/: `Version=8.2.0.0.201`, `version_dir=8.2.RC1`."""

    version: Optional[str] = Field(None, description="Internal build number, e.g. 8.2.0.0.201")
    version_dir: Optional[str] = Field(None, description="The CANN release this component belongs to, e.g. 8.2.RC1")
    timestamp: Optional[str] = None
    required_packages: dict[str, str] = Field(default_factory=dict,
                                              description="`required_package_<x>_version` -> value, quotes removed")
    extra: dict[str, str] = Field(default_factory=dict)
    ignored: list[str] = Field(default_factory=list)


@parser_kind("cann-component-version-info",
             expects="a CANN component version.info (`Version=8.2.0.0.201`, `version_dir=8.2.RC1`)")
def parse_component_version_info(text: str) -> ComponentVersionInfo:
    """Parse a per-component `version.info` inside a CANN install."""
    return _one_of(text, _component_version_info, "version.info")


def _component_version_info(lines: list[str]) -> ComponentVersionInfo:
    pairs, ignored = _pairs(lines)
    d = _first(pairs)
    version, version_dir = d.get("Version") or None, d.get("version_dir") or None
    if (version is None and version_dir is None) or any(
            k in d for k in ("ascendhal_version", "Innerversion", "firmware_version", "package_name")):
        raise ParseError("no `Version=`/`version_dir=` line: not a CANN component version.info")
    required = {}
    extra = {}
    for k, v in d.items():
        m = re.match(r"^required_package_(.+)_version$", k)
        if m:
            required[m.group(1)] = _strip_quotes(v)
        elif k.lower() not in ("version", "version_dir", "timestamp"):
            extra[k] = _strip_quotes(v)
    return ComponentVersionInfo(version=_strip_quotes(version) if version else None,
                                version_dir=_strip_quotes(version_dir) if version_dir else None,
                                timestamp=_get(d, "timestamp"), required_packages=required, extra=extra,
                                ignored=ignored)


# --- NNAL / ATB version.info (`key : value`) ----------------------------------------------------------------------

class NnalVersionInfo(KeyValueFile):
    """`/usr/local/Ascend/nnal/atb/latest/version.info`: `Ascend-cann-atb : 8.2.RC1`, `... Version : 8.2.RC1.B150`."""

    package: Optional[str] = Field(None, description="e.g. Ascend-cann-atb")
    version: Optional[str] = Field(None, description="Release, e.g. 8.2.RC1 (the CANN release it was built for)")
    build_version: Optional[str] = Field(None, description="e.g. 8.2.RC1.B150")
    platform: Optional[str] = None
    branch: Optional[str] = None
    commit_id: Optional[str] = None
    fields: dict[str, str] = Field(default_factory=dict, description="Every `key : value` verbatim")
    ignored: list[str] = Field(default_factory=list)


@parser_kind("nnal-version-info", expects="an NNAL/ATB version.info (`Ascend-cann-atb : 8.2.RC1` lines)")
def parse_nnal_version_info(text: str) -> NnalVersionInfo:
    """Parse NNAL/ATB `version.info` (`key : value` lines)."""
    return _one_of(text, _nnal_version_info, "nnal")


def _nnal_version_info(lines: list[str]) -> NnalVersionInfo:
    pairs, ignored = _pairs(lines, _KV_COLON)
    d = _first(pairs)
    info = NnalVersionInfo(fields=d, ignored=ignored)
    for k, v in d.items():
        kl = k.lower()
        if kl.startswith("ascend-") and kl.endswith(" version"):
            info.build_version = info.build_version or v
        elif kl.startswith("ascend-") and " " not in k:
            if info.package is None:
                info.package, info.version = k, v
        elif kl == "platform":
            info.platform = v
        elif kl == "branch":
            info.branch = v
        elif kl in ("commit id", "commit_id", "commitid"):
            info.commit_id = v
    if info.package is None and info.build_version is None:
        raise ParseError("no `Ascend-cann-<pkg> : <version>` line: not an NNAL/ATB version.info")
    return info


# --- /etc/ascend_install.info --------------------------------------------------------------------------------------

class AscendInstallInfo(KeyValueFile):
    """`/etc/ascend_install.info`: where and how the driver and firmware were installed."""

    user_name: Optional[str] = None
    user_group: Optional[str] = None
    driver_install_type: Optional[str] = None
    driver_install_path: Optional[str] = Field(None, description="Driver_Install_Path_Param, e.g. /usr/local/Ascend")
    driver_install_for_all: Optional[str] = None
    firmware_install_type: Optional[str] = None
    firmware_install_path: Optional[str] = None
    fields: dict[str, str] = Field(default_factory=dict)
    ignored: list[str] = Field(default_factory=list)


@parser_kind("ascend-install-info", expects="/etc/ascend_install.info (`Driver_Install_Path_Param=/usr/local/Ascend`)")
def parse_ascend_install_info(text: str) -> AscendInstallInfo:
    """Parse `/etc/ascend_install.info`."""
    return _one_of(text, _ascend_install_info, "ascend_install.info")


def _ascend_install_info(lines: list[str]) -> AscendInstallInfo:
    pairs, ignored = _pairs(lines)
    d = _first(pairs)
    known = ("UserName", "UserGroup", "Driver_Install_Type", "Driver_Install_Path_Param", "Driver_Install_For_All",
             "Firmware_Install_Type", "Firmware_Install_Path_Param")
    if not any(_get(d, k) is not None for k in known):
        raise ParseError("no `Driver_Install_Path_Param=`/`UserName=` lines: not /etc/ascend_install.info")
    return AscendInstallInfo(
        user_name=_get(d, "UserName"), user_group=_get(d, "UserGroup"),
        driver_install_type=_get(d, "Driver_Install_Type"),
        driver_install_path=_get(d, "Driver_Install_Path_Param"),
        driver_install_for_all=_get(d, "Driver_Install_For_All"),
        firmware_install_type=_get(d, "Firmware_Install_Type"),
        firmware_install_path=_get(d, "Firmware_Install_Path_Param"),
        fields=d, ignored=ignored,
    )


# --- bundles ------------------------------------------------------------------------------------------------------

def split_cat_sections(text: str) -> list[tuple[str, str]]:
    """Split a paste of several `cat <path>` outputs into (path, body) pairs, in order.

    Collectors (MindCluster faultdiag) and issue authors concatenate version files this way; text before the first
    `cat` line is returned under the path "".
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    sections: list[tuple[str, list[str]]] = [("", [])]
    for ln in text.split("\n"):
        m = _CAT_CMD.match(ln.strip())
        if m:
            sections.append((m.group(1).strip("\"'"), []))
        else:
            sections[-1][1].append(ln)
    return [(p, "\n".join(body).strip("\n")) for p, body in sections if p or "\n".join(body).strip()]


# A CANN install directory named for its version: `cann-8.5.0` (CANN >= 8.5), `ascend-toolkit/8.3.RC1` (older),
# `nnae-…`; a pre-release stays part of it (`cann-9.1.0-beta.1`). `latest` names no version.
_DIR_VERSION = re.compile(r"^(?:cann-|nnae-)?(\d{1,3}\.\d{1,3}[\w.]{0,40}?(?:-(?:alpha|beta)\.?\d{1,4})?)$", re.I)


def cann_dir_version(name: str) -> Optional[str]:
    """The version a CANN install directory's own name gives (`cann-8.5.0` -> 8.5.0, `8.3.RC1`), None otherwise."""
    m = _DIR_VERSION.match(name)
    return m.group(1) if m else None


def cann_path_version(path: str) -> Optional[str]:
    """The version of the CANN install a path lies in (`/usr/local/Ascend/ascend-toolkit/8.0.RC3/lib64`,
    `/usr/local/Ascend/cann-9.1.0-beta.1/opp`): a `cann-X`/`nnae-X` component, or the one under `ascend-toolkit` or
    `nnae`; None for `…/latest/…` and any other path."""
    parts = [p for p in path.split("/") if p][:64]
    for i, part in enumerate(parts):
        if part.lower().startswith(("cann-", "nnae-")) or (i and parts[i - 1] in ("ascend-toolkit", "nnae")):
            version = cann_dir_version(part)
            if version:
                return version
    return None
