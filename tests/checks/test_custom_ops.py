"""VLLM107 vllm-ascend's compiled operators, on hand-built probe answers with the error texts users pasted
(vllm-ascend#1249 glibc, #1114 kernels library), and the probe script's own source."""

from __future__ import annotations

from ascend_doctor.probes.platform import PLATFORM_SCRIPT
from ascend_doctor.report import Status
from tests.checks.test_platform_checks import facts
from tests.helpers import run_check

NPU = "vllm_ascend.platform.NPUPlatform"
STACK = (("vllm", "0.9.1"), ("vllm-ascend", "0.9.1rc1"))


def judge(**kw):
    f = facts(NPU, *STACK, worker_module="vllm_ascend.worker.worker_v1", **kw)
    f["python"].libc, f["python"].libc_version = "glibc", "2.31"
    return run_check("VLLM107", f)


def test_loaded_passes():
    assert judge(custom_ops_loaded=True).status == Status.PASS


def test_an_old_glibc_fails_with_the_systems_version():  # vllm-ascend#1249
    err = ("ImportError: /lib/aarch64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found (required by "
           "/vllm-ascend-env/lib/python3.11/site-packages/vllm_ascend/vllm_ascend_C.cpython-311-aarch64-linux-gnu.so)")
    f = judge(custom_ops_loaded=False, custom_ops_error=err)
    assert f.status == Status.FAIL and "newer glibc than this system's glibc 2.31" in f.message
    assert "GLIBC_2.32" in f.message


def test_a_source_install_without_its_kernels_says_so():  # vllm-ascend#1114
    f = judge(custom_ops_loaded=False, custom_ops_error="ImportError: libvllm_ascend_kernels.so: cannot open shared "
                                                         "object file: No such file or directory")
    assert f.status == Status.FAIL and "C++ build did not run or failed" in f.message
    assert "--no-build-isolation" in f.remediation


def test_not_tried_is_unknown_and_says_why():
    f = judge(stage="platform", error_type="ImportError", error="libatb.so: cannot open shared object file")
    assert f.status == Status.UNKNOWN and "stopped before it tried" in f.message
    f = judge()  # an answer recorded by an older probe: no custom_ops keys
    assert f.status == Status.UNKNOWN and "older ascend-doctor" in f.message


def test_the_probe_script_tries_the_compiled_operators_in_the_child():
    assert 'importlib.import_module("vllm_ascend.vllm_ascend_C")' in PLATFORM_SCRIPT
    compile(PLATFORM_SCRIPT, "<platform-probe>", "exec")
