"""CANN108: the SoC directories of the operator kernels against the host's chips (vllm-ascend#237, #1440)."""

from __future__ import annotations

from ascend_doctor.probes.cann import CannFact, CannInstall
from ascend_doctor.probes.opp import OppKernelsFact
from ascend_doctor.report import Status
from tests.checks.test_hardware_checks import smi
from tests.helpers import run_check

DIR = "/usr/local/Ascend/ascend-toolkit/latest/opp/built-in/op_impl/ai_core/tbe/kernel/config"


def judge(chip: str, socs, cann: str = "8.0.0", missing: bool = False, error: str = ""):
    install = CannInstall(root="/usr/local/Ascend/ascend-toolkit/8.0.0", version=cann)
    facts = {"cann": CannFact(found=True, installs=[install], active=install, version=cann), "npu_smi": smi(chip),
             "opp_kernels": OppKernelsFact(opp_path="/x", config_dir=DIR, socs=socs, missing=missing, error=error)}
    return run_check("CANN108", facts)


def test_the_chip_directory_present_passes():
    f = judge("910B3", ["ascend310p", "ascend910b"])
    assert f.status == Status.PASS and "ascend910b" in f.message
    assert judge("Ascend910", ["ascend910_93"]).status == Status.PASS  # A3


def test_a_chip_without_its_kernels_fails_with_the_opbase_error_and_the_package():
    f = judge("910ProB", ["ascend910b"])  # vllm-ascend#237
    assert f.status == Status.FAIL and "cover ascend910b, not ascend910 (910ProB)" in f.message
    assert "opp_kernel package is installed" in f.message and "CANN 8.0.0 for 910ProB" in f.remediation
    f = judge("910B3", [], missing=True)
    assert f.status == Status.FAIL and "nothing (the directory is missing)" in f.message


def test_what_it_cannot_tell():
    f = judge("910B3", None, error="Permission denied")
    assert f.status == Status.UNKNOWN and "Permission denied" in f.message
    f = judge("910B3", ["ascend310p"], cann="8.5.0")  # static kernels inside the op libraries from 8.5
    assert f.status == Status.UNKNOWN and "does not prove them missing" in f.message
    f = judge("Mystery9000", ["ascend910b"])
    assert f.status == Status.UNKNOWN and "Mystery9000" in f.message


def test_every_family_the_doctor_names_has_a_kernel_directory():
    from ascend_doctor.knowledge.hardware import _FAMILIES
    from tests.helpers import shipped

    assert set(shipped().kernels.kernel_dirs) == {family for _, family in _FAMILIES}
