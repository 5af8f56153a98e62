"""npu_smi / npu_health / npu_topo probes over replayed snapshots (missing binary, timeout, garbage, errors)."""

from __future__ import annotations

import pytest

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.probes import load_probes
from ascend_doctor.probes.npu import npu_health_probe, npu_smi_probe, npu_topo_probe
from ascend_doctor.seam.snapshot import CommandEntry, ReplayHost, Snapshot
from tests.helpers import DATA

FIX = DATA / "npu_smi"
INFO = ["npu-smi", "info"]


def fixture(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def health_argv(n: int) -> list:
    return ["npu-smi", "info", "-t", "health", "-i", str(n)]


def store(*commands: CommandEntry, timeout: float = 10.0) -> FactStore:
    host = ReplayHost(Snapshot.model_validate(dict(commands=list(commands))))
    probes = {"npu_smi": npu_smi_probe, "npu_health": npu_health_probe, "npu_topo": npu_topo_probe}
    return FactStore(host=host, options=RunOptions(probe_timeout=timeout), probes=probes)


def test_probes_are_registered():
    probes = load_probes()
    assert probes["npu_smi"] is npu_smi_probe
    assert probes["npu_health"] is npu_health_probe and probes["npu_topo"] is npu_topo_probe


def test_npu_smi_table():
    fact = store(CommandEntry(argv=INFO, stdout=fixture("info_a3_2npu_4chip_25.2.1.txt"))).fact("npu_smi")
    assert fact.found and fact.usable and fact.reason() == ""
    assert fact.info.driver_version == "25.2.1" and len(fact.info.chips) == 4
    assert fact.command.argv == INFO and fact.command.returncode == 0 and fact.parse_error is None


def test_npu_smi_missing_is_a_fact_not_unavailable():
    fact = store().fact("npu_smi")
    assert fact.found is False and fact.info is None and not fact.usable
    assert fact.command.error == "not_found"
    assert "npu-smi not found" in fact.reason()


def test_npu_smi_timeout_is_unavailable():
    s = store(CommandEntry(argv=INFO, returncode=None, error="timeout", duration_s=10.0))
    with pytest.raises(FactUnavailable, match="timed out"):
        s.fact("npu_smi")


def test_npu_smi_dcmi_error_capture():
    s = store(CommandEntry(argv=INFO, returncode=255, stdout=fixture("error_dcmi_-8020_device_used.txt")))
    fact = s.fact("npu_smi")
    assert fact.found and not fact.usable
    assert fact.info.error.code == -8020
    assert "ret -8020" in fact.reason() and "device is used" in fact.reason()


def test_npu_smi_loader_error_on_stderr():
    s = store(CommandEntry(argv=INFO, returncode=127, stdout="", stderr=fixture("error_missing_driver_lib.txt")))
    fact = s.fact("npu_smi")
    assert fact.info.error is not None and "libdrvdsmi_host.so" in fact.info.error.message
    assert "libdrvdsmi_host.so" in fact.command.stderr_tail


def test_npu_smi_garbage_output_records_parse_error():
    fact = store(CommandEntry(argv=INFO, stdout="Segmentation fault (core dumped)\n")).fact("npu_smi")
    assert fact.found and fact.info is None
    assert fact.parse_error and "npu-smi info" in fact.parse_error
    assert fact.reason().startswith("could not read npu-smi output")


def test_npu_smi_permission_denied():
    s = store(CommandEntry(argv=INFO, returncode=None, error="permission_denied", error_message="Permission denied"))
    fact = s.fact("npu_smi")
    assert fact.found and fact.info is None and "Permission denied" in fact.reason()


def test_npu_health_each_npu():
    s = store(
        CommandEntry(argv=INFO, stdout=fixture("info_container_npu4-7.txt")),
        CommandEntry(argv=health_argv(4), stdout=fixture("health_ok_tab.txt").replace("-i 3", "-i 4")),
        CommandEntry(argv=health_argv(5), stdout=fixture("health_critical_spaces.txt")),
        CommandEntry(argv=health_argv(6), stdout="Invalid card id.\nError parameter of -i\n", returncode=255),
        CommandEntry(argv=health_argv(7), error="timeout", returncode=None, duration_s=3.0),
    )
    fact = s.fact("npu_health")
    by = fact.by_npu()
    assert sorted(by) == [4, 5, 6, 7] and fact.skipped == []
    assert by[4].health.health == "OK" and by[4].health.npu_id == 4
    assert by[5].health.health == "Critical" and by[5].health.error_codes == ["80E18005"]
    assert by[5].health.npu_id == 5  # taken from the command we ran, not the (absent) capture header
    assert by[6].health.error.message == "Invalid card id."
    assert by[7].health is None and by[7].command.error == "timeout"


def test_npu_health_garbage_answer():
    s = store(CommandEntry(argv=INFO, stdout=fixture("info_310b1_edge_bus_na.txt")),
              CommandEntry(argv=health_argv(0), stdout="???\n"))
    (res,) = s.fact("npu_health").results
    assert res.health is None and "Health Status" in res.parse_error


def test_npu_health_unavailable_without_table():
    with pytest.raises(FactUnavailable, match="npu-smi not found"):
        store().fact("npu_health")
    s = store(CommandEntry(argv=INFO, stdout=fixture("error_dcmi_-8005.txt"), returncode=255))
    with pytest.raises(FactUnavailable, match="-8005"):
        s.fact("npu_health")


class _Ctx:
    """A FactStore stand-in that answers `npu_smi` at once, so the probe's own budget is what is tested."""

    def __init__(self, host, timeout):
        self.options = RunOptions(probe_timeout=timeout)
        self._host = host

    def fact(self, name):
        assert name == "npu_smi"
        return npu_smi_probe(self._host, self)


def test_npu_health_stops_when_budget_is_spent():
    host = ReplayHost(Snapshot(commands=[CommandEntry(argv=INFO, stdout=fixture("info_a2_8x910B3_tp4_procs.txt")),
                                         CommandEntry(argv=health_argv(0), stdout=fixture("health_ok_tab.txt"))]))
    # a budget of a nanosecond is spent by the time the table is read: nothing is run, every NPU is listed skipped
    fact = npu_health_probe(host, _Ctx(host, 1e-9))
    assert fact.results == [] and fact.skipped == list(range(8))
    fact = npu_health_probe(host, _Ctx(host, 10.0))
    assert [r.npu_id for r in fact.results] == list(range(8)) and fact.skipped == []
    assert fact.results[0].health.health == "OK" and fact.results[1].command.error == "not_found"


def test_npu_topo():
    s = store(CommandEntry(argv=INFO, stdout=fixture("info_a2_8x910B3_tp4_procs.txt")),
              CommandEntry(argv=["npu-smi", "info", "-t", "topo"], stdout=fixture("topo_4npu_mixed_pcie.txt")))
    fact = s.fact("npu_topo")
    assert fact.topo.link("NPU0", "NPU2") == "PXB" and fact.parse_error is None


def test_npu_topo_garbage_and_missing():
    s = store(CommandEntry(argv=INFO, stdout=fixture("info_a2_8x910B3_tp4_procs.txt")),
              CommandEntry(argv=["npu-smi", "info", "-t", "topo"], stdout="not a matrix\n"))
    fact = s.fact("npu_topo")
    assert fact.topo is None and "topo" in fact.parse_error
    s = store(CommandEntry(argv=INFO, stdout=fixture("info_a2_8x910B3_tp4_procs.txt")))
    with pytest.raises(FactUnavailable, match="npu_topo"):
        s.fact("npu_topo")


def test_npu_smi_fallback_path_when_not_on_path():
    sbin = "/usr/local/sbin/npu-smi"
    s = store(CommandEntry(argv=[sbin, "info"], stdout=fixture("info_310b1_edge_bus_na.txt")),
              CommandEntry(argv=[sbin, "info", "-t", "health", "-i", "0"],
                           stdout=fixture("health_critical_spaces.txt")))
    fact = s.fact("npu_smi")
    assert fact.found and fact.tool == sbin and fact.command.argv == [sbin, "info"]
    health = s.fact("npu_health")
    assert [r.npu_id for r in health.unhealthy()] == [0]
    assert health.results[0].command.argv[0] == sbin


def test_unhealthy_and_pids_helpers():
    fact = store(CommandEntry(argv=INFO, stdout=fixture("info_a2_8x910B3_tp4_procs.txt"))).fact("npu_smi")
    assert [(c.npu_id, c.health) for c in fact.info.unhealthy()] == [(5, "Warning")]
    assert fact.info.pids() == [1843021, 77013]
