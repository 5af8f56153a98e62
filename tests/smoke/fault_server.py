"""A scripted OpenAI-compatible server for tests: replays transcripts from tests/data/smoke, on 127.0.0.1 only.

Each request is classified into a scenario key (models, chat, named, named_stream, required, auto, none, parallel,
parallel_stream, roundtrip, roundtrip_compat, irrelevant) from its body, and answered from `<key>.json` of the
first transcript directory that has it (a fault overlay first, then `good/`). File format:

    {"status": 200, "headers": {...}, "json": {...}}      JSON body
    {"status": 200, "sse": [{...}, "[DONE]"]}              each item sent as `data: <item>\\n\\n`
    {"status": 200, "raw": "text"}                         body sent verbatim
    {"delay_s": 3.0, ...}                                  sleep before answering
    {"dribble_s": 1.0, ...}                                send the body one byte every dribble_s seconds
    {"action": "reset"}                                    close the socket with RST, no response
    {"status": 200, "headers": {...}, "raw": "text", "recorded_from": "..."}   a real server's bytes (recorded/)

Strings may hold {{SENTINEL}} (the report_id inside the request's role:tool message). Like a strict server, the
round trip is refused with vLLM/OpenAI's 400 when the tool_call_id does not answer the assistant's call id.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

DATA = Path(__file__).resolve().parents[1] / "data" / "smoke"
GOOD = DATA / "good"
FAULTS = DATA / "faults"
RECORDED = DATA / "recorded"  # bytes of a real server, one response per scenario (tests/smoke/record.py)


def classify(method: str, path: str, body: Any) -> str:
    """The scenario key of one request."""
    if method == "GET":
        return "models" if path.rstrip("/").endswith("/models") else "unknown"
    if not isinstance(body, dict):
        return "unknown"
    msgs = body.get("messages") or []
    roles = [m.get("role") for m in msgs if isinstance(m, dict)]
    stream = "_stream" if body.get("stream") else ""
    if "tool" in roles:
        assistant = next((m for m in msgs if m.get("role") == "assistant"), {})
        return "roundtrip_compat" if assistant.get("content") == "" else "roundtrip"
    if not body.get("tools"):
        return "chat" + stream
    tc = body.get("tool_choice", "auto")
    last = str(msgs[-1].get("content", "")) if msgs else ""
    if isinstance(tc, dict):
        return "named" + stream
    if tc in ("required", "none"):
        return tc + stream
    if "Tokyo" in last:
        return "parallel" + stream
    if "capital of Italy" in last:
        return "irrelevant" + stream
    return "auto" + stream


def _sentinel(body: Any) -> str:
    for m in (body or {}).get("messages", []) if isinstance(body, dict) else []:
        if isinstance(m, dict) and m.get("role") == "tool":
            try:
                return str(json.loads(m.get("content") or "{}").get("report_id", ""))
            except ValueError:
                return ""
    return ""


def _fill(obj: Any, values: dict[str, str]) -> Any:
    if isinstance(obj, str):
        for k, v in values.items():
            obj = obj.replace("{{" + k + "}}", v)
        return obj
    if isinstance(obj, list):
        return [_fill(o, values) for o in obj]
    if isinstance(obj, dict):
        return {k: _fill(v, values) for k, v in obj.items()}
    return obj


def _roundtrip_mismatch(body: Any) -> Optional[str]:
    msgs = body.get("messages", [])
    asked = [c.get("id") for m in msgs if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
    answered = [m.get("tool_call_id") for m in msgs if m.get("role") == "tool"]
    missing = [i for i in asked if i not in answered]
    if missing or not asked:
        return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {missing}")
    return None


class ScriptedServer:
    """Start with `with ScriptedServer("dsml_leak") as srv: srv.base_url`; fault=None serves good/ only."""

    def __init__(self, fault: Optional[str] = None, overrides: Optional[dict[str, dict]] = None,
                 recorded: Optional[str] = None):
        # recorded="vllm-0.32.0-strict": only that real server's bytes (no good/ fallback: a scenario it did not
        # record answers 404, so a replay can never pass on hand-written answers)
        self.dirs = [RECORDED / recorded] if recorded else ([FAULTS / fault] if fault else []) + [GOOD]
        self.overrides = overrides or {}
        self.requests: list[tuple[str, Any]] = []
        self.auth_headers: list[Optional[str]] = []
        self._lock = threading.Lock()
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    def transcript(self, key: str) -> Optional[dict]:
        if key in self.overrides:
            return self.overrides[key]
        for d in self.dirs:
            p = d / f"{key}.json"
            if p.is_file():
                return json.loads(p.read_text(encoding="utf-8"))
        return None

    def keys(self) -> list[str]:
        with self._lock:
            return [k for k, _ in self.requests]

    def start(self) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in two writes: avoid the 40 ms delayed-ACK stall

            def log_message(self, *args):  # keep test output clean
                pass

            def _answer(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                key = classify(method, self.path, body)
                with server._lock:
                    server.requests.append((key, body))
                    server.auth_headers.append(self.headers.get("authorization"))
                t = server.transcript(key)
                if key in ("roundtrip", "roundtrip_compat") and (t or {}).get("status", 200) == 200:
                    problem = _roundtrip_mismatch(body)
                    if problem:
                        t = {"status": 400, "json": {"object": "error", "message": problem, "code": 400}}
                if t is None:
                    t = {"status": 404, "json": {"error": {"message": f"no transcript for {key}"}}}
                if t.get("delay_s"):
                    time.sleep(float(t["delay_s"]))
                if t.get("action") == "reset":
                    # SO_LINGER 0: close() sends RST — the client sees "connection reset by peer".
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                    return
                t = _fill(t, {"SENTINEL": _sentinel(body)})
                headers = dict(t.get("headers") or {})
                if "json" in t:
                    payload = json.dumps(t["json"], ensure_ascii=False).encode("utf-8")
                    headers.setdefault("content-type", "application/json")
                elif "sse" in t:
                    parts = [f"data: {e if isinstance(e, str) else json.dumps(e, ensure_ascii=False)}\n\n"
                             for e in t["sse"]]
                    payload = "".join(parts).encode("utf-8")
                    events = [p.encode("utf-8") for p in parts]
                    headers.setdefault("content-type", "text/event-stream")
                else:
                    payload = str(t.get("raw", "")).encode("utf-8")
                    headers.setdefault("content-type", "text/plain")
                self.send_response(int(t.get("status", 200)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                try:
                    if "sse" in t and (t.get("event_delay_s") or t.get("stall_after") is not None):
                        # One event at a time: `event_delay_s` between events (a slow server), or a silence of
                        # `stall_s` after `stall_after` events (a stuck one).
                        for i, part in enumerate(events):
                            if t.get("stall_after") is not None and i == int(t["stall_after"]):
                                time.sleep(float(t.get("stall_s", 30)))
                            self.wfile.write(part)
                            self.wfile.flush()
                            time.sleep(float(t.get("event_delay_s") or 0))
                    elif t.get("dribble_s"):
                        for i in range(len(payload)):
                            self.wfile.write(payload[i:i + 1])
                            self.wfile.flush()
                            time.sleep(float(t["dribble_s"]))
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                self._answer("GET")

            def do_POST(self):
                self._answer("POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self.base_url

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ScriptedServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
