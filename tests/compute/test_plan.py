"""Which path the compute smoke takes, and what it tests, from the facts of the host (no child is started)."""

from __future__ import annotations

from pathlib import Path

from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.parsers.npu_smi import NpuChip, NpuProcess, NpuSmiInfo, parse_npu_smi_info
from ascend_doctor.probes.compute import compute_probe, plan_run
from ascend_doctor.probes.devices import DevicesFact
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.testing import run_check

DATA = Path(__file__).resolve().parents[1] / "data" / "npu_smi"
PY = "/opt/vllm/bin/python3"


def python(*names: str) -> PythonEnv:
    return PythonEnv(executable=PY, distributions=[Distribution(name=n, version="2.8.0") for n in names])


def smi(info: NpuSmiInfo) -> NpuSmiFact:
    return NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0), info=info)


def a2(n: int = 8, procs: bool = False) -> NpuSmiFact:
    chips = [NpuChip(npu_id=i, chip_id=0, name="910B3", health="OK") for i in range(n)]
    held = [NpuProcess(npu_id=0, chip_id=0, pid=4242, name="python3")] if procs else []
    return smi(NpuSmiInfo(chips=chips, processes=held, has_process_table=True))


def store(py: PythonEnv, npu=None, davinci=(), env=None, **options) -> FactStore:
    values = {"python": py, "devices": DevicesFact.model_construct(davinci=list(davinci)), "env": env or {}}
    if npu is not None:
        values["npu_smi"] = npu
    return FactStore.given(values, missing={} if npu is not None else {"npu_smi": "npu-smi: command not found"},
                           options=RunOptions(**options))


def test_no_torch_means_not_run():
    assert plan_run(store(python("vllm")), PY) == (None, "no-torch")


def test_npus_without_torch_npu_are_not_rehearsed_on_the_cpu():
    assert plan_run(store(python("torch"), a2(), davinci=range(8)), PY) == (None, "no-torch-npu")
    assert plan_run(store(python("torch"), None, davinci=[0]), PY) == (None, "no-torch-npu")


def test_no_npu_and_no_torch_npu_is_the_cpu_path_with_eight_ranks():
    cfg, _ = plan_run(store(python("torch")), PY)
    assert (cfg["device"], cfg["backend"], cfg["world"]) == ("cpu", "gloo", 8)
    assert [o["library"] for o in cfg["ops"]] == ["aten", "aten"]  # torch's own kernels, not aclnn/ATB
    cfg, _ = plan_run(store(python("torch"), compute_ranks=3), PY)
    assert cfg["world"] == 3


def test_busy_npus_are_left_alone():
    assert plan_run(store(python("torch", "torch-npu"), a2(procs=True), davinci=range(8)), PY) == (None, "npus-busy")


def test_visible_devices_decide_the_world():
    cfg, _ = plan_run(store(python("torch", "torch-npu"), a2(), davinci=range(8),
                            env={"ASCEND_RT_VISIBLE_DEVICES": "4,5,6,7"}), PY)
    assert cfg["world"] == 4 and cfg["device"] == "npu"


def test_310p_gets_fp16_only_and_no_atb_cache_write():
    info = parse_npu_smi_info((DATA / "info_310p3_duo_npu8_32768.txt").read_text())
    cfg, _ = plan_run(store(python("torch", "torch-npu"), smi(info), davinci=[0, 1]), PY)
    assert cfg["dtypes"] == ["float16"]
    assert [o["name"] for o in cfg["ops"]] == ["rms_norm"]  # the ND reshape_and_cache reference is A2/A3 only
    assert cfg["chip"] == "310P3"


def test_unknown_chip_is_tested_in_fp16_only():
    chips = [NpuChip(npu_id=0, chip_id=0, name="Ascend999", health="OK")]
    cfg, _ = plan_run(store(python("torch", "torch-npu"), smi(NpuSmiInfo(chips=chips)), davinci=[0]), PY)
    assert cfg["dtypes"] == ["float16"] and cfg["ops"][0]["name"] == "rms_norm" and len(cfg["ops"]) == 1


def test_no_count_without_a_table_or_visible_devices():
    assert plan_run(store(python("torch", "torch-npu"), None, davinci=[0]), PY) == (None, "no-count")


def test_skipped_run_is_unknown_with_the_reason():
    fact = compute_probe(None, store(python("torch"), a2(), davinci=range(8)))
    out = run_check("NPU201", {"npu_compute": fact})
    assert out.status.value == "unknown"
    assert "torch_npu is not installed in /opt/vllm/bin/python3" in out.message
    busy = compute_probe(None, store(python("torch", "torch-npu"), a2(procs=True), davinci=range(8)))
    out = run_check("NPU206", {"npu_compute": busy})
    assert out.status.value == "unknown" and "NPU 0: pid 4242 python3" in out.message


def test_collect_never_starts_the_compute_smoke(monkeypatch):
    """`collect` records what every probe sees, but the compute smoke acts on the machine (HBM, all NPUs busy): it
    runs only when a compute check is selected."""
    from ascend_doctor.probes import PROBES, load_probes
    from ascend_doctor.seam.collect import collect_snapshot
    from ascend_doctor.seam.snapshot import ReplayHost, load_snapshot

    load_probes()
    called = []

    def recorder(host, ctx):
        called.append(True)
        raise AssertionError("collect started the compute smoke")

    recorder.min_timeout, recorder.derived, recorder.collected = 0.0, False, PROBES["npu_compute"].collected
    monkeypatch.setitem(PROBES, "npu_compute", recorder)
    example = Path(__file__).resolve().parents[2] / "examples" / "healthy-a2.snapshot.json"
    collect_snapshot(ReplayHost(load_snapshot(example)), RunOptions())
    assert called == []
