"""The smoke scenarios: what is asked of the server, and the one fact (`SmokeFacts`) all answers form.

Every request is deterministic (temperature 0) and bounded (max_tokens, per-request timeout). A scenario that
cannot run records why in `not_run`, so the checks that depend on it skip with that reason.
"""

from __future__ import annotations

import json
import random
from typing import Any, Callable, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.smoke.client import Exchange, SmokeClient, ToolCall

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for one city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the current local time in an IANA time zone.",
        "parameters": {
            "type": "object",
            "properties": {"timezone": {"type": "string", "description": "IANA zone, e.g. Europe/Paris"}},
            "required": ["timezone"],
            "additionalProperties": False,
        },
    },
}
TOOLS = [WEATHER_TOOL, TIME_TOOL]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}

SYSTEM = "You are a helpful assistant. Use the tools when they help; answer briefly."
Q_WEATHER = "What is the weather in Paris right now?"
Q_PARALLEL = ("What is the weather in Paris and what is the weather in Tokyo? "
              "Call get_weather once for each of the two cities, in parallel.")
Q_IRRELEVANT = "What is the capital of Italy? Answer with one word."
Q_CHAT = "Reply with the single word: ready"

# Bounded, but with room for reasoning models that think before answering (finish_reason 'length' is judged).
CHAT_TOKENS = 64
TOOL_TOKENS = 256
ANSWER_TOKENS = 128

# Scenario names (the keys of SmokeFacts.exchanges).
MODELS = "models"
CHAT = "chat"
NAMED = "named"
NAMED_STREAM = "named_stream"
REQUIRED = "required"
AUTO = "auto"
NONE = "none"
PARALLEL = "parallel"
PARALLEL_STREAM = "parallel_stream"
ROUNDTRIP = "roundtrip"
ROUNDTRIP_COMPAT = "roundtrip_compat"  # only when the standard shape is rejected: same history, content ""
IRRELEVANT = "irrelevant"
STUCK_AFTER = 2  # scenarios in a row that time out before the rest are given up
CHAT_SCENARIOS = [CHAT, NAMED, NAMED_STREAM, REQUIRED, AUTO, NONE, PARALLEL, PARALLEL_STREAM, ROUNDTRIP,
                  IRRELEVANT]


class LoadResult(Model):
    """What `--load N --concurrency C` measured."""

    requested: int
    concurrency: int
    completed: int = 0
    succeeded: int = 0
    streamed: int = 0
    wall_s: float = 0.0
    p50_ms: Optional[float] = None
    p95_ms: Optional[float] = None
    p99_ms: Optional[float] = None
    ttft_p50_ms: Optional[float] = None
    ttft_p95_ms: Optional[float] = None
    errors: list[str] = Field(default_factory=list, description="the first few failures")
    error_count: int = 0
    stopped_early: Optional[str] = None


class SmokeFacts(Model):
    """Everything the smoke scenarios observed: the `smoke` fact."""

    base_url: str
    model: Optional[str] = None
    model_source: str = Field("", description="'option', 'only-served', or '' when unresolved")
    models_served: Optional[list[str]] = None
    reachable: bool = False
    unreachable_reason: Optional[str] = None
    exchanges: dict[str, Exchange] = Field(default_factory=dict)
    not_run: dict[str, str] = Field(default_factory=dict, description="scenario -> why it did not run")
    sentinel: Optional[str] = None
    load: Optional[LoadResult] = None
    load_not_run: Optional[str] = None
    pace_s_per_token: Optional[float] = Field(None, description="the first chat answer's latency per completion "
                                                                "token: what the later requests' timeouts are sized "
                                                                "from (None: not measured, --timeout as given)")

    def get(self, name: str) -> Optional[Exchange]:
        return self.exchanges.get(name)


# A correct server on a loaded machine can be several times slower than the default --timeout allows for the longer
# scenarios (#40 item 3: vLLM on CPU at load ~12 with hermes ran 512-token answers past 60 s). The first, short chat
# answer measures the server's pace; each later request gets 1.5x the time its max_tokens need at that pace (plus
# SIZED_SLACK_S), never less than --timeout and never more than SIZED_CEILING times it.
SIZED_CEILING = 5
SIZED_SLACK_S = 5.0


def pace(x: Exchange) -> Optional[float]:
    """Seconds per completion token of a finished, non-streamed answer (its whole latency, prefill included: the
    pessimistic figure), or None when it cannot be measured (no usage, too few tokens, an error)."""
    if not x.ok or not isinstance(x.body, dict) or not x.latency_ms:
        return None
    usage = x.body.get("usage")
    n = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if not isinstance(n, int) or isinstance(n, bool) or n < 4:
        return None
    return x.latency_ms / 1000 / n


def sized_timeout(floor: float, s_per_token: Optional[float], max_tokens: Any) -> Optional[float]:
    """The timeout of one request of `max_tokens` at the measured pace (None: the client's own)."""
    if s_per_token is None or not isinstance(max_tokens, int) or max_tokens <= 0:
        return None
    return round(min(max(floor, 1.5 * s_per_token * max_tokens + SIZED_SLACK_S), SIZED_CEILING * floor), 1)


def _payload(model: str, messages: list[dict], *, tools: Optional[list] = None, tool_choice: Any = None,
             stream: bool = False, max_tokens: int = TOOL_TOKENS, **extra: Any) -> dict[str, Any]:
    p: dict[str, Any] = {"model": model, "messages": messages, "temperature": 0, "max_tokens": max_tokens,
                         "stream": stream}
    if tools is not None:
        p["tools"] = tools
    if tool_choice is not None:
        p["tool_choice"] = tool_choice
    p.update(extra)
    return p


def _user(q: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q}]


def named_choice(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


def tool_call_payload(model: str, stream: bool) -> dict[str, Any]:
    """The request the load generator repeats: a named get_weather call (deterministic, always a call)."""
    return _payload(model, _user(Q_WEATHER), tools=TOOLS, tool_choice=named_choice("get_weather"), stream=stream)


def _models_served(x: Exchange) -> Optional[list[str]]:
    b = x.body
    if isinstance(b, dict) and isinstance(b.get("data"), list):
        return [str(m.get("id")) for m in b["data"] if isinstance(m, dict) and m.get("id") is not None]
    return None


def make_sentinel(rng: Optional[random.Random] = None) -> str:
    """A value the model cannot guess: it can only appear in the answer if the tool result reached the model."""
    rng = rng or random.SystemRandom()
    return f"{rng.randint(1000, 9999)}"


def sentinel_tool_result(sentinel: str) -> str:
    return json.dumps({"city": "Paris", "condition": f"sunny, report {sentinel}", "temperature_c": int(sentinel) % 40,
                       "report_id": sentinel})


def roundtrip_messages(call: ToolCall, sentinel: str, assistant_content: Optional[str] = None) -> list[dict]:
    """The standard OpenAI history: assistant with tool_calls and content null, then the role:tool answer."""
    args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": Q_WEATHER + " Quote the report id from the tool result."},
        {"role": "assistant", "content": assistant_content,
         "tool_calls": [{"id": call.id, "type": "function",
                         "function": {"name": call.name or "get_weather", "arguments": args}}]},
        {"role": "tool", "tool_call_id": call.id, "content": sentinel_tool_result(sentinel)},
    ]


def run_scenarios(client: SmokeClient, model: Optional[str], *, sentinel: Optional[str] = None,
                  progress: Optional[Callable[[str], None]] = None) -> SmokeFacts:
    """Run every scenario in order against `client`; never raises for server behaviour.

    Long by design: the scenarios run in a fixed order where later ones reuse earlier answers (the round trip sends
    back the named call's id, parallel runs only when tools work at all); one linear script keeps that order
    visible."""
    facts = SmokeFacts(base_url=client.base_url, sentinel=sentinel or make_sentinel())
    note = progress or (lambda _name: None)

    note(MODELS)
    mx = client.get(MODELS, "models")
    facts.exchanges[MODELS] = mx
    if mx.error:  # refused, timed out, reset, or something that does not speak HTTP
        facts.unreachable_reason = f"{mx.error_kind}: {mx.error}"
        for s in CHAT_SCENARIOS:
            facts.not_run[s] = f"the server at {client.base_url} is unreachable ({mx.error_kind})"
        return facts
    facts.reachable = True
    facts.models_served = _models_served(mx) if mx.status == 200 else None

    if model:
        facts.model, facts.model_source = model, "option"
        if facts.models_served is not None and model not in facts.models_served:
            for s in CHAT_SCENARIOS:
                facts.not_run[s] = f"model {model!r} is not served here (served: {', '.join(facts.models_served)})"
            return facts
    elif facts.models_served is not None and len(facts.models_served) == 1:
        facts.model, facts.model_source = facts.models_served[0], "only-served"
    else:
        why = (T("/v1/models did not list the served models") if facts.models_served is None else
               T("--model is needed: {n_models_served} models are served ({models_served})",
                 n_models_served=len(facts.models_served), models_served=', '.join(facts.models_served) or 'none'))
        for s in CHAT_SCENARIOS:
            facts.not_run[s] = why
        return facts
    m = facts.model

    timed_out: list[str] = []

    def run(name: str, payload: dict[str, Any]) -> Exchange:
        sized = sized_timeout(client.timeout, facts.pace_s_per_token, payload.get("max_tokens"))
        if len(timed_out) >= STUCK_AFTER:
            # A stuck or dribbling server would hold every remaining scenario for a whole --timeout each.
            facts.not_run[name] = (f"not run: {' and '.join(timed_out)} did not complete within the "
                                   f"{client.timeout:g}s "
                                   "timeout, one after the other: the server is stuck or far too slow for this "
                                   "--timeout")
            return Exchange(name=name, method="POST", path="", error_kind="not_run", error=facts.not_run[name])
        note(name)
        x = client.chat(name, payload, timeout=sized)
        facts.exchanges[name] = x
        if x.error_kind == "timeout":
            timed_out.append(name)
        else:
            timed_out.clear()
        return x

    facts.pace_s_per_token = pace(run(CHAT, _payload(m, _user(Q_CHAT), max_tokens=CHAT_TOKENS)))
    run(NAMED, _payload(m, _user(Q_WEATHER), tools=TOOLS, tool_choice=named_choice("get_weather")))
    run(NAMED_STREAM, _payload(m, _user(Q_WEATHER), tools=TOOLS, tool_choice=named_choice("get_weather"),
                               stream=True))
    run(REQUIRED, _payload(m, _user(Q_WEATHER), tools=TOOLS, tool_choice="required"))
    run(AUTO, _payload(m, _user(Q_WEATHER), tools=TOOLS, tool_choice="auto"))
    run(NONE, _payload(m, _user(Q_WEATHER), tools=TOOLS, tool_choice="none", max_tokens=ANSWER_TOKENS))
    run(PARALLEL, _payload(m, _user(Q_PARALLEL), tools=TOOLS, tool_choice="auto", parallel_tool_calls=True,
                           max_tokens=2 * TOOL_TOKENS))
    run(PARALLEL_STREAM, _payload(m, _user(Q_PARALLEL), tools=TOOLS, tool_choice="auto", parallel_tool_calls=True,
                                  stream=True, max_tokens=2 * TOOL_TOKENS))

    # The round trip answers the server's OWN call (id and arguments exactly as it sent them).
    own = None
    for src in (NAMED, REQUIRED, AUTO):
        x = facts.exchanges.get(src)
        if x is not None and x.reply is not None:
            own = next((c for c in x.reply.tool_calls if c.id), None)
            if own is not None:
                break
    if own is None:
        facts.not_run[ROUNDTRIP] = ("no tool call with an id came back from the named/required/auto scenarios, "
                                    "so there is no server-issued call id to answer")
    else:
        rt = run(ROUNDTRIP, _payload(m, roundtrip_messages(own, facts.sentinel or ""), tools=TOOLS,
                                     tool_choice="auto", max_tokens=ANSWER_TOKENS))
        rt.request["answers_call_id"] = own.id
        if rt.error is None and rt.status is not None and 400 <= rt.status < 600:
            # Diagnose: does the same history pass with content "" instead of null (a client-side workaround)?
            run(ROUNDTRIP_COMPAT, _payload(m, roundtrip_messages(own, facts.sentinel or "", assistant_content=""),
                                           tools=TOOLS, tool_choice="auto", max_tokens=ANSWER_TOKENS))
    run(IRRELEVANT, _payload(m, _user(Q_IRRELEVANT), tools=TOOLS, tool_choice="auto", max_tokens=ANSWER_TOKENS))
    return facts
