"""The load-mode HTTP/1.1 client against a raw asyncio server on 127.0.0.1: every framing it must understand."""

import asyncio

import pytest

from ascend_doctor.smoke.wire import Connection, WireError


def serve(responses):
    """Start a server that answers the n-th request on a connection with responses[n] (bytes) or closes (None)."""

    async def start():
        async def handle(reader, writer):
            n = 0
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length")), 0)
                    await reader.readexactly(length)
                    reply = responses[min(n, len(responses) - 1)]
                    n += 1
                    if reply is None:
                        break
                    writer.write(reply)
                    await writer.drain()
                    if b"connection: close" in reply.lower() or b"content-length" not in reply.lower() \
                            and b"chunked" not in reply.lower():
                        break
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        return await asyncio.start_server(handle, "127.0.0.1", 0)

    return start


def run(responses, n_requests=1):
    async def main():
        server = await serve(responses)()
        port = server.sockets[0].getsockname()[1]
        conn = Connection(f"http://127.0.0.1:{port}/v1", None, {"User-Agent": "t"})
        out = []
        try:
            for _ in range(n_requests):
                out.append(await conn.post("chat/completions", b'{"x": 1}'))
        finally:
            await conn.close()
            server.close()
            await server.wait_closed()
        return out

    return asyncio.run(main())


def test_content_length_and_keep_alive():
    r = run([b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"], n_requests=3)
    assert [x.body for x in r] == [b"ok"] * 3 and r[0].status == 200 and r[0].first_byte_at is not None


def test_chunked_with_trailers():
    body = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\ndata:\r\n6;ext=1\r\n hello\r\n0\r\nX-T: 1\r\n\r\n"
    r = run([body], n_requests=2)
    assert [x.body for x in r] == [b"data: hello"] * 2


def test_close_delimited_body_reconnects_for_the_next_request():
    r = run([b"HTTP/1.1 200 OK\r\n\r\nuntil close"], n_requests=2)
    assert [x.body for x in r] == [b"until close"] * 2


def test_stale_keep_alive_connection_is_retried_once():
    # First request answered, then the server drops the connection instead of answering the second.
    r = run([b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na", None, b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"],
            n_requests=2)
    assert [x.body for x in r] == [b"a", b"a"]


@pytest.mark.parametrize("reply, needle", [
    (b"SSH-2.0-OpenSSH\r\n", "not an HTTP/1.x response"),
    (b"HTTP/1.1 2xx OK\r\n\r\n", "bad status line"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
])
def test_garbage_is_a_wire_error(reply, needle):
    with pytest.raises(WireError, match=needle):
        run([reply])


def test_refused_connection_is_a_wire_error():
    async def main():
        conn = Connection("http://127.0.0.1:9/v1", None, {})
        return await conn.post("x", b"")

    with pytest.raises(WireError, match="connect failed"):
        asyncio.run(main())
