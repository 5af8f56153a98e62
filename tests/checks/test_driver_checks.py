"""DRV checks on hand-built driver / npu-smi facts (values modelled on vllm-ascend#451 and matrix-facts §3.2)."""

import pytest

from ascend_doctor.core.errors import ParseError
from ascend_doctor.parsers.ascend_files import parse_driver_version_info, parse_firmware_version_info
from ascend_doctor.parsers.npu_smi import NpuSmiInfo
from ascend_doctor.probes.cann import DriverFact
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.report import Status
from tests.helpers import corpus_params, read_corpus, run_check

DRIVER_TEXT = """Version=24.1.rc3
ascendhal_version=7.35.23
aicpu_version=1.0
tdt_version=1.0
Innerversion=V100R001C19SPC001B124
compatible_version=[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]
compatible_version_fw=[7.0.0,7.5.99]
package_version=24.1.rc3
"""
FW_OK = ("Version=7.5.0.1.129\nfirmware_version=1.0\npackage_version=24.1.rc3\n"
         "compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]\n")
FW_NEW = "Version=7.7.0.1.231\nfirmware_version=1.0\npackage_version=25.0.rc1.1\ncompatible_version_drv=[25.0,25.0.]\n"


def drv(fw=None, **kw):
    d = DriverFact(found=True, searched=["/usr/local/Ascend/driver/version.info"],
                   version_info=parse_driver_version_info(DRIVER_TEXT), lib64_present=True, **kw)
    if fw:
        d.firmware_path, d.firmware = "/usr/local/Ascend/firmware/version.info", parse_firmware_version_info(fw)
    return d


NO_DRV = DriverFact(found=False, searched=["/usr/local/Ascend/driver/version.info"], lib64_present=False)


def smi(version=None, found=True):
    cmd = CommandSummary(argv=["npu-smi", "info"], returncode=0 if found else None,
                         error=None if found else "not_found")
    return NpuSmiFact(found=found, command=cmd,
                      info=NpuSmiInfo(tool_version=version, driver_version=version) if found else None)


# DRV101 -------------------------------------------------------------------------------------------------------
def test_driver_present_pass():
    f = run_check("DRV101", {"driver": drv(), "npu_smi": smi("24.1.rc3")})
    assert f.status == Status.PASS and "24.1.rc3" in f.message
    assert any("/usr/local/Ascend/driver/version.info" in e.source for e in f.evidence)


def test_no_driver_and_no_npu_smi_fails_plainly():
    f = run_check("DRV101", {"driver": NO_DRV, "npu_smi": smi(found=False)})
    assert f.status == Status.FAIL and f.severity.value == "critical"
    assert "No Ascend driver found" in f.message
    assert "Ascend-hdk" in f.remediation and "/usr/local/Ascend/driver/lib64" in f.remediation


def test_npu_smi_without_version_info_warns():
    f = run_check("DRV101", {"driver": NO_DRV, "npu_smi": smi("25.0.rc1.1")})
    assert f.status == Status.WARN and "npu-smi" in f.message


def test_driver_present_unknown_paths():
    assert run_check("DRV101", {}).status == Status.UNKNOWN
    assert run_check("DRV101", {"driver": NO_DRV}).status == Status.UNKNOWN  # npu-smi could not be asked


# DRV102 -------------------------------------------------------------------------------------------------------
def test_driver_version_pass_and_npu_smi_agrees():
    f = run_check("DRV102", {"driver": drv(), "npu_smi": smi("24.1.rc3")})
    assert f.status == Status.PASS and "npu-smi agrees" in f.message


def test_driver_version_disagrees_with_loaded_driver_fails():
    f = run_check("DRV102", {"driver": drv(), "npu_smi": smi("23.0.3")})
    assert f.status == Status.FAIL and "23.0.3" in f.message and "24.1.rc3" in f.message


def test_driver_version_unreadable_file_fails():
    d = DriverFact(found=False, version_info_error="/usr/local/Ascend/driver/version.info: permission denied",
                   searched=["/usr/local/Ascend/driver/version.info"])
    assert run_check("DRV102", {"driver": d, "npu_smi": smi(found=False)}).status == Status.FAIL


def test_driver_version_only_from_npu_smi_warns_and_none_skips():
    assert run_check("DRV102", {"driver": NO_DRV, "npu_smi": smi("25.0.rc1.1")}).status == Status.WARN
    assert run_check("DRV102", {"driver": NO_DRV, "npu_smi": smi(found=False)}).status == Status.SKIP
    assert run_check("DRV102", {}).status == Status.UNKNOWN


# DRV103 -------------------------------------------------------------------------------------------------------
def test_firmware_within_range_passes():
    f = run_check("DRV103", {"driver": drv(FW_OK)})
    assert f.status == Status.PASS and "7.5.0.1.129" in f.message and "7.0.0,7.5.99" in f.message


def test_firmware_outside_driver_range_fails():
    f = run_check("DRV103", {"driver": drv(FW_NEW)})
    assert f.status == Status.FAIL
    assert "outside the range driver 24.1.rc3 accepts" in f.message and "7.0.0,7.5.99" in f.message


def test_firmware_unknown_without_firmware_file_or_fact():
    f = run_check("DRV103", {"driver": drv()})
    assert f.status == Status.UNKNOWN and "containers" in f.message
    assert run_check("DRV103", {}).status == Status.UNKNOWN
    assert run_check("DRV103", {"driver": NO_DRV}).status == Status.SKIP


def test_firmware_range_without_driver_range_is_unknown():
    d = drv(FW_OK)
    d.version_info = parse_driver_version_info("Version=24.1.rc3\npackage_version=24.1.rc3\n")
    assert run_check("DRV103", {"driver": d}).status == Status.UNKNOWN


@pytest.mark.parametrize("path", corpus_params("cann_version"))
def test_real_driver_firmware_pairs_from_the_corpus(path):
    """Driver (and firmware) version.info pastes from real hosts: each pair shipped in one HDK, so it must pass."""
    _, body = read_corpus(path)
    try:
        vi = parse_driver_version_info(body)
    except ParseError:
        pytest.skip("no driver version.info in this sample")
    d = DriverFact(found=True, version_info=vi)
    try:
        d.firmware_path, d.firmware = "/usr/local/Ascend/firmware/version.info", parse_firmware_version_info(body)
    except ParseError:
        pass
    assert run_check("DRV102", {"driver": d, "npu_smi": smi(found=False)}).status == Status.PASS
    f = run_check("DRV103", {"driver": d})
    assert f.status == (Status.PASS if d.firmware else Status.UNKNOWN), f.message
