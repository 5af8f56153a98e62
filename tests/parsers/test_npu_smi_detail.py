"""`npu-smi info -t health/board/common/usages/ecc`, `-m` and `-t topo` parsers: fixtures and corpus golden facts."""

from __future__ import annotations

import pytest

from ascend_doctor.core.errors import ParseError
from ascend_doctor.parsers.npu_smi_detail import (
    parse_npu_smi_board,
    parse_npu_smi_common,
    parse_npu_smi_ecc,
    parse_npu_smi_health,
    parse_npu_smi_map,
    parse_npu_smi_topo,
    parse_npu_smi_usages,
)
from tests.helpers import CORPUS, DATA, corpus_files, corpus_params, read_corpus

FIX = DATA / "npu_smi"


def fixture(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def corpus(kind: str, name: str) -> str:
    path = CORPUS / kind / name
    if not path.is_file():
        pytest.skip(f"corpus file {kind}/{name} not present")
    return read_corpus(path)[1]


# health ------------------------------------------------------------------------------------------------------------
def test_health_ok_with_command_line():
    h = parse_npu_smi_health(fixture("health_ok_tab.txt"))
    assert (h.npu_id, h.health, h.error_codes, h.error_information, h.error) == (3, "OK", [], [], None)


def test_health_critical_with_continuation_lines():
    h = parse_npu_smi_health(fixture("health_critical_spaces.txt"))
    assert h.health == "Critical" and h.error_codes == ["80E18005"]
    assert h.error_information == [
        "node type=HBM, sensor type=Memory, event state=uncorrectable ECC error",
        "node type=HBM, sensor type=Memory, event state=isolated pages exceed threshold",
    ]


def test_health_invalid_card_is_an_error_value():
    h = parse_npu_smi_health(fixture("health_invalid_card.txt"))
    assert h.health is None and h.error is not None and h.error.message == "Invalid card id."


def test_health_dcmi_error():
    h = parse_npu_smi_health(fixture("error_dcmi_-8005.txt"))
    assert h.error is not None and h.error.code == -8005


@pytest.mark.parametrize("text", ["", "garbage\n", "NPU ID : 0\n"])
def test_health_garbage(text):
    with pytest.raises(ParseError, match="Health Status"):
        parse_npu_smi_health(text)


HEALTH_GOLDEN = {
    "mindcluster-doc-health-OK-leading-space.txt": ("OK", [], 0, None),
    "mindcluster-faultdiag-910A-health-Alarm-heartbeat-lost.txt": ("Alarm", ["A4025021", "8C03A000", "8C084E00"], 3, 0),
    "mindcluster-faultdiag-910A-health-OK.txt": ("OK", [], 0, 0),
}


@pytest.mark.parametrize("path", corpus_params("npu_smi_health"))
def test_health_corpus_golden(path):
    h = parse_npu_smi_health(read_corpus(path)[1])
    health, codes, ninfo, npu = HEALTH_GOLDEN[path.name]
    assert (h.health, h.error_codes, len(h.error_information), h.npu_id) == (health, codes, ninfo, npu)
    assert h.error is None
    if ninfo:
        assert h.error_information[0] == "ascend_monitor adda heart beat lost error"
        assert h.error_information[-1].endswith("event state=Heartbeat Lost.")


# board / common / usages / ecc ----------------------------------------------------------------------------------
def test_board_card_level():
    b = parse_npu_smi_board(fixture("board_910b3_card.txt"))
    assert (b.npu_id, b.software_version, b.firmware_version, b.compatibility) == (0, "24.1.rc2", "7.5.0.1.129", "OK")
    assert b.get_int("PCI Device ID") == 0xD802 and b.chip_count == 1 and b.error is None


def test_board_invalid_card():
    b = parse_npu_smi_board(fixture("board_invalid_card.txt"))
    assert b.error is not None and b.error.message == "Invalid card id." and b.npu_id == 12
    assert b.software_version is None


def test_board_corpus_merges_chip_and_card_sections():
    b = parse_npu_smi_board(corpus("npu_smi_board", "mindcluster-faultdiag-910A-board-chipboard-usages-23.0.5.txt"))
    assert (b.npu_id, b.software_version, b.firmware_version, b.compatibility) == (0, "23.0.5", "7.1.0.7.220", "OK")
    assert b.chip_name == "910A" and b.pcie_bus_info == "0000:61:00.0"
    assert b.get("PCI Device ID") == "0xD801"
    assert "HBM Capacity(MB)" not in b.fields  # the -t usages section in the same capture is not board data
    u = parse_npu_smi_usages(corpus("npu_smi_board", "mindcluster-faultdiag-910A-board-chipboard-usages-23.0.5.txt"))
    assert u.get_int("HBM Capacity(MB)", chip_id=0) == 31129


def test_board_corpus_invalid_card_section():
    b = parse_npu_smi_board(corpus("npu_smi_health", "mindcluster-faultdiag-910A-health-Alarm-heartbeat-lost.txt"))
    assert b.error is not None and b.error.message == "Invalid card id."


def test_common_two_chips():
    c = parse_npu_smi_common(fixture("common_310p_2chip.txt"))
    assert (c.npu_id, c.chip_count) == (8, 2)
    assert [ch.chip_id for ch in c.chips] == [0, 1]
    assert c.get_int("Temperature(C)", chip_id=1) == 52 and c.get_int("Aicore Count", chip_id=0) == 8


@pytest.mark.parametrize(
    "name,npu,aicore_count,power,mcu_temp",
    [("arthurchiao-910B1-npu-smi-t-common.txt", 1, 24, "93.4", "38"),
     ("gpustack-910-npu-smi-t-common.txt", 0, 32, "69.0", "48")],
)
def test_common_corpus(name, npu, aicore_count, power, mcu_temp):
    c = parse_npu_smi_common(corpus("npu_smi_board", name))
    assert c.npu_id == npu and c.chip_count == 1
    assert c.get_int("Aicore Count", chip_id=0) == aicore_count
    assert c.get("NPU Real-time Power(W)", chip_id=0) == power
    mcu = [ch for ch in c.chips if ch.name == "mcu"]
    assert len(mcu) == 1 and mcu[0].fields["Temperature(C)"] == mcu_temp


def test_usages_fixture():
    u = parse_npu_smi_usages(fixture("usages_910b3.txt"))
    assert u.npu_id == 5 and u.get_int("HBM Capacity(MB)") == 65536 and u.get_int("HBM Usage Rate(%)") == 89
    assert [ch.chip_id for ch in u.chips] == [0]


@pytest.mark.parametrize(
    "name,npu,chips,key,first",
    [("arthurchiao-910B1-npu-smi-t-usages.txt", 0, [0], "HBM Capacity(MB)", 65536),
     ("gpustack-310P-2chip-npu-smi-t-usages.txt", 1, [0, 1], "DDR Capacity(MB)", 44280)],
)
def test_usages_corpus(name, npu, chips, key, first):
    u = parse_npu_smi_usages(corpus("npu_smi_board", name))
    assert u.npu_id == npu and [c.chip_id for c in u.chips] == chips
    assert u.get_int(key, chip_id=0) == first
    if len(chips) == 2:
        assert u.get_int("DDR Capacity(MB)", chip_id=1) == 43693


def test_ecc_fixture_counts():
    e = parse_npu_smi_ecc(fixture("ecc_hbm_errors.txt"))
    assert (e.npu_id, e.hbm_double_bit_errors, e.hbm_single_bit_errors, e.ddr_double_bit_errors) == (2, 2, 17, 0)
    assert e.isolated_pages == 6


def test_ecc_corpus_all_zero():
    e = parse_npu_smi_ecc(corpus("npu_smi_board", "mindcluster-doc-npu-smi-t-ecc.txt"))
    assert (e.npu_id, e.hbm_double_bit_errors, e.isolated_pages) == (0, 0, 0)


@pytest.mark.parametrize("fn", [parse_npu_smi_board, parse_npu_smi_common, parse_npu_smi_usages, parse_npu_smi_ecc])
@pytest.mark.parametrize("text", ["", "just words\n", "| a | b |\n"])
def test_kv_garbage(fn, text):
    with pytest.raises(ParseError, match="Key : value"):
        fn(text)


# -m ----------------------------------------------------------------------------------------------------------------
def test_map_a3_with_mcu():
    m = parse_npu_smi_map(fixture("map_a3_2npu.txt"))
    assert [(e.npu_id, e.chip_id, e.logic_id) for e in m.compute_chips()] == [(0, 0, 0), (0, 1, 1), (1, 0, 2),
                                                                               (1, 1, 3)]
    assert [e.name for e in m.entries if e.logic_id is None] == ["Mcu", "Mcu"]
    assert m.entries[0].name == "Ascend 910"


MAP_GOLDEN = {
    "gpustack-310P-npu-smi-m-2chip-per-card.txt": ([1, 2, 4, 5], 8, "Ascend xxx"),
    "gpustack-910B-npu-smi-m-mcu-xxx.txt": (list(range(8)), 8, "Ascend xxx"),
    "gpustack-atlas300-310-npu-smi-m-20.2.0.txt": ([215], 4, "MiniD"),
    "gpustack-atlas300-310-npu-smi-m-21.0.4.txt": ([6], 4, "MiniD"),
    "gpustack-atlas800-9010-910A-npu-smi-m-22.0.3.1.txt": (list(range(8)), 8, "Ascend 910A"),
    "gpustack-atlas800-9010-910A-npu-smi-m-24.1.RC2.txt": (list(range(8)), 8, "Ascend 910A"),
    "mindcluster-faultdiag-910A-npu-smi-m-tab-indented.txt": (list(range(8)), 8, "Ascend 910A"),
}


def _map_params():
    files = [p for p in corpus_files("npu_smi_board") if read_corpus(p)[0].get("KIND") == "npu_smi_map"]
    return [pytest.param(p, id=p.name) for p in files] or corpus_params("npu_smi_map_absent")


@pytest.mark.parametrize("path", _map_params())
def test_map_corpus_golden(path):
    m = parse_npu_smi_map(read_corpus(path)[1])
    npus, nchips, name = MAP_GOLDEN[path.name]
    assert sorted({e.npu_id for e in m.entries}) == npus
    assert len(m.compute_chips()) == nchips
    assert {e.name for e in m.compute_chips()} == {name}
    assert [e.logic_id for e in m.compute_chips()] == list(range(nchips))


def test_map_garbage():
    with pytest.raises(ParseError, match="npu-smi info -m"):
        parse_npu_smi_map("nothing to see\n")


# topo --------------------------------------------------------------------------------------------------------------
def test_topo_mixed_pcie():
    t = parse_npu_smi_topo(fixture("topo_4npu_mixed_pcie.txt"))
    assert t.devices == ["NPU0", "NPU1", "NPU2", "NPU3"]
    assert t.link("NPU0", "NPU2") == "PXB" and t.link("NPU1", "NPU3") == "PIX" and t.link("NPU2", "NPU2") == "X"
    assert t.cpu_affinity == {"NPU0": "0-23", "NPU1": "0-23", "NPU2": "24-47", "NPU3": "24-47"}
    assert sorted((a, b) for a, b, _ in t.pairs_not("HCCS")) == sorted(
        [("NPU0", "NPU2"), ("NPU0", "NPU3"), ("NPU1", "NPU2"), ("NPU1", "NPU3"), ("NPU2", "NPU0"), ("NPU2", "NPU1"),
         ("NPU3", "NPU0"), ("NPU3", "NPU1")])
    assert t.legend["NA"] == "Unknown relationship."


def test_topo_a3_die_level_headers_and_sio():
    # A3 prints one column per die (Phy-ID12 Phy-ID13 ...), with SIO between the two dies of one NPU.
    t = parse_npu_smi_topo(fixture("topo_a3_die_level.txt"))
    assert t.devices == ["Phy-ID0", "Phy-ID1", "Phy-ID2", "Phy-ID3", "Phy-ID12", "Phy-ID13"]
    assert t.link("Phy-ID0", "Phy-ID1") == "SIO" and t.link("Phy-ID12", "Phy-ID13") == "SIO"
    assert t.link("Phy-ID2", "Phy-ID12") == "HCCS" and t.cpu_affinity["Phy-ID12"] == "240-279"
    assert t.legend["SIO"].startswith("Connection between the two dies")


def test_topo_behind_a_prompt_with_cat_n_numbers():
    text = "root@a3:~# npu-smi info -t topo | cat -n\n" + "".join(
        f"{i:6d}\t{ln}\n" for i, ln in enumerate(fixture("topo_4npu_mixed_pcie.txt").splitlines(), start=1))
    t = parse_npu_smi_topo(text)
    assert t.devices == ["NPU0", "NPU1", "NPU2", "NPU3"] and t.link("NPU0", "NPU2") == "PXB"


TOPO_GOLDEN = {
    "arthurchiao-910B1-8card-topo-hccs.txt": {"NPU0": "144-167", "NPU1": "0-23", "NPU4": "96-119", "NPU7": "48-71"},
    "ms-swift-910B3-8card-topo-hccs-legend.txt": {"NPU0": "144-167", "NPU2": "96-119", "NPU4": "0-23",
                                                  "NPU7": "48-71"},
}


@pytest.mark.parametrize("path", corpus_params("npu_smi_topo"))
def test_topo_corpus_golden(path):
    t = parse_npu_smi_topo(read_corpus(path)[1])
    assert t.devices == [f"NPU{i}" for i in range(8)]
    assert t.pairs_not("HCCS") == []  # a full HCCS mesh
    assert all(t.link(d, d) == "X" for d in t.devices)
    for npu, aff in TOPO_GOLDEN[path.name].items():
        assert t.cpu_affinity[npu] == aff
    assert t.legend["HCCS"] == "Connection traversing HCCS."


@pytest.mark.parametrize("text", ["", "NPU0 NPU1\n", "dcmi module initialize failed. ret is -8005\n",
                                  "\tNPU0   NPU1\nNPU0   X\n"])
def test_topo_garbage(text):
    with pytest.raises(ParseError, match="topo"):
        parse_npu_smi_topo(text)
