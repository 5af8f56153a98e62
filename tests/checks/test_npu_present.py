"""NPU100 (an Ascend NPU is present) and VLLM100 (the judged interpreter has the serving stack): pass, fail and
unknown on hand-built facts."""

from __future__ import annotations

from ascend_doctor.probes.devices import DevicesFact, PathState
from ascend_doctor.probes.host_facts import PcieFact, PcieLink
from ascend_doctor.probes.serving import ServingPython
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.testing import run_check


def _devices(davinci=(), listed=True) -> DevicesFact:
    p = PathState(path="/x")
    return DevicesFact(dev_listed=listed, davinci=list(davinci), dcmi=p, driver_lib64=p, driver_version_info=p,
                       ascend_install_info=p, hccn_tool=p)


NPU = PcieLink(slot="0000:81:00.0", device_id="0xd802", pci_class="0x120000")
NIC = PcieLink(slot="0000:01:00.0", device_id="0xa222", pci_class="0x020000")


def test_npu100_passes_on_an_npu_in_sysfs_or_a_davinci_node():
    f = run_check("NPU100", {"pcie": PcieFact(sysfs_readable=True, listed=40, devices=[NPU]), "devices": _devices()})
    assert f.status == Status.PASS and "0000:81:00.0" in f.message
    f = run_check("NPU100", {"pcie": PcieFact(sysfs_readable=False), "devices": _devices([0, 1, 2, 3, 6])})
    assert f.status == Status.PASS and "/dev/davinci0-3, 6" in f.message


def test_npu100_fails_first_without_any_npu():
    f = run_check("NPU100", {"pcie": PcieFact(sysfs_readable=True, listed=6, devices=[NIC]), "devices": _devices()})
    assert f.status == Status.FAIL and "among the 6 PCI functions" in f.message and f.root_cause


def test_npu100_is_unknown_when_nothing_could_be_read():
    f = run_check("NPU100", {"pcie": PcieFact(sysfs_readable=False), "devices": _devices(listed=False)})
    assert f.status == Status.UNKNOWN


def _py(*names):
    return PythonEnv(executable="/opt/v/bin/python3", version="3.11.10",
                     distributions=[Distribution(name=n, version="1.0") for n in names])


def test_vllm100_pass_fail_unknown():
    chosen = ServingPython(path="/opt/v/bin/python3", how="vllm on PATH",
                           detail="/opt/v/bin/vllm → #!/opt/v/bin/python3")
    full = _py("vllm", "vllm-ascend", "torch", "torch-npu")
    assert run_check("VLLM100", {"serving_python": chosen, "python": full}).status == Status.PASS
    f = run_check("VLLM100", {"serving_python": chosen, "python": _py("torch")})
    assert f.status == Status.FAIL and "no vllm, vllm-ascend, torch-npu" in f.message and "--python" in f.remediation
    f = run_check("VLLM100", {"serving_python": chosen}, missing={"python": "interpreter did not answer"})
    assert f.status == Status.UNKNOWN and "did not answer" in f.message
