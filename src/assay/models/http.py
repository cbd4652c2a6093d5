"""The one HTTP client of model endpoints: JSON POSTs over ``aiohttp``.

Why ``aiohttp`` and not a client of our own: HTTP/1.1 has many ways to go wrong against a
hostile server (a response longer than its ``Content-Length`` answering the *next* request
on a pooled connection, a POST sent twice, a gzip bomb, ``Content-Length: +71``, a status of
``2009999``, no connect or read timeout); ``aiohttp``'s parser (llhttp) is strict,
maintained, and what lm-evaluation-harness's API models use, and its CPU per request is a
small fraction of a judge call (``benchmarks/http_client_cpu.py``). One stack serves direct
and proxied calls.

What a transport does, and what it guarantees:

- ``post(path, body, headers)`` sends ``POST base_url + path`` (``path`` may carry a query,
  e.g. Azure's ``?api-version=``) and returns status, headers and the body, decompressed
  (``gzip``/``deflate``, and ``br``/``zstd`` when their ``aiohttp`` extras are installed).
  Any non-2xx status is an answer, not an error; redirects are not followed (a 3xx comes
  back with its ``Location``).
- Header names must be RFC 9110 tokens and values may not hold CR, LF or NUL (or characters
  outside Latin-1): a request that would inject a header is refused with ``ValueError``
  before anything is sent.
- Timeouts per phase (``HTTPSettings``): ``connect_timeout_s`` to open a connection (a
  black-holed host fails in seconds, not at the call's timeout) and ``read_timeout_s``
  between two reads of the answer (a silent server). The whole call's deadline stays the
  caller's (``asyncio.timeout`` around ``post``, ``ModelSettings.timeout_s``).
- ``max_response_bytes`` caps the body *after* decompression (default 32 MiB): a declared
  ``Content-Length`` above it fails at once, a longer body (or a decompression bomb) fails as
  soon as it passes the cap, with ``ResponseTooLargeError`` naming the cap and the URL.
- Never a resend: a POST whose connection breaks is a ``TransportError`` (retries, with
  their budget and backoff, belong to ``ReliableModel``; ``aiohttp`` itself retries only
  idempotent methods). Never another request's answer: a connection holding bytes beyond
  the answer it was reading (a body longer than its ``Content-Length``, a 204 with a body,
  bytes that arrive while it idles in the pool) is closed, not reused.
- Proxies: ``HTTP_PROXY``/``HTTPS_PROXY`` (any case) and ``NO_PROXY``, as ``aiohttp`` reads
  them with ``trust_env``, looked up once per transport (``trust_env=True`` on the session
  would look them up, and ``~/.netrc`` for the endpoint, in a worker thread on every
  request, and a ``.netrc`` entry would clash with the API key's ``Authorization`` header).
  ``ALL_PROXY``, SOCKS and ``https://`` proxy URLs are not supported by ``aiohttp``.
- TLS: ``ssl.create_default_context()`` (the system trust store, or ``SSL_CERT_FILE`` /
  ``SSL_CERT_DIR``), made when the first ``https`` transport opens and shared while those
  variables keep their values (``aiohttp``'s own context is made once, at its import, and
  would miss a variable set later).

A transport belongs to the event loop of its first request while that loop runs
(``OpenAICompatibleModel`` keeps one per loop); a later loop opens a new session. It closes
with ``aclose()``, or by itself when that loop ends under
``asyncio.run`` (an async generator holds the session, and ``asyncio.run`` closes every
async generator before the loop), so many ``asyncio.run`` calls in one process leave no
sockets and no "unclosed client session" warnings behind. ``aiohttp`` is imported on the
first request, so ``import assay`` does not pay for it; ``warm_transport_imports()`` (called
when a model string for an HTTP provider is configured) starts that import in a background
thread, so that a run's first request finds it done (``assay.warm_imports``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import ssl
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from assay.warm_imports import ImportWarmer

if TYPE_CHECKING:
    import aiohttp

CONNECT_TIMEOUT_ENV = "ASSAY_HTTP_CONNECT_TIMEOUT"
READ_TIMEOUT_ENV = "ASSAY_HTTP_READ_TIMEOUT"
MAX_RESPONSE_BYTES_ENV = "ASSAY_HTTP_MAX_RESPONSE_BYTES"


@dataclass(frozen=True, slots=True)
class HTTPSettings:
    """Limits of one transport. ``from_env()`` reads ``ASSAY_HTTP_CONNECT_TIMEOUT``,
    ``ASSAY_HTTP_READ_TIMEOUT`` (seconds; ``0`` turns the read timeout off) and
    ``ASSAY_HTTP_MAX_RESPONSE_BYTES`` over these defaults."""

    connect_timeout_s: float = 10.0
    """To open a connection (TCP and TLS): a black-holed host fails after this."""
    read_timeout_s: float | None = 300.0
    """Between two reads of the answer (``None``: no limit). Generous, because a
    non-streamed answer of a reasoning model can take minutes before its first byte; the
    call's own deadline (``ModelSettings.timeout_s``) is usually the shorter one."""
    max_response_bytes: int = 32 * 1024 * 1024
    """The largest body accepted, counted after decompression."""
    keepalive_s: float = 4.0
    """How long an idle connection is kept for reuse: below the 5 s idle timeout of common
    servers (uvicorn, many proxies), so a pooled connection is rarely one the server is
    closing at that moment (a POST sent on it would fail and not be resent)."""
    max_connections: int = 1000
    """Connections open at once (more requests wait), as the ``openai`` SDK's
    ``max_connections``: a caller gathering thousands of calls cannot run out of sockets."""

    def __post_init__(self) -> None:
        if not self.connect_timeout_s > 0:
            raise ValueError(f"connect_timeout_s must be > 0, got {self.connect_timeout_s}")
        if self.read_timeout_s is not None and not self.read_timeout_s > 0:
            raise ValueError(f"read_timeout_s must be > 0 or None, got {self.read_timeout_s}")
        if self.max_response_bytes < 1:
            raise ValueError(f"max_response_bytes must be >= 1, got {self.max_response_bytes}")
        if self.max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {self.max_connections}")

    @classmethod
    def from_env(cls) -> HTTPSettings:
        settings = cls()
        connect = _env_number(CONNECT_TIMEOUT_ENV, float)
        if connect is not None:
            settings = replace(settings, connect_timeout_s=connect)
        read = _env_number(READ_TIMEOUT_ENV, float)
        if read is not None:
            settings = replace(settings, read_timeout_s=read or None)
        cap = _env_number(MAX_RESPONSE_BYTES_ENV, int)
        if cap is not None:
            settings = replace(settings, max_response_bytes=cap)
        return settings


def _env_number(name: str, kind: type[float] | type[int]) -> Any:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: expected a {kind.__name__}") from None
    if value < 0:
        raise ValueError(f"{name}={raw!r}: expected a number >= 0")
    return value


@dataclass(frozen=True, slots=True)
class HTTPReply:
    """An answer: status, headers (names in lower case, repeated ones joined by ", "), body
    (decompressed)."""

    status: int
    headers: Mapping[str, str]
    body: bytes


class TransportError(Exception):
    """No usable answer: the endpoint could not be reached, closed the connection, timed out
    in a phase, answered too much, or spoke something that is not valid HTTP/1.1."""


class TransportTimeoutError(TransportError):
    """A phase timeout (connect or read) of ``HTTPSettings`` fired."""


class ResponseTooLargeError(TransportError):
    """The answer's body (after decompression) is larger than ``max_response_bytes``."""


class Transport(Protocol):
    """How a model sends its requests (one per endpoint, key and event loop)."""

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply: ...

    async def aclose(self) -> None: ...


TRANSPORT_MODULES: tuple[str, ...] = ("aiohttp",)
"""What a transport imports when it opens (``aiohttp`` brings ``yarl`` and its helpers)."""

_transport_warmer: ImportWarmer | None = None


def warm_transport_imports() -> None:
    """Import ``aiohttp`` in a background thread, once per process (nothing when it is
    imported already). About half of its import builds TLS contexts with the GIL released, so
    on a machine with two cores that part overlaps a run's start-up instead of delaying its
    first request."""
    global _transport_warmer
    if _transport_warmer is None:
        _transport_warmer = ImportWarmer(TRANSPORT_MODULES)
        _transport_warmer.start()


def make_transport(base_url: str, settings: HTTPSettings | None = None) -> Transport:
    """A transport for ``base_url`` (no trailing slash), with ``settings`` or those of the
    environment (``HTTPSettings.from_env()``)."""
    return AiohttpTransport(base_url, settings or HTTPSettings.from_env())


# RFC 9110 token characters; a value may hold anything but CR, LF and NUL (and must encode
# to Latin-1, the only charset a header can carry)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\r\n\x00]")


def check_header(name: str, value: str) -> None:
    """Refuse a header that would break (or inject into) the request head; the message
    names the header, never its value (it may be a key)."""
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        raise ValueError(f"header name {name!r} is not a valid HTTP token")
    if not isinstance(value, str) or _BAD_VALUE.search(value):
        raise ValueError(f"the {name!r} header cannot contain line breaks or NUL")
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"the {name!r} header has characters outside Latin-1") from None


def _check_path(path: str) -> None:
    if not path.startswith("/") or any(c <= " " or c == "\x7f" for c in path):
        raise ValueError(f"request path {path[:80]!r}: must start with '/' and hold no spaces")


class AiohttpTransport:
    """``post`` through one ``aiohttp.ClientSession`` (see the module docstring)."""

    def __init__(self, base_url: str, settings: HTTPSettings | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL with a host, got {base_url!r}")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError(  # not the URL itself: it may hold a password
                f"the base_url of {parts.hostname}: a query, fragment, user name or password "
                "in it is not supported (requests go to base_url + '/chat/completions'; give "
                "a key as the API key)"
            )
        self.base_url = base_url.rstrip("/")
        self.settings = settings or HTTPSettings()
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closer: AsyncGenerator[None, None] | None = None
        self._urls: dict[str, Any] = {}
        self._checked: set[tuple[str, str]] = set()
        self._proxy: Any = None
        self._proxy_auth: Any = None
        self._aiohttp: Any = None
        self._url_class: Any = None

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        checked = self._checked
        for item in headers.items():
            if item not in checked:  # a model sends the same few headers every time
                check_header(*item)
                if len(checked) < 256:
                    checked.add(item)
        session = self._session
        if session is None or self._loop is not asyncio.get_running_loop():
            if session is not None and self._loop is not None and not self._loop.is_closed():
                raise RuntimeError(
                    f"a transport to {self.base_url} is used from another event loop than its "
                    "first while that loop still runs"
                )
            session = await self._open()  # first use, or the first use in a new loop
        url = self._urls.get(path)
        if url is None:
            _check_path(path)
            url = self._urls[path] = self._url_class(self.base_url + path)
        aiohttp = self._aiohttp
        try:
            async with session.post(
                url,
                data=body,
                headers=headers,
                allow_redirects=False,
                proxy=self._proxy,
                proxy_auth=self._proxy_auth,
            ) as response:
                status = response.status
                reply_headers = _headers(response.headers)
                content = await self._read(response, url)
        except aiohttp.ServerTimeoutError as exc:
            raise TransportTimeoutError(self._timeout_message(exc)) from exc
        except aiohttp.ClientResponseError as exc:  # the parser refused the answer
            detail = " ".join(str(exc.message).split())
            raise TransportError(f"{self.base_url}: not a valid HTTP/1.1 answer: {detail}") from exc
        except aiohttp.ClientError as exc:
            raise TransportError(f"{self.base_url}: {_describe(exc)}") from exc
        return HTTPReply(status, reply_headers, content)

    async def _read(self, response: aiohttp.ClientResponse, url: Any) -> bytes:
        """The body, decompressed, within ``max_response_bytes`` (else the connection is
        closed and ``ResponseTooLargeError`` names the cap)."""
        cap = self.settings.max_response_bytes
        declared = response.content_length
        if declared is not None and declared > cap:
            response.close()
            raise ResponseTooLargeError(
                f"{url}: the answer declares {declared} bytes, over the {cap}-byte cap "
                f"(HTTPSettings.max_response_bytes, {MAX_RESPONSE_BYTES_ENV})"
            )
        chunks: list[bytes] = []
        size = 0
        stream = response.content
        while chunk := await stream.readany():
            size += len(chunk)
            if size > cap:
                response.close()
                raise ResponseTooLargeError(
                    f"{url}: the answer is over the {cap}-byte cap after decompression "
                    f"(HTTPSettings.max_response_bytes, {MAX_RESPONSE_BYTES_ENV})"
                )
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _timeout_message(self, exc: BaseException) -> str:
        settings = self.settings
        if isinstance(exc, self._aiohttp.ConnectionTimeoutError):
            return (
                f"{self.base_url}: no connection within {settings.connect_timeout_s:g} s "
                f"(connect timeout, {CONNECT_TIMEOUT_ENV})"
            )
        return (
            f"{self.base_url}: no data for {settings.read_timeout_s:g} s "
            f"(read timeout, {READ_TIMEOUT_ENV})"
        )

    async def _open(self) -> aiohttp.ClientSession:
        """The session, made on the first request in the running loop (again after
        ``aclose``)."""
        import aiohttp
        from aiohttp.helpers import get_env_proxy_for_url
        from yarl import URL

        self._aiohttp = aiohttp
        self._url_class = URL
        self._loop = asyncio.get_running_loop()
        try:
            self._proxy, self._proxy_auth = get_env_proxy_for_url(URL(self.base_url))
        except LookupError:  # no proxy applies (none set, or NO_PROXY)
            self._proxy = self._proxy_auth = None
        settings = self.settings
        connector = _SingleAnswerConnector(
            ssl=_ssl_context() if self.base_url.lower().startswith("https:") else True,
            limit=settings.max_connections,
            limit_per_host=0,
            keepalive_timeout=settings.keepalive_s,
        )
        session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=None,
                connect=None,
                sock_connect=settings.connect_timeout_s,
                sock_read=settings.read_timeout_s,
            ),
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,  # looked up once above (see the module docstring)
            raise_for_status=False,
            auto_decompress=True,
        )
        self._session = session
        closer = self._close_when_the_loop_ends(session)
        await closer.__anext__()
        self._closer = closer
        return session

    async def _close_when_the_loop_ends(
        self, session: aiohttp.ClientSession
    ) -> AsyncGenerator[None, None]:
        """Suspended until ``aclose()`` or until ``asyncio.run`` shuts down the loop's async
        generators (before closing the loop): either way the session closes inside its loop,
        and a later loop opens a new one."""
        try:
            yield
        finally:
            if self._session is session:
                self._session = self._closer = None
            await session.close()

    async def aclose(self) -> None:
        session, self._session = self._session, None
        closer, self._closer = self._closer, None
        if closer is not None:
            await closer.aclose()  # closes the session
        elif session is not None:
            await session.close()


def _single_answer_connector_class() -> Any:
    import aiohttp

    class SingleAnswerConnector(aiohttp.TCPConnector):
        """A ``TCPConnector`` that never hands out a pooled connection holding bytes it has
        not been asked for (data that arrived while it was idle: the tail of a body longer
        than its ``Content-Length``, a 204's body, an unsolicited answer). ``aiohttp`` closes
        such a connection when it is released, but bytes can arrive after that."""

        async def _get(self, key: Any, traces: Any) -> Any:
            while True:
                connection = await super()._get(key, traces)
                if connection is None:
                    return None
                protocol = connection.protocol
                if protocol is None or not protocol.should_close:
                    return connection
                connection.close()

    return SingleAnswerConnector


class _LazyConnector:
    """``_SingleAnswerConnector(...)`` builds the class on first use (``aiohttp`` is
    imported then, not when this module is)."""

    _class: Any = None

    def __call__(self, **options: Any) -> Any:
        if self._class is None:
            self._class = _single_answer_connector_class()
        return self._class(**options)


_SingleAnswerConnector = _LazyConnector()


_SSL_CONTEXTS: dict[tuple[str, str], ssl.SSLContext] = {}


def _ssl_context() -> ssl.SSLContext:
    """The default TLS context for the trust store the environment names now."""
    key = (os.environ.get("SSL_CERT_FILE", ""), os.environ.get("SSL_CERT_DIR", ""))
    context = _SSL_CONTEXTS.get(key)
    if context is None:
        context = _SSL_CONTEXTS[key] = ssl.create_default_context()
    return context


def _headers(raw: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in raw.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
