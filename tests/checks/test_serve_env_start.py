"""SERVE404 (worker start method) and SERVE405 (VLLM_VERSION override), on the fixture stack of test_serve_checks."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check


@pytest.mark.parametrize("env, status, words", [
    ({}, Status.PASS, "is not set"),
    ({"VLLM_WORKER_MULTIPROC_METHOD": "spawn"}, Status.PASS, "=spawn"),
    ({"VLLM_WORKER_MULTIPROC_METHOD": "fork"}, Status.WARN, "Cannot re-initialize NPU in forked subprocess"),
    ({"VLLM_WORKER_MULTIPROC_METHOD": "forkserver"}, Status.FAIL, "not one vLLM accepts (spawn, fork)"),
])
def test_worker_start_method(env, status, words):
    f = run_check("SERVE404", facts(f"vllm serve {QWEN}", env=env))
    assert f.status == status and words in f.message
    if status != Status.PASS:
        assert "VLLM_WORKER_MULTIPROC_METHOD=spawn" in f.remediation


def test_the_start_method_on_the_command_line_counts():
    f = run_check("SERVE404", facts(f"env VLLM_WORKER_MULTIPROC_METHOD=fork vllm serve {QWEN}"))
    assert f.status == Status.WARN


def _with_vllm(version: str, env: dict) -> dict:
    out = facts(f"vllm serve {QWEN}", env=env)
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm", version=version)])
    out.pop("vllm_files")
    return out


@pytest.mark.parametrize("installed, env, status, words", [
    ("0.20.2", {"VLLM_VERSION": "0.18.0"}, Status.FAIL,  # vllm-ascend#10020
     "VLLM_VERSION=0.18.0 but vLLM 0.20.2 is installed: vllm-ascend takes the code path of 0.18.0"),
    ("0.20.2", {"VLLM_VERSION": "0.20.2"}, Status.PASS, "matches the installed vLLM 0.20.2"),
    ("0.13.0+empty", {"VLLM_VERSION": "0.13.0"}, Status.PASS, "matches"),
    ("0.20.2", {}, Status.PASS, "reads the installed vLLM 0.20.2"),
    ("0.20.2", {"VLLM_VERSION": "v0.20"}, Status.FAIL, "not a version of the form X.Y.Z"),
    ("0.1.dev1+ge5588e49b", {}, Status.WARN, "development build and VLLM_VERSION is not set"),  # vllm-omni#5350
    ("0.16.0rc2.dev55+g65bb4942b.empty", {}, Status.WARN, "development build"),  # vllm-ascend#7488
    ("0.1.dev1+ge5588e49b", {"VLLM_VERSION": "0.20.2"}, Status.PASS, "names the release of the development build"),
    # a tree past a tag names an older release: the older release's code path (h38r: a wrong pass)
    ("0.20.2rc1.dev45+g1a2b3c4", {"VLLM_VERSION": "0.18.0"}, Status.WARN, "older than the development build"),
    ("0.20.2rc1.dev45+g1a2b3c4", {"VLLM_VERSION": "0.20.2"}, Status.PASS, "names the release of the development build"),
])
def test_vllm_version_override(installed, env, status, words):
    f = run_check("SERVE405", _with_vllm(installed, env))
    assert f.status == status and words in f.message, f.message


def test_without_an_installed_vllm_version_the_override_is_unknown():
    out = facts(f"vllm serve {QWEN}", env={"VLLM_VERSION": "0.18.0"})
    out["python"] = PythonEnv(distributions=[])
    out.pop("vllm_files")
    assert run_check("SERVE405", out).status == Status.UNKNOWN
