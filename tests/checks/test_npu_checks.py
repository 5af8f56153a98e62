"""NPU checks on facts given by hand (realistic values from 910B/A3 boxes), plus the shared corpus when present."""

from __future__ import annotations

import pytest

from ascend_doctor.parsers.npu_smi import NpuChip, NpuProcess, NpuSmiError, NpuSmiInfo, parse_npu_smi_info
from ascend_doctor.parsers.npu_smi_detail import NpuHealth
from ascend_doctor.probes.devices import DevicesFact, PathState
from ascend_doctor.probes.host_facts import ContainerFact
from ascend_doctor.probes.npu import CommandSummary, NpuHealthFact, NpuHealthResult, NpuSmiFact
from ascend_doctor.report import Status
from tests.helpers import corpus_params, read_corpus, run_check

BUSES = ["0000:C1:00.0", "0000:C2:00.0", "0000:81:00.0", "0000:82:00.0",
         "0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:42:00.0"]
HOST = ContainerFact(in_container=False)
DOCKER = ContainerFact(in_container=True, runtime="docker", signals=["/.dockerenv exists"])


def chip(npu: int, health: str = "OK", hbm_used: int = 3314, hbm_total: int = 65536, **kw) -> NpuChip:
    return NpuChip(npu_id=npu, chip_id=kw.pop("chip_id", 0), name=kw.pop("name", "910B3"), health=health,
                   power_w=99.8, temp_c=40, aicore_pct=0, memory_used_mb=0, memory_total_mb=0,
                   hbm_used_mb=hbm_used, hbm_total_mb=hbm_total, bus_id=BUSES[npu % 8], **kw)


def smi(chips=None, processes=(), error=None, found=True, elided=False, process_table=True, **cmd) -> NpuSmiFact:
    """An `npu_smi` fact: 8 idle 910B3 by default (values as in a real 24.1.rc1 table)."""
    command = CommandSummary(argv=["npu-smi", "info"], returncode=0 if error is None else 255, **cmd)
    if not found:
        return NpuSmiFact(found=False, command=CommandSummary(argv=["npu-smi", "info"], error="not_found",
                                                              why_not="`npu-smi` not found"))
    if error is not None:
        return NpuSmiFact(found=True, command=command, info=NpuSmiInfo(error=error))
    chips = [chip(n) for n in range(8)] if chips is None else chips
    info = NpuSmiInfo(tool_version="24.1.rc1.b030", driver_version="24.1.rc1.b030", chips=chips,
                      processes=list(processes), layout="chip", has_process_table=process_table, elided=elided,
                      idle_npus=[] if processes else [c.npu_id for c in chips])
    return NpuSmiFact(found=True, command=command, info=info)


def health_result(npu: int, status: str = "OK", codes=(), info=(), error=None) -> NpuHealthResult:
    argv = ["npu-smi", "info", "-t", "health", "-i", str(npu)]
    h = NpuHealth(npu_id=npu, health=None if error else status, error_codes=list(codes),
                  error_information=list(info), error=error)
    return NpuHealthResult(npu_id=npu, command=CommandSummary(argv=argv, returncode=0), health=h)


# NPU101 npu-health ---------------------------------------------------------------------------------------------------
def test_health_all_ok_passes():
    hf = NpuHealthFact(results=[health_result(n) for n in range(8)])
    f = run_check("NPU101", {"npu_smi": smi(), "npu_health": hf})
    assert f.status == Status.PASS and "8 NPU(s), 8 chip(s)" in f.message


def test_health_alarm_fails_with_codes_from_health_detail():
    chips = [chip(n) for n in range(8)]
    chips[3] = chip(3, "Alarm")
    hf = NpuHealthFact(results=[health_result(n) for n in range(8) if n != 3] + [
        health_result(3, "Alarm", ["A4025021", "8C03A000"], ["ascend_monitor adda heart beat lost error"])])
    f = run_check("NPU101", {"npu_smi": smi(chips), "npu_health": hf})
    assert f.status == Status.FAIL
    assert "NPU 3 chip 0 (910B3, 0000:82:00.0): Alarm" in f.message
    assert "A4025021 8C03A000" in f.message and "heart beat lost" in f.message
    assert any("-t health -i 3" in e.source for e in f.evidence)
    assert f.details["unhealthy"] == [3]
    assert "npu-smi info -t health -i" in f.remediation


def test_health_warning_fails_without_health_detail():
    chips = [chip(n) for n in range(8)]
    chips[7] = chip(7, "Warning")
    f = run_check("NPU101", {"npu_smi": smi(chips)})  # npu_health unavailable: the table alone decides
    assert f.status == Status.FAIL and "NPU 7 chip 0" in f.message and "Warning" in f.message


def test_health_detail_disagrees_with_table_or_card_dropped_out():
    hf = NpuHealthFact(results=[health_result(0, "Critical", ["80E18402"]),
                                health_result(1, error=NpuSmiError(message="Invalid card id."))])
    f = run_check("NPU101", {"npu_smi": smi([chip(0), chip(1)]), "npu_health": hf})
    assert f.status == Status.FAIL
    assert "NPU 0: `-t health` says Critical (error codes 80E18402)" in f.message
    assert "NPU 1: listed by `npu-smi info`" in f.message and "dropped out" in f.message


def test_health_unknown_without_table():
    assert run_check("NPU101", {}).status == Status.UNKNOWN
    f = run_check("NPU101", {"npu_smi": smi(found=False)})
    assert f.status == Status.UNKNOWN and "npu-smi not found" in f.message
    err = NpuSmiError(code=-8005, message="dcmi module initialize failed. ret is -8005")
    f = run_check("NPU101", {"npu_smi": smi(error=err)})
    assert f.status == Status.UNKNOWN and "-8005" in f.message


def test_health_detail_not_read_is_never_a_pass():
    # Partial is never pass: NPU 1 was not asked (out of time), NPU 2 asked but npu-smi timed out.
    timed_out = NpuHealthResult(npu_id=2, command=CommandSummary(argv=["npu-smi"], error="timeout",
                                                                 why_not="`npu-smi info -t health -i 2` timed out"))
    hf = NpuHealthFact(results=[health_result(0), timed_out], skipped=[1], unanswered=[2])
    f = run_check("NPU101", {"npu_smi": smi([chip(0), chip(1), chip(2)]), "npu_health": hf})
    assert f.status == Status.UNKNOWN and "not read for NPU 1, 2" in f.message
    assert f.details["not_read"] == [1, 2]
    assert any("NPU 1: no answer (not asked in time, or not in the input)" in e.excerpt and "NPU 2: `npu-smi info -t health -i 2` timed out"
               in e.excerpt for e in f.evidence)
    f = run_check("NPU101", {"npu_smi": smi([chip(0)])})  # the -t health probe gave nothing at all
    assert f.status == Status.UNKNOWN and "did not run" in f.message


def test_health_elided_table_passes_with_lower_bound_note():
    hf = NpuHealthFact(results=[health_result(n) for n in (0, 1, 7)])
    f = run_check("NPU101", {"npu_smi": smi([chip(0), chip(1), chip(7)], elided=True), "npu_health": hf})
    assert f.status == Status.PASS and "3+ NPU(s), 3+ chip(s)" in f.message  # an elided table: a lower bound


# NPU102 npu-smi-error ------------------------------------------------------------------------------------------------
def test_smi_error_pass_fail_unknown():
    assert run_check("NPU102", {"npu_smi": smi(), "container": HOST}).status == Status.PASS
    assert run_check("NPU102", {}).status == Status.UNKNOWN
    assert run_check("NPU102", {"npu_smi": smi(found=False)}).status == Status.UNKNOWN


def test_smi_8020_on_host_names_the_sharing_cause():
    err = NpuSmiError(code=-8020, message="dcmi model initialized failed, because the device is used. ret is -8020")
    f = run_check("NPU102", {"npu_smi": smi(error=err), "container": HOST})
    assert f.status == Status.FAIL and "held by another container or process" in f.message
    assert "docker inspect" in f.remediation and f.details["code"] == -8020


def test_smi_8005_on_host_reboot_and_hwhiaiuser():
    err = NpuSmiError(code=-8005, message="dcmi module initialize failed. ret is -8005")
    f = run_check("NPU102", {"npu_smi": smi(error=err)})  # container fact unknown: treated as the host
    assert f.status == Status.FAIL and "-8005" in f.message
    assert "HwHiAiUser" in f.remediation and "reboot" in f.remediation


def test_smi_missing_library_and_permission():
    err = NpuSmiError(message="npu-smi: error while loading shared libraries: libdrvdsmi_host.so: cannot open shared "
                              "object file: No such file or directory")
    f = run_check("NPU102", {"npu_smi": smi(error=err), "container": HOST})
    assert f.status == Status.FAIL and "LD_LIBRARY_PATH" in f.remediation
    denied = NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], error="permission_denied",
                                                           why_not="`npu-smi info`: Permission denied"))
    f = run_check("NPU102", {"npu_smi": denied, "container": HOST})
    assert f.status == Status.FAIL and "HwHiAiUser" in f.remediation


def test_smi_error_in_container_is_left_to_ctr104():
    err = NpuSmiError(code=-8020, message="dcmi model initialized failed, because the device is used. ret is -8020")
    f = run_check("NPU102", {"npu_smi": smi(error=err), "container": DOCKER})
    assert f.status == Status.SKIP and "CTR104" in f.message


# NPU103 npu-memory-in-use --------------------------------------------------------------------------------------------
def test_memory_idle_passes():
    f = run_check("NPU103", {"npu_smi": smi()})
    assert f.status == Status.PASS


def test_memory_full_chips_held_by_processes_fail_with_pids():
    chips = [chip(0, hbm_used=65099, name="910B1"), chip(1, hbm_used=65098, name="910B1")]
    procs = [NpuProcess(npu_id=0, chip_id=0, pid=576489, name="python", memory_mb=60703),
             NpuProcess(npu_id=1, chip_id=0, pid=576491, name="python", memory_mb=60704)]
    f = run_check("NPU103", {"npu_smi": smi(chips, procs)})
    assert f.status == Status.FAIL
    assert "PID 576489 python 60703 MB" in f.message and "NPU 1 chip 0: 65098 / 65536 MB (99%)" in f.message
    assert f.details["pids"] == [576489, 576491]


def test_memory_small_processes_warn():
    procs = [NpuProcess(npu_id=2, chip_id=0, pid=37658, name="hlt_host_devmm_", memory_mb=686)]
    f = run_check("NPU103", {"npu_smi": smi(processes=procs)})
    assert f.status == Status.WARN and "PID 37658" in f.message and "686 MB" in f.message


def test_memory_used_without_processes_warns_or_fails():
    chips = [chip(n) for n in range(8)]
    chips[5] = chip(5, hbm_used=20000)
    f = run_check("NPU103", {"npu_smi": smi(chips)})
    assert f.status == Status.WARN and "NPU 5 chip 0: 20000 / 65536 MB" in f.message
    chips[5] = chip(5, hbm_used=50000)
    f = run_check("NPU103", {"npu_smi": smi(chips)})
    assert f.status == Status.FAIL and "no process listed" in f.message


def test_memory_unknown():
    assert run_check("NPU103", {}).status == Status.UNKNOWN
    assert run_check("NPU103", {"npu_smi": smi(found=False)}).status == Status.UNKNOWN


def test_memory_310p_uses_memory_column():
    chips = [NpuChip(npu_id=8, chip_id=0, device_id=0, name="310P3", health="OK", memory_used_mb=40000,
                     memory_total_mb=44280)]
    f = run_check("NPU103", {"npu_smi": smi(chips)})
    assert f.status == Status.FAIL and "40000 / 44280 MB" in f.message


# NPU104 visible-devices ----------------------------------------------------------------------------------------------
def vis(env, table=None, **facts):
    return run_check("NPU104", {"npu_smi": table or smi(), "env": env, **facts})


def test_visible_unset_and_valid_pass():
    assert vis({}).status == Status.PASS
    f = vis({"ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3"})
    assert f.status == Status.PASS and "'0,1,2,3'" in f.message


@pytest.mark.parametrize("value, words", [
    ("", ["set but empty"]),
    ("0,1,1,2", ["repeats 1"]),
    ("0,8", ["names 8 beyond", "logical ids 0..7"]),
    ("0,1,2,3,4,5,6,7,8,9", ["asks for 10 devices"]),
    ("Ascend910-0", ["not a device id: Ascend910-0"]),
    ("0, ,1", ["(empty item)"]),
])
def test_visible_rt_bad_values_fail_with_exact_value(value, words):
    f = vis({"ASCEND_RT_VISIBLE_DEVICES": value})
    assert f.status == Status.FAIL
    assert repr(value) in f.message
    for w in words:
        assert w in f.message


def test_visible_rt_beyond_elided_table_only_warns():
    table = smi([chip(0), chip(1), chip(7)], elided=True)
    f = vis({"ASCEND_RT_VISIBLE_DEVICES": "3,4"}, table)
    assert f.status == Status.WARN and "elided" in f.message


def test_visible_container_with_two_npus_counts_logically():
    table = smi([chip(4), chip(5)])  # container given /dev/davinci4 and /dev/davinci5: logical ids 0,1
    assert vis({"ASCEND_RT_VISIBLE_DEVICES": "0,1"}, table).status == Status.PASS
    f = vis({"ASCEND_RT_VISIBLE_DEVICES": "4,5"}, table)
    assert f.status == Status.FAIL and "logical ids 0..1" in f.message


def test_visible_physical_variable_against_davinci_nodes():
    devs = DevicesFact(dev_listed=True, davinci=[0, 1, 2, 3], nodes={}, dcmi=PathState(path="/usr/local/dcmi"),
                       driver_lib64=PathState(path="l"), driver_version_info=PathState(path="v"),
                       ascend_install_info=PathState(path="a"), hccn_tool=PathState(path="h"))
    assert vis({"ASCEND_VISIBLE_DEVICES": "0-3"}, smi([chip(n) for n in range(4)]), devices=devs).status \
        == Status.PASS
    f = vis({"ASCEND_VISIBLE_DEVICES": "Ascend910-2,Ascend910-6"}, smi([chip(n) for n in range(4)]), devices=devs)
    assert f.status == Status.FAIL and "names 6" in f.message and "/dev/davinciN present are 0,1,2,3" in f.message


def test_visible_unknown_paths():
    assert run_check("NPU104", {"env": {"ASCEND_RT_VISIBLE_DEVICES": "0"}}).status == Status.UNKNOWN
    f = vis({"ASCEND_RT_VISIBLE_DEVICES": "0"}, smi(found=False))
    assert f.status == Status.UNKNOWN


# Real npu-smi outputs from the shared corpus (skipped on a plain clone) ---------------------------------------------
@pytest.mark.parametrize("path", corpus_params("npu_smi_info"))
def test_corpus_tables_run_every_npu_check(path):
    _, text = read_corpus(path)
    info = parse_npu_smi_info(text)
    fact = NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0), info=info)
    health = run_check("NPU101", {"npu_smi": fact}).status
    assert health == (Status.FAIL if info.unhealthy() else Status.UNKNOWN)  # no -t health answers: not looked at
    detail = NpuHealthFact(results=[health_result(n) for n in info.npu_ids()])
    health = run_check("NPU101", {"npu_smi": fact, "npu_health": detail}).status
    assert health == (Status.FAIL if info.unhealthy() else Status.PASS)
    mem = run_check("NPU103", {"npu_smi": fact}).status
    assert mem in (Status.PASS, Status.WARN, Status.FAIL)
    if info.processes:
        assert mem != Status.PASS
    if "full-hbm" in path.name:
        assert mem == Status.FAIL
    if "ms-swift" in path.name or "triton-ascend" in path.name:  # idle boxes: 3314/65536, 2871/32768 MB
        assert mem == Status.PASS
    assert run_check("NPU104", {"npu_smi": fact, "env": {}}).status == Status.PASS
    rt = ",".join(str(i) for i in range(len(info.chips) + 1))  # one more than present
    assert run_check("NPU104", {"npu_smi": fact, "env": {"ASCEND_RT_VISIBLE_DEVICES": rt}}).status == \
        (Status.WARN if info.elided else Status.FAIL)


def test_memory_many_processes_are_summarised_per_npu():
    procs = [NpuProcess(npu_id=0, chip_id=0, pid=pid, name="hlt_host_devmm_", memory_mb=686)
             for pid in (37656, 37664, 37640, 37648)]
    f = run_check("NPU103", {"npu_smi": smi(processes=procs)})
    assert f.status == Status.WARN and "NPU 0: 4 processes, 2744 MB (PID 37656 hlt_host_devmm_" in f.message
    assert "37648" in f.evidence[-1].excerpt  # every PID stays in the evidence
