"""Load mode: N tool-call requests (stream and non-stream alternating) with C in flight, bounded in time.

Each request is bounded by the per-request timeout (asyncio.wait_for around the whole exchange, streams
included); the run as a whole by `deadline` (default: enough waves of C requests, each at most one timeout).
"""

from __future__ import annotations

import asyncio
import json
import math
import ssl
import sys
import time
from typing import Optional

from ascend_doctor.smoke.client import USER_AGENT, normalize_base_url, parse_sse, reply_from_stream
from ascend_doctor.smoke.scenarios import LoadResult, tool_call_payload
from ascend_doctor.smoke.wire import Connection
from ascend_doctor.text.jsonread import loads

MAX_ERRORS_KEPT = 5
RAMP_STEP_S = 0.001


def percentile(values: list[float], q: float) -> Optional[float]:
    """Nearest-rank percentile (q in 0..100) of `values`, rounded to 0.1 ms; None when empty."""
    if not values:
        return None
    s = sorted(values)
    k = max(1, math.ceil(q / 100 * len(s)))
    return round(s[k - 1], 1)


async def _one(conn: Connection, payload: bytes, stream: bool) -> tuple[float, Optional[float]]:
    """One request (payload pre-serialised JSON); returns (latency_ms, ttft_ms) or raises with a one-line reason."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    resp = await conn.post("chat/completions", payload)
    latency = (loop.time() - t0) * 1000
    text = resp.body.decode("utf-8", "replace")
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {text[:200]}")
    if not stream:
        try:
            body = loads(text)
            calls = body["choices"][0]["message"].get("tool_calls") or []
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise RuntimeError(f"unusable body ({type(exc).__name__}): {text[:200]}") from None
        if not calls:
            raise RuntimeError(f"no tool call in the answer: {text[:200]}")
        return latency, None
    ttft = (resp.first_byte_at - t0) * 1000 if resp.first_byte_at is not None else None
    payloads, info = parse_sse(text)
    reply = reply_from_stream(payloads, info)
    if not info.done:
        raise RuntimeError(f"stream ended without [DONE] after {info.events} event(s)")
    if info.framing_errors:
        raise RuntimeError(f"stream framing: {info.framing_errors[0]}")
    if not reply.tool_calls:
        raise RuntimeError("stream carried no tool call")
    return latency, ttft


async def run_load_async(base_url: str, model: str, *, total: int, concurrency: int, timeout: float,
                         api_key: Optional[str] = None, deadline: Optional[float] = None,
                         show_progress: bool = False) -> LoadResult:
    """Run the load; never raises for server behaviour.

    Long by design: the workers, the deadline, the progress line and the cancellation on Ctrl-C share one event
    loop's state (counters, the semaphore); kept in one function so every exit path is visible together."""
    concurrency = max(1, min(concurrency, total))
    result = LoadResult(requested=total, concurrency=concurrency)
    budget = deadline if deadline is not None else timeout * (math.ceil(total / concurrency) + 1)
    headers = {"User-Agent": USER_AGENT}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    latencies: list[float] = []
    ttfts: list[float] = []
    queue: asyncio.Queue = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)
    progress = None
    task_id = None
    if show_progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from ascend_doctor.render.console import make_console

        progress = Progress(TextColumn("load"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            transient=True, console=make_console())
        task_id = progress.add_task("load", total=total)
        progress.start()

    # One keep-alive connection per worker (see wire.py for why not httpx here).
    url = normalize_base_url(base_url)
    # One TLS context for all workers: building one per client (certifi load) blocks the loop for ~10-50 ms each.
    tls = ssl.create_default_context() if url.startswith("https:") else False
    payloads = {s: json.dumps(tool_call_payload(model, s)).encode() for s in (False, True)}

    async def worker(delay: float) -> None:
        conn = Connection(url, tls or None, headers)
        try:
            await asyncio.sleep(delay)
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                stream = i % 2 == 1
                try:
                    lat, ttft = await asyncio.wait_for(_one(conn, payloads[stream], stream), timeout)
                    latencies.append(lat)
                    result.succeeded += 1
                    if ttft is not None:
                        ttfts.append(ttft)
                except asyncio.CancelledError:
                    raise
                except BaseException as exc:  # noqa: BLE001 — every failure is a data point, not a crash
                    if isinstance(exc, asyncio.TimeoutError):
                        reason = f"timeout: no complete answer within {timeout:g}s"
                        await conn.close()  # a half-read response must not be mistaken for the next one
                    else:
                        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                    result.error_count += 1
                    if len(result.errors) < MAX_ERRORS_KEPT:
                        result.errors.append(f"request {i} ({'stream' if stream else 'non-stream'}): {reason}")
                finally:
                    result.completed += 1
                    result.streamed += int(stream)
                    if progress is not None:
                        progress.advance(task_id)
        finally:
            await conn.close()

    t_start = time.monotonic()
    # Ramp-up: worker k starts k * RAMP_STEP_S after the first, so C requests do not hit the server in one burst
    # that it must then serve in lock-step waves for the whole run (a synchronised herd measures the server's
    # queue, not its latency). 100 workers ramp in 0.1 s.
    workers = [asyncio.ensure_future(worker(k * RAMP_STEP_S)) for k in range(concurrency)]
    gathered = asyncio.gather(*workers)
    try:
        await asyncio.wait_for(gathered, budget)
    except asyncio.TimeoutError:
        result.stopped_early = (f"the run exceeded its {budget:g}s budget after {result.completed}/{total} "
                                "requests; the rest were cancelled")
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        if gathered.done():  # retrieved, so Ctrl-C ends with one line, not "exception was never retrieved" (#22)
            try:
                gathered.exception()
            except (asyncio.CancelledError, asyncio.InvalidStateError):
                pass
        if progress is not None:
            progress.stop()
    result.wall_s = round(time.monotonic() - t_start, 3)
    result.p50_ms, result.p95_ms, result.p99_ms = (percentile(latencies, q) for q in (50, 95, 99))
    result.ttft_p50_ms, result.ttft_p95_ms = percentile(ttfts, 50), percentile(ttfts, 95)
    return result


def run_load(base_url: str, model: str, *, total: int, concurrency: int, timeout: float,
             api_key: Optional[str] = None, deadline: Optional[float] = None,
             show_progress: Optional[bool] = None) -> LoadResult:
    """Synchronous wrapper; the progress bar shows only when stderr is a terminal (unless forced)."""
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    return asyncio.run(run_load_async(base_url, model, total=total, concurrency=concurrency, timeout=timeout,
                                      api_key=api_key, deadline=deadline, show_progress=show_progress))
