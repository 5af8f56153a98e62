"""The `devices` probe over hand-built snapshots: /dev nodes, driver mounts, broken bind mounts, unreadable /dev."""

from __future__ import annotations

import pytest

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes import load_probes
from ascend_doctor.probes.devices import devices_probe
from ascend_doctor.seam.snapshot import DirEntry, FileEntry, LinkEntry, ReplayHost, Snapshot

VERSION_INFO = "Version=24.1.rc3\nascendhal_version=7.35.23\naicpu_version=1.0\n"
INSTALL_INFO = "UserName=HwHiAiUser\nUserGroup=HwHiAiUser\nInstall_Path_Param=/usr/local/Ascend\n"


def fact_of(snap: Snapshot):
    host = ReplayHost(snap)
    return devices_probe(host, FactStore(host, RunOptions(), probes={}))


def full_container(**over) -> Snapshot:
    """An all-cards vllm-ascend container on an Atlas 800I A2 (8 NPUs), every documented mount present."""
    dirs = {
        "/dev": DirEntry(entries=["console", "davinci0", "davinci1", "davinci10", "davinci2", "davinci3", "davinci4",
                                  "davinci5", "davinci6", "davinci7", "davinci_manager", "devmm_svm", "full",
                                  "hisi_hdc", "null", "shm", "zero"]),
        "/usr/local/dcmi": DirEntry(entries=["dcmi_interface_api.h", "libdcmi.so"]),
        "/usr/local/Ascend/driver/lib64": DirEntry(entries=["common", "driver", "libascend_hal.so"]),
    }
    files = {"/usr/local/Ascend/driver/version.info": FileEntry(content=VERSION_INFO),
             "/etc/ascend_install.info": FileEntry(content=INSTALL_INFO)}
    links = {"/usr/local/bin/npu-smi": LinkEntry(resolved="/usr/local/bin/npu-smi"),
             "/usr/local/Ascend/driver/tools/hccn_tool": LinkEntry(resolved="/usr/local/Ascend/driver/tools/hccn_tool")}
    dirs.update(over.pop("dirs", {}))
    files.update(over.pop("files", {}))
    links.update(over.pop("links", {}))
    return Snapshot.model_validate(dict(dirs=dirs, files=files, links=links, **over))


def test_registered():
    assert load_probes()["devices"] is devices_probe


def test_full_container_everything_present():
    f = fact_of(full_container())
    assert f.dev_listed and f.davinci == [0, 1, 2, 3, 4, 5, 6, 7, 10]  # numeric order, not "davinci10" after 1
    assert f.has("davinci_manager") and f.has("devmm_svm") and f.has("hisi_hdc") and not f.has("ascend_manager")
    assert f.dcmi.exists and f.dcmi.kind == "dir" and f.dcmi.entries == 2
    assert f.npu_smi_present and f.npu_smi[0].kind == "file" and not f.npu_smi[1].exists
    assert f.driver_lib64.entries == 3
    assert f.driver_version_info.kind == "file" and f.ascend_install_info.kind == "file"
    assert f.hccn_tool.exists
    assert f.dcmi.describe() == "/usr/local/dcmi: directory, 2 entries"


def test_bare_container_nothing_mounted():
    f = fact_of(Snapshot(dirs={"/dev": DirEntry(entries=["console", "null", "pts", "shm", "zero"])}))
    assert f.dev_listed and f.davinci == [] and not any(f.nodes.values())
    assert not f.dcmi.exists and not f.npu_smi_present and not f.driver_lib64.exists
    assert not f.driver_version_info.exists and not f.ascend_install_info.exists and not f.hccn_tool.exists
    assert f.driver_lib64.describe() == "/usr/local/Ascend/driver/lib64: missing"


def test_bind_mount_of_a_missing_host_file_is_an_empty_directory():
    # docker run -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi on a host without it creates a directory
    snap = full_container(dirs={"/usr/local/bin/npu-smi": DirEntry(entries=[]),
                                "/usr/local/Ascend/driver/lib64": DirEntry(entries=[])},
                          links={"/usr/local/bin/npu-smi": LinkEntry(error="not_found")})
    f = fact_of(snap)
    assert f.npu_smi[0].exists and f.npu_smi[0].kind == "dir" and not f.npu_smi_present
    assert f.driver_lib64.kind == "dir" and f.driver_lib64.entries == 0


def test_unreadable_file_still_exists():
    snap = full_container(files={"/etc/ascend_install.info": FileEntry(error="permission_denied",
                                                                       error_message="Permission denied")})
    f = fact_of(snap)
    assert f.ascend_install_info.exists and f.ascend_install_info.error == "Permission denied"


def test_atlas_200i_nodes_and_sbin_npu_smi():
    snap = Snapshot(dirs={"/dev": DirEntry(entries=["ascend_manager", "davinci0", "user_config", "null"])},
                    links={"/usr/local/sbin/npu-smi": LinkEntry(resolved="/usr/local/sbin/npu-smi")})
    f = fact_of(snap)
    assert f.has("ascend_manager") and f.has("user_config") and f.davinci == [0]
    assert f.npu_smi_present and f.npu_smi[1].exists


def test_dev_unreadable_is_unavailable():
    snap = Snapshot(dirs={"/dev": DirEntry(error="permission_denied", error_message="Permission denied")})
    with pytest.raises(FactUnavailable, match="Permission denied"):
        fact_of(snap)
