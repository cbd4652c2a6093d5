"""The server's guards, as plain ASGI middleware: bearer token, upload size, CSRF, and a
catch-all that turns an unexpected exception into a generic 500 with an error id.

Why ASGI middleware rather than FastAPI dependencies: every route, including the HTML
pages and static files of the UI, must be covered without each router remembering to opt
in. The order (outermost first) is: errors → token → size limit → CSRF → the app.

- Token: when the server has one (required for a non-loopback bind), a request needs
  ``Authorization: Bearer <token>``, the ``assay_token`` cookie, or ``?token=<token>``
  (for browsers and ``EventSource``, which cannot set headers; the first such request sets
  the cookie). Anything else is 401.
- Size: a body above ``max_upload_bytes`` is 413 (announced by ``Content-Length`` or
  counted while streaming).
- CSRF: form posts to the HTML pages (anything outside ``/api``) must carry the hidden
  field ``csrf_token`` (or the ``X-CSRF-Token`` header) equal to the ``assay_csrf`` cookie;
  pages read the value with :func:`csrf_token`. JSON API writes pass when they carry the
  bearer token, echo the CSRF cookie in ``X-CSRF-Token``, or are not cross-site
  (``Origin``/``Sec-Fetch-Site``): a cross-site page can do none of these.
- Host: a request whose ``Host`` is not a name of this server (loopback names, the bound
  address, ``ASSAY_SERVER_ALLOWED_HOSTS``) is 421. Why: DNS rebinding. A page of
  ``evil.example`` whose name then resolves to 127.0.0.1 is "same-origin" with itself and
  would read and drive a token-less loopback server; its requests still say
  ``Host: evil.example``.
- Headers: every response (errors included) forbids framing (``X-Frame-Options: DENY``,
  CSP ``frame-ancestors 'none'``: no clickjacking) and MIME sniffing.
- Tokens: a weak token is refused when the app is built (:func:`token_weakness`), and the
  token of ``?token=`` never reaches uvicorn's access log (:func:`keep_tokens_out_of_logs`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import secrets
import uuid
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request

log = logging.getLogger("assay.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "assay_token"
CSRF_COOKIE = "assay_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

ALLOWED_HOSTS_ENV = "ASSAY_SERVER_ALLOWED_HOSTS"
BIND_HOST_ENV = "ASSAY_SERVER_HOST"
"""The address ``assay serve`` bound (it sets it for the app factory)."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
MIN_TOKEN_LENGTH = 20
MIN_TOKEN_DISTINCT = 10
MIN_TOKEN_BITS = 72
SECURITY_HEADERS = [
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
]


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed cookie header is treated as no cookies
        return {}
    return {key: morsel.value for key, morsel in jar.items()}


async def _send_json(
    send: Send, status: int, body: dict[str, Any], extra: list[Any] | None = None
) -> None:
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def _editing_headers(send: Send, edit: Callable[[list[Any]], list[Any]]) -> Send:
    """``send`` with the response's headers passed through ``edit`` on their way out."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = dict(message)
            message["headers"] = edit(list(message.get("headers", [])))
        await send(message)

    return wrapped


def _with_cookie(send: Send, cookie: str) -> Send:
    return _editing_headers(send, lambda headers: [*headers, (b"set-cookie", cookie.encode())])


def _cookie(name: str, value: str, *, http_only: bool) -> str:
    flags = "; HttpOnly" if http_only else ""
    return f"{name}={value}; Path=/; SameSite=Strict{flags}"


class _Guard(ABC):
    """What the guards share: each wraps ``app`` and sees only the scopes of
    ``guarded_types`` (``guard``); any other scope (lifespan, and websockets for most)
    passes to ``app`` untouched, as ASGI middleware must let it."""

    guarded_types: tuple[str, ...] = ("http",)

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in self.guarded_types:
            await self.guard(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    @abstractmethod
    async def guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer, refuse or pass on one guarded request."""


class CatchErrors(_Guard):
    """A generic 500 (``{"detail": ..., "error_id": ...}``) instead of a traceback; the
    traceback goes to the server log under the same error id."""

    async def guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception:
            error_id = uuid.uuid4().hex[:12]
            log.exception("error %s on %s %s", error_id, scope.get("method"), scope.get("path"))
            if started:
                return  # the response is half sent: nothing more can be said to the client
            await _send_json(
                send,
                500,
                {"detail": "internal server error (see the server log)", "error_id": error_id},
            )


class RequireToken(_Guard):
    """401 unless the request proves it knows the server's token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        super().__init__(app)
        self.token = token

    def _matches(self, given: str | None) -> bool:
        return given is not None and secrets.compare_digest(given.encode(), self.token.encode())

    async def guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        auth = headers.get("authorization", "")
        bearer = auth[7:].strip() if auth.lower().startswith("bearer ") else None
        if self._matches(bearer) or self._matches(_cookies(headers).get(TOKEN_COOKIE)):
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if self._matches(next(iter(query.get("token", [])), None)):
            cookie = _cookie(TOKEN_COOKIE, self.token, http_only=True)
            await self.app(scope, receive, _with_cookie(send, cookie))
            return
        await _send_json(
            send,
            401,
            {"detail": "this server needs its token: 'Authorization: Bearer <token>' or ?token="},
            [(b"www-authenticate", b"Bearer")],
        )


class LimitBody(_Guard):
    """413 when a request body is larger than ``max_bytes``."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = {"detail": f"request body larger than the limit of {self.max_bytes} bytes"}
        length = _headers(scope).get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _send_json(send, 413, detail)
            return
        seen = 0
        too_big = False

        async def counting() -> Message:
            nonlocal seen, too_big
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    too_big = True
                    raise _BodyTooLarge
            return message

        started = False
        replaced = False

        async def guarded(message: Message) -> None:
            # the app may catch the error raised in ``receive`` and answer something else
            # (FastAPI answers 400 "error parsing the body"): the answer is 413 all the same
            nonlocal started, replaced
            if replaced:
                return
            if message["type"] == "http.response.start":
                if too_big:
                    replaced = True
                    await _send_json(send, 413, detail)
                    return
                started = True
            await send(message)

        try:
            await self.app(scope, counting, guarded)
        except Exception:
            if too_big and not started:
                if not replaced:
                    await _send_json(send, 413, detail)
                return
            raise


class _BodyTooLarge(Exception):
    """Raised inside the app's ``receive`` to stop reading an oversized body."""


def _same_site(headers: dict[str, str]) -> bool:
    """Whether a browser says the request comes from this site (no header: not a browser
    cross-site request, e.g. curl or the test client)."""
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    return urlsplit(origin).netloc == headers.get("host", "")


class CheckCsrf(_Guard):
    """Refuse cross-site writes: form posts need the CSRF token, API writes must be
    same-site or carry the bearer token. Every response sets the CSRF cookie when the
    request had none, and :func:`csrf_token` hands its value to the page templates."""

    async def guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        cookie_value = _cookies(headers).get(CSRF_COOKIE)
        token = cookie_value or secrets.token_urlsafe(24)
        scope.setdefault("state", {})["csrf_token"] = token
        if cookie_value is None:
            send = _with_cookie(send, _cookie(CSRF_COOKIE, token, http_only=False))
        if scope["method"] not in UNSAFE_METHODS:
            await self.app(scope, receive, send)
            return
        if scope["path"].startswith("/api/"):
            echoed = headers.get(CSRF_HEADER)
            token_echoed = (
                cookie_value is not None
                and echoed is not None
                and secrets.compare_digest(echoed.encode(), cookie_value.encode())
            )
            bearer = headers.get("authorization", "").lower().startswith("bearer ")
            if bearer or token_echoed or _same_site(headers):
                await self.app(scope, receive, send)
            else:
                await _send_json(send, 403, {"detail": "cross-site request refused (CSRF)"})
            return
        body = await _read_body(receive)
        replay = _replayer(body)
        given = headers.get(CSRF_HEADER) or await _form_token(scope, replay)
        if (
            cookie_value is None
            or given is None
            or not secrets.compare_digest(given.encode(), cookie_value.encode())
        ):
            await _send_json(
                send, 403, {"detail": "missing or wrong CSRF token; reload the page and retry"}
            )
            return
        await self.app(scope, _replayer(body), send)


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replayer(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _form_token(scope: Scope, receive: Receive) -> str | None:
    content_type = _headers(scope).get("content-type", "")
    if not content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        return None
    try:
        form = await Request(scope, receive).form()
    except Exception:  # an unparsable form has no token
        return None
    value = form.get(CSRF_FIELD)
    return value if isinstance(value, str) else None


def csrf_token(request: Request) -> str:
    """The CSRF token a page must put in its forms' hidden ``csrf_token`` field."""
    return str(request.state.csrf_token)


class WeakTokenError(ValueError):
    """The server's token is too easy to guess; the message says what a good one is."""


def _entropy_bits(token: str) -> float:
    """Length x the Shannon entropy of the token's own character frequencies (an upper
    bound of what a guesser faces; repeats and small alphabets lower it)."""
    counts = Counter(token)
    return -sum(n * math.log2(n / len(token)) for n in counts.values())


def token_weakness(token: str) -> str | None:
    """Why ``token`` is too weak to guard a server (``None``: it is fine). The floor: at
    least ``MIN_TOKEN_LENGTH`` characters, ``MIN_TOKEN_DISTINCT`` of them different (so
    ``aaaa...`` and ``1212...`` fail), ``MIN_TOKEN_BITS`` by the Shannon estimate of its
    characters, no spaces at its ends. ``secrets.token_urlsafe(24)`` has about 150."""
    problem = None
    if token != token.strip():
        problem = "it starts or ends with whitespace"
    elif len(token) < MIN_TOKEN_LENGTH:
        problem = f"it has {len(token)} characters, fewer than {MIN_TOKEN_LENGTH}"
    elif len(set(token)) < MIN_TOKEN_DISTINCT:
        distinct = len(set(token))
        problem = f"it uses {distinct} different characters, fewer than {MIN_TOKEN_DISTINCT}"
    elif (bits := _entropy_bits(token)) < MIN_TOKEN_BITS:
        problem = f"its characters carry about {bits:.0f} bits, fewer than {MIN_TOKEN_BITS}"
    if problem is None:
        return None
    return (
        f"the server token is too weak ({problem}); make one with "
        '`python -c "import secrets; print(secrets.token_urlsafe(24))"`'
    )


def check_token(token: str) -> None:
    """``WeakTokenError`` when :func:`token_weakness` finds a problem."""
    weakness = token_weakness(token)
    if weakness is not None:
        raise WeakTokenError(weakness)


_HOST = re.compile(r"^(?:\[([0-9a-f:.]+)\]|([a-z0-9_.\-]+))(?::[0-9]{1,5})?$")


def _host_name(value: str) -> str:
    """The name part of a ``Host`` header or an allow-list entry, lowercased, without port
    or trailing dot (``[::1]:8765`` → ``::1``); ``""`` for anything else (userinfo, spaces,
    a bad port), which then matches no allowed name."""
    found = _HOST.match(value.strip().lower())
    if found is None:
        return ""
    return (found.group(1) or found.group(2) or "").rstrip(".")


def _bound_name(bind: str) -> str:
    """The name of a bound address: an IPv6 literal comes without brackets (``fd00::5``)."""
    bind = bind.strip().lower()
    return bind.strip("[]") if bind.count(":") > 1 else _host_name(bind)


def allowed_hosts(bind: str | None = None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The ``Host`` names the server answers: loopback names, the bound address ``bind``
    (not a wildcard one, which has no name), and ``extra`` (``*``: any)."""
    names = {*LOOPBACK_NAMES, *(_host_name(e) if e.strip() != "*" else "*" for e in extra)}
    if bind and bind.strip() not in WILDCARD_BINDS:
        names.add(_bound_name(bind))
    names.discard("")
    return frozenset(names)


def allowed_hosts_from_env() -> tuple[str, ...]:
    """The entries of ``ASSAY_SERVER_ALLOWED_HOSTS`` (comma-separated, blanks ignored)."""
    raw = os.environ.get(ALLOWED_HOSTS_ENV, "")
    return tuple(part.strip() for part in raw.split(",") if part.strip())


class CheckHost(_Guard):
    """421 for a request whose ``Host`` is not one of this server's names (DNS rebinding)."""

    guarded_types = ("http", "websocket")

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        super().__init__(app)
        self.hosts = frozenset(hosts)

    async def guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = _headers(scope).get("host")
        if "*" in self.hosts or (given is not None and _host_name(given) in self.hosts):
            await self.app(scope, receive, send)
            return
        shown = "no Host header" if given is None else f"Host {given[:100]!r}"
        await _send_json(
            send,
            421,
            {
                "detail": f"{shown} is not a name of this server; the operator may add it "
                f"to {ALLOWED_HOSTS_ENV}"
            },
        )


class SecurityHeaders(_Guard):
    """``X-Frame-Options``, CSP ``frame-ancestors`` and ``X-Content-Type-Options`` on every
    response, whichever layer answered."""

    async def guard(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, _editing_headers(send, _with_security_headers))


def _with_security_headers(headers: list[Any]) -> list[Any]:
    """``SECURITY_HEADERS`` in place of any header of the same names the app set."""
    names = {name for name, _ in SECURITY_HEADERS}
    kept = [(k, v) for k, v in headers if k.lower() not in names]
    return [*kept, *SECURITY_HEADERS]


_TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"']*", re.IGNORECASE)


def redact_tokens(text: str) -> str:
    """``text`` with the value of every ``token=`` query parameter replaced."""
    return _TOKEN_IN_QUERY.sub(r"\1[redacted]", text)


class RedactTokens(logging.Filter):
    """A log filter that takes ``?token=`` values out of a record's message and arguments
    (uvicorn's access log line is ``'%s - "%s %s HTTP/%s" %d'`` over the full path)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_tokens(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_tokens(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


ACCESS_LOGGERS = ("uvicorn.access", "uvicorn.error", "assay.server")


def keep_tokens_out_of_logs() -> None:
    """Install :class:`RedactTokens` on uvicorn's and the server's loggers (once)."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())
