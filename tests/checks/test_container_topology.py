"""CTR105: HCCL's topology files and root info in a 950 container (vllm-ascend#11052), and the `docker run` plan
writes for it."""

from __future__ import annotations

from ascend_doctor.deploy.container import docker_run
from ascend_doctor.facts.scope import NpuScope
from ascend_doctor.parsers.npu_smi import NpuChip, NpuSmiInfo
from ascend_doctor.probes.devices import PathState
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.report import Status
from tests.checks.test_container_checks import DOCKER, HOST, devices
from tests.helpers import run_check

TOPO = "/usr/local/Ascend/driver/topo/950"
ROOTINFO = "/etc/hccl_rootinfo.json"


def smi(name: str, n: int = 2) -> NpuSmiFact:
    chips = [NpuChip(npu_id=i, chip_id=0, name=name, health="OK", hbm_used_mb=3000, hbm_total_mb=131072)
             for i in range(n)]
    return NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0),
                      info=NpuSmiInfo(driver_version="25.7.t5", chips=chips))


def judge(topo: PathState, rootinfo: PathState, name="950PR", count=2, container=DOCKER):
    return run_check("CTR105", {"container": container, "npu_scope": NpuScope(count=count), "npu_smi": smi(name),
                                "devices": devices(davinci=range(2), driver_topo_950=topo, hccl_rootinfo=rootinfo)})


HAVE_TOPO = PathState(path=TOPO, exists=True, kind="dir", entries=3)
HAVE_ROOT = PathState(path=ROOTINFO, exists=True, kind="file")


def test_both_present_pass_and_missing_ones_fail_with_the_mounts():
    assert judge(HAVE_TOPO, HAVE_ROOT).status == Status.PASS
    f = judge(PathState(path=TOPO), PathState(path=ROOTINFO))
    assert f.status == Status.FAIL and f"needs {TOPO}, {ROOTINFO}" in f.message
    assert "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver" in f.remediation
    f = judge(PathState(path=TOPO, exists=True, kind="dir", entries=0), HAVE_ROOT)
    assert f.status == Status.FAIL and TOPO in f.message  # an empty directory: its -v source was missing


def test_other_families_one_npu_or_the_host_are_not_judged_and_unrecorded_is_unknown():
    assert judge(PathState(path=TOPO), PathState(path=ROOTINFO), name="910B3").status == Status.SKIP
    assert judge(PathState(path=TOPO), PathState(path=ROOTINFO), count=1).status == Status.SKIP
    assert judge(PathState(path=TOPO), PathState(path=ROOTINFO), container=HOST).status == Status.SKIP
    f = judge(PathState(path=TOPO, recorded=False), HAVE_ROOT)
    assert f.status == Status.UNKNOWN and "did not record" in f.message


def test_plan_mounts_the_whole_driver_for_a_950_with_hccl():
    argv = docker_run("quay.io/ascend/vllm-ascend:v0.25.1rc1-a5", 2, {}, None, network=True, whole_driver=True)
    text = " ".join(argv)
    assert "-v /usr/local/Ascend/driver:/usr/local/Ascend/driver" in text and f"-v {ROOTINFO}:{ROOTINFO}" in text
    assert "/usr/local/Ascend/driver/lib64/:" not in text and "hccn_tool:" not in text
    assert "-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/" in " ".join(
        docker_run("img", 2, {}, None, network=True))
