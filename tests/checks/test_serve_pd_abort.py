"""SERVE406: the P/D abort timeout on a prefill node (vllm-ascend#11140, #15420), on the fixture stack of
test_serve_checks."""

from __future__ import annotations

import pytest

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check

KV = '{"kv_connector":"MooncakeConnectorV1","kv_role":"%s"}'


def _run(role, env):
    cmd = f"vllm serve {QWEN}" + (f" --kv-transfer-config {KV % role}" if role else "")
    return run_check("SERVE406", facts(cmd, env=env))


@pytest.mark.parametrize("role, env, status, words", [
    ("kv_producer", {"VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT": "10"}, Status.WARN,
     "VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=10 on a prefill node (kv_role kv_producer)"),
    ("kv_both", {"VLLM_NIXL_ABORT_REQUEST_TIMEOUT": "5"}, Status.WARN, "VLLM_NIXL_ABORT_REQUEST_TIMEOUT=5"),
    ("kv_producer", {"VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT": "480s"}, Status.FAIL,
     "480s is not a whole number of seconds: vLLM reads it with int()"),
    ("kv_producer", {"VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT": "480"}, Status.PASS, "between 60 s and 3600 s"),
    ("kv_producer", {"VLLM_NIXL_ABORT_REQUEST_TIMEOUT": "300000"}, Status.WARN,  # vllm-ascend#13240
     "VLLM_NIXL_ABORT_REQUEST_TIMEOUT=300000 on a prefill node (kv_role kv_producer): the KV of a request whose "
     "decode node failed stays allocated that long"),
    ("kv_producer", {"VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT": "60"}, Status.PASS, "=60"),
    ("kv_producer", {}, Status.PASS, "vLLM's default, 480 s"),
    ("kv_consumer", {"VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT": "10"}, Status.PASS, "no prefill side here"),
    (None, {"VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT": "10"}, Status.PASS, "no --kv-transfer-config"),
])
def test_abort_timeout(role, env, status, words):
    f = _run(role, env)
    assert f.status == status and words in f.message, f.message
    if status != Status.PASS:
        assert "VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=480" in f.remediation
        assert any("ABORT_REQUEST_TIMEOUT" in e.source for e in f.evidence)


def test_a_paste_that_does_not_show_the_variable_is_unknown():
    """A paste's export lines show some variables: one they do not show is not known to be unset."""
    from ascend_doctor.facts.server_env import EnvListing, ServerEnv

    fx = facts(f"vllm serve {QWEN} --kv-transfer-config {KV % 'kv_producer'}")
    env = ServerEnv.of({"VLLM_USE_V1": "1"}, {})
    env.listing = EnvListing("the paste's export lines", (), names=("VLLM_USE_V1",))
    fx["server_env"] = env
    f = run_check("SERVE406", fx)
    assert f.status == Status.UNKNOWN and "VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT" in f.message, f.message
