"""ENV checks on hand-built environments (matrix-facts §5 VLLM_USE_V1 history, §6.2 PYTORCH_NPU_ALLOC_CONF)."""

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.helpers import run_check


def py(**versions):
    return PythonEnv(executable="/opt/v/bin/python", version="3.11.7", machine="aarch64",
                     distributions=[Distribution(name=n, version=v) for n, v in versions.items()])


NPU = py(torch="2.9.0", torch_npu="2.9.0")
VA_0_11 = py(vllm="0.11.0", vllm_ascend="0.11.0", torch_npu="2.7.1")
VA_0_9_1 = py(vllm="0.9.1", vllm_ascend="0.9.1", torch_npu="2.5.1.post1")
VA_0_8 = py(vllm="0.8.5.post1", vllm_ascend="0.8.5rc1", torch_npu="2.5.1")
VLLM_0_13 = py(vllm="0.13.0", vllm_ascend="0.13.0", torch_npu="2.8.0.post2")


# ENV101 ---------------------------------------------------------------------------------------------------------
def test_alloc_conf_expandable_segments_passes():
    f = run_check("ENV101", {"env": {"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}, "python": NPU})
    assert f.status == Status.PASS


def test_alloc_conf_unset_warns_at_info_level():
    f = run_check("ENV101", {"env": {}, "python": NPU})
    assert f.status == Status.WARN and f.level.value == "info"
    assert "expandable_segments:True" in f.remediation


def test_alloc_conf_turned_off_warns_other_values_pass():
    assert run_check("ENV101", {"env": {"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:False"}, "python": NPU}).status \
        == Status.WARN
    assert run_check("ENV101", {"env": {"PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:256"}, "python": NPU}).status \
        == Status.PASS


def test_alloc_conf_skip_and_unknown():
    assert run_check("ENV101", {"env": {}, "python": py(vllm="0.13.0")}).status == Status.SKIP
    assert run_check("ENV101", {}).status == Status.UNKNOWN


# ENV102 (ENV103 and SERVE401 merged into it) ----------------------------------------------------------------------
def test_v0_engine_requested_on_release_without_v0_fails():
    f = run_check("ENV102", {"env": {"VLLM_USE_V1": "0"}, "python": VA_0_11})
    assert f.status == Status.FAIL and "0.11.0" in f.message and "unset VLLM_USE_V1" in f.remediation


def test_any_value_on_a_vllm_that_removed_the_variable_is_a_leftover_warning():
    for value in ("0", "1"):
        f = run_check("ENV102", {"env": {"VLLM_USE_V1": value}, "python": VLLM_0_13})
        assert f.status == Status.WARN and "ignored by vLLM 0.13.0" in f.message
    f = run_check("ENV102", {"env": {"VLLM_USE_V1": "0"}, "python": py(vllm="0.13.0")})
    assert f.status == Status.WARN


def test_v0_engine_on_0_9_1_warns_and_on_older_passes():
    assert run_check("ENV102", {"env": {"VLLM_USE_V1": "0"}, "python": VA_0_9_1}).status == Status.WARN
    assert run_check("ENV102", {"env": {"VLLM_USE_V1": "0"}, "python": VA_0_8}).status == Status.PASS


def test_v1_or_unset_passes():
    assert run_check("ENV102", {"env": {}}).status == Status.PASS
    assert run_check("ENV102", {"env": {"VLLM_USE_V1": "1"}, "python": VA_0_11}).status == Status.PASS


def test_vllm_version_override_counts():
    f = run_check("ENV102", {"env": {"VLLM_USE_V1": "1", "VLLM_VERSION": "0.12.0"},
                             "python": py(vllm="0.1.dev1+gbdb2cdd")})
    assert f.status == Status.WARN and any(e.source == "env: VLLM_VERSION" for e in f.evidence)


def test_unknown_paths():
    assert run_check("ENV102", {"env": {"VLLM_USE_V1": "0"}}).status == Status.UNKNOWN  # no python fact
    assert run_check("ENV102", {"env": {"VLLM_USE_V1": "0"}, "python": py(numpy="1.26.4")}).status == Status.UNKNOWN
    assert run_check("ENV102", {"env": {"VLLM_USE_V1": "1"}, "python": py(numpy="1.26.4")}).status == Status.UNKNOWN
    assert run_check("ENV102", {}).status == Status.UNKNOWN  # the inherited environment is not known
