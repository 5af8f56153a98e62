"""`smoke --base-url GATEWAY --direct-url VLLM` (SRV106) and the round-trip id diagnosis of TOOL111.

Both servers here are ScriptedServers on 127.0.0.1: the "direct" one answers from good/, the "gateway" one from the
same transcripts with the faults gateways were seen to inject (a rewritten call id, a dropped role:tool message,
re-serialised arguments, content "" instead of null).
"""

from __future__ import annotations

import copy
import json

from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.smoke.client import Exchange, Reply, ToolCall
from ascend_doctor.smoke.compare import compare_exchange, id_shape
from tests.smoke.fault_server import GOOD, ScriptedServer


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def good(name):
    return json.loads((GOOD / f"{name}.json").read_text())


def findings(r):
    return {f["code"]: f for f in json.loads(r.output)["findings"]}


def test_a_transparent_gateway_passes():
    with ScriptedServer() as gw, ScriptedServer() as direct:
        r = invoke("smoke", "--base-url", gw.base_url, "--direct-url", direct.base_url, "--format", "json",
                   "--timeout", "10")
    f = findings(r)["SRV106"]
    assert f["status"] == "pass" and "answered the same" in f["message"], f["message"]
    assert r.exit_code == 0


def test_a_gateway_that_rewrites_ids_and_drops_the_tool_message_is_named():
    named = good("named")
    named["json"]["choices"][0]["message"]["tool_calls"][0]["id"] = "call_7"  # the gateway's own id scheme
    roundtrip = {"status": 400, "json": {"object": "error", "code": 400, "message":
                 "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                 "'tool_call_id'. The following tool_call_ids did not have response messages: ['call_7x']"}}
    with ScriptedServer(overrides={"named": named, "roundtrip": roundtrip}) as gw, ScriptedServer() as direct:
        r = invoke("smoke", "--base-url", gw.base_url, "--direct-url", direct.base_url, "--format", "json",
                   "--timeout", "10")
    assert r.exit_code == 1
    found = findings(r)
    f = found["SRV106"]
    assert f["status"] == "fail"
    assert "named call_id_shape: 'call_7' (call_<1 hex>) via the gateway" in f["message"]
    assert "roundtrip status: HTTP 400 via the gateway, HTTP 200 direct" in f["message"]
    sources = [e["source"] for e in f["evidence"]]
    assert any("via http://127.0.0.1" in s for s in sources) and any("direct http://127.0.0.1" in s for s in sources)
    rt = found["TOOL111"]
    assert rt["status"] == "fail"
    assert "sent tool_call_id 'call_7'" in rt["message"] and "'call_7x'" in rt["message"]
    assert "gateway or proxy" in rt["message"]


def test_same_url_twice_is_an_input_error():
    r = CliRunner().invoke(cli, ["smoke", "--base-url", "http://127.0.0.1:1/v1", "--direct-url",
                                 "http://127.0.0.1:1"])
    assert r.exit_code == 2 and "same URL" in r.output


def _x(name, *, content=None, calls=(), finish="tool_calls", status=200, body="{}"):
    return Exchange(name=name, method="POST", path="/v1/chat/completions", status=status, body_text=body,
                    reply=Reply(content=content, tool_calls=list(calls), finish_reason=finish, choices=1))


def test_reserialised_arguments_are_a_byte_difference_not_a_fault():
    a = ToolCall(id="chatcmpl-tool-0123456789abcdef", name="get_weather", arguments='{"city":"Paris"}')
    b = ToolCall(id="chatcmpl-tool-fedcba9876543210", name="get_weather", arguments='{"city": "Paris"}')
    diffs = compare_exchange("named", _x("named", calls=[a]), _x("named", calls=[b]))
    assert [(d.aspect, d.serious) for d in diffs] == [("arguments_bytes", False)]
    c = copy.deepcopy(b)
    c.arguments = '{"city": "Lyon"}'
    assert [d.aspect for d in compare_exchange("named", _x("named", calls=[a]), _x("named", calls=[c]))] == \
        ["arguments"]


def test_content_null_vs_empty_beside_calls_is_not_serious():
    call = ToolCall(id="chatcmpl-tool-0123456789abcdef", name="get_weather", arguments="{}")
    diffs = compare_exchange("named", _x("named", content="", calls=[call]), _x("named", content=None, calls=[call]))
    assert [(d.aspect, d.serious) for d in diffs] == [("content", False)]


def test_id_shape():
    assert id_shape("chatcmpl-tool-80fbfaaaf454c1a0") == "chatcmpl-tool-<16 hex>"
    assert id_shape("call__0_get_weather_cmpl-abc") == "call__0_get_weather_cmpl-<3 hex>"
    assert id_shape(None) == "(none)"


def test_an_unreachable_direct_server_makes_the_comparison_unknown():
    with ScriptedServer() as gw:
        r = invoke("smoke", "--base-url", gw.base_url, "--direct-url", "http://127.0.0.1:9/v1", "--format", "json",
                   "--timeout", "5")
    f = findings(r)["SRV106"]
    assert f["status"] == "unknown" and "did not answer" in f["message"]


def test_behind_a_gateway_the_leak_fix_stays_at_the_gateway_and_each_answer_is_quoted_once():
    """#22 item 9: SRV106 rightly blamed the gateway, yet TOOL113 in the same report said to restart vllm serve with
    another parser; SRV106 quoted one full response three times."""
    with ScriptedServer("dsml_leak") as gw, ScriptedServer() as direct:
        r = invoke("smoke", "--base-url", gw.base_url, "--direct-url", direct.base_url, "--format", "json",
                   "--timeout", "10")
    found = findings(r)
    leak, srv = found["TOOL113"], found["SRV106"]
    assert leak["status"] == "fail" and "only through the gateway" in leak["message"]
    assert "fix the gateway" in leak["remediation"] and "--tool-call-parser" not in leak["remediation"]
    assert srv["status"] == "fail"
    quotes = [e["excerpt"] for e in srv["evidence"]]
    assert len(quotes) == len(set(quotes)), "the same response quoted more than once"


def test_without_a_direct_run_the_leak_fix_is_vllm_s():
    with ScriptedServer("dsml_leak") as gw:
        r = invoke("smoke", "--base-url", gw.base_url, "--format", "json", "--timeout", "10")
    leak = findings(r)["TOOL113"]
    assert "--tool-call-parser" in leak["remediation"] and "gateway" not in leak["message"]
