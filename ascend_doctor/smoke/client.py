"""HTTP exchanges with the server under test, recorded as typed facts (never raising on server misbehaviour).

Only the base URL the user gave is contacted: no redirects are followed and proxy/env settings are ignored
(`trust_env=False`). The API key comes from the environment variable the user named and is never recorded.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any, Optional
from urllib.parse import urlsplit

from pydantic import Field

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.text.jsonread import loads
from ascend_doctor.text.redact import redact_values, register_secret

if TYPE_CHECKING:  # httpx is imported where a request is made: `check` without --smoke-url never needs it
    import httpx

MAX_BODY = 256 * 1024  # bytes kept of any response (the excerpt in evidence is trimmed further)
USER_AGENT = "ascend-doctor-smoke"


class ToolCall(Model):
    """One tool call as the server sent it (arguments kept raw: string, object, or whatever came)."""

    index: Optional[int] = None
    id: Optional[str] = None
    type: Optional[str] = None
    name: Optional[str] = None
    arguments: Any = None


class StreamInfo(Model):
    """What the SSE stream looked like, beyond the message it assembles to."""

    events: int = 0
    done: bool = False
    data_after_done: bool = False
    framing_errors: list[str] = Field(default_factory=list)
    finish_reasons: list[str] = Field(default_factory=list)
    deltas_without_index: int = 0
    id_repeats: list[str] = Field(default_factory=list)
    id_conflicts: list[str] = Field(default_factory=list)
    name_repeats: list[str] = Field(default_factory=list)
    name_conflicts: list[str] = Field(default_factory=list)
    indices: list[int] = Field(default_factory=list, description="tool-call indices in order of first appearance")


class Reply(Model):
    """The assistant message of choice 0, from a JSON body or assembled from stream deltas."""

    content: Optional[str] = None
    reasoning: Optional[str] = None
    reasoning_field: Optional[str] = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_calls_field: str = Field("absent", description="'absent', 'null', 'list' or the JSON type found")
    finish_reason: Optional[str] = None
    choices: int = 0
    legacy_function_call: Optional[dict[str, Any]] = Field(
        None, description="the deprecated message.function_call, when the server still sends it")


class Exchange(Model):
    """One request/response with the server: a scenario's raw fact."""

    name: str
    method: str
    path: str
    request: dict[str, Any] = Field(default_factory=dict, description="summary, never headers or the key")
    status: Optional[int] = None
    content_type: str = ""
    latency_ms: Optional[float] = None
    ttft_ms: Optional[float] = None
    last_chunk_ms: Optional[float] = Field(None, description="When the last bytes arrived (a timed-out stream that "
                                                             "was still arriving is slow, not stuck)")
    timeout_s: Optional[float] = Field(None, description="The per-request timeout this exchange ran under")
    error_kind: Optional[str] = Field(None, description="timeout, connect, reset, protocol, too_large, other")
    error: Optional[str] = None
    body_text: str = ""
    body: Any = None
    json_error: Optional[str] = None
    stream: Optional[StreamInfo] = None
    reply: Optional[Reply] = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status == 200

    def describe(self) -> str:
        """'POST /v1/chat/completions [named, stream] → HTTP 200 in 412 ms' for evidence sources."""
        flags = [self.name]
        if self.request.get("stream"):
            flags.append("stream")
        tc = self.request.get("tool_choice")
        if tc is not None:
            flags.append(f"tool_choice={tc}")
        if self.error:
            outcome = f"{self.error_kind}: {self.error}"
        else:
            outcome = f"HTTP {self.status}"
        ms = f" in {self.latency_ms:.0f} ms" if self.latency_ms is not None else ""
        return f"http: {self.method} {self.path} [{', '.join(flags)}] → {outcome}{ms}"


def normalize_base_url(url: str) -> str:
    """`http://h:8000` → `http://h:8000/v1`; a URL already ending in /vN is kept. InputError when unusable."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises here, not later in the client)
    except ValueError as exc:  # 'http://[::1' (Invalid IPv6 URL), 'http://h:x'
        raise InputError(T("--base-url {url} is not a usable URL: {error}", url=repr(url), error=str(exc))) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(T("--base-url {url} is not an http(s) URL with a host, e.g. http://127.0.0.1:8000/v1",
                           url=repr(url)))
    if parts.query or parts.fragment:
        raise InputError(T("--base-url {url} must not carry a query string or fragment", url=repr(url)))
    path = parts.path.rstrip("/")
    if not path:
        path = "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def api_key_from_env(var: Optional[str]) -> Optional[str]:
    """The key from the variable the user named; InputError (naming the variable, never a value) when unset."""
    if not var:
        return None
    value = os.environ.get(var)
    if not value:
        raise InputError(T("--api-key-env {var}: the environment variable is not set or empty", var=var))
    register_secret(value)  # masked wherever it shows up: a server that echoes the key leaks nothing
    return value


def _error_kind(exc: BaseException) -> str:
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, httpx.ConnectError):
        return "connect"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        text = str(exc).lower()
        if "reset" in text or "without sending" in text or "closed" in text or isinstance(exc, httpx.ReadError):
            return "reset"
        return "protocol"
    if isinstance(exc, httpx.HTTPError):
        return "protocol"
    return "other"


def reply_from_message(choice: Any) -> Reply:
    """Reply of a non-streamed chat completion choice (tolerant of any shape)."""
    r = Reply()
    if not isinstance(choice, dict):
        return r
    fr = choice.get("finish_reason")
    r.finish_reason = fr if isinstance(fr, str) else None
    msg = choice.get("message")
    if not isinstance(msg, dict):
        return r
    c = msg.get("content")
    r.content = c if isinstance(c, str) else (json.dumps(c) if c is not None else None)
    for field in ("reasoning_content", "reasoning"):
        v = msg.get(field)
        if isinstance(v, str) and v:
            r.reasoning, r.reasoning_field = v, field
            break
    fc = msg.get("function_call")
    if isinstance(fc, dict):
        r.legacy_function_call = {"name": fc.get("name"), "arguments": fc.get("arguments")}
    if "tool_calls" not in msg:
        r.tool_calls_field = "absent"
    elif msg["tool_calls"] is None:
        r.tool_calls_field = "null"
    elif isinstance(msg["tool_calls"], list):
        r.tool_calls_field = "list"
        for i, tc in enumerate(msg["tool_calls"]):
            if not isinstance(tc, dict):
                r.tool_calls.append(ToolCall(arguments=tc))
                continue
            fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
            r.tool_calls.append(ToolCall(index=tc.get("index") if isinstance(tc.get("index"), int) else None,
                                         id=tc.get("id") if isinstance(tc.get("id"), str) else None,
                                         type=tc.get("type") if isinstance(tc.get("type"), str) else None,
                                         name=fn.get("name") if isinstance(fn.get("name"), str) else None,
                                         arguments=fn.get("arguments")))
    else:
        r.tool_calls_field = type(msg["tool_calls"]).__name__
    return r


def parse_sse(text: str) -> tuple[list[Any], StreamInfo]:
    """Split an SSE body into JSON payloads; record framing problems (never raises)."""
    info = StreamInfo()
    payloads: list[Any] = []
    data_lines: list[str] = []

    def flush() -> None:
        if not data_lines:
            return
        data = "\n".join(data_lines)
        data_lines.clear()
        if data.strip() == "[DONE]":
            if info.done:
                info.framing_errors.append("[DONE] sent more than once")
            info.done = True
            return
        if info.done:
            info.data_after_done = True
        info.events += 1
        try:
            payloads.append(loads(data))
        except ValueError as exc:
            info.framing_errors.append(f"event {info.events} is not JSON ({exc}): {data[:120]!r}")

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            flush()
        elif line.startswith(":"):
            continue  # SSE comment / keep-alive
        elif line.startswith("data:"):
            data_lines.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
        elif line.split(":", 1)[0] in ("event", "id", "retry"):
            continue
        else:
            if len(info.framing_errors) < 5:
                info.framing_errors.append(f"line is not an SSE field: {line[:120]!r}")
    flush()
    return payloads, info


def reply_from_stream(payloads: list[Any], info: StreamInfo) -> Reply:
    """Assemble choice 0's deltas into a Reply; record index/id/name anomalies into `info`."""
    r = Reply()
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, ToolCall] = {}
    args: dict[int, list[str]] = {}
    for p in payloads:
        if not isinstance(p, dict):
            info.framing_errors.append(f"event is not a JSON object: {str(p)[:80]!r}")
            continue
        if isinstance(p.get("error"), (dict, str)):
            info.framing_errors.append(f"error event in stream: {json.dumps(p.get('error'))[:200]}")
            continue
        choices = p.get("choices")
        if not isinstance(choices, list):
            continue
        r.choices = max(r.choices, len(choices))
        for ch in choices:
            if not isinstance(ch, dict) or ch.get("index", 0) != 0:
                continue
            if ch.get("finish_reason") is not None:
                info.finish_reasons.append(str(ch.get("finish_reason")))
                r.finish_reason = str(ch.get("finish_reason"))
            delta = ch.get("delta")
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                content.append(delta["content"])
            for field in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(field), str) and delta[field]:
                    reasoning.append(delta[field])
                    r.reasoning_field = field
            tcs = delta.get("tool_calls")
            if tcs is None:
                continue
            r.tool_calls_field = "list"
            if not isinstance(tcs, list):
                info.framing_errors.append(f"delta.tool_calls is {type(tcs).__name__}, not a list")
                continue
            for pos, tc in enumerate(tcs):
                if not isinstance(tc, dict):
                    continue
                idx = tc.get("index")
                if not isinstance(idx, int):
                    info.deltas_without_index += 1
                    idx = pos
                call = calls.get(idx)
                if call is None:
                    call = calls[idx] = ToolCall(index=idx)
                    args[idx] = []
                    info.indices.append(idx)
                if isinstance(tc.get("id"), str) and tc["id"]:
                    if call.id is None:
                        call.id = tc["id"]
                    elif call.id == tc["id"]:
                        info.id_repeats.append(f"index {idx}: id {tc['id']!r} sent again")
                    else:
                        info.id_conflicts.append(f"index {idx}: id {call.id!r} then {tc['id']!r}")
                if isinstance(tc.get("type"), str):
                    call.type = tc["type"]
                fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                name = fn.get("name")
                if isinstance(name, str) and name:
                    if call.name is None:
                        call.name = name
                    elif call.name == name:
                        info.name_repeats.append(f"index {idx}: name {name!r} sent again")
                    else:
                        info.name_conflicts.append(f"index {idx}: name {call.name!r} then {name!r}")
                a = fn.get("arguments")
                if isinstance(a, str):
                    args[idx].append(a)
                elif a is not None:
                    args[idx].append(json.dumps(a))
    r.content = "".join(content) if content else None
    r.reasoning = "".join(reasoning) if reasoning else None
    for idx in sorted(calls):
        calls[idx].arguments = "".join(args[idx])
        r.tool_calls.append(calls[idx])
    return r


class ResponseTooLarge(Exception):
    def __init__(self, seen: int):
        super().__init__(f"response too large: more than {MAX_BODY // 1024} KiB ({seen} bytes read before the doctor "
                         f"stopped); a short chat or tool-call answer is a few KiB")


def _httpx():
    import httpx

    return httpx


class SmokeClient:
    """A bounded, synchronous client for one base URL."""

    def __init__(self, base_url: str, *, api_key: Optional[str] = None, timeout: float = 60.0,
                 transport: Optional["httpx.BaseTransport"] = None):
        import httpx  # imported here: `check` without --smoke-url should not pay for httpx

        self.base_url = normalize_base_url(base_url)
        self.timeout = timeout
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # No keep-alive: each scenario gets a fresh connection, so a server that broke one response (e.g. an
        # exception mid-stream) cannot make the next scenario fail with a reset on a stale pooled connection.
        self._client = httpx.Client(base_url=self.base_url, headers=headers, timeout=httpx.Timeout(timeout),
                                    follow_redirects=False, trust_env=False, transport=transport,
                                    limits=httpx.Limits(max_keepalive_connections=0))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "SmokeClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _path(self, rel: str) -> str:
        return urlsplit(self.base_url).path + "/" + rel

    def get(self, name: str, rel: str) -> Exchange:
        """GET base_url/rel; JSON body parsed when possible."""
        x = Exchange(name=name, method="GET", path=self._path(rel))
        return self._do(x, "GET", rel, None)

    def chat(self, name: str, payload: dict[str, Any], summary: Optional[dict[str, Any]] = None,
             timeout: Optional[float] = None) -> Exchange:
        """POST chat/completions; streams when payload['stream'] is true. The reply is parsed into `reply`.
        `timeout` replaces the client's for this request (the smoke sizes it from the server's measured pace)."""
        req = {"stream": bool(payload.get("stream")), "max_tokens": payload.get("max_tokens")}
        if "tool_choice" in payload:
            tc = payload["tool_choice"]
            req["tool_choice"] = tc if isinstance(tc, str) else f"function:{tc.get('function', {}).get('name')}"
        if payload.get("tools"):
            req["tools"] = [t["function"]["name"] for t in payload["tools"]]
        req["messages"] = [m.get("role") for m in payload.get("messages", [])]
        req.update(summary or {})
        x = Exchange(name=name, method="POST", path=self._path("chat/completions"), request=req)
        return self._do(x, "POST", "chat/completions", payload, timeout)

    def _do(self, x: Exchange, method: str, rel: str, payload: Optional[dict],
            timeout: Optional[float] = None) -> Exchange:
        limit = timeout or self.timeout
        t0 = time.monotonic()
        deadline = t0 + limit
        x.timeout_s = limit
        raw = bytearray()
        seen = 0
        try:
            with self._client.stream(method, rel, json=payload, timeout=_httpx().Timeout(limit)) as resp:
                x.status = resp.status_code
                x.content_type = resp.headers.get("content-type", "")
                for chunk in resp.iter_bytes():
                    if chunk and x.ttft_ms is None:
                        x.ttft_ms = round((time.monotonic() - t0) * 1000, 1)
                    if chunk:
                        x.last_chunk_ms = round((time.monotonic() - t0) * 1000, 1)
                    seen += len(chunk)
                    if seen > MAX_BODY:  # stop reading: keeping (or waiting for) megabytes helps nobody
                        raw.extend(chunk[:MAX_BODY - len(raw)])
                        raise ResponseTooLarge(seen)
                    raw.extend(chunk)
                    if time.monotonic() > deadline:
                        raise _httpx().ReadTimeout(f"response not complete after {limit:g}s")
        except ResponseTooLarge as exc:
            x.error_kind, x.error = "too_large", str(exc)
        except Exception as exc:  # transport trouble is a fact about the server, not a crash
            x.error_kind = _error_kind(exc)
            x.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        x.latency_ms = round((time.monotonic() - t0) * 1000, 1)
        # Masked on arrival: every judge quotes a piece of the body, and a key cut by a quote is a key half leaked.
        x.body_text = redact_values(raw.decode("utf-8", errors="replace"))
        if x.status is None:
            return x
        asked_stream = bool((payload or {}).get("stream"))
        if x.status == 200 and ("text/event-stream" in x.content_type or asked_stream):
            payloads, info = parse_sse(x.body_text)
            x.stream = info
            x.reply = reply_from_stream(payloads, info)
            return x
        if x.body_text.strip():
            try:
                x.body = loads(x.body_text)
            except ValueError as exc:
                x.json_error = str(exc)
        if isinstance(x.body, dict) and isinstance(x.body.get("choices"), list):
            choices = x.body["choices"]
            x.reply = reply_from_message(choices[0] if choices else None)
            x.reply.choices = len(choices)
        return x


def error_message(x: Exchange) -> str:
    """The server's error text from an error body (OpenAI `{"error": {"message"}}`, FastAPI `detail`, or raw)."""
    b = x.body
    if isinstance(b, dict):
        err = b.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if "detail" in b:
            return json.dumps(b["detail"])[:1000] if not isinstance(b["detail"], str) else b["detail"]
        if isinstance(b.get("message"), str):
            return b["message"]
    return x.body_text[:1000]
