"""A lean asyncio HTTP/1.1 client for load mode: one keep-alive connection per worker, nothing else.

Why not httpx here: measured on the 2-core CI machine (bench/smoke_load.py, 100 in flight against a 50 ms server),
httpx's AsyncClient spends ~2.1 ms of CPU per request and the generator itself became the bottleneck (p50 155 ms);
aiohttp ~0.5 ms (p50 66 ms). Load mode sends one fixed request shape to one origin, so the protocol surface is small:
a request line, a few headers, and a response framed by Content-Length, chunked transfer-coding or connection close.
The scenarios (where fidelity matters more than throughput) keep using httpx.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Optional
from urllib.parse import urlsplit


class WireError(Exception):
    """A transport or framing problem, worded for the load finding's evidence."""


# Bytes kept of one response body. The load's requests ask for one short tool call (a few KiB); a server that sends
# megabytes per answer is itself the finding, and 100 workers each buffering 20 MB would cost gigabytes of memory.
MAX_BODY = 1024 * 1024


def _too_large(seen: int, what: str) -> WireError:
    return WireError(f"response too large: {what} {seen} bytes, more than the {MAX_BODY} bytes a tool-call answer "
                     f"may take; stopped reading")


class Response:
    __slots__ = ("status", "headers", "body", "first_byte_at")

    def __init__(self, status: int, headers: dict[str, str], body: bytes, first_byte_at: Optional[float]):
        self.status = status
        self.headers = headers
        self.body = body
        self.first_byte_at = first_byte_at  # loop time of the first body byte (streams: time to first token)


class Connection:
    """One persistent connection to the origin of `base_url`; reconnects when the server closed it."""

    def __init__(self, base_url: str, tls: Optional[ssl.SSLContext], headers: dict[str, str]):
        u = urlsplit(base_url)
        if u.scheme not in ("http", "https"):
            raise WireError(f"unsupported URL scheme {u.scheme!r}")
        self.host = u.hostname or "127.0.0.1"
        self.port = u.port or (443 if u.scheme == "https" else 80)
        self.path = u.path.rstrip("/")
        self.tls = tls if u.scheme == "https" else None
        host_header = self.host if u.port is None else f"{self.host}:{u.port}"
        self.fixed = "".join(f"{k}: {v}\r\n" for k, v in {"Host": host_header, **headers}.items())
        self.reader: Optional[asyncio.StreamReader] = None
        self.writer: Optional[asyncio.StreamWriter] = None

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except (OSError, ssl.SSLError):
                pass
        self.reader = self.writer = None

    async def post(self, path: str, body: bytes, content_type: str = "application/json") -> Response:
        """POST `body` to `base_url + path`; one retry on a fresh connection if a kept-alive one was stale."""
        for attempt in (0, 1):
            fresh = self.writer is None
            if fresh:
                try:
                    self.reader, self.writer = await asyncio.open_connection(self.host, self.port, ssl=self.tls)
                except OSError as exc:
                    raise WireError(f"connect failed: {exc}") from None
            head = (f"POST {self.path}/{path.lstrip('/')} HTTP/1.1\r\n{self.fixed}Content-Type: {content_type}\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
            try:
                self.writer.write(head + body)
                return await self._read_response()
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                await self.close()
                if fresh or attempt:
                    raise WireError(f"connection lost: {type(exc).__name__}") from None
        raise WireError("unreachable")  # pragma: no cover

    async def _read_response(self) -> Response:
        reader = self.reader
        status_line = await reader.readuntil(b"\r\n")
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise WireError(f"not an HTTP/1.x response: {status_line[:80]!r}")
        try:
            status = int(parts[1])
        except ValueError:
            raise WireError(f"bad status line: {status_line[:80]!r}") from None
        headers: dict[str, str] = {}
        while True:
            line = await reader.readuntil(b"\r\n")
            if line == b"\r\n":
                break
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        loop = asyncio.get_running_loop()
        first = None
        chunks: list[bytes] = []
        total = 0
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                size_line = await reader.readuntil(b"\r\n")
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise WireError(f"bad chunk size {size_line[:40]!r}") from None
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    break
                total += size
                if total > MAX_BODY:
                    await self.close()
                    raise _too_large(total, "chunked body of at least")
                data = await reader.readexactly(size + 2)
                if first is None:
                    first = loop.time()
                chunks.append(data[:-2])
        elif "content-length" in headers:
            try:
                n = int(headers["content-length"])
            except ValueError:
                raise WireError(f"bad Content-Length {headers['content-length'][:40]!r}") from None
            if n > MAX_BODY:
                await self.close()
                raise _too_large(n, "Content-Length")
            if n:
                data = await reader.readexactly(n)
                first = loop.time()
                chunks.append(data)
        else:  # framed by connection close
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if first is None:
                    first = loop.time()
                chunks.append(data)
                total += len(data)
                if total > MAX_BODY:
                    await self.close()
                    raise _too_large(total, "body of at least")
            headers["connection"] = "close"
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Response(status, headers, b"".join(chunks), first)
