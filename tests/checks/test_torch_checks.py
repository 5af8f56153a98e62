"""TORCH checks on hand-built facts: pairs from Ascend/pytorch's table and PyPI metadata (matrix-facts §2)."""

from ascend_doctor.probes.cann import CannFact, CannInstall
from ascend_doctor.probes.imports import ImportProbeFact
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.helpers import run_check


def py(*dists, version="3.11.7", machine="aarch64"):
    """A serving interpreter with distributions given as (name, version) or (name, version, requires)."""
    major, minor = version.split(".")[:2]
    return PythonEnv(executable="/opt/v/bin/python", version=version, implementation="CPython",
                     soabi=f"cpython-{major}{minor}-{machine}-linux-gnu", machine=machine,
                     distributions=[Distribution(name=d[0], version=d[1], requires=list(d[2]) if len(d) > 2 else [])
                                    for d in dists])


TORCH_29 = ("torch", "2.9.0", ["filelock", "sympy>=1.13.3"])
NPU_29 = ("torch_npu", "2.9.0", ["torch==2.9.0", "numpy", "pyyaml"])
NPU_28P2 = ("torch_npu", "2.8.0.post2", ["torch==2.8.0"])


def cann(version):
    inst = CannInstall(root=f"/usr/local/Ascend/cann-{version}", version=version, version_source="version.cfg")
    return CannFact(found=True, installs=[inst], active=inst, version=version)


# TORCH101 -------------------------------------------------------------------------------------------------------
def test_pair_matches():
    f = run_check("TORCH101", {"python": py(TORCH_29, NPU_29)})
    assert f.status == Status.PASS and "2.9.0" in f.message
    assert any("Ascend/pytorch" in e.excerpt for e in f.evidence)


def test_cuda_torch_over_torch_npu_fails_with_exact_pip_fix():
    # vllm from PyPI pulled torch 2.9.0 over the 2.8.0 torch_npu 2.8.0.post2 needs (vllm-ascend#5710).
    f = run_check("TORCH101", {"python": py(TORCH_29, NPU_28P2)})
    assert f.status == Status.FAIL and f.severity.value == "critical"
    assert "pip install torch==2.8.0 torch-npu==2.8.0.post2" in f.remediation


def test_local_label_torch_matches():
    assert run_check("TORCH101", {"python": py(("torch", "2.9.0+cpu"), NPU_29)}).status == Status.PASS


def test_torch_npu_without_torch_fails_and_nothing_installed_skips():
    assert run_check("TORCH101", {"python": py(NPU_29)}).status == Status.FAIL
    assert run_check("TORCH101", {"python": py(("numpy", "1.26.4"))}).status == Status.SKIP


def test_torch_npu_newer_than_matrix_without_requirement_warns():
    f = run_check("TORCH101", {"python": py(("torch", "2.99.0"), ("torch_npu", "2.99.0"))})
    assert f.status == Status.WARN and "not in the matrix yet" in f.message


def test_pair_unknown_without_fact():
    assert run_check("TORCH101", {}).status == Status.UNKNOWN


# TORCH102 -------------------------------------------------------------------------------------------------------
def test_torch_npu_cann_table_pair_passes():
    f = run_check("TORCH102", {"python": py(TORCH_29, NPU_29), "cann": cann("8.5.0")})
    assert f.status == Status.PASS


def test_torch_npu_cann_vllm_ascend_release_pair_passes():
    # vllm-ascend v0.16.0rc1..v0.18.0 ship torch_npu 2.9.0 with CANN 8.5.1 (table says 8.5.0).
    f = run_check("TORCH102", {"python": py(TORCH_29, NPU_29), "cann": cann("8.5.1")})
    assert f.status == Status.PASS and any("vllm-ascend" in e.excerpt for e in f.evidence)


def test_torch_npu_on_older_cann_fails():
    f = run_check("TORCH102", {"python": py(TORCH_29, NPU_29), "cann": cann("8.2.RC1")})
    assert f.status == Status.FAIL and "older" in f.message
    # Either way out, exactly: CANN 8.5.0, or the newest PyPI torch_npu built for CANN 8.2.RC1 (table: 2.6.0).
    assert "Install CANN 8.5.0" in f.remediation and "`pip install torch==2.6.0 torch-npu==2.6.0`" in f.remediation


def test_torch_npu_on_newer_undocumented_cann_warns():
    f = run_check("TORCH102", {"python": py(("torch", "2.7.1"), ("torch_npu", "2.7.1", ["torch==2.7.1"])),
                               "cann": cann("8.5.0")})
    assert f.status == Status.WARN


def test_torch_npu_cann_skip_and_unknown():
    assert run_check("TORCH102", {"python": py(TORCH_29), "cann": cann("8.5.0")}).status == Status.SKIP
    assert run_check("TORCH102", {"python": py(TORCH_29, NPU_29), "cann": CannFact(found=False)}).status == Status.SKIP
    assert run_check("TORCH102", {"python": py(TORCH_29, NPU_29)}).status == Status.UNKNOWN


# TORCH103 -------------------------------------------------------------------------------------------------------
def test_a_cann_version_that_is_not_a_release_number_is_unknown_not_a_crash():
    """A paste's `CANN: 9.0.x` (h38q): no release to pair torch_npu with — said, not a ParseError."""
    f = run_check("TORCH102", {"python": py(TORCH_29, NPU_29), "cann": cann("9.0.x")})
    assert f.status == Status.UNKNOWN and "9.0.x is not a release number" in f.message, f.message


def test_python_supported_passes():
    f = run_check("TORCH103", {"python": py(("torch", "2.8.0"), NPU_28P2)})
    assert f.status == Status.PASS and "cp311" in f.message


def test_python_not_supported_by_torch_fails():
    f = run_check("TORCH103", {"python": py(("torch", "2.5.1"), ("torch_npu", "2.5.1"), version="3.12.3")})
    assert f.status == Status.FAIL and "3.12" in f.message


def test_no_torch_npu_wheel_for_this_python_warns():
    # torch_npu 2.8.0 has no cp312 wheel (matrix-facts §2.3), torch 2.8.0 supports 3.12.
    f = run_check("TORCH103", {"python": py(("torch", "2.8.0"), ("torch_npu", "2.8.0"), version="3.12.3")})
    assert f.status == Status.WARN and "cp312" in f.message


def test_python_supported_skip_and_unknown():
    assert run_check("TORCH103", {"python": py(("numpy", "1.26.4"))}).status == Status.SKIP
    assert run_check("TORCH103", {"python": py(("torch", "2.99.0"))}).status == Status.UNKNOWN
    assert run_check("TORCH103", {}).status == Status.UNKNOWN


# TORCH104 -------------------------------------------------------------------------------------------------------
def probe(**kw):
    base = dict(ran=True, python="/opt/v/bin/python", stage="done", torch="2.9.0", torch_npu="2.9.0",
                npu_available=True, device_count=8, returncode=0, seconds=12.5)
    base.update(kw)
    return {"import_probe": ImportProbeFact(**base)}


def test_import_ok():
    f = run_check("TORCH104", probe())
    assert f.status == Status.PASS and "8 NPU" in f.message


def test_import_libatb_missing_names_nnal():
    f = run_check("TORCH104", probe(stage="torch_npu", error_type="ImportError", returncode=0, npu_available=None,
                                    device_count=None, error="libatb.so: cannot open shared object file: No such "
                                                             "file or directory"))
    assert f.status == Status.FAIL and "NNAL" in f.message
    assert "nnal/atb/set_env.sh" in f.remediation


def test_import_undefined_atb_symbol_names_torch_npu_vs_nnal():
    f = run_check("TORCH104", probe(stage="torch_npu", error_type="ImportError", npu_available=None,
                                    error="/usr/local/python3.10/lib/python3.10/site-packages/torch_npu/lib/"
                                          "libtorch_npu.so: undefined symbol: _ZN3atb15CreateOperationINS_5infer14"
                                          "GroupTopkParamEEENS_6StatusERKT_PPNS_9OperationE"))
    assert f.status == Status.FAIL and "ATB" in f.message


def test_import_segfault_points_at_cann_vs_driver():
    f = run_check("TORCH104", probe(stage="torch_npu", returncode=-11, signal="SIGSEGV", npu_available=None,
                                    device_count=None, stderr_tail="Fatal Python error: Segmentation fault"))
    assert f.status == Status.FAIL and "SIGSEGV" in f.message


def test_import_hang_points_at_busy_device():
    f = run_check("TORCH104", probe(stage="device", returncode=None, timed_out=True, npu_available=None,
                                    device_count=None))
    assert f.status == Status.FAIL and "hung" in f.message and "npu-smi" in f.remediation


def test_import_sees_no_npu():
    f = run_check("TORCH104", probe(npu_available=False, device_count=0))
    assert f.status == Status.FAIL and "no NPU" in f.message and "/dev/davinci" in f.remediation


def test_import_skip_and_unknown():
    f = run_check("TORCH104", {"import_probe": ImportProbeFact(ran=False, skipped_reason="not installed: torch-npu")})
    assert f.status == Status.SKIP and "not installed" in f.message
    assert run_check("TORCH104", {}).status == Status.UNKNOWN


def test_import_causes_without_signature_catalogue(monkeypatch):
    import ascend_doctor.knowledge.signatures as sig

    def broken(*a, **k):
        raise RuntimeError("catalogue unavailable")

    monkeypatch.setattr(sig, "diagnose", broken)
    f = run_check("TORCH104", probe(stage="torch_npu", error_type="ImportError", npu_available=None,
                                    error="libhccl.so: cannot open shared object file: No such file or directory"))
    assert f.status == Status.FAIL and "set_env.sh" in f.message and "set_env.sh" in f.remediation


def test_torch_npu_newer_than_matrix_cann_warns():
    f = run_check("TORCH102", {"python": py(("torch", "2.99.0"), ("torch_npu", "2.99.0")), "cann": cann("9.1.0")})
    assert f.status == Status.WARN and "not in the matrix yet" in f.message
