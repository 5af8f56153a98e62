"""Pure parts of the smoke client: URL/key handling, SSE parsing, delta assembly, argument validation."""

from __future__ import annotations

import json

import pytest

from ascend_doctor.core.errors import InputError
from ascend_doctor.smoke.arguments import argument_problems, decoded
from ascend_doctor.smoke.client import (
    api_key_from_env,
    normalize_base_url,
    parse_sse,
    reply_from_message,
    reply_from_stream,
)
from ascend_doctor.smoke.load import percentile
from ascend_doctor.smoke.scenarios import SCHEMAS


@pytest.mark.parametrize("given,want", [
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
    ("https://gw.example/openai/v1", "https://gw.example/openai/v1"),
])
def test_normalize_base_url(given, want):
    assert normalize_base_url(given) == want


@pytest.mark.parametrize("bad", ["127.0.0.1:8000", "ftp://h/v1", "http:///v1", "", "http://h/v1?x=1"])
def test_bad_base_url_is_an_input_error(bad):
    with pytest.raises(InputError):
        normalize_base_url(bad)


def test_api_key_from_env(monkeypatch):
    monkeypatch.setenv("SMOKE_TEST_KEY", "sk-test-abcdefghijkl")
    assert api_key_from_env("SMOKE_TEST_KEY") == "sk-test-abcdefghijkl"
    assert api_key_from_env(None) is None
    monkeypatch.delenv("SMOKE_TEST_KEY")
    with pytest.raises(InputError) as e:
        api_key_from_env("SMOKE_TEST_KEY")
    assert "SMOKE_TEST_KEY" in str(e.value)


def _sse(*events: str) -> str:
    return "".join(f"data: {e}\n\n" for e in events)


def _chunk(delta, finish=None):
    return json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def test_parse_sse_well_formed_with_comments_and_crlf():
    text = (": keep-alive\r\n\r\n" + _sse(_chunk({"content": "Hi"}), _chunk({}, "stop"), "[DONE]")).replace("\n", "\r\n")
    payloads, info = parse_sse(text)
    assert len(payloads) == 2 and info.done and not info.framing_errors
    r = reply_from_stream(payloads, info)
    assert r.content == "Hi" and r.finish_reason == "stop" and info.finish_reasons == ["stop"]


def test_parse_sse_flags_non_sse_lines_bad_json_and_data_after_done():
    text = _sse(_chunk({"content": "a"})) + '{"raw": "json line"}\n\n' + "data: {broken\n\n" + _sse("[DONE]") + \
        _sse(_chunk({"content": "late"}))
    payloads, info = parse_sse(text)
    assert info.done and info.data_after_done
    assert any("not an SSE field" in e for e in info.framing_errors)
    assert any("not JSON" in e for e in info.framing_errors)


def test_stream_assembly_records_repeats_conflicts_and_missing_index():
    events = [
        _chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "get_weather", "arguments": "{\"ci"}}]}),
        _chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "get_weather", "arguments": "ty\": 1}"}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "get_time", "arguments": ""}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "c", "function": {"name": "get_weather"}}]}),
        _chunk({"tool_calls": [{"function": {"arguments": "{}"}}]}),
        _chunk({}, "tool_calls"),
    ]
    payloads, info = parse_sse(_sse(*events, "[DONE]"))
    r = reply_from_stream(payloads, info)
    # The index-less delta falls back to its position in the list (0), as naive clients do: arguments glue.
    assert r.tool_calls[0].arguments == '{"city": 1}{}'
    assert info.id_repeats and info.name_repeats
    assert info.id_conflicts == ["index 1: id 'b' then 'c'"]
    assert info.name_conflicts == ["index 1: name 'get_time' then 'get_weather'"]
    assert info.deltas_without_index == 1
    assert info.indices == [0, 1]


def test_reply_from_message_shapes():
    r = reply_from_message({"finish_reason": "tool_calls", "message": {
        "content": None, "reasoning_content": "hmm",
        "tool_calls": [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        "function_call": {"name": "g", "arguments": "{}"}}})
    assert r.tool_calls[0].name == "f" and r.reasoning == "hmm" and r.reasoning_field == "reasoning_content"
    assert r.legacy_function_call == {"name": "g", "arguments": "{}"}
    assert reply_from_message({"message": {"content": "hi", "tool_calls": None}}).tool_calls_field == "null"
    assert reply_from_message("garbage").content is None


@pytest.mark.parametrize("args,needle", [
    ('{"city": "Paris"}\x00\x00', "control character"),
    ('{"city": "Paris"}\x00\x00', "trailing byte"),
    ('{"city": "Paris"}{"city": "Tokyo"}', "trailing byte"),
    ('{"city": "Par', "not JSON"),
    ("", "empty string"),
    ('["Paris"]', "not a JSON object"),
    ('{"town": "Paris"}', "schema"),
    ('{"city": "Paris", "unit": "kelvin"}', "schema"),
    ('{"city": "Pa\\u0000ris"}', "decoded values contain control"),
    ({"city": "Paris"}, "not a string holding JSON"),
    (None, "missing"),
    (42, "not a string"),
])
def test_argument_problems(args, needle):
    problems = argument_problems(args, SCHEMAS["get_weather"])
    assert any(needle in p for p in problems), problems


@pytest.mark.parametrize("args", ['{"city": "Paris"}', ' {"city": "Paris", "unit": "celsius"} \n'])
def test_clean_arguments(args):
    assert argument_problems(args, SCHEMAS["get_weather"]) == []
    assert decoded(args)["city"] == "Paris"


def test_percentile_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile(values, 99) == 99.0
    assert percentile([7.0], 99) == 7.0
    assert percentile([], 50) is None
