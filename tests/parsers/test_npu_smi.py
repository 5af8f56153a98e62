"""`npu-smi info` table parser: every layout on hand-written fixtures, golden facts on each corpus capture."""

from __future__ import annotations

import json
import re

import pytest

from ascend_doctor.core.errors import ParseError
from ascend_doctor.parsers import parser_kinds
from ascend_doctor.parsers.npu_smi import find_npu_smi_error, parse_npu_smi_info
from ascend_doctor.text.versions import parse_version
from tests.helpers import CORPUS, DATA, corpus_params, read_corpus

FIX = DATA / "npu_smi"


def fixture(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


CHIP_KEYS = {"npu_id", "chip_id", "phy_id", "name", "health", "power_w", "temp_c", "aicore_pct", "memory_used_mb",
             "memory_total_mb", "hbm_used_mb", "hbm_total_mb", "bus_id", "hugepages_used", "hugepages_total"}


def test_registered_as_parse_kind():
    kinds = parser_kinds()
    assert kinds["npu-smi-info"][0] is parse_npu_smi_info
    for k in ("npu-smi-health", "npu-smi-board", "npu-smi-topo", "npu-smi-map", "npu-smi-common",
              "npu-smi-usages", "npu-smi-ecc"):
        assert k in kinds


def test_json_contract_field_names():
    info = parse_npu_smi_info(fixture("info_a2_8x910B3_tp4_procs.txt"))
    data = json.loads(info.model_dump_json())
    assert {"tool_version", "driver_version", "error", "chips", "processes"} <= set(data)
    assert CHIP_KEYS <= set(data["chips"][0])
    assert {"npu_id", "chip_id", "pid", "name", "memory_mb"} <= set(data["processes"][0])
    assert data["error"] is None


# --- hand-written fixtures, one per layout -------------------------------------------------------------------------
def test_a2_98col_with_processes_and_shared_pid():
    info = parse_npu_smi_info(fixture("info_a2_8x910B3_tp4_procs.txt"))
    assert (info.tool_version, info.driver_version) == ("24.1.rc2", "24.1.rc2")
    assert info.layout == "chip"
    assert info.npu_ids() == list(range(8))
    c0 = info.chips[0]
    assert (c0.name, c0.health, c0.power_w, c0.temp_c, c0.aicore_pct) == ("910B3", "OK", 312.5, 45, 87)
    assert (c0.memory_used_mb, c0.memory_total_mb, c0.hbm_used_mb, c0.hbm_total_mb) == (0, 0, 58861, 65536)
    assert (c0.hugepages_used, c0.hugepages_total, c0.bus_id, c0.phy_id) == (0, 0, "0000:C1:00.0", None)
    assert info.chips[5].health == "Warning"
    assert info.chips[7].hbm_used_mb == 3386
    # one tp=4 engine: the same pid on NPUs 0-3
    engine = [p for p in info.processes if p.pid == 1843021]
    assert [p.npu_id for p in engine] == [0, 1, 2, 3]
    assert all(p.name == "python3.11" and p.memory_mb == 55452 for p in engine)
    unnamed = [p for p in info.processes if p.pid == 77013]
    assert len(unnamed) == 1 and unnamed[0].name == "" and unnamed[0].npu_id == 6
    assert info.idle_npus == [4, 5, 7]
    assert info.has_process_table and not info.elided


def test_a3_chip_phy_id_two_chips_per_npu():
    info = parse_npu_smi_info(fixture("info_a3_2npu_4chip_25.2.1.txt"))
    assert info.layout == "chip-phy-id"
    assert [(c.npu_id, c.chip_id, c.phy_id) for c in info.chips] == [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
    assert all(c.name == "Ascend910" and c.device_id is None for c in info.chips)
    assert info.chips[1].power_w is None  # printed '-'
    assert info.chips[2].health == "Critical"
    assert [(p.npu_id, p.chip_id, p.pid) for p in info.processes] == [(0, 0, 2209), (0, 1, 2209)]
    assert info.idle_npus == [1]
    assert info.npu_ids() == [0, 1]


def test_310p_duo_large_npu_ids_power_na():
    info = parse_npu_smi_info(fixture("info_310p3_duo_npu8_32768.txt"))
    assert info.layout == "chip-device"
    assert info.npu_ids() == [8, 32768]
    assert [(c.npu_id, c.chip_id, c.device_id) for c in info.chips] == [(8, 0, 0), (8, 1, 1), (32768, 0, 2),
                                                                      (32768, 1, 3)]
    assert all(c.power_w is None and c.hbm_total_mb is None and c.phy_id is None for c in info.chips)
    assert (info.chips[2].memory_used_mb, info.chips[2].memory_total_mb) == (1647, 21527)
    assert info.processes == [] and info.idle_npus == [8, 32768]


def test_310b_edge_board_bus_na_and_prompt():
    info = parse_npu_smi_info(fixture("info_310b1_edge_bus_na.txt"))
    (c,) = info.chips
    assert (c.name, c.health, c.bus_id, c.power_w, c.hugepages_used, c.hugepages_total) == (
        "310B1", "Alarm", None, 0.0, 15, 15)
    assert (c.memory_used_mb, c.memory_total_mb, c.hbm_used_mb) == (1751, 7545, None)
    assert not info.has_process_table


def test_20x_80col_no_hugepages():
    info = parse_npu_smi_info(fixture("info_20.2.0_atlas300_2chip.txt"))
    assert info.driver_version == "20.2.0"
    assert [(c.npu_id, c.chip_id, c.device_id) for c in info.chips] == [(3, 0, 0), (3, 1, 1)]
    assert all(c.hugepages_total is None and c.hbm_used_mb is None for c in info.chips)
    assert info.chips[1].health == "Alarm" and info.chips[1].temp_c == 88
    assert info.chips[0].memory_used_mb == 2621


def test_21x_hugepages_no_hbm():
    info = parse_npu_smi_info(fixture("info_21.0.2_atlas300_hugepages.txt"))
    assert [c.hugepages_total for c in info.chips] == [970, 970]
    assert info.chips[0].aicore_pct == 3 and info.chips[1].hbm_total_mb is None


def test_26x_wide_layout_with_container_pid():
    info = parse_npu_smi_info(fixture("info_26.0.rc2_wide_container_pids.txt"))
    assert info.driver_version == "26.0.rc2"
    assert [c.name for c in info.chips] == ["910B2C", "910B2C"]
    assert info.chips[0].hbm_used_mb == 41250 and info.chips[0].aicore_pct == 12
    assert [(p.pid, p.container_pid, p.name, p.memory_mb) for p in info.processes] == [
        (3317650, 412, "vllm", 38700), (3317651, 413, "vllm", 38700)]


def test_container_sees_npus_4_to_7():
    info = parse_npu_smi_info(fixture("info_container_npu4-7.txt"))
    assert info.npu_ids() == [4, 5, 6, 7]
    assert [c.bus_id for c in info.chips][0] == "0000:45:00.0"
    assert info.idle_npus == [4, 5, 6, 7] and info.processes == []


@pytest.mark.parametrize(
    "name,code,needle",
    [
        ("error_dcmi_-8005.txt", -8005, "dcmi module initialize failed"),
        ("error_dcmi_-8020_device_used.txt", -8020, "because the device is used"),
        ("error_missing_driver_lib.txt", None, "libdrvdsmi_host.so"),
    ],
)
def test_error_outputs(name, code, needle):
    info = parse_npu_smi_info(fixture(name))
    assert info.chips == [] and info.processes == []
    assert info.error is not None and info.error.code == code and needle in info.error.message
    assert info.tool_version is None


def test_invalid_card_id_error():
    info = parse_npu_smi_info("Invalid card id.\nError parameter of -i\n")
    assert info.error is not None and info.error.message == "Invalid card id." and info.error.code is None


def test_paste_artefacts_crlf_tabs_and_cat_n():
    text = fixture("info_a3_2npu_4chip_25.2.1.txt")
    crlf = parse_npu_smi_info(text.replace("\n", "\r\n"))
    numbered = parse_npu_smi_info("\n".join(f"{i + 1:6}\t{ln}" for i, ln in enumerate(text.splitlines())))
    indented = parse_npu_smi_info("\n".join("        " + ln for ln in text.splitlines()))
    plain = parse_npu_smi_info(text)
    assert crlf == plain == numbered == indented


def test_elided_rows_are_tolerated_and_flagged():
    lines = fixture("info_a2_8x910B3_tp4_procs.txt").splitlines()
    # drop NPUs 2..6 (rows 12..26 of the file) and put an author's '...' in their place
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| 2     910B3"))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("| 7     910B3"))
    text = "\n".join(lines[:start] + ["..."] + lines[end - 1:])
    info = parse_npu_smi_info(text)
    assert info.elided and info.npu_ids() == [0, 1, 7]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\n",
        "hello world\n",
        "bash: npu-smi: command not found\n",
        "| npu-smi 24.1.rc2   Version: 24.1.rc2 |\n",  # header only, no columns
        # first row of a pair without its second row
        "| npu-smi 24.1.rc2   Version: 24.1.rc2 |\n| NPU   Name | Health | Power(W) Temp(C) Hugepages-Usage(page)|\n"
        "| Chip | Bus-Id | AICore(%) Memory-Usage(MB) HBM-Usage(MB) |\n| 0  910B3 | OK | 90.1  40  0 / 0 |\n",
        # a row whose first cell is not an NPU id
        "| npu-smi 24.1.rc2   Version: 24.1.rc2 |\n| NPU   Name | Health | Power(W) Temp(C) Hugepages-Usage(page)|\n"
        "| Chip | Bus-Id | AICore(%) Memory-Usage(MB) HBM-Usage(MB) |\n| x  910B3 | OK | 90.1  40  0 / 0 |\n",
    ],
)
def test_garbage_raises_one_line_parse_error(text):
    with pytest.raises(ParseError) as exc:
        parse_npu_smi_info(text)
    msg = str(exc.value)
    assert "\n" not in msg and "npu-smi info" in msg


def test_unreadable_process_row_keeps_the_chips():
    text = fixture("info_a3_2npu_4chip_25.2.1.txt").replace("| 2209          | python3", "| abc           | python3", 1)
    info = parse_npu_smi_info(text)
    assert len(info.chips) == 4
    assert [p.chip_id for p in info.processes] == [1]
    assert len(info.warnings) == 1 and "process id" in info.warnings[0]


def test_table_ends_at_first_non_table_line():
    text = (fixture("info_container_npu4-7.txt") + "CANN:\n| conda | table | row |\n"
            + fixture("info_a3_2npu_4chip_25.2.1.txt"))
    info = parse_npu_smi_info(text)
    assert info.npu_ids() == [4, 5, 6, 7] and info.driver_version == "23.0.3" and info.warnings == []
    # two captures back to back: the second header ends the first table
    info = parse_npu_smi_info(fixture("info_container_npu4-7.txt") + fixture("info_a3_2npu_4chip_25.2.1.txt"))
    assert info.npu_ids() == [4, 5, 6, 7] and info.layout == "chip"


def test_find_error_ignores_tables():
    assert find_npu_smi_error(fixture("info_container_npu4-7.txt")) is None


# --- golden facts read by eye from every corpus capture -----------------------------------------------------------
GOLDEN = {
    "arthurchiao-910B1-8card-23.0.rc2-elided.txt": dict(
        versions=("23.0.rc2", "23.0.rc2"), npus=[0, 1, 7], names={"910B1"}, health={"OK"}, elided=True,
        hbm=[(4175, 65536), (4175, 65536), (4174, 65536)], procs=[], layout="chip"),
    "gpustack-atlas300-310-4chip-npu-smi-20.2.0.txt": dict(
        versions=("20.2.0", "20.2.0"), npus=[215], chips=4, names={"310"}, health={"OK"},
        memory=[(2703, 8192)] * 4, hbm=[(None, None)] * 4, procs=[], layout="chip-device", hugepages=None),
    "gpustack-atlas300-310-4chip-npu-smi-21.0.4.txt": dict(
        versions=("21.0.4", "21.0.4.B030"), npus=[6], chips=4, names={"310"}, health={"OK"},
        memory=[(2703, 8192), (2867, 8192), (2867, 8192), (2867, 8192)], procs=[], layout="chip-device",
        hugepages=(0, 970), device_ids=[3, 4, 5, 6]),
    "gpustack-atlas800-9010-910A-8card-22.0.3.1.txt": dict(
        versions=("22.0.3.1", "22.0.3.1"), npus=list(range(8)), names={"910A"}, health={"OK"},
        hbm=[(0, 32768)] * 8, procs=[], layout="chip", hugepages=(15, 15)),
    "gpustack-atlas800-9010-910A-8card-warning-24.1.RC2.txt": dict(
        versions=("24.1.RC2", "24.1.RC2"), npus=list(range(8)), names={"xxx"}, warning=[3, 7],
        hbm=[(0, 32768)] * 8, nprocs=32, first_pid=37656, proc_name="hlt_host_devmm_", proc_mem=686,
        hugepages=(1232, 1232)),
    "gpustack-docstring-910B1-2card-full-hbm-23.0.rc3.3.txt": dict(
        versions=("23.0.rc3.3", "23.0.rc3.3"), npus=[0, 1], names={"910B1"}, health={"OK"},
        hbm=[(65099, 65536), (65098, 65536)], procs=[(0, 576489, "python", 60703), (1, 576491, "python", 60704)],
        power=[271.1, 275.0], aicore=[55, 66]),
    "ms-swift-910B3-8card-24.1.rc1.b030.txt": dict(
        versions=("24.1.rc1.b030", "24.1.rc1.b030"), npus=list(range(8)), names={"910B3"}, health={"OK"},
        procs=[], has_procs=False, hbm0=(3318, 65536)),
    "triton-ascend-docs-910B4-26.0.rc1-wide-layout.txt": dict(
        versions=("26.0.rc1", "26.0.rc1"), npus=[0], names={"910B4"}, health={"OK"}, hbm=[(2871, 32768)],
        procs=[], idle=[0], power=[82.6]),
    "yunwuyue7-atlas200IDK-310B4-23.0.rc3.txt": dict(
        versions=("23.0.rc3", "23.0.rc3"), npus=[0], names={"310B4"}, health={"OK"}, memory=[(2166, 3513)],
        hbm=[(None, None)], bus=[None], hugepages=(15, 15), layout="chip-device"),
}


@pytest.mark.parametrize("path", corpus_params("npu_smi_info"))
def test_corpus_golden_facts(path):
    _, body = read_corpus(path)
    info = parse_npu_smi_info(body)
    g = GOLDEN.get(path.name)
    assert g is not None, f"no golden facts written for new corpus file {path.name}"
    assert (info.tool_version, info.driver_version) == g["versions"]
    parse_version(info.driver_version)  # every driver version string parses
    assert info.error is None
    assert info.npu_ids() == g["npus"]
    assert len(info.chips) == g.get("chips", len(g["npus"]))
    assert {c.name for c in info.chips} == g["names"]
    if "health" in g:
        assert {c.health for c in info.chips} == g["health"]
    if "warning" in g:
        assert [c.npu_id for c in info.chips if c.health == "Warning"] == g["warning"]
    if "hbm" in g:
        assert [(c.hbm_used_mb, c.hbm_total_mb) for c in info.chips] == g["hbm"]
    if "hbm0" in g:
        assert (info.chips[0].hbm_used_mb, info.chips[0].hbm_total_mb) == g["hbm0"]
    if "memory" in g:
        assert [(c.memory_used_mb, c.memory_total_mb) for c in info.chips] == g["memory"]
    if "procs" in g:
        assert [(p.npu_id, p.pid, p.name, p.memory_mb) for p in info.processes] == g["procs"]
    if "nprocs" in g:
        assert len(info.processes) == g["nprocs"]
        assert info.processes[0].pid == g["first_pid"]
        assert {p.name for p in info.processes} == {g["proc_name"]}
        assert {p.memory_mb for p in info.processes} == {g["proc_mem"]}
        assert sorted({p.npu_id for p in info.processes}) == list(range(8))
    if "layout" in g:
        assert info.layout == g["layout"]
    if "hugepages" in g:
        want = g["hugepages"]
        assert {(c.hugepages_used, c.hugepages_total) for c in info.chips} == {want if want else (None, None)}
    if "device_ids" in g:
        assert [c.device_id for c in info.chips] == g["device_ids"]
    if "power" in g:
        assert [c.power_w for c in info.chips] == g["power"]
    if "aicore" in g:
        assert [c.aicore_pct for c in info.chips] == g["aicore"]
    if "bus" in g:
        assert [c.bus_id for c in info.chips] == g["bus"]
    if "idle" in g:
        assert info.idle_npus == g["idle"]
    if "has_procs" in g:
        assert info.has_process_table is g["has_procs"]
    assert info.elided is g.get("elided", False)


def test_corpus_a3_table_inside_collect_env():
    path = CORPUS / "collect_env" / "vllm-ascend-3963-collect-env-A3-1npu-cann8.2rc1.txt"
    if not path.is_file():
        pytest.skip("corpus not present")
    _, body = read_corpus(path)
    info = parse_npu_smi_info(body)
    assert info.driver_version == "24.1.rc3.7" and info.layout == "chip-phy-id"
    assert [(c.npu_id, c.chip_id, c.phy_id, c.hbm_used_mb) for c in info.chips] == [(2, 0, 4, 3411), (2, 1, 5, 3208)]
    assert info.chips[0].power_w == 176.3 and info.chips[1].power_w is None
    assert info.idle_npus == [2] and info.processes == []


def test_a_prompt_line_then_cat_n_numbers_on_the_rest():
    # `$ npu-smi info | cat -n` pasted with its prompt: the prompt is not numbered, every output line is.
    table = fixture("info_a2_8x910B3_tp4_procs.txt")
    text = "(vllm) root@a2-node-03:~# npu-smi info | cat -n\n" + "".join(
        f"{i:6d}\t{ln}\n" for i, ln in enumerate(table.splitlines(), start=1))
    assert parse_npu_smi_info(text).chips == parse_npu_smi_info(table).chips


def test_a_blank_version_field_is_no_version_not_the_border():
    # a header whose fields are blank (a pasted table, a container without the driver's version file): the border
    # `|` after `Version:` had been read as the driver version, and DRV102 failed on it
    text = fixture("info_a2_8x910B3_tp4_procs.txt")
    header = next(ln for ln in text.splitlines() if "Version:" in ln)
    blank = header.replace("24.1.rc2", " " * len("24.1.rc2"))
    info = parse_npu_smi_info(text.replace(header, blank))
    assert (info.tool_version, info.driver_version) == (None, None) and info.npu_ids() == list(range(8))
    half = header.replace("Version: 24.1.rc2", "Version:         ")
    assert parse_npu_smi_info(text.replace(header, half)).driver_version is None


def test_a_table_cut_inside_a_chip_keeps_the_chips_above_it():
    # the h38s judges, generically: a paste that ends after the first row of a chip lost the whole table
    lines = fixture("info_a2_8x910B3_tp4_procs.txt").splitlines()
    cut = next(i for i, ln in enumerate(lines) if ln.startswith("| 2     910B3"))
    info = parse_npu_smi_info("\n".join(lines[:cut + 1]))
    assert info.npu_ids() == [0, 1] and info.elided
    assert "the table ends after the first row of NPU 2" in info.warnings[0]


def test_rows_without_the_headers_are_read_as_a_fragment():
    # the chip rows and process rows of a table, its version header and column headers left out
    lines = fixture("info_a2_8x910B3_tp4_procs.txt").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| 0     910B3"))
    rows = "\n".join(lines[start:])
    whole = parse_npu_smi_info(fixture("info_a2_8x910B3_tp4_procs.txt"))
    info = parse_npu_smi_info(rows, fragment=True)
    assert info.npu_ids() == whole.npu_ids() and info.elided and info.layout == "fragment"
    assert [c.hbm_used_mb for c in info.chips] == [c.hbm_used_mb for c in whole.chips]
    assert [(p.npu_id, p.pid) for p in info.processes] == [(p.npu_id, p.pid) for p in whole.processes]
    assert all(c.device_id is None and c.phy_id is None for c in info.chips)  # which id column: not known
    with pytest.raises(ParseError):  # only its header, or rows that are no chip: nothing to read
        parse_npu_smi_info("| 0       0                 | 12345         | python3.11   | 56789  |\n", fragment=True)
    with pytest.raises(ParseError):
        parse_npu_smi_info(rows)  # without `fragment`, a table needs its header


@pytest.mark.parametrize("path", corpus_params("npu_smi_info"))
def test_corpus_rows_without_the_headers_read_as_the_table_does(path):
    """Each real capture with its version header and column headers cut off (what a pasted excerpt keeps): the
    fragment reader finds the same chips, HBM and processes as the whole table, or none of it is claimed."""
    _, body = read_corpus(path)
    whole = parse_npu_smi_info(body)
    lines = body.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip().startswith("|") and whole.chips
                  and re.match(r"\|\s*%d\s+\S" % whole.chips[0].npu_id, ln.strip())), None)
    if first is None or whole.layout == "chip-phy-id" or any(c.bus_id is None for c in whole.chips):
        pytest.skip("no two-row chips with a Bus-Id to read without the headers")
    info = parse_npu_smi_info("\n".join(lines[first:]), fragment=True)
    assert info.npu_ids() == whole.npu_ids() and info.elided
    assert [(c.hbm_used_mb, c.hbm_total_mb) for c in info.chips] == [(c.hbm_used_mb, c.hbm_total_mb)
                                                                     for c in whole.chips]
    assert {c.health for c in info.chips} == {c.health for c in whole.chips}
