"""#37's bar: a documented-healthy stack gets no `fail`. For every release row of the matrix and every hardware family
it lists, a host is drawn the way that release's own files and images say (its pins, the CANN of its image for that
chip — `cann_per_hardware` —, a driver the CANN's release notes match, the chip's idle npu-smi table, an environment
sourced for that CANN layout) and judged by every check of `check` and `exec`. A check whose facts the drawing does
not give answers unknown; none may fail, and VLLM102 (the release's pins) never contradicts the hardware rules (HW*).
"""

from __future__ import annotations

import pytest

from ascend_doctor.core.evaluator import evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.facts import FactStore
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.parsers.ascend_files import parse_nnal_version_info
from ascend_doctor.parsers.npu_smi import NpuChip, NpuSmiInfo
from ascend_doctor.probes.cann import NnalFact
from ascend_doctor.probes.host_facts import ContainerFact
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.seam.host import Distribution, PythonEnv
from ascend_doctor.text.versions import SpecifierSet, parse_version
from tests.checks.test_cann_checks import cann, driver
from tests.helpers import parse_serve

MATRIX = Knowledge().matrix
# chip name, chips per NPU, HBM per chip (MB), NPUs: what npu-smi prints for the usual box of each family
FAMILY = {"A2": ("910B3", 1, 65536, 8), "A3": ("Ascend910", 2, 65536, 8), "310P": ("310P3", 2, 44280, 4),
          "A5": ("Ascend950PR", 1, 131072, 8)}
DRIVERS = ("26.1.1", "26.0.RC1", "25.5.1", "25.5.0", "25.3.0", "25.2.0", "25.0.rc1.1", "24.1.0", "24.1.rc3",
           "24.1.rc2", "24.1.rc1")
PYTHONS = ("3.11.10", "3.10.15", "3.12.7", "3.9.20")


def _pick(spec: str, candidates) -> str:
    return next(c for c in candidates if SpecifierSet(spec).contains(parse_version(c)))


TRANSFORMERS = ("5.14.1", "4.57.6", "4.57.1", "4.56.2", "4.53.3", "4.52.4", "4.51.3", "4.49.0", "4.48.3")


def _one(spec: str):
    """A transformers release the specifier admits: its `==` pin, else the newest of the ones users run."""
    for part in spec.split(","):
        if part.strip().startswith("=="):
            return part.strip()[2:].strip()
    return next((v for v in TRANSFORMERS if SpecifierSet(spec).contains(parse_version(v))), None)


def stack(release, family: str) -> dict:
    """The facts of a host built the way `release`'s image for `family` is."""
    cann_v = release.pins_for("cann", family)[0]
    # A driver the CANN's notes match; where no source pairs the CANN with any driver (8.3.RC1/RC2), one no source
    # rules out (CANN106 is then unknown, never a failure).
    drv = next((d for d in DRIVERS if MATRIX.cann_driver_compatible(cann_v, d).compatible), None) or \
        next(d for d in DRIVERS if MATRIX.cann_driver_compatible(cann_v, d).compatible is None)
    dists = {"vllm": f"{release.vllm[0]}+empty", "vllm-ascend": release.version}
    for name, field in (("torch", "torch"), ("torch-npu", "torch_npu")):
        if getattr(release, field):
            dists[name] = getattr(release, field)[0]
    triton = release.pins_for("triton_ascend", family)
    if triton:
        dists["triton-ascend"] = triton[0]
    if release.transformers and _one(release.transformers):
        dists["transformers"] = _one(release.transformers)
    py = PythonEnv(executable="/opt/vllm/bin/python3", version=_pick(release.python, PYTHONS),
                   implementation="CPython", machine="aarch64", soabi="cpython-311-aarch64-linux-gnu", bits=64,
                   distributions=[Distribution(name=n, version=v) for n, v in dists.items()])
    new_layout = parse_version(cann_v) >= parse_version("8.5.0")
    root = f"/usr/local/Ascend/cann-{cann_v}" if new_layout else f"/usr/local/Ascend/ascend-toolkit/{cann_v}"
    home = "/usr/local/Ascend/cann" if new_layout else "/usr/local/Ascend/ascend-toolkit/latest"
    name, per_npu, hbm, npus = FAMILY[family]
    chips = [NpuChip(npu_id=n, chip_id=c, phy_id=n * per_npu + c if per_npu > 1 else None, name=name, health="OK",
                     hbm_used_mb=hbm // 20, hbm_total_mb=hbm) for n in range(npus) for c in range(per_npu)]
    smi = NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0),
                     info=NpuSmiInfo(tool_version=drv, driver_version=drv, chips=chips, layout="chip",
                                     has_process_table=True))
    env = {"PATH": "/opt/vllm/bin:/usr/bin:/bin", "ASCEND_HOME_PATH": home, "ASCEND_TOOLKIT_HOME": home,
           "ASCEND_OPP_PATH": f"{home}/opp", "LD_LIBRARY_PATH": f"{home}/lib64:/usr/local/Ascend/driver/lib64/driver:"
           "/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0/lib",
           "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0",
           "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}
    if parse_version("0.9.1") <= parse_version(release.version) < parse_version("0.10.0rc1"):
        env["VLLM_USE_V1"] = "1"  # the v0.9.1 release notes: "always set VLLM_USE_V1=1 to use V1 engine"
    nnal = NnalFact(found=True, version_info_path="/usr/local/Ascend/nnal/atb/latest/version.info",
                    info=parse_nnal_version_info(f"Ascend-cann-atb : {cann_v}\nAscend-cann-atb Version : {cann_v}\n"),
                    atb_home_path="/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0", cxx_abi=0,
                    searched=["/usr/local/Ascend/nnal/atb/latest/version.info"])
    return {"python": py, "cann": cann(version=cann_v, root=root, aliases=[home], nnal=nnal),
            "driver": driver(drv), "npu_smi": smi, "env": env,
            "container": ContainerFact(in_container=False, runtime=None, signals=[])}


# Every documented stack, 0.7.1rc1's torch_npu daily build included: ADV-2026-010 matches that build only beside an
# NNAL older than the 8.0.0 its installation guide pairs it with (the sweep's NNAL is the release's CANN).
CASES = [(r, f) for r in MATRIX.releases for f in r.hardware if f in FAMILY]


@pytest.fixture(scope="module")
def registry():
    return load_registry(entry_points=False)


@pytest.mark.parametrize("release, family", CASES, ids=[f"{r.version}-{f}" for r, f in CASES])
def test_a_healthy_host_of_every_release_and_chip_gets_no_fail(registry, release, family):
    facts = stack(release, family)
    serve = ["vllm", "serve", "/models/m", "--tensor-parallel-size", "2"]
    if family == "310P":
        serve += ["--dtype", "float16", "--enforce-eager", "--max-model-len", "4096"]
    facts["serve_cmd"] = parse_serve(serve)
    checks = [c for c in registry.all() if c.stage in ("static", "serve")]
    findings = evaluate(checks, FactStore.given(facts, options=RunOptions()), RunOptions())
    failed = [f"{f.code}: {f.message}" for f in findings if f.status.value in ("fail", "error")]
    assert failed == []
