"""A mock OpenAI-compatible chat-completions server on loopback, for tests and benchmarks.

Why a real server: the model layer's promises (request shape, structured-output fallback,
retries honouring Retry-After, the adaptive limit, timeouts, the cache saving HTTP calls)
are about HTTP behaviour, so they are tested through the real HTTP client against a real
socket rather than a patched client.

The server is stdlib only: an asyncio HTTP/1.1 server (keep-alive, Content-Length and
chunked request bodies) on its own event loop in a daemon thread, so it serves any number of
concurrent requests with simulated latency while the code under test runs its own loop. It
serves ``POST /v1/chat/completions``, ``POST /v1/completions`` and ``GET /v1/models``.

Behaviour, all adjustable while it runs:

- ``latency_s``: seconds before each answer (``asyncio.sleep``, so concurrent requests
  overlap like on a real server);
- answers: ``enqueue(...)`` queues scripted replies (text, a dict sent as JSON, or a
  ``MockReply`` with any status, headers, delay); when the queue is empty ``responder(body)``
  decides, else the answer is an example instance of the request's JSON schema (from
  ``response_format``, or from the prompt after the words "JSON Schema"; see
  ``example_from_schema``) or ``"ok"``;
- faults: ``rate_limit_rate`` (a seeded fraction of requests get 429 with ``Retry-After:
  retry_after``), ``max_concurrency`` (requests beyond it get 429 at once, like an
  overloaded endpoint), ``reject_response_format`` (400 for any ``response_format``),
  ``reject_strict`` (400 for ``json_schema`` with ``strict: true``);
- samples: chat requests with ``n`` get ``n`` choices (a ``MockReply.samples`` list gives
  their texts, else the reply is repeated); ``n_support="ignore"`` answers one choice
  whatever ``n`` says, ``n_support="reject"`` refuses ``n`` > 1 with HTTP 400 (param ``n``);
- records: ``requests`` (every request: method, path, headers, JSON body, time),
  ``in_flight``/``max_in_flight``, and counts by status;
- the wire, for HTTP clients' tests: ``chunked=True`` answers with ``Transfer-Encoding:
  chunked``, ``gzip=True`` compresses answers for requests that accept gzip,
  ``keep_alive=False`` closes the connection after each answer (``Connection: close``), and
  ``drop_connections()`` closes every open connection at once, as a server's idle timeout
  does; ``ssl_context`` (a server-side ``ssl.SSLContext``) serves HTTPS (``base_url`` then
  starts with ``https``);
- keys: ``api_key`` set, a request must carry it as ``Authorization: Bearer KEY`` (OpenAI
  and compatible servers) or as ``api-key: KEY`` (Azure OpenAI), else HTTP 401; the query of
  a request (Azure's ``api-version``) is recorded as ``RecordedRequest.query``; any path
  ending in ``/chat/completions`` is served, so Azure's
  ``/openai/deployments/NAME/chat/completions`` is too.

Usage: ``prompt_tokens``/``completion_tokens`` are whitespace word counts.

``POST /v1/completions`` (the legacy text endpoint, lm-eval's ``local-completions``) answers
deterministically, so loglikelihoods can be checked by hand. Its tokenizer splits text into
runs of whitespace followed by non-whitespace (``mock_tokens``: ``"The capital is"`` ->
``["The", " capital", " is"]``); a token's logprob is -0.25 per character (``" Paris"``:
-1.5); the top token at each position is the token in lower case, so a token is greedy
exactly when it has no capital letters. ``echo=True`` returns the prompt's tokens with
``logprobs`` (``tokens``, ``token_logprobs`` with ``None`` for the first, ``top_logprobs``,
``text_offset``) followed by ``max_tokens`` worth of generated text (default ``" ok"``, or a
queued reply; none for ``max_tokens=0``). ``prompt`` may be a list (one choice per prompt).
``completions=False`` makes the route 404 and ``completion_logprobs=False`` answers without
``logprobs`` (an endpoint that cannot score).

For throughput benchmarks run it in another process, so it does not share the GIL with the
client under test: ``MockServerProcess(latency_s=0.1, rate_limit_rate=0.1)`` (or
``python -m assay.testing.openai_server --latency 0.1 --rate-limit 0.1``, which prints
``READY <base_url>`` and serves until its stdin closes); counters at ``GET /mock/stats``.
It binds loopback addresses only.

    with MockOpenAIServer(latency_s=0.1) as server:
        model = OpenAICompatibleModel("mock", base_url=server.base_url, provider="mock")
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip as gzip_module
import itertools
import json
import random
import re
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.models.http import is_loopback_host

JSON = dict[str, Any]


@dataclass
class MockReply:
    """One scripted answer. ``content=None`` answers with an example of the schema."""

    content: str | JSON | list[Any] | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    delay_s: float | None = None
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    samples: list[str] | None = None
    """Texts of the choices when a chat request asks for ``n`` > 1 (default: ``content``
    repeated)."""


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: JSON | None
    received_at: float
    query: str = ""
    """The request target after ``?`` (Azure's ``api-version=...``), undecoded."""


Responder = Callable[[JSON], "MockReply | str | JSON"]


def example_from_schema(schema: JSON, root: JSON | None = None) -> Any:
    """A small instance of ``schema`` (every property present; one item per array)."""
    root = root if root is not None else schema
    if "$ref" in schema:
        ref = str(schema["$ref"])
        target: Any = root
        for part in ref.removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return example_from_schema(target if isinstance(target, dict) else {}, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("examples"):
        return schema["examples"][0]
    for key in ("anyOf", "oneOf"):
        options = [o for o in schema.get(key, []) if o.get("type") != "null"]
        if options:
            return example_from_schema(options[0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {
            name: example_from_schema(sub, root)
            for name, sub in schema.get("properties", {}).items()
        }
    if kind == "array":
        items = schema.get("items")
        return [example_from_schema(items, root)] if isinstance(items, dict) else []
    if kind == "string":
        return "example"
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    return None


def _schema_of(body: JSON) -> JSON | None:
    """The schema the request asks for: ``response_format``, else one given in the prompt
    after the words "JSON Schema" (as a model following instructions would find it)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        inner = fmt.get("json_schema", {})
        schema = inner.get("schema") if isinstance(inner, dict) else None
        return schema if isinstance(schema, dict) else None
    for message in reversed(body.get("messages") or []):
        text = message.get("content") if isinstance(message, dict) else None
        if not isinstance(text, str) or "JSON Schema" not in text:
            continue
        start = text.find("{", text.rfind("JSON Schema"))
        if start < 0:
            continue
        try:
            found, _ = json.JSONDecoder().raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(found, dict):
            return found
    return None


def _words(text: str) -> int:
    return len(text.split())


_TOKEN = re.compile(r"\s*\S+|\s+")
MOCK_LOGPROB_PER_CHAR = -0.25


def mock_tokens(text: str) -> list[str]:
    """The mock completions tokenizer: whitespace runs stay with the word after them."""
    return _TOKEN.findall(text)


def mock_logprob(token: str) -> float:
    """The mock model's logprob of ``token`` at any position: -0.25 per character."""
    return MOCK_LOGPROB_PER_CHAR * len(token)


def mock_top_token(token: str) -> str:
    """The mock model's greedy token where ``token`` stands: ``token`` in lower case."""
    return token.lower()


class MockOpenAIServer:
    """See the module docstring. Start with ``start()`` or ``with``; ``base_url`` ends in /v1."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        responder: Responder | None = None,
        rate_limit_rate: float = 0.0,
        retry_after: str | None = "1",
        max_concurrency: int | None = None,
        reject_response_format: bool = False,
        reject_strict: bool = False,
        record_requests: bool = True,
        seed: int = 0,
        completions: bool = True,
        completion_logprobs: bool = True,
        n_support: Literal["yes", "ignore", "reject"] = "yes",
        chunked: bool = False,
        gzip: bool = False,
        keep_alive: bool = True,
        ssl_context: ssl.SSLContext | None = None,
        api_key: str | None = None,
    ) -> None:
        if not is_loopback_host(host):
            raise ValueError(f"the mock server binds loopback addresses only, not {host!r}")
        self.host = host
        self.port = port
        self.latency_s = latency_s
        self.responder = responder
        self.rate_limit_rate = rate_limit_rate
        self.retry_after = retry_after
        self.max_concurrency = max_concurrency
        self.reject_response_format = reject_response_format
        self.reject_strict = reject_strict
        self.record_requests = record_requests
        self.completions = completions
        self.completion_logprobs = completion_logprobs
        self.n_support = n_support
        self.chunked = chunked
        self.gzip = gzip
        self.keep_alive = keep_alive
        self.ssl_context = ssl_context
        self.api_key = api_key
        self._writers: set[asyncio.StreamWriter] = set()
        self.connections = 0
        """Connections accepted so far."""
        self._rng = random.Random(seed)
        self._script: deque[MockReply] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.statuses: Counter[int] = Counter()
        self.request_count = 0
        self.first_request_at: float | None = None
        """``time.time()`` of the first counted request (``None`` before any)."""
        self.last_request_at: float | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}/v1"

    def start(self) -> MockOpenAIServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="mock-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("mock OpenAI server did not start within 10 s")
        if self._error is not None:
            raise RuntimeError(f"mock OpenAI server failed to start: {self._error}")
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> MockOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(
                    self._handle, self.host, self.port, backlog=1024, ssl=self.ssl_context
                )
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # surfaced by start()
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.close()

    # ------------------------------------------------------------------ control
    def enqueue(self, *replies: MockReply | str | JSON) -> None:
        """Queue answers for the next chat requests, in order."""
        with self._lock:
            for reply in replies:
                self._script.append(reply if isinstance(reply, MockReply) else MockReply(reply))

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def completion_requests(self) -> list[RecordedRequest]:
        """Requests to the legacy ``/completions`` route."""
        return [
            r
            for r in self.requests
            if r.path.endswith("/completions") and not r.path.endswith("/chat/completions")
        ]

    def stats(self) -> JSON:
        """Counters (also served at ``GET /mock/stats`` for a server in another process)."""
        with self._lock:
            return {
                "requests": self.request_count,
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "first_request_at": self.first_request_at,
                "last_request_at": self.last_request_at,
            }

    @property
    def open_connections(self) -> int:
        """Client connections open now."""
        return len(self._writers)

    def drop_connections(self) -> int:
        """Close every open client connection (as an idle timeout would); returns how many.
        Waits until the server's loop has closed them."""
        loop = self._loop
        if loop is None:
            return 0

        async def close_all() -> int:
            writers = list(self._writers)
            for writer in writers:
                writer.close()
            return len(writers)

        return asyncio.run_coroutine_threadsafe(close_all(), loop).result(10)

    def reset(self) -> None:
        """Forget recorded requests, counters and queued replies."""
        with self._lock:
            self._requests.clear()
            self.request_count = 0
            self.first_request_at = self.last_request_at = None
            self._script.clear()
            self.statuses.clear()
            self.max_in_flight = self.in_flight

    # ------------------------------------------------------------------ HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        try:
            while True:
                try:  # the whole head at once: the server's CPU per request is a benchmark's
                    request_head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:  # the client closed the connection
                    break
                line, *lines = request_head.decode("latin-1").split("\r\n")
                method, target, _version = line.split(" ", 2)
                headers: dict[str, str] = {}
                for raw in lines:
                    if raw:
                        name, _, value = raw.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await self._read_body(reader, headers)
                status, extra, payload = await self._dispatch(method, target, headers, body)
                data = json.dumps(payload).encode()
                head = [
                    f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
                    "Content-Type: application/json",
                    *(f"{k}: {v}" for k, v in extra.items()),
                ]
                if self.gzip and "gzip" in headers.get("accept-encoding", "").lower():
                    data = gzip_module.compress(data)
                    head.append("Content-Encoding: gzip")
                if self.chunked:  # two chunks and an empty trailer section
                    head.append("Transfer-Encoding: chunked")
                    half = len(data) // 2
                    data = (
                        b"".join(
                            f"{len(part):x}\r\n".encode() + part + b"\r\n"
                            for part in (data[:half], data[half:])
                            if part
                        )
                        + b"0\r\n\r\n"
                    )
                else:
                    head.append(f"Content-Length: {len(data)}")
                closing = not self.keep_alive or headers.get("connection", "").lower() == "close"
                if not self.keep_alive:
                    head.append("Connection: close")
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
                await writer.drain()
                if closing:
                    break
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
        ):
            pass
        except asyncio.CancelledError:  # server stopping: end quietly
            pass
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    await reader.readline()
                    return b"".join(chunks)
                chunks.append(await reader.readexactly(size))
                await reader.readline()
        length = int(headers.get("content-length", "0") or 0)
        return await reader.readexactly(length) if length else b""

    async def _dispatch(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], JSON]:
        path, _, query = target.partition("?")
        if method == "GET" and path.rstrip("/") == "/mock/stats":  # not counted itself
            return 200, {}, self.stats()
        body: JSON | None = None
        if raw:
            try:
                parsed = json.loads(raw)
                body = parsed if isinstance(parsed, dict) else None
            except json.JSONDecodeError:
                return self._count(400, {}, _error("request body is not JSON"))
        with self._lock:
            self.request_count += 1
            self.last_request_at = time.time()
            if self.first_request_at is None:
                self.first_request_at = self.last_request_at
            if self.record_requests:
                self._requests.append(
                    RecordedRequest(method, path, headers, body, time.time(), query)
                )
        if self.api_key is not None and self.api_key not in (
            headers.get("api-key"),
            headers.get("authorization", "").removeprefix("Bearer "),
        ):
            return self._count(401, {}, _error("invalid API key", "invalid_api_key"))
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return self._count(200, {}, {"object": "list", "data": [{"id": "mock"}]})
        route = path.rstrip("/")
        chat = route.endswith("/chat/completions")
        text = not chat and route.endswith("/completions") and self.completions
        if method != "POST" or not (chat or text):
            return self._count(404, {}, _error(f"no route {method} {path}", "not_found"))
        if body is None:
            return self._count(400, {}, _error("a JSON body is required"))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await (self._chat(body) if chat else self._text_completion(body))
        finally:
            self.in_flight -= 1

    def _count(
        self, status: int, headers: dict[str, str], payload: JSON
    ) -> tuple[int, dict[str, str], JSON]:
        with self._lock:
            self.statuses[status] += 1
        return status, headers, payload

    def _throttle_headers(self) -> dict[str, str]:
        return {"Retry-After": self.retry_after} if self.retry_after is not None else {}

    async def _chat(self, body: JSON) -> tuple[int, dict[str, str], JSON]:
        if body.get("stream"):
            return self._count(400, {}, _error("streaming is not supported by the mock server"))
        if self.max_concurrency is not None and self.in_flight > self.max_concurrency:
            return self._count(
                429, self._throttle_headers(), _error("too many concurrent requests", "rate_limit")
            )
        fmt = body.get("response_format")
        if self.reject_response_format and fmt is not None:
            return self._count(
                400,
                {},
                _error(
                    f"response_format of type '{fmt.get('type')}' is not supported by this model",
                    param="response_format",
                ),
            )
        if self.n_support == "reject" and int(body.get("n") or 1) > 1:
            return self._count(400, {}, _error("only n=1 is supported", param="n"))
        if (
            self.reject_strict
            and isinstance(fmt, dict)
            and fmt.get("type") == "json_schema"
            and fmt.get("json_schema", {}).get("strict")
        ):
            return self._count(
                400, {}, _error("json_schema strict mode is not supported", param="response_format")
            )
        with self._lock:
            scripted = self._script.popleft() if self._script else None
            throttled = scripted is None and self._rng.random() < self.rate_limit_rate
        if throttled:
            return self._count(429, self._throttle_headers(), _error("rate limited", "rate_limit"))
        reply = scripted if scripted is not None else self._reply_for(body)
        delay = self.latency_s if reply.delay_s is None else reply.delay_s
        if delay > 0:
            await asyncio.sleep(delay)
        if reply.status != 200:
            message = reply.error or f"injected HTTP {reply.status}"
            return self._count(reply.status, dict(reply.headers), _error(message))
        return self._count(200, dict(reply.headers), self._completion(body, reply))

    def _reply_for(self, body: JSON) -> MockReply:
        if self.responder is not None:
            answer = self.responder(body)
            return answer if isinstance(answer, MockReply) else MockReply(answer)
        return MockReply()

    def _completion(self, body: JSON, reply: MockReply) -> JSON:
        content = reply.content
        if content is None:
            schema = _schema_of(body)
            content = example_from_schema(schema) if schema is not None else "ok"
        text = content if isinstance(content, str) else json.dumps(content)
        n = int(body.get("n") or 1) if self.n_support == "yes" else 1
        texts = list(reply.samples[:n]) if reply.samples else [text] * n
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        usage = reply.usage or {
            "prompt_tokens": _words(prompt),
            "completion_tokens": sum(_words(t) for t in texts),
        }
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        return {
            "id": f"chatcmpl-mock-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model", "mock")),
            "choices": [
                {
                    "index": index,
                    "message": {"role": "assistant", "content": sample},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
                for index, sample in enumerate(texts)
            ],
            "usage": usage,
        }

    async def _text_completion(self, body: JSON) -> tuple[int, dict[str, str], JSON]:
        """The legacy ``/completions`` route (see the module docstring for its rules)."""
        raw_prompt = body.get("prompt")
        prompts = [raw_prompt] if isinstance(raw_prompt, str) else raw_prompt
        if not isinstance(prompts, list) or not all(isinstance(p, str) for p in prompts):
            return self._count(
                400, {}, _error("prompt must be a string or a list of strings", param="prompt")
            )
        with self._lock:
            reply = self._script.popleft() if self._script else MockReply()
        delay = self.latency_s if reply.delay_s is None else reply.delay_s
        if delay > 0:
            await asyncio.sleep(delay)
        if reply.status != 200:
            message = reply.error or f"injected HTTP {reply.status}"
            return self._count(reply.status, dict(reply.headers), _error(message))
        max_tokens = body.get("max_tokens", 16)
        content = reply.content if reply.content is not None else " ok"
        generated = "" if max_tokens == 0 else str(content)
        echo = bool(body.get("echo"))
        wants_logprobs = body.get("logprobs") is not None and self.completion_logprobs
        choices: list[JSON] = []
        prompt_tokens = completion_tokens = 0
        for index, prompt in enumerate(prompts):
            text = (prompt if echo else "") + generated
            prompt_tokens += len(mock_tokens(prompt))
            completion_tokens += len(mock_tokens(generated))
            choices.append(
                {
                    "index": index,
                    "text": text,
                    "logprobs": _mock_logprobs(text) if wants_logprobs else None,
                    "finish_reason": "length",
                }
            )
        usage = reply.usage or {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        }
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        return self._count(
            200,
            dict(reply.headers),
            {
                "id": f"cmpl-mock-{next(self._ids)}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": str(body.get("model", "mock")),
                "choices": choices,
                "usage": usage,
            },
        )


def _mock_logprobs(text: str) -> JSON:
    """Legacy ``logprobs`` of ``text`` under the mock model (first token: no logprob)."""
    tokens = mock_tokens(text)
    offsets: list[int] = []
    position = 0
    for token in tokens:
        offsets.append(position)
        position += len(token)
    return {
        "tokens": tokens,
        "token_logprobs": [None if i == 0 else mock_logprob(t) for i, t in enumerate(tokens)],
        "top_logprobs": [
            None if i == 0 else {mock_top_token(t): mock_logprob(mock_top_token(t))}
            for i, t in enumerate(tokens)
        ],
        "text_offset": offsets,
    }


def _error(message: str, kind: str = "invalid_request_error", param: str | None = None) -> JSON:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


# ---------------------------------------------------------------------- another process
class MockServerProcess:
    """The mock server in a child process (``python -m assay.testing.openai_server``).

    For throughput benchmarks: in-process, the server shares the GIL with the client under
    test and steals its CPU. Options are the server's (``latency_s``, ``rate_limit_rate``,
    ``retry_after``, ``max_concurrency``, ``reject_response_format``); counters come from
    ``stats()`` (``GET /mock/stats``). The child ends when ``stop()`` closes its stdin.
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        rate_limit_rate: float = 0.0,
        retry_after: str | None = "1",
        max_concurrency: int | None = None,
        reject_response_format: bool = False,
        seed: int = 0,
    ) -> None:
        args = [
            sys.executable,
            "-m",
            "assay.testing.openai_server",
            "--latency",
            str(latency_s),
            "--rate-limit",
            str(rate_limit_rate),
            "--seed",
            str(seed),
        ]
        if retry_after is not None:
            args += ["--retry-after", retry_after]
        if max_concurrency is not None:
            args += ["--max-concurrency", str(max_concurrency)]
        if reject_response_format:
            args.append("--reject-response-format")
        self._args = args
        self._process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def start(self) -> MockServerProcess:
        process = subprocess.Popen(
            self._args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._process = process
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("READY "):
            self.stop()
            raise RuntimeError(f"mock server process did not start (said {line!r})")
        self.base_url = line.removeprefix("READY ")
        return self

    def stats(self) -> JSON:
        root = self.base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/mock/stats", timeout=10) as response:
            data: JSON = json.loads(response.read())
        return data

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> MockServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Serve until stdin closes (or Ctrl-C); prints ``READY <base_url>`` when listening."""
    parser = argparse.ArgumentParser(description="Mock OpenAI-compatible server on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    parser.add_argument("--rate-limit", type=float, default=0.0, help="fraction of 429s")
    parser.add_argument("--retry-after", default="1", help="Retry-After of injected 429s")
    parser.add_argument("--max-concurrency", type=int, default=None)
    parser.add_argument("--reject-response-format", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    server = MockOpenAIServer(
        host=options.host,
        port=options.port,
        latency_s=options.latency,
        rate_limit_rate=options.rate_limit,
        retry_after=options.retry_after or None,
        max_concurrency=options.max_concurrency,
        reject_response_format=options.reject_response_format,
        record_requests=False,
        seed=options.seed,
    ).start()
    print(f"READY {server.base_url}", flush=True)
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
