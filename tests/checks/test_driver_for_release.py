"""DRV104: the driver against the CANN the installed vllm-ascend release is built for — on hand-built facts and on
pastes that give the versions and the driver but no CANN (the form of vllm-ascend#4972: a 24.1 driver under a
release built for CANN 8.3.RC2)."""

from ascend_doctor.core.registry import load_registry
from ascend_doctor.parsers.ascend_files import parse_driver_version_info
from ascend_doctor.probes.cann import DriverFact
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.triage.run import triage_text
from tests.checks.test_cann_checks import cann
from tests.helpers import run_check

REG = load_registry(entry_points=False)


def _py(vllm_ascend: str) -> PythonEnv:
    return PythonEnv(executable="/opt/v/bin/python", version="3.11.7", machine="aarch64",
                     distributions=[Distribution(name="vllm_ascend", version=vllm_ascend)])


def _drv(version: str) -> DriverFact:
    return DriverFact(found=True, version_info=parse_driver_version_info(f"Version={version}\n"))


def _paste(text: str):
    return {f.code: f for f in triage_text(text, "paste.md", REG).findings}


def test_a_24_1_driver_under_a_release_built_for_cann_8_3_warns_inferred():
    f = run_check("DRV104", {"python": _py("0.11.0"), "driver": _drv("24.1.rc3")})
    assert f.status == Status.WARN and f.details["inferred"] is True, f.message
    assert "vllm-ascend 0.11.0 is built for CANN 8.3.RC2, and no published table pairs that CANN with a driver as " \
           "old as 24.1.rc3 (inferred)" in f.message
    assert "--keep-driver" in f.remediation and "matrix pins --vllm-ascend 0.11.0" in f.remediation
    assert any("4972" in e.excerpt for e in f.evidence)


def test_a_published_incompatible_pair_fails():
    """CANN 9.1.X with HDK 25.0.X is 'N' in the CANN 9.1.1 notes: vllm-ascend 0.23.0 (CANN 9.1.0) on 25.0.rc1."""
    f = run_check("DRV104", {"python": _py("0.23.0"), "driver": _drv("25.0.rc1.1")})
    assert f.status == Status.FAIL and "9.1.0, which the published table says does not run on driver 25.0.rc1.1" \
        in f.message, f.message


def test_controls_pass_or_stand_aside():
    ok = run_check("DRV104", {"python": _py("0.9.1"), "driver": _drv("24.1.rc3")})  # CANN 8.2.RC1: MindIE's grid
    assert ok.status == Status.PASS and "8.2.RC1" in ok.message, ok.message
    new = run_check("DRV104", {"python": _py("0.13.0"), "driver": _drv("25.5.0")})
    assert new.status == Status.PASS, new.message
    # the installed CANN is the release's: CANN106 judges the very same pair
    aside = run_check("DRV104", {"python": _py("0.11.0"), "driver": _drv("24.1.rc3"), "cann": cann("8.3.RC2")})
    assert aside.status == Status.SKIP and "CANN106" in aside.message
    # another CANN installed: the release's CANN is still judged (VLLM102 asks for it), and the message says so
    other = run_check("DRV104", {"python": _py("0.11.0"), "driver": _drv("24.1.rc3"), "cann": cann("8.2.RC1")})
    assert other.status == Status.WARN and "the installed CANN is 8.2.RC1" in other.message


def test_unknown_and_skip():
    assert run_check("DRV104", {"python": _py("0.11.0")}).status == Status.SKIP  # no driver version: DRV101/102
    unk = run_check("DRV104", {"python": _py("0.11.0rc0"), "driver": _drv("25.3.rc1")})  # 8.2.RC1 x 25.3: no source
    assert unk.status == Status.UNKNOWN and "no source" in unk.message
    assert run_check("DRV104", {"python": PythonEnv(executable="/p", version="3.11.7", machine="aarch64",
                                                    distributions=[])}).status == Status.SKIP


def test_a_paste_with_versions_and_driver_but_no_cann():
    found = _paste("vllm-ascend 0.11.0\nvllm 0.11.0\ndriver: 24.1.rc3\n")
    assert found["DRV104"].status == Status.WARN and "CANN 8.3.RC2" in found["DRV104"].message
    assert "no CANN version was seen" in found["DRV104"].message
    control = _paste("vllm-ascend 0.9.1\nvllm 0.9.1\ndriver: 24.1.rc3\n")
    assert control["DRV104"].status == Status.PASS
