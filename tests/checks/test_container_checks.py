"""CTR checks on hand-built facts: an all-cards vllm-ascend container, containers missing nodes or mounts, the host."""

from __future__ import annotations

import pytest

from ascend_doctor.parsers.npu_smi import NpuChip, NpuSmiError, NpuSmiInfo
from ascend_doctor.probes.devices import DevicesFact, PathState
from ascend_doctor.probes.host_facts import ContainerFact
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.report import Status
from tests.helpers import run_check

DOCKER = ContainerFact(in_container=True, runtime="docker", signals=["/.dockerenv exists"])
K8S = ContainerFact(in_container=True, runtime="kubernetes", kubernetes=True,
                    signals=["/proc/1/cgroup mentions kubepods", "env KUBERNETES_SERVICE_HOST is set"])
HOST = ContainerFact(in_container=False)


def devices(davinci=range(8), nodes=("davinci_manager", "devmm_svm", "hisi_hdc"), **over) -> DevicesFact:
    """What the devices probe sees in vllm-ascend's all-cards container on an Atlas 800I A2."""
    base = dict(
        dev_listed=True, davinci=list(davinci),
        nodes={n: n in nodes for n in ("davinci_manager", "devmm_svm", "hisi_hdc", "ascend_manager", "user_config")},
        dcmi=PathState(path="/usr/local/dcmi", exists=True, kind="dir", entries=2),
        npu_smi=[PathState(path="/usr/local/bin/npu-smi", exists=True, kind="file"),
                 PathState(path="/usr/local/sbin/npu-smi")],
        driver_lib64=PathState(path="/usr/local/Ascend/driver/lib64", exists=True, kind="dir", entries=3),
        driver_version_info=PathState(path="/usr/local/Ascend/driver/version.info", exists=True, kind="file"),
        ascend_install_info=PathState(path="/etc/ascend_install.info", exists=True, kind="file"),
        hccn_tool=PathState(path="/usr/local/Ascend/driver/tools/hccn_tool", exists=True, kind="file"),
    )
    base.update(over)
    return DevicesFact(**base)


def missing(path: str) -> PathState:
    return PathState(path=path)


def smi_table(n: int = 8) -> NpuSmiFact:
    chips = [NpuChip(npu_id=i, chip_id=0, name="910B3", health="OK", hbm_used_mb=3314, hbm_total_mb=65536)
             for i in range(n)]
    return NpuSmiFact(found=True, tool="/usr/local/bin/npu-smi",
                      command=CommandSummary(argv=["/usr/local/bin/npu-smi", "info"], returncode=0),
                      info=NpuSmiInfo(driver_version="24.1.rc3", chips=chips))


def smi_error(code, message) -> NpuSmiFact:
    return NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=255),
                      info=NpuSmiInfo(error=NpuSmiError(code=code, message=message)))


E8020 = "dcmi model initialized failed, because the device is used. ret is -8020"
E8005 = "dcmi module initialize failed. ret is -8005"


@pytest.mark.parametrize("code", ["CTR101", "CTR102", "CTR103", "CTR104"])
def test_every_ctr_check_skips_on_the_host_and_is_unknown_without_facts(code):
    f = run_check(code, {"container": HOST, "devices": devices(), "npu_smi": smi_table(), "env": {}})
    assert f.status == Status.SKIP
    assert run_check(code, {}).status == Status.UNKNOWN


# CTR101 -------------------------------------------------------------------------------------------------------------
def test_nodes_all_present_pass():
    f = run_check("CTR101", {"container": DOCKER, "devices": devices()})
    assert f.status == Status.PASS and "8 NPU node(s)" in f.message


def test_nodes_missing_give_exact_device_flags():
    f = run_check("CTR101", {"container": DOCKER, "devices": devices(nodes=("davinci_manager",))})
    assert f.status == Status.FAIL
    assert "/dev/devmm_svm" in f.message and "/dev/hisi_hdc" in f.message and "/dev/davinci_manager" not in f.message
    assert "--device /dev/devmm_svm --device /dev/hisi_hdc" in f.remediation
    assert "huawei.com/Ascend910" in f.remediation


def test_no_davinci_at_all_and_kubernetes_hint_first():
    f = run_check("CTR101", {"container": K8S, "devices": devices(davinci=[])})
    assert f.status == Status.FAIL and "/dev/davinciN" in f.message
    assert f.remediation.startswith("in Kubernetes") and "--device /dev/davinci0" in f.remediation


def test_atlas_200i_board_needs_ascend_manager_not_davinci_manager():
    d = devices(davinci=[0], nodes=("ascend_manager", "user_config"))
    assert run_check("CTR101", {"container": DOCKER, "devices": d}).status == Status.PASS
    f = run_check("CTR101", {"container": DOCKER, "devices": devices(davinci=[0], nodes=("user_config",))})
    assert f.status == Status.FAIL and "/dev/davinci_manager" in f.message


def test_dev_not_listable_is_unknown():
    f = run_check("CTR101", {"container": DOCKER, "devices": devices(dev_listed=False, dev_error="Permission denied",
                                                                      davinci=[])})
    assert f.status == Status.UNKNOWN and "Permission denied" in f.message


# CTR102 -------------------------------------------------------------------------------------------------------------
def test_mounts_present_pass():
    f = run_check("CTR102", {"container": DOCKER, "devices": devices()})
    assert f.status == Status.PASS and "driver/lib64 (3 entries)" in f.message


def test_mounts_missing_give_exact_v_flags():
    d = devices(dcmi=missing("/usr/local/dcmi"), driver_lib64=missing("/usr/local/Ascend/driver/lib64"),
                npu_smi=[missing("/usr/local/bin/npu-smi"), missing("/usr/local/sbin/npu-smi")],
                driver_version_info=missing("/usr/local/Ascend/driver/version.info"),
                ascend_install_info=missing("/etc/ascend_install.info"))
    f = run_check("CTR102", {"container": DOCKER, "devices": d})
    assert f.status == Status.FAIL
    for flag in ("-v /usr/local/dcmi:/usr/local/dcmi", "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi",
                 "-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/",
                 "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info",
                 "-v /etc/ascend_install.info:/etc/ascend_install.info"):
        assert flag in f.remediation
    assert set(f.details["missing"]) == {"dcmi", "driver_lib64", "npu_smi", "driver_version_info",
                                         "ascend_install_info"}


def test_bind_mount_of_missing_host_source_is_named():
    d = devices(npu_smi=[PathState(path="/usr/local/bin/npu-smi", exists=True, kind="dir", entries=0),
                         missing("/usr/local/sbin/npu-smi")],
                driver_version_info=PathState(path="/usr/local/Ascend/driver/version.info", exists=True, kind="dir",
                                              entries=0),
                driver_lib64=PathState(path="/usr/local/Ascend/driver/lib64", exists=True, kind="dir", entries=0))
    f = run_check("CTR102", {"container": DOCKER, "devices": d})
    assert f.status == Status.FAIL
    assert "/usr/local/bin/npu-smi is a directory" in f.message
    assert "version.info is a directory, not a file" in f.message and "lib64 is an empty directory" in f.message


def test_npu_smi_on_path_elsewhere_counts():
    d = devices(npu_smi=[missing("/usr/local/bin/npu-smi"), missing("/usr/local/sbin/npu-smi")])
    on_path = smi_table().model_copy(update={"tool": "npu-smi"})
    assert run_check("CTR102", {"container": DOCKER, "devices": d, "npu_smi": on_path}).status == Status.PASS
    assert run_check("CTR102", {"container": DOCKER, "devices": d}).status == Status.FAIL


# CTR103 -------------------------------------------------------------------------------------------------------------
def test_hccn_tool_present_pass():
    assert run_check("CTR103", {"container": DOCKER, "devices": devices(), "env": {}}).status == Status.PASS


def test_hccn_tool_missing_with_eight_npus_warns_with_flag():
    d = devices(hccn_tool=missing("/usr/local/Ascend/driver/tools/hccn_tool"))
    f = run_check("CTR103", {"container": DOCKER, "devices": d, "env": {}})
    assert f.status == Status.WARN and "8 NPUs visible" in f.message
    assert "-v /usr/local/Ascend/driver/tools/hccn_tool:/usr/local/Ascend/driver/tools/hccn_tool" in f.remediation


def test_hccn_tool_missing_single_npu_skips_unless_multi_node():
    d = devices(davinci=[3], hccn_tool=missing("/usr/local/Ascend/driver/tools/hccn_tool"))
    assert run_check("CTR103", {"container": DOCKER, "devices": d, "env": {}}).status == Status.SKIP
    f = run_check("CTR103", {"container": DOCKER, "devices": d, "env": {"HCCL_IF_IP": "10.0.0.11"}})
    assert f.status == Status.WARN and "HCCL_IF_IP" in f.message


def test_hccn_tool_missing_unknown_device_count():
    d = devices(davinci=[], dev_listed=False, hccn_tool=missing("/usr/local/Ascend/driver/tools/hccn_tool"))
    assert run_check("CTR103", {"container": DOCKER, "devices": d, "env": {}}).status == Status.UNKNOWN


# CTR104 -------------------------------------------------------------------------------------------------------------
def test_npu_smi_in_container_pass():
    f = run_check("CTR104", {"container": DOCKER, "npu_smi": smi_table(), "devices": devices()})
    assert f.status == Status.PASS


def test_8020_in_container_is_sharing():
    f = run_check("CTR104", {"container": DOCKER, "npu_smi": smi_error(-8020, E8020), "devices": devices()})
    assert f.status == Status.FAIL and "another container" in f.message
    assert "docker inspect <id> | grep davinci" in f.remediation and f.details["code"] == -8020


def test_8005_in_container_names_the_missing_mount():
    d = devices(nodes=("davinci_manager",), driver_lib64=missing("/usr/local/Ascend/driver/lib64"))
    f = run_check("CTR104", {"container": DOCKER, "npu_smi": smi_error(-8005, E8005), "devices": d})
    assert f.status == Status.FAIL
    assert "/dev/devmm_svm" in f.message and "/usr/local/Ascend/driver/lib64 is missing" in f.message
    assert "--device /dev/devmm_svm" in f.remediation and "-v /usr/local/Ascend/driver/lib64/" in f.remediation


def test_8005_in_container_with_complete_mounts_points_at_user_or_sharing():
    f = run_check("CTR104", {"container": DOCKER, "npu_smi": smi_error(-8005, E8005), "devices": devices()})
    assert f.status == Status.FAIL and "HwHiAiUser" in f.message and "--group-add" in f.remediation


def test_npu_smi_absent_in_container_is_left_to_ctr102():
    absent = NpuSmiFact(found=False, command=CommandSummary(argv=["npu-smi", "info"], error="not_found"))
    f = run_check("CTR104", {"container": DOCKER, "npu_smi": absent})
    assert f.status == Status.SKIP and "CTR102" in f.message


# End to end: real probes on replayed snapshots, then the NPU/CTR/HCCL checks --------------------------------------
def _table(n: int) -> str:
    """A hand-written `npu-smi info` of n idle 910B3 (24.1.rc3 layout)."""
    rows = []
    for i in range(n):
        rows.append(f"| {i}     910B3               | OK            | 98.6        45                "
                    "0    / 0             |")
        rows.append(f"| 0                         | 0000:{0xC1 + i:02X}:00.0  | 0           0    / 0          "
                    "3314 / 65536         |")
        rows.append("+" + "=" * 27 + "+" + "=" * 15 + "+" + "=" * 52 + "+")
    return "\n".join([
        "+------------------------------------------------------------------------------------------------+",
        "| npu-smi 24.1.rc3                 Version: 24.1.rc3                                             |",
        "+---------------------------+---------------+----------------------------------------------------+",
        "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
        "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
        "+===========================+===============+====================================================+",
        *rows,
    ]) + "\n"


def _report(snapshot, select=("NPU", "CTR", "HCCL")):
    from ascend_doctor.core.engine import run_static
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.seam.snapshot import ReplayHost

    rep = run_static(ReplayHost(snapshot), load_registry(entry_points=False), RunOptions(select=list(select)))
    return {f.code: f for f in rep.findings}


def test_replay_container_started_without_mounts():
    from ascend_doctor.seam.snapshot import CommandEntry, DirEntry, FileEntry, Snapshot

    snap = Snapshot.model_validate(dict(
        env={"ASCEND_RT_VISIBLE_DEVICES": "0,1"},
        files={"/.dockerenv": FileEntry(content="")},
        dirs={"/dev": DirEntry(entries=["console", "davinci0", "davinci1", "null", "shm"])},
        links={"/usr/local/bin/npu-smi": {"resolved": "/usr/local/bin/npu-smi"}},
        commands=[CommandEntry(argv=["npu-smi", "info"], returncode=255, stdout=E8005 + "\n")],
    ))
    f = _report(snap)
    assert f["CTR101"].status == Status.FAIL and "/dev/davinci_manager" in f["CTR101"].message
    assert f["CTR102"].status == Status.FAIL and "-v /usr/local/dcmi:/usr/local/dcmi" in f["CTR102"].remediation
    assert f["CTR104"].status == Status.FAIL and "-8005 because the container lacks /dev/davinci_manager" \
        in f["CTR104"].message
    assert f["NPU102"].status == Status.SKIP  # the container check owns this error
    assert f["NPU101"].status == Status.UNKNOWN and "-8005" in f["NPU101"].message
    assert f["CTR103"].status == Status.WARN  # two NPUs, no hccn_tool
    assert f["HCCL101"].status == Status.UNKNOWN and "CTR103" in f["HCCL101"].message
    assert f["HCCL105"].status == Status.WARN


def test_replay_healthy_host_with_eight_npus():
    from ascend_doctor.seam.snapshot import CommandEntry, DirEntry, FileEntry, Snapshot

    tool = "/usr/local/Ascend/driver/tools/hccn_tool"
    commands = [CommandEntry(argv=["npu-smi", "info"], stdout=_table(8))]
    for d in range(8):
        commands += [
            CommandEntry(argv=["npu-smi", "info", "-t", "health", "-i", str(d)],
                         stdout="\tHealth Status                  : OK\n\tError Code                     : NA\n"
                                "\tError Information              : NA\n"),
            CommandEntry(argv=[tool, "-i", str(d), "-link", "-g"], stdout="link status: UP\n"),
            CommandEntry(argv=[tool, "-i", str(d), "-ip", "-g"],
                         stdout=f"ipaddr:10.20.{d}.10\nnetmask:255.255.255.0\n"),
            CommandEntry(argv=[tool, "-i", str(d), "-net_health", "-g"], stdout="net health status: Success\n"),
        ]
    conf = "".join(f"address_{d}=10.20.{d}.10\nnetmask_{d}=255.255.255.0\n" for d in range(8))
    snap = Snapshot.model_validate(dict(env={"HCCL_CONNECT_TIMEOUT": "1200", "HCCL_EXEC_TIMEOUT": "3600"},
                    files={"/etc/hccn.conf": FileEntry(content=conf)},
                    dirs={"/dev": DirEntry(entries=[f"davinci{d}" for d in range(8)]
                                           + ["davinci_manager", "devmm_svm", "hisi_hdc"])},
                    commands=commands))
    f = _report(snap)
    for code in ("NPU101", "NPU102", "NPU103", "NPU104", "HCCL101", "HCCL102", "HCCL103", "HCCL104", "HCCL105"):
        assert f[code].status == Status.PASS, (code, f[code].message)
    for code in ("CTR101", "CTR102", "CTR103", "CTR104"):
        assert f[code].status == Status.SKIP


def test_hccn_tool_missing_with_no_npu_at_all_skips_to_ctr101():
    d = devices(davinci=[], hccn_tool=missing("/usr/local/Ascend/driver/tools/hccn_tool"))
    f = run_check("CTR103", {"container": DOCKER, "devices": d, "env": {}})
    assert f.status == Status.SKIP and "CTR101" in f.message
