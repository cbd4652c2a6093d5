"""The transport against a hostile server on loopback (issue 20): every answer that breaks
HTTP/1.1 framing, floods the client or never comes must end in a clean error or a correct
answer, and never hand one request another request's answer.

The server is raw ``asyncio`` streams answering hand-crafted bytes; it counts the requests it
received (so a resent POST shows) and the connections it accepted (so a reused connection
shows). After each hostile answer a second, honest request checks that the pool still gives
every request its own answer."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, Protocol

import pytest

from assay.models.http import (
    AiohttpTransport,
    HTTPSettings,
    ResponseTooLargeError,
    TransportError,
    TransportTimeoutError,
)

Respond = Callable[[int, asyncio.StreamWriter], Awaitable[bool]]
"""``(request number from 1, writer) -> keep the connection open``."""

INJECTED = b'{"answer": "INJECTED"}'


def answer(text: str, *, extra: bytes = b"") -> bytes:
    body = json.dumps({"answer": text}).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
    return f"{head}\r\n\r\n".encode() + body + extra


def injected_response() -> bytes:
    """A whole, valid response: what a desynchronised client would take for the next
    request's answer."""
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(INJECTED), INJECTED)


class HostileServer:
    """Reads each request (head and ``Content-Length`` body), then lets ``respond`` write
    whatever it likes."""

    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.requests: list[bytes] = []
        self.connections = 0
        self.base_url = ""
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> HostileServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                length = 0
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                self.requests.append(await reader.readexactly(length))
                if not await self.respond(len(self.requests), writer):
                    break
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self._handlers.discard(task)


Hostile = Callable[[Respond], Awaitable[HostileServer]]


@pytest.fixture
async def hostile() -> AsyncIterator[Hostile]:
    servers: list[HostileServer] = []

    async def make(respond: Respond) -> HostileServer:
        server = await HostileServer(respond).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        await server.stop()


class Attack(Protocol):
    async def __call__(
        self, respond: Respond, **changes: Any
    ) -> tuple[HostileServer, AiohttpTransport]: ...


@pytest.fixture
async def attack(hostile: Hostile) -> AsyncIterator[Attack]:
    """A hostile server answering with ``respond`` and a transport to it with
    ``settings(**changes)``. The transports close before the servers stop, whether the test
    passed or not."""
    transports: list[AiohttpTransport] = []

    async def make(respond: Respond, **changes: Any) -> tuple[HostileServer, AiohttpTransport]:
        server = await hostile(respond)
        transport = AiohttpTransport(server.base_url, settings(**changes))
        transports.append(transport)
        return server, transport

    yield make
    for transport in transports:
        await transport.aclose()


async def post(transport: AiohttpTransport, n: int) -> bytes:
    reply = await transport.post("/chat/completions", b'{"n": %d}' % n, {"X-N": str(n)})
    return reply.body


async def then_honest(server: HostileServer, transport: AiohttpTransport) -> None:
    """The request after the hostile answer gets its own answer from the server."""
    body = await post(transport, len(server.requests) + 1)
    assert json.loads(body) == {"answer": f"own{len(server.requests)}"}


async def honest(n: int, writer: asyncio.StreamWriter) -> bool:
    """Request ``n`` gets its own ``own<n>`` answer."""
    writer.write(answer(f"own{n}"))
    return True


def honest_after(first: Callable[[asyncio.StreamWriter], Awaitable[bool]]) -> Respond:
    """The first request gets ``first``; every later one an honest ``own<n>`` answer."""

    async def respond(n: int, writer: asyncio.StreamWriter) -> bool:
        return await first(writer) if n == 1 else await honest(n, writer)

    return respond


def settings(**changes: Any) -> HTTPSettings:
    """Short phase timeouts, so a test that goes wrong fails in seconds."""
    return replace(HTTPSettings(connect_timeout_s=2.0, read_timeout_s=2.0), **changes)


# ------------------------------------------------------------ framing: never desynchronised
async def test_a_body_longer_than_its_content_length_does_not_answer_the_next_request(
    attack: Attack,
) -> None:
    async def longer(writer: asyncio.StreamWriter) -> bool:
        writer.write(answer("own1", extra=injected_response()))
        return True

    server, transport = await attack(honest_after(longer))
    assert json.loads(await post(transport, 1)) == {"answer": "own1"}
    await then_honest(server, transport)
    assert server.connections == 2  # the connection with the extra bytes was not reused


async def test_bytes_arriving_while_a_connection_idles_are_never_taken_for_an_answer(
    attack: Attack,
) -> None:
    """The tail comes after the answer was read and the connection went back to the pool:
    ``aiohttp``'s own pool would hand the connection out with the injected answer queued
    (checked against 3.14.5); the transport's connector closes it instead."""

    async def late(writer: asyncio.StreamWriter) -> bool:
        writer.write(answer("own1"))
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(injected_response())
        return True

    server, transport = await attack(honest_after(late))
    assert json.loads(await post(transport, 1)) == {"answer": "own1"}
    await asyncio.sleep(0.2)  # the injected bytes reach the idle pooled connection
    await then_honest(server, transport)
    assert len(server.requests) == 2 and server.connections == 2


@pytest.mark.parametrize("length", ["Content-Length: 0\r\n", ""])
async def test_a_204_with_a_body_does_not_answer_the_next_request(
    attack: Attack, length: str
) -> None:
    async def no_content(writer: asyncio.StreamWriter) -> bool:
        writer.write(f"HTTP/1.1 204 No Content\r\n{length}\r\n".encode() + injected_response())
        return True

    server, transport = await attack(honest_after(no_content))
    reply = await transport.post("/chat/completions", b"{}", {})
    assert (reply.status, reply.body) == (204, b"")
    await then_honest(server, transport)


@pytest.mark.parametrize(
    ("head", "why"),
    [
        ("HTTP/1.1 200 OK\r\nContent-Length: +71", "Content-Length"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 7_1", "Content-Length"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 71, 71", "Content-Length"),
        ("HTTP/1.1 2009999 OK\r\nContent-Length: 71", "status"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 71\r\nContent-Length: 5", "Content-Length"),
        ("HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 71", "header"),
    ],
)
async def test_malformed_heads_are_refused_and_the_next_request_is_answered(
    attack: Attack, head: str, why: str
) -> None:
    async def malformed(writer: asyncio.StreamWriter) -> bool:
        writer.write(f"{head}\r\n\r\n".encode() + b"x" * 71 + injected_response())
        return True

    server, transport = await attack(honest_after(malformed))
    with pytest.raises(TransportError, match=why) as info:
        await post(transport, 1)
    message = str(info.value)
    assert "not a valid HTTP/1.1 answer" in message and server.base_url in message
    assert "\n" not in message and "INJECTED" not in message
    await then_honest(server, transport)
    assert len(server.requests) == 2


async def test_an_unknown_transfer_coding_is_not_read_as_chunked(attack: Attack) -> None:
    """``Transfer-Encoding: xchunked`` is not ``chunked``: RFC 9112 says such a body runs to
    the close. The server never closes, so the read timeout ends it; the chunk inside is not
    decoded and the connection is not reused."""

    async def xchunked(writer: asyncio.StreamWriter) -> bool:
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n"
            b"5\r\nhello\r\n0\r\n\r\n" + injected_response()
        )
        return True

    server, transport = await attack(honest_after(xchunked), read_timeout_s=0.3)
    with pytest.raises(TransportTimeoutError, match="read timeout"):
        await post(transport, 1)
    await then_honest(server, transport)
    assert server.connections == 2


async def test_a_close_delimited_unknown_coding_is_the_raw_body_not_a_chunk(attack: Attack) -> None:
    async def xchunked_then_close(writer: asyncio.StreamWriter) -> bool:
        head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: xchunked\r\n\r\n"
        writer.write(head + b"5\r\nhello\r\n0\r\n\r\n")
        return False

    server, transport = await attack(honest_after(xchunked_then_close))
    reply = await transport.post("/chat/completions", b"{}", {})
    assert reply.body == b"5\r\nhello\r\n0\r\n\r\n"
    await then_honest(server, transport)


async def test_under_load_every_request_gets_its_own_answer_or_an_error(attack: Attack) -> None:
    """Sixty concurrent requests over eight pooled connections, half of the answers
    carrying a smuggled answer after the body: each request that succeeds gets the answer to
    its own body.

    (Bytes the server sends *later*, after the client may already have sent the next request
    on that connection, are not in this test: no HTTP/1.1 client can tell them from the
    answer to that request, which the server is free to get wrong anyway. Such bytes that
    arrive while the connection idles in the pool are caught: see
    ``test_bytes_arriving_while_a_connection_idles_are_never_taken_for_an_answer``.)"""
    server: HostileServer | None = None

    async def echo_and_smuggle(n: int, writer: asyncio.StreamWriter) -> bool:
        assert server is not None
        sent = json.loads(server.requests[n - 1])["n"]
        smuggled = b'{"echo": -1}'
        tail = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(smuggled), smuggled)
        body = json.dumps({"echo": sent}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        if n % 2 == 0:
            writer.write(tail)
        return True

    server, transport = await attack(echo_and_smuggle, max_connections=8)

    async def one(i: int) -> int | None:
        try:
            reply = await transport.post("/chat/completions", b'{"n": %d}' % i, {})
        except TransportError:
            return None
        echoed: int = json.loads(reply.body)["echo"]
        return echoed

    answers = await asyncio.gather(*(one(i) for i in range(60)))
    wrong = [(i, echoed) for i, echoed in enumerate(answers) if echoed not in (None, i)]
    assert wrong == [], answers
    assert answers.count(None) < 30  # mostly answered, never with another request's answer


# ------------------------------------------------------------ no resend
async def test_a_post_the_server_read_before_closing_is_not_sent_again(attack: Attack) -> None:
    async def read_and_close(writer: asyncio.StreamWriter) -> bool:
        return False

    server, transport = await attack(honest_after(read_and_close))
    with pytest.raises(TransportError, match="disconnected"):
        await post(transport, 1)
    assert server.requests == [b'{"n": 1}']  # received once, and only once
    await then_honest(server, transport)


async def test_a_post_on_a_reused_connection_the_server_then_drops_is_not_sent_again(
    attack: Attack,
) -> None:
    async def respond(n: int, writer: asyncio.StreamWriter) -> bool:
        if n == 2:  # the second request, on the kept-alive connection: read, then dropped
            return False
        return await honest(n, writer)

    server, transport = await attack(respond)
    await post(transport, 1)
    with pytest.raises(TransportError):
        await post(transport, 2)
    assert len(server.requests) == 2 and server.connections == 1


# ------------------------------------------------------------ floods: bounded, with a clear error
async def test_a_gzip_bomb_stops_at_the_cap_with_memory_bounded(attack: Attack) -> None:
    bomb = gzip.compress(b"\0" * 200_000_000, 9)  # about 200 KB that inflate to 200 MB
    assert len(bomb) < 300_000

    async def gzip_bomb(writer: asyncio.StreamWriter) -> bool:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb)
        )
        writer.write(bomb)
        return True

    cap = 4 * 1024 * 1024
    server, transport = await attack(honest_after(gzip_bomb), max_response_bytes=cap)
    import aiohttp  # noqa: F401 - imported before measuring, not inside the measured call

    tracemalloc.start()
    try:
        started = time.perf_counter()
        with pytest.raises(ResponseTooLargeError, match=f"{cap}-byte cap after decompression"):
            await post(transport, 1)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * cap  # the cap and a few buffers, not 200 MB
    assert elapsed < 5
    await then_honest(server, transport)


async def test_a_huge_declared_length_fails_at_once_not_at_the_timeout(attack: Attack) -> None:
    async def ten_gigabytes(writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n" + b"x" * 1000)
        return True  # and then nothing: a client waiting for 10 GB would wait for the timeout

    server, transport = await attack(honest_after(ten_gigabytes), read_timeout_s=30)
    started = time.perf_counter()
    with pytest.raises(ResponseTooLargeError, match="declares 10000000000 bytes") as info:
        await post(transport, 1)
    assert time.perf_counter() - started < 5
    assert "33554432-byte cap" in str(info.value) and server.base_url in str(info.value)
    await then_honest(server, transport)


async def test_a_chunked_body_over_the_cap_fails_when_it_passes_it(attack: Attack) -> None:
    async def endless_chunks(writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b"y" * 65536)
        while True:
            writer.write(chunk)
            await writer.drain()

    server, transport = await attack(honest_after(endless_chunks), max_response_bytes=1_000_000)
    with pytest.raises(ResponseTooLargeError, match="1000000-byte cap"):
        await post(transport, 1)
    await then_honest(server, transport)


async def test_endless_interim_answers_neither_starve_the_loop_nor_outlive_the_deadline(
    attack: Attack,
) -> None:
    async def endless_1xx(writer: asyncio.StreamWriter) -> bool:
        while True:
            writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" * 50)
            await writer.drain()
            await asyncio.sleep(0.002)  # the server shares this loop: leave it some time

    server, transport = await attack(honest_after(endless_1xx))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.create_task(ticker())
    started = time.perf_counter()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):  # the call's deadline (ModelSettings.timeout_s)
            await post(transport, 1)
    assert time.perf_counter() - started < 2
    beat.cancel()
    assert ticks >= 20  # of about 50: the event loop kept running other tasks meanwhile
    await then_honest(server, transport)


async def test_endless_trailers_are_refused(attack: Attack) -> None:
    async def endless_trailers(writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n")
        while True:
            writer.write(b"X-Trailer: aaaaaaaaaaaaaaaa\r\n" * 100)
            await writer.drain()

    server, transport = await attack(honest_after(endless_trailers))
    started = time.perf_counter()
    with pytest.raises(TransportError, match="Too many headers"):
        await post(transport, 1)
    assert time.perf_counter() - started < 5
    await then_honest(server, transport)


# ------------------------------------------------------------ silence: phase timeouts
async def test_a_silent_server_fails_at_the_read_timeout(attack: Attack) -> None:
    async def silent(writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(30)
        return False

    server, transport = await attack(honest_after(silent), read_timeout_s=0.3)
    started = time.perf_counter()
    with pytest.raises(TransportTimeoutError, match=r"no data for 0.3 s \(read timeout"):
        await post(transport, 1)
    assert 0.25 < time.perf_counter() - started < 3
    await then_honest(server, transport)


async def test_a_black_holed_host_fails_at_the_connect_timeout() -> None:
    """A listening socket whose accept queue is full drops new SYNs, as a black-holed host
    does: the connection never opens."""
    import aiohttp  # noqa: F401 - its import is not part of the measured time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):  # fill the accept queue (never accepted)
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    await asyncio.sleep(0.1)
    transport = AiohttpTransport(
        f"http://127.0.0.1:{port}/v1", settings(connect_timeout_s=0.3, read_timeout_s=30)
    )
    try:
        started = time.perf_counter()
        with pytest.raises(TransportTimeoutError, match=r"no connection within 0.3 s"):
            await transport.post("/chat/completions", b"{}", {})
        assert 0.25 < time.perf_counter() - started < 3
    finally:
        await transport.aclose()
        for filler in fillers:
            filler.close()
        listener.close()


# ------------------------------------------------------------ requests we send
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("X-Note", "a\r\nInjected: 1"),
        ("X-Note", "a\nInjected: 1"),
        ("X-Note", "a\rb"),
        ("X-Note", "a\x00b"),
        ("X-Note\r\nInjected", "1"),
        ("X Note", "1"),
        ("X-Note:", "1"),
        ("", "1"),
        ("X-Note", "caf\u00e9 \u2603"),
    ],
)
async def test_headers_that_would_inject_are_refused_before_anything_is_sent(
    attack: Attack, name: str, value: str
) -> None:
    server, transport = await attack(honest)
    with pytest.raises(ValueError, match="header") as info:
        await transport.post("/chat/completions", b"{}", {name: value})
    assert "Injected: 1" not in str(info.value).replace(repr(name), "")
    assert server.requests == [] and server.connections == 0
    await then_honest(server, transport)


async def test_a_path_with_spaces_or_line_breaks_is_refused(attack: Attack) -> None:
    server, transport = await attack(honest)
    for path in ("/chat completions", "/chat\r\nX: 1", "chat"):
        with pytest.raises(ValueError, match="path"):
            await transport.post(path, b"{}", {})
    assert server.requests == []
