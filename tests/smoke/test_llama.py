"""The real-server tier: the whole smoke against llama-cpp-python 0.3.36's OpenAI server (CPU, gemma3-270m Q4_K_M,
--chat_format chatml-function-calling, 2 threads), asserting scenario by scenario what the doctor reports about
what that server really does. Each verdict cites the bytes it rests on (seen on 2026-11-29 with this exact build).

Run with ASCEND_DOCTOR_LLAMA_PYTHON=<venv python> (see .ci/llama-setup.sh); skipped otherwise.
Greedy decoding (temperature 0) of one fixed model/build/thread count is deterministic, so the verdicts that
depend on the model's choices (auto, none, irrelevance, parallel count) are pinned too — and labelled as such.
"""

from __future__ import annotations

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.core.registry import load_registry
from ascend_doctor.report import Status
from ascend_doctor.smoke import scenarios as S
from ascend_doctor.smoke.stage import evaluate_smoke, gather
from tests.smoke.llama_server import ALIAS, LlamaServer, llama_python

pytestmark = [pytest.mark.llama, pytest.mark.slow]

PY = llama_python()
if PY is None:
    pytest.skip("llama tier: set ASCEND_DOCTOR_LLAMA_PYTHON to the venv python printed by .ci/llama-setup.sh",
                allow_module_level=True)


@pytest.fixture(scope="module")
def llama():
    """One server and one full smoke (plus a 4x4 load) for the whole module."""
    with LlamaServer(PY) as srv:
        facts = gather(srv.base_url, timeout=180.0, load=4, concurrency=4)
        findings = {f.code: f for f in evaluate_smoke(load_registry(entry_points=False), facts, RunOptions())}
        log = srv.log_text()
    return facts, findings, log


def status(findings, code):
    return findings[code].status


def test_no_check_crashed_and_all_ran(llama):
    facts, found, _ = llama
    assert all(f.status != Status.ERROR for f in found.values())
    assert set(S.CHAT_SCENARIOS) <= set(facts.exchanges)


def test_srv_server_model_and_plain_chat(llama):
    facts, found, _ = llama
    # GET /v1/models -> {"object":"list","data":[{"id":"gemma3-270m",...}]}: one model, picked without --model.
    assert status(found, "SRV101") == Status.PASS
    assert status(found, "SRV102") == Status.PASS and facts.model == ALIAS and facts.model_source == "only-served"
    # Plain chat answers HTTP 200 with string content and finish_reason "stop" (the 270M model mostly echoes the
    # prompt, which is still an answer).
    assert status(found, "SRV103") == Status.PASS
    assert facts.get(S.CHAT).reply.finish_reason == "stop"


def test_named_tool_choice_works(llama):
    facts, found, _ = llama
    # Named tool_choice is grammar-constrained: tool_calls=[{"id":"call__0_get_weather_cmpl-…","type":"function",
    # "function":{"name":"get_weather","arguments":"{\"city\": \"Paris\", \"unit\": \"celsius\"}"}}], and
    # finish_reason "tool_calls".
    assert status(found, "TOOL101") == Status.PASS
    x = facts.get(S.NAMED)
    assert x.reply.tool_calls[0].name == "get_weather" and x.reply.finish_reason == "tool_calls"


def test_required_is_a_500_with_an_empty_message(llama):
    facts, found, log = llama
    # chatml_function_calling asserts `tool_choice == "auto"` for anything that is not a named choice:
    # AssertionError -> HTTP 500 {"error":{"message":"","type":"internal_server_error",...}}.
    assert status(found, "TOOL102") == Status.FAIL
    x = facts.get(S.REQUIRED)
    assert x.status == 500 and '"message":""' in x.body_text.replace(" ", "")
    assert "AssertionError" in log


def test_auto_calls_the_tool(llama):
    facts, found, _ = llama
    # Model choice (greedy): auto answers the weather question with a get_weather call.
    assert status(found, "TOOL103") == Status.PASS


def test_none_answers_in_text(llama):
    _, found, _ = llama
    # tool_choice "none": the tools are not rendered; a text answer, no tool_calls key at all.
    assert status(found, "TOOL104") == Status.PASS


def test_arguments_finish_reason(llama):
    _, found, _ = llama
    # Every call's arguments are a clean JSON object string that validates (one has a trailing space, which JSON
    # allows); finish_reason is "tool_calls" whenever calls are present — even for the named choice.
    assert status(found, "TOOL105") == Status.PASS
    assert status(found, "TOOL106") == Status.PASS


def test_legacy_function_call_disagrees_with_tool_calls(llama):
    facts, found, _ = llama
    # Under auto, the deprecated message.function_call carries a different, colon-suffixed name than tool_calls:
    # "tool_calls":[{... "name":"get_weather" ...}], "function_call":{"name":"get_time:", ...}.
    assert status(found, "TOOL107") == Status.WARN
    assert "function_call" in found["TOOL107"].message
    legacy = facts.get(S.AUTO).reply.legacy_function_call
    assert legacy and legacy["name"] != facts.get(S.AUTO).reply.tool_calls[0].name


def test_auto_streaming_is_an_empty_200(llama):
    facts, found, log = llama
    # stream + tool_choice auto: the server sends the 200 + SSE headers, then raises
    # ValueError("Automatic streaming tool choice is not supported") — the body has no event and no [DONE].
    assert status(found, "TOOL108") == Status.FAIL
    x = facts.get(S.PARALLEL_STREAM)
    assert x.status == 200 and x.stream.events == 0 and not x.stream.done
    assert "Automatic streaming tool choice is not supported" in log
    # The named stream itself is well-formed (the failure above is the only one).
    assert facts.get(S.NAMED_STREAM).stream.done and not facts.get(S.NAMED_STREAM).stream.framing_errors


def test_named_stream_resends_id_and_name_in_every_delta(llama):
    facts, found, _ = llama
    # Every argument delta repeats "id":"call__0_get_weather_cmpl-…" and "name":"get_weather" (plus a legacy
    # delta.function_call): tolerated by openai-python, a warning; the fragments assemble to the same object as
    # the non-streamed call.
    assert status(found, "TOOL109") == Status.WARN
    s = facts.get(S.NAMED_STREAM).stream
    assert s.id_repeats and s.name_repeats and not s.id_conflicts and not s.name_conflicts
    assert "differ" not in found["TOOL109"].message


def test_parallel_calls(llama):
    facts, found, _ = llama
    # Non-stream: one call only (model choice, greedy); stream: the empty 200 above -> fail.
    assert status(found, "TOOL110") == Status.FAIL
    assert len(facts.get(S.PARALLEL).reply.tool_calls) == 1
    assert "broke off" in found["TOOL110"].message


def test_round_trip_rejects_content_null_as_a_500(llama):
    facts, found, _ = llama
    # The standard history (assistant content null + tool_calls, then role:tool) fails request validation:
    # 'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid string', 'input': None
    # — returned as HTTP 500, not 400/422. The same history with content "" is accepted (HTTP 200).
    assert status(found, "TOOL111") == Status.FAIL
    x = facts.get(S.ROUNDTRIP)
    assert x.status == 500 and "Input should be a valid string" in x.body_text
    assert "instead of 400/422" in found["TOOL111"].message
    assert facts.get(S.ROUNDTRIP_COMPAT).status == 200
    assert 'content "" instead of null was accepted' in found["TOOL111"].message


def test_irrelevant_question_gets_a_call(llama):
    facts, found, _ = llama
    # Model choice (greedy): "capital of Italy" with tools offered under auto -> a get_time call.
    assert status(found, "TOOL112") == Status.WARN
    assert facts.get(S.IRRELEVANT).reply.tool_calls


def test_no_markup_leaks(llama):
    _, found, _ = llama
    # chatml-function-calling parses calls with a grammar: no raw markup reaches content.
    assert status(found, "TOOL113") == Status.PASS


def test_load_streams_are_cut_by_concurrent_requests(llama):
    facts, found, _ = llama
    # interrupt_requests (default true): a running stream is ended (`data: [DONE]`, then the connection is
    # dropped mid-chunk) as soon as another request waits for the model lock. With 4 in flight (2 streams) at least
    # one stream runs while another request waits, so the load fails — and only streams fail.
    assert status(found, "SRV104") == Status.FAIL
    lr = facts.load
    assert lr.completed == 4 and lr.error_count >= 1
    assert all("(stream)" in e for e in lr.errors)
    assert lr.succeeded >= 2  # both non-stream requests


def test_check_with_smoke_url_merges_both_stages_on_the_real_server(tmp_path):
    """`check --replay <example> --smoke-url <llama>`: static and live findings in one report, one exit code."""
    import json
    import subprocess
    import sys

    from tests.helpers import REPO

    out = tmp_path / "report.json"
    with LlamaServer(PY) as srv:
        r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay",
                            str(REPO / "examples" / "healthy-a2.snapshot.json"), "--smoke-url", srv.base_url,
                            "--smoke-timeout", "180", "--format", "json", "-o", str(out)],
                           capture_output=True, text=True, cwd=REPO, timeout=600)
    report = json.loads(out.read_text())
    families = {f["family"] for f in report["findings"]}
    assert {"HOST", "CANN", "SRV", "TOOL"} <= families
    by = {f["code"]: f["status"] for f in report["findings"]}
    assert by["SRV101"] == "pass" and by["TOOL102"] == "fail"  # the static host is healthy; the server is not
    assert r.returncode == report["exit_code"] == 1
