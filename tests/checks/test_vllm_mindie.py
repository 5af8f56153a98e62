"""VLLM108: MindIE Turbo against the vllm-ascend release's official table (its "MindIE Turbo" column: 2.0rc1 with
v0.7.3 and v0.7.3.post1 only). Threads: vllm-ascend#2451 (2.1.rc1 on v0.9.1rc2: "MindIE Turbo is installed" never
logged), #1534 (2.0rc2 on v0.9.1rc1: graph capture fails in its operators)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.sync.ascend import parse_release_table
from tests.helpers import run_check

SDIST = Path("/work/sdists/va/vllm_ascend-0.9.1.tar.gz")


def judge(ascend: str, turbo):
    dists = [Distribution(name="vllm-ascend", version=ascend), Distribution(name="vllm", version="0.9.1")]
    if turbo:
        dists.append(Distribution(name="mindie-turbo", version=turbo))
    return run_check("VLLM108", {"python": PythonEnv(distributions=dists)})


def test_mindie_turbo_on_a_release_that_pairs_none_warns():
    f = judge("0.9.1rc2", "2.1rc1")
    assert f.status == Status.WARN and "pairs no MindIE Turbo with vllm-ascend 0.9.1rc2" in f.message, f.message
    assert "pip uninstall mindie-turbo" in f.remediation
    assert judge("0.9.1rc1", "2.0rc2").status == Status.WARN


def test_the_paired_line_passes_and_another_line_warns():
    assert judge("0.7.3", "2.0rc1").status == Status.PASS
    assert judge("0.7.3.post1", "2.0.rc2").status == Status.PASS  # the 2.0 line
    f = judge("0.7.3", "2.1.rc1")
    assert f.status == Status.WARN and "paired with MindIE Turbo 2.0rc1" in f.message
    assert "mindie-turbo==2.0rc1" in f.remediation


def test_not_installed_or_not_known():
    assert judge("0.9.1", None).status == Status.SKIP
    assert judge("9.9.9", "2.1rc1").status == Status.UNKNOWN


@pytest.mark.skipif(not SDIST.exists(), reason=f"{SDIST} not stored here")
def test_the_column_is_read_from_the_release_table_and_the_shipped_rows_hold_it():
    import tarfile

    from ascend_doctor.knowledge.matrix import load_matrix

    with tarfile.open(SDIST) as t:
        text = t.extractfile("vllm_ascend-0.9.1/docs/source/community/versioning_policy.md").read().decode()
    rows = {r.version: r.mindie_turbo for r in parse_release_table(text)}
    assert rows["0.7.3"] == rows["0.7.3.post1"] == "2.0rc1" and rows["0.9.1rc2"] is None
    m = load_matrix()
    for version, paired in rows.items():
        row = m.vllm_ascend_release(version)
        assert row is not None and row.mindie_turbo == paired, version


def test_a_paste_that_installs_it_on_top_of_an_image_is_not_told_it_is_not_installed():
    """The image's recipe lists what the image holds; `pip install mindie_turbo` after it adds a package the recipe
    does not know, so VLLM108 says it read no version, never "not installed"."""
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    def finding(text: str):
        report = triage_text(text, "p.md", load_registry(entry_points=False), RunOptions())
        return next(x for x in report.findings if x.code == "VLLM108")

    image = "docker pull quay.io/ascend/vllm-ascend:v0.7.3.post1\n"
    assert "not installed" in finding(image).message
    f = finding(image + "pip install mindie_turbo\n")
    assert f.status == Status.SKIP and "no mindie-turbo among the packages read" in f.message, f.message
    pinned = finding("docker pull quay.io/ascend/vllm-ascend:v0.9.1rc2\npip install mindie-turbo==2.1rc1\n")
    assert pinned.status == Status.WARN and "2.1rc1" in pinned.message, pinned.message


def test_a_release_that_no_longer_imports_it_passes():
    f = judge("0.13.0", "2.1rc1")
    assert f.status == Status.PASS and "does not import it" in f.message, f.message
    assert "the last release with one: 0.11.0" in f.message  # the registered_lib rows matrix sync reads
    assert judge("0.11.0", "2.1rc1").status == Status.WARN  # the last release that still imports it


def test_which_releases_import_it_is_read_from_their_sources():
    from ascend_doctor.knowledge.door import Knowledge
    from ascend_doctor.parsers.release_names import registered_libs

    assert registered_libs('try_register_lib(\n    "mindie_turbo",\n    "MindIE Turbo is installed.")\n') == [
        "mindie_turbo"]
    assert registered_libs("from x import try_register_lib\n") == [] and registered_libs("def (") is None
    table = Knowledge().release_names["vllm-ascend"]
    imports = {r.version: "mindie_turbo" in r.names["registered_lib"] for r in table.releases}
    assert imports["0.9.1rc1"] and imports["0.11.0"] and not imports["0.12.0rc1"] and not imports["0.13.0"]
