"""Ascend device nodes under /dev and the driver pieces a container needs mounted (fact `devices`).

vllm-ascend's `docker run` (docs/source/installation.md) passes `--device /dev/davinciN`, `/dev/davinci_manager`,
`/dev/devmm_svm`, `/dev/hisi_hdc` and mounts `/usr/local/dcmi`, `/usr/local/bin/npu-smi`,
`/usr/local/Ascend/driver/lib64/`, `/usr/local/Ascend/driver/version.info`, `/etc/ascend_install.info` (plus
`/usr/local/Ascend/driver/tools/hccn_tool` for all-card images). This probe records which of them exist, and their
kind: `docker run -v SRC:DST` with a SRC missing on the host creates an empty *directory* at DST, so "npu-smi is a
directory" or "lib64 is empty" means the mount source was wrong on the host.
"""

from __future__ import annotations

import re
from typing import Optional

from pydantic import Field

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import NOT_FOUND, REPLAY_MISS_NOTE
from ascend_doctor.text.numbers import int_or_none

NODE_NAMES = ("davinci_manager", "devmm_svm", "hisi_hdc", "ascend_manager", "user_config")
NPU_SMI_PATHS = ("/usr/local/bin/npu-smi", "/usr/local/sbin/npu-smi")
DCMI_DIR = "/usr/local/dcmi"
DRIVER_LIB64 = "/usr/local/Ascend/driver/lib64"
DRIVER_VERSION_INFO = "/usr/local/Ascend/driver/version.info"
ASCEND_INSTALL_INFO = "/etc/ascend_install.info"
HCCN_TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
DRIVER_TOPO_950 = "/usr/local/Ascend/driver/topo/950"  # Atlas 350 (950): HCCL's topology files (vllm-ascend#11052)
HCCL_ROOTINFO = "/etc/hccl_rootinfo.json"
_DAVINCI = re.compile(r"^davinci(\d+)$")


class PathState(Model):
    """What is at one path: missing, a file, a directory (with how many entries), or unreadable."""

    path: str
    exists: bool = False
    kind: Optional[str] = Field(None, description="file | dir | None (missing or could not tell)")
    entries: Optional[int] = Field(None, description="Number of entries when it is a readable directory")
    error: Optional[str] = Field(None, description="Why it could not be read, when it exists but is unreadable")
    recorded: bool = Field(True, description="Replay: False when the snapshot has no answer for the path at all")

    def describe(self) -> str:
        """One line for evidence, e.g. '/usr/local/dcmi: directory, 3 entries' (a message: shown translated)."""
        why = f" ({self.error})" if self.error else ""
        if not self.exists:
            return T("{path}: missing{why}", path=self.path, why=why)
        if self.kind == "dir":
            return T("{path}: directory, {n} entries", path=self.path, n=self.entries) if self.entries is not None \
                else T("{path}: directory", path=self.path)
        if self.kind == "file":
            return T("{path}: file", path=self.path)
        return T("{path}: exists{why}", path=self.path, why=why)


class DevicesFact(Model):
    dev_listed: bool = Field(description="False when /dev could not be listed (then node presence is unknown)")
    dev_error: Optional[str] = None
    davinci: list[int] = Field(default_factory=list, description="N of every /dev/davinciN, sorted")
    nodes: dict[str, bool] = Field(default_factory=dict, description="davinci_manager, devmm_svm, hisi_hdc, ...")
    dcmi: PathState
    npu_smi: list[PathState] = Field(default_factory=list, description="/usr/local/bin and /usr/local/sbin npu-smi")
    driver_lib64: PathState
    driver_version_info: PathState
    ascend_install_info: PathState
    hccn_tool: PathState
    driver_topo_950: Optional[PathState] = None
    hccl_rootinfo: Optional[PathState] = None

    def has(self, node: str) -> bool:
        return bool(self.nodes.get(node))

    @property
    def npu_smi_present(self) -> bool:
        """An npu-smi *file* at one of the usual places (a directory there is a broken mount)."""
        return any(p.exists and p.kind != "dir" for p in self.npu_smi)


def _state(host, path: str, read: bool = False) -> PathState:
    """Existence and kind of `path`, asking: a directory listing, then (small text files) its content, then readlink.

    A program (npu-smi, hccn_tool) is never read: readlink answers existence without recording its bytes.
    """
    d = host.list_dir(path)
    if d.ok:
        return PathState(path=path, exists=True, kind="dir", entries=len(d.entries or []))
    if read:
        f = host.read_file(path, max_bytes=4096)
        if f.ok:
            return PathState(path=path, exists=True, kind="file")
        if f.error not in (NOT_FOUND, None):  # e.g. permission denied: it is there, we may not read it
            return PathState(path=path, exists=True, error=f.error_message or f.error)
    link = host.readlink(path)
    if link.error is None and (link.resolved or link.target):
        return PathState(path=path, exists=True, kind="file")
    return PathState(path=path, recorded=REPLAY_MISS_NOTE not in (d.error_message or ""))


@probe("devices")
def devices_probe(host, ctx) -> DevicesFact:
    """List /dev for the Ascend nodes and look at the driver paths a container must have mounted."""
    dev = host.list_dir("/dev")
    if not dev.ok and dev.error != NOT_FOUND:
        raise FactUnavailable("devices", T("cannot list /dev: {error_message}",
                                           error_message=dev.error_message or dev.error))
    entries = dev.entries or []
    davinci = sorted(n for e in entries for m in [_DAVINCI.match(e)] if m
                     for n in [int_or_none(m.group(1))] if n is not None)
    return DevicesFact(
        dev_listed=dev.ok,
        dev_error=None if dev.ok else (dev.error_message or dev.error),
        davinci=davinci,
        nodes={n: n in entries for n in NODE_NAMES},
        dcmi=_state(host, DCMI_DIR),
        npu_smi=[_state(host, p) for p in NPU_SMI_PATHS],
        driver_lib64=_state(host, DRIVER_LIB64),
        driver_version_info=_state(host, DRIVER_VERSION_INFO, read=True),
        ascend_install_info=_state(host, ASCEND_INSTALL_INFO, read=True),
        hccn_tool=_state(host, HCCN_TOOL),
        driver_topo_950=_state(host, DRIVER_TOPO_950),
        hccl_rootinfo=_state(host, HCCL_ROOTINFO, read=True),
    )


