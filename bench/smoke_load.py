"""Benchmark the smoke load generator against a local server that answers every request in a fixed delay.

    python bench/smoke_load.py [--requests 1000] [--concurrency 100] [--delay-ms 50]

The server (asyncio, raw HTTP/1.1 keep-alive, 127.0.0.1, its own process so it does not share the client's event
loop) answers chat/completions with a named get_weather call — JSON or SSE — after `--delay-ms`. Prints the
generator's p50/p95/p99 latency, TTFT and errors. Target: p50 <= delay + 5 ms, no errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CALL = {"id": "chatcmpl-tool-bench", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
JSON_BODY = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion", "model": "bench",
                        "choices": [{"index": 0, "finish_reason": "tool_calls",
                                     "message": {"role": "assistant", "content": None, "tool_calls": [CALL]}}]}
                       ).encode()
SSE_BODY = "".join(f"data: {json.dumps(e)}\n\n" for e in [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [dict(CALL, index=0)]},
                  "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]).encode() + b"data: [DONE]\n\n"


async def serve(port: int, delay: float) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length) if length else b""
                await asyncio.sleep(delay)
                stream = b'"stream": true' in body or b'"stream":true' in body
                payload, ctype = (SSE_BODY, b"text/event-stream") if stream else (JSON_BODY, b"application/json")
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: " + ctype + b"\r\ncontent-length: "
                             + str(len(payload)).encode() + b"\r\n\r\n" + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--delay-ms", type=float, default=50.0)
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.delay_ms / 1000))
        return

    from ascend_doctor.smoke.load import run_load

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--delay-ms", str(args.delay_ms)])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        cpu0 = time.process_time()
        res = run_load(f"http://127.0.0.1:{port}/v1", "bench", total=args.requests, concurrency=args.concurrency,
                       timeout=30.0, show_progress=False)
        cpu = time.process_time() - cpu0
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"requests={res.requested} concurrency={res.concurrency} server_delay={args.delay_ms:g}ms "
          f"wall={res.wall_s:.2f}s throughput={res.completed / res.wall_s:.0f} req/s")
    print(f"latency p50={res.p50_ms} ms p95={res.p95_ms} ms p99={res.p99_ms} ms; "
          f"TTFT p50={res.ttft_p50_ms} ms p95={res.ttft_p95_ms} ms")
    print(f"succeeded={res.succeeded} errors={res.error_count} {res.errors[:3] if res.errors else ''}")
    print(f"client CPU {cpu:.2f}s = {cpu / max(res.completed, 1) * 1000:.2f} ms/request; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (other jobs share this machine)")
    ok = res.error_count == 0 and res.p50_ms is not None and res.p50_ms <= args.delay_ms + 5
    print("target (p50 <= delay + 5 ms, no errors):", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
