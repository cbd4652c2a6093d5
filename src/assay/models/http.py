"""A lean HTTP/1.1 client for the JSON POSTs a model endpoint answers (stdlib ``asyncio``).

Why not the ``openai`` SDK or ``httpx``: a judge run sends hundreds of small requests per
second, and on two cores the client's CPU per request decides how close the run gets to its
concurrency bound. Measured against the mock server (1,000 requests at concurrency 32,
client CPU per request, one machine, one run): the SDK 4.9 ms, ``httpx2`` alone 2.5–3.0 ms
(``httpcore2`` polls every pooled connection's socket on each request), ``aiohttp`` 0.54 ms,
this client 0.23–0.25 ms. Start-up matters as much at a few hundred items: importing the SDK
costs 0.45–1.5 s of CPU and ``aiohttp`` 0.45–0.9 s (it builds TLS contexts at import), this
module nothing beyond the standard library. See ``benchmarks/RESULTS.md``, "Judge
throughput on the user path".

What it does, and no more: ``POST`` a body with headers over keep-alive connections pooled
per endpoint and event loop (last used first; idle ones dropped after ``keepalive_s`` or
when the server closed them), ``http`` and ``https`` (TLS with the same trust store as
``httpx2``: ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else the system's), responses with
``Content-Length``, chunked, or read to the close, ``gzip``/``deflate`` bodies, interim 1xx
answers skipped. A request that fails on a *reused* connection before any byte of the answer
arrived (the server closed it while idle) is sent once more on a new connection, as
``urllib3`` and ``aiohttp`` do; any other failure is a ``TransportError``. Timeouts belong to
the caller (``asyncio.timeout`` around ``post``): a cancelled exchange closes its connection.
Redirects are not followed (an API answering 3xx is reported with its ``Location``).

Anything else goes through ``HttpxTransport`` (``httpx2``, a dependency of the ``openai``
package): chosen automatically when a proxy variable (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, any case) applies to the endpoint's scheme, or always with
``ASSAY_HTTP_CLIENT=httpx``, so proxies, ``NO_PROXY`` and redirects behave exactly as they
did through the SDK.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import ssl
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

HTTP_CLIENT_ENV = "ASSAY_HTTP_CLIENT"
"""``stdlib`` (default where no proxy applies) or ``httpx`` (always the ``httpx2`` client)."""

HttpClientName = Literal["stdlib", "httpx"]


@dataclass(frozen=True, slots=True)
class HTTPReply:
    """An answer: status, headers (names in lower case, repeated ones joined by ", "), body
    (decoded from ``gzip``/``deflate``)."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class TransportError(Exception):
    """No usable answer: the endpoint could not be reached, closed the connection, or spoke
    something that is not HTTP/1.1."""


class Transport(Protocol):
    """How a model sends its requests (one per endpoint, key and event loop)."""

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply: ...

    async def aclose(self) -> None: ...


def client_for(base_url: str) -> HttpClientName:
    """Which client a request to ``base_url`` goes through: ``ASSAY_HTTP_CLIENT`` if set,
    else ``httpx`` when a proxy variable applies to its scheme (``NO_PROXY=*`` aside), else
    ``stdlib``. Conservative on purpose: where a proxy may apply, ``httpx2`` decides."""
    forced = os.environ.get(HTTP_CLIENT_ENV, "").strip().lower()
    if forced:
        if forced not in ("stdlib", "httpx"):
            raise ValueError(f"{HTTP_CLIENT_ENV}={forced!r}: expected 'stdlib' or 'httpx'")
        return "httpx" if forced == "httpx" else "stdlib"
    scheme = urlsplit(base_url).scheme.lower()
    if _env(f"{scheme}_proxy") or _env("all_proxy"):
        return "stdlib" if _env("no_proxy") == "*" else "httpx"
    return "stdlib"


def make_transport(base_url: str, *, keepalive_s: float = 5.0) -> Transport:
    """The transport ``client_for(base_url)`` names, for ``base_url`` (no trailing slash)."""
    if client_for(base_url) == "httpx":
        return HttpxTransport(base_url)
    return StdlibTransport(base_url, keepalive_s=keepalive_s)


def _env(name: str) -> str:
    return (os.environ.get(name) or os.environ.get(name.upper()) or "").strip()


# ---------------------------------------------------------------------- stdlib
@dataclass(slots=True)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float = 0.0

    def usable(self, now: float, keepalive_s: float) -> bool:
        return (
            now - self.idle_since < keepalive_s
            and not self.writer.is_closing()
            and not self.reader.at_eof()
        )

    def close(self) -> None:
        self.writer.close()


class _NoAnswer(Exception):
    """The connection ended before the first byte of an answer (safe to send again once)."""


class StdlibTransport:
    """HTTP/1.1 over ``asyncio`` streams, keep-alive connections pooled (see the module
    docstring). Use it from one event loop."""

    MAX_IDLE = 100
    """Idle connections kept (the ``openai`` SDK's ``max_keepalive_connections``)."""
    MAX_CONNECTIONS = 1000
    """Connections open at once; more requests wait (the SDK's ``max_connections``), so a
    caller gathering thousands of calls without a limiter cannot run out of sockets."""

    def __init__(self, base_url: str, *, keepalive_s: float = 5.0) -> None:
        parts = urlsplit(base_url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL with a host, got {base_url!r}")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError(  # not the URL itself: it may hold a password
                f"the base_url of {parts.hostname}: a query, fragment, user name or password "
                "in it is not supported (requests go to base_url + '/chat/completions'; give "
                "a key as the API key)"
            )
        self.base_url = base_url
        self.keepalive_s = keepalive_s
        self._tls = scheme == "https"
        self._host = parts.hostname
        default_port = 443 if self._tls else 80
        self._port = parts.port or default_port
        shown = f"[{self._host}]" if ":" in self._host else self._host
        self._authority = shown if self._port == default_port else f"{shown}:{self._port}"
        self._prefix = parts.path.rstrip("/")
        self._idle: list[_Connection] = []
        self._open = asyncio.Semaphore(self.MAX_CONNECTIONS)

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        head = [f"POST {self._prefix}{path} HTTP/1.1", f"Host: {self._authority}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        head.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        async with self._open:
            return await self._send(request)

    async def _send(self, request: bytes) -> HTTPReply:
        while True:
            connection, reused = await self._acquire()
            try:
                reply, keep = await self._exchange(connection, request)
            except _NoAnswer as exc:
                connection.close()
                if reused:
                    continue  # closed by the server while idle: once more, on a new one
                raise TransportError(f"{self.base_url}: {exc}") from exc
            except (OSError, EOFError, ValueError, zlib.error, asyncio.LimitOverrunError) as exc:
                connection.close()
                raise TransportError(f"{self.base_url}: {_describe(exc)}") from exc
            except BaseException:  # cancelled (a timeout) or worse: the exchange is torn
                connection.close()
                raise
            if keep and len(self._idle) < self.MAX_IDLE:
                connection.idle_since = time.monotonic()
                self._idle.append(connection)
            else:
                connection.close()
            return reply

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    async def _acquire(self) -> tuple[_Connection, bool]:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if connection.usable(now, self.keepalive_s):
                return connection, True
            connection.close()
        try:
            if self._tls:
                reader, writer = await asyncio.open_connection(
                    self._host, self._port, ssl=_ssl_context(), server_hostname=self._host
                )
            else:
                reader, writer = await asyncio.open_connection(self._host, self._port)
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(f"{self.base_url}: {_describe(exc)}") from exc
        return _Connection(reader, writer), False

    async def _exchange(self, connection: _Connection, request: bytes) -> tuple[HTTPReply, bool]:
        reader, writer = connection.reader, connection.writer
        try:
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise ValueError("the connection closed inside the answer's head") from exc
            raise _NoAnswer("the connection closed before an answer") from exc
        except ConnectionError as exc:
            raise _NoAnswer(_describe(exc)) from exc
        status, version, headers = _parse_head(head)
        while 100 <= status < 200:  # interim answers (100 Continue, 103 Early Hints)
            head = await reader.readuntil(b"\r\n\r\n")
            status, version, headers = _parse_head(head)
        connection_header = headers.get("connection", "").lower()
        keep = "close" not in connection_header and (
            version != "HTTP/1.0" or "keep-alive" in connection_header
        )
        if status in (204, 304):
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        else:
            body, keep = await reader.read(), False
        encoding = headers.get("content-encoding", "").strip().lower()
        if encoding and encoding != "identity":
            body = _decode(body, encoding)
        return HTTPReply(status, headers, body), keep


def _parse_head(head: bytes) -> tuple[int, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x answer: {lines[0][:80]!r}")
    status = int(rest[:3])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed header line {line[:80]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return status, version, headers


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _decode(body: bytes, encoding: str) -> bytes:
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompress(body, 16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        try:
            return zlib.decompress(body)
        except zlib.error:  # raw deflate, as some servers send it
            return zlib.decompress(body, -zlib.MAX_WBITS)
    raise ValueError(f"unsupported Content-Encoding {encoding!r}")


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_SSL_CONTEXT: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    """The TLS context of every https endpoint, made on first use: ``httpx2``'s default
    (``SSL_CERT_FILE``/``SSL_CERT_DIR``, else the system trust store) when it is installed,
    else the standard library's default context."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        try:
            from httpcore2 import default_ssl_context
        except ImportError:  # pragma: no cover - httpx2 comes with the openai package
            _SSL_CONTEXT = ssl.create_default_context()
        else:
            _SSL_CONTEXT = default_ssl_context()
    return _SSL_CONTEXT


# ---------------------------------------------------------------------- httpx
class HttpxTransport:
    """The same ``post`` through an ``httpx2.AsyncClient`` (proxies from the environment,
    ``NO_PROXY``, redirects followed), for endpoints the stdlib client does not serve."""

    def __init__(self, base_url: str) -> None:
        import httpx2

        self.base_url = base_url
        self._httpx: Any = httpx2
        self._client = httpx2.AsyncClient(
            timeout=None,  # the caller's asyncio.timeout bounds each call
            follow_redirects=True,
            trust_env=True,
            limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
        )

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        try:
            response = await self._client.post(
                f"{self.base_url}{path}", content=body, headers=dict(headers)
            )
        except self._httpx.HTTPError as exc:
            raise TransportError(f"{self.base_url}: {_describe(exc)}") from exc
        return HTTPReply(response.status_code, dict(response.headers.items()), response.content)

    async def aclose(self) -> None:
        await self._client.aclose()


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback IP literal (names are not resolved):
    the one test the local model server, the mock server and the server's base-URL policy
    share."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
