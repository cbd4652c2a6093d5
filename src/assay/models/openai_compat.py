"""A ``Model`` for any OpenAI-compatible chat-completions endpoint, over ``aiohttp``.

One client speaks to OpenAI, Azure OpenAI, OpenRouter, Together, Groq, vLLM, Ollama, LM
Studio, llama.cpp servers and the OpenAI-compatible endpoints of Anthropic and Google: they
differ only in base URL, key (and how it is sent), and how much of ``response_format`` they
honour.

Structured output (``structured_output=``), from most to least constrained:

- ``"strict"`` (default): ``response_format={"type": "json_schema", "json_schema": {"name",
  "schema", "strict": true}}`` with the schema rewritten for strict mode (see
  ``assay.models.structured``); a schema that cannot be made strict goes non-strict.
- ``"json_schema"``: the same, always ``"strict": false`` and the schema unchanged.
- ``"json_object"``: ``{"type": "json_object"}`` plus the schema in the prompt.
- ``"prompt"``: no ``response_format``; the schema goes into the last user message.

When the endpoint refuses the format (HTTP 400/422 whose error names the ``response_format``
param or mentions ``response_format``, ``response_schema``, ``json_schema``, ``structured``,
``strict`` or ``additionalProperties``) the call is repeated at once one
level down (strict → non-strict when the error is about ``strict``, otherwise → prompt), and
the level is remembered per endpoint (base URL + model) for the rest of the process, so the
refusal costs one extra request per endpoint, not one per call. Whatever the level, the
caller validates the answer (the judge step extracts and validates tolerantly).

HTTP: requests are the chat-completions JSON, posted by ``assay.models.http`` (one
``aiohttp`` transport per endpoint and event loop, proxies from the environment, per-phase
timeouts and a response-size cap from ``http=HTTPSettings(...)`` or ``ASSAY_HTTP_*``), and
answers are read as plain JSON. The ``openai`` SDK is not used: at hundreds of judge calls
per second its CPU per call (and its import, a large part of a second) would be most of the
client's cost.
Headers: ``Authorization: Bearer <key>`` (or ``api-key: <key>`` with ``auth="api-key"``, as
Azure OpenAI wants), ``Content-Type``/``Accept: application/json``,
``User-Agent: assay/<version>``, ``OpenAI-Organization``/``OpenAI-Project`` from
``OPENAI_ORG_ID``/``OPENAI_PROJECT_ID`` for the ``openai`` provider (as the SDK sent them),
then ``default_headers`` (the provider's own, e.g. OpenRouter's ``HTTP-Referer``), which win.
``query`` (Azure's ``api-version``) is added to every request's URL.

There are no retries here: retries, backoff and concurrency belong to ``ReliableModel``,
which sees every failure. Errors come out as ``ModelError`` with
``status_code``/``retryable``/``throttled``/``retry_after_s`` filled in: an HTTP error names
the status and the URL and carries the server's ``error.message``; an unreachable endpoint
or a broken connection is retryable; a call over its timeout (``ModelSettings.timeout_s``,
else ``timeout_s``), or over a phase timeout of the transport (connect, read), is a
``ModelTimeoutError``. An API key that is
required but missing raises ``MissingAPIKeyError`` naming the variable, at call time, so
building a model (or a scorer that uses it) never needs credentials.

Samples: ``ModelSettings.n`` is sent as ``n``; an endpoint that answers fewer choices (it
ignores ``n``) or refuses it (HTTP 400/422 about ``n``, remembered per endpoint) is called
once per missing sample, concurrently, with a set ``seed`` varied per sample.

Loglikelihood (``loglikelihood``/``loglikelihood_rolling``) goes through the legacy
``/completions`` endpoint with ``echo=True, logprobs=1, max_tokens=0`` as lm-eval's
``local-completions`` does with vLLM: the continuation's logprob is the sum over its echoed
tokens, greedy when each is its position's top token. A 404 on ``/completions``, an answer
without ``logprobs`` or a refused ``echo`` raises ``UnsupportedCapabilityError`` naming the
endpoint; a refused ``max_tokens=0`` is retried once with 1 (the extra token is ignored).
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import os
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlencode

from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    MissingAPIKeyError,
    ModelError,
    ModelResponse,
    ModelSettings,
    ModelTimeoutError,
    UnsupportedCapabilityError,
    merge_samples,
    split_context,
)
from assay.models.http import (
    HTTPSettings,
    Transport,
    TransportError,
    TransportTimeoutError,
    check_header,
    make_transport,
)
from assay.models.prices import DEFAULT_PRICES, PriceTable
from assay.models.reliability import is_throttle_status, parse_retry_after, retryable_status
from assay.models.structured import (
    prompt_contains_schema,
    schema_instruction,
    schema_name,
    strict_schema,
)
from assay.types import Usage

StructuredOutputMode = Literal["strict", "json_schema", "json_object", "prompt"]
MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]
AuthHeader = Literal["bearer", "api-key"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY_PLACEHOLDER = "assay-no-key"
"""Sent as the bearer token to endpoints that need no key (local servers ignore it)."""

USER_AGENT = "assay/0.1.0"

_MODE_ORDER: tuple[StructuredOutputMode, ...] = ("strict", "json_schema", "json_object", "prompt")
_REFUSAL_WORDS = (
    "response_format",
    "response_schema",
    "json_schema",
    "structured",
    "strict",
    "additionalproperties",
)

_ENDPOINT_MODES: dict[tuple[str, str], StructuredOutputMode] = {}
"""Structured-output level learned per (base URL, model) from refusals."""

_ENDPOINTS_WITHOUT_N: set[tuple[str, str]] = set()
"""(base URL, model) pairs that refused ``n`` > 1: their samples are drawn one call each."""

_ENDPOINTS_WITHOUT_ZERO_MAX_TOKENS: set[str] = set()
"""Base URLs whose completions endpoint refused ``max_tokens=0`` (echo scoring then asks
for one token and ignores it)."""

_STRICT_SCHEMAS: dict[int, tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]] = {}
"""``strict_schema`` results by schema object (the object, a copy to notice a change made to
it in place, the result): a judge sends the same few schema objects thousands of times, and
the conversion deep-copies the schema."""
_STRICT_SCHEMAS_MAX = 256


def reset_structured_output_memory() -> None:
    """Forget what was learned about endpoints (structured-output levels, ``n`` and
    ``max_tokens=0`` refusals): tests, or after an endpoint upgrade."""
    _ENDPOINT_MODES.clear()
    _ENDPOINTS_WITHOUT_N.clear()
    _ENDPOINTS_WITHOUT_ZERO_MAX_TOKENS.clear()


def normalize_base_url(url: str) -> str:
    return url.strip().rstrip("/")


def _lower(a: StructuredOutputMode, b: StructuredOutputMode) -> StructuredOutputMode:
    return a if _MODE_ORDER.index(a) >= _MODE_ORDER.index(b) else b


def _strict(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``strict_schema(schema)``, remembered per schema object while it stays equal to what
    it was (the result is only ever serialised, never changed)."""
    entry = _STRICT_SCHEMAS.get(id(schema))
    if entry is not None and entry[0] is schema and entry[1] == schema:
        return entry[2]
    if len(_STRICT_SCHEMAS) >= _STRICT_SCHEMAS_MAX:
        _STRICT_SCHEMAS.clear()
    converted = strict_schema(schema)
    _STRICT_SCHEMAS[id(schema)] = (schema, copy.deepcopy(schema), converted)
    return converted


class _StatusError(Exception):
    """An HTTP answer outside 2xx: its status, headers, and the server's error message and
    ``param`` (from ``{"error": {"message", "param"}}`` when the body has them)."""

    def __init__(
        self, status: int, headers: Mapping[str, str], detail: str, param: str | None, url: str
    ) -> None:
        super().__init__(f"HTTP {status} from {url}: {detail}")
        self.status = status
        self.headers = headers
        self.detail = detail
        self.param = param
        self.url = url


class OpenAICompatibleModel:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``api_key`` wins; else the first set variable of ``api_key_env``; else, when
    ``require_api_key`` is false, a placeholder. By default the ``openai`` provider without a
    ``base_url`` talks to api.openai.com and requires ``OPENAI_API_KEY``; with a ``base_url``
    (a local server) the key is optional. ``max_tokens_param`` names the request field for
    ``ModelSettings.max_output_tokens`` (OpenAI's reasoning models accept only
    ``max_completion_tokens``; many other servers know only ``max_tokens``). ``auth`` names
    how the key is sent (``"bearer"``: ``Authorization: Bearer``; ``"api-key"``: an
    ``api-key`` header, Azure OpenAI's); ``query`` is added to every request URL (Azure's
    ``api-version``); ``http`` sets the transport's timeouts and size cap (default: the
    environment's, ``HTTPSettings.from_env()``).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str = "openai",
        structured_output: StructuredOutputMode = "strict",
        api_key_env: str | Sequence[str] | None = None,
        require_api_key: bool | None = None,
        max_tokens_param: MaxTokensParam | None = None,
        timeout_s: float = 60.0,
        default_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        prices: PriceTable | None = DEFAULT_PRICES,
        auth: AuthHeader = "bearer",
        query: Mapping[str, str] | None = None,
        http: HTTPSettings | None = None,
    ) -> None:
        if not model:
            raise ValueError("OpenAICompatibleModel needs a model name")
        if structured_output not in _MODE_ORDER:
            raise ValueError(
                f"structured_output must be one of {', '.join(_MODE_ORDER)}, "
                f"got {structured_output!r}"
            )
        official = base_url is None and provider == "openai"
        if base_url is None:
            if provider != "openai":
                raise ValueError(f"provider {provider!r} needs a base_url")
            base_url = os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL
        if api_key_env is None:
            api_key_env = ("OPENAI_API_KEY",) if provider == "openai" else ()
        elif isinstance(api_key_env, str):
            api_key_env = (api_key_env,)
        for name, value in (default_headers or {}).items():
            _check_header(f"default_headers[{name!r}]", name, value)
        if auth not in ("bearer", "api-key"):
            raise ValueError(f"auth must be 'bearer' or 'api-key', got {auth!r}")
        self.auth: AuthHeader = auth
        self.query = dict(query or {})
        self._query_suffix = f"?{urlencode(self.query)}" if self.query else ""
        self.http = http
        self._model = model
        self._provider = provider
        self.base_url = normalize_base_url(base_url)
        self._api_key = api_key
        self.api_key_env: tuple[str, ...] = tuple(api_key_env)
        self.require_api_key = official if require_api_key is None else require_api_key
        self.configured_structured_output: StructuredOutputMode = structured_output
        self.max_tokens_param: MaxTokensParam = max_tokens_param or (
            "max_completion_tokens" if provider == "openai" else "max_tokens"
        )
        self.timeout_s = timeout_s
        self.default_headers = dict(default_headers or {})
        self.extra_body = dict(extra_body or {})
        self.prices = prices
        self._label = f"{provider}/{model}"
        self._transports: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[str, Transport, dict[str, str]]
        ] = weakref.WeakKeyDictionary()
        self._closing: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ identity
    @property
    def model_id(self) -> str:
        return self._model

    @property
    def provider(self) -> str | None:
        return self._provider

    @property
    def cache_identity(self) -> dict[str, Any]:
        """Request fields beyond messages/schema/settings that change answers (cache key)."""
        return {"extra_body": self.extra_body} if self.extra_body else {}

    @property
    def structured_output_mode(self) -> StructuredOutputMode:
        """The level used now: the configured one, or lower if the endpoint refused it."""
        learned = _ENDPOINT_MODES.get((self.base_url, self._model))
        configured = self.configured_structured_output
        return configured if learned is None else _lower(configured, learned)

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self._provider}/{self._model} at {self.base_url})"

    # ------------------------------------------------------------------ calling
    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        settings = settings or ModelSettings()
        started = time.perf_counter()
        wanted = settings.samples
        first = await self._generate_once(messages, schema, settings, wanted)
        if len(first.samples) >= wanted:
            return first
        # the endpoint ignored or refused ``n``: one call per missing sample (a set seed is
        # varied per sample, or every sample would be the same)
        missing = wanted - len(first.samples)
        rest = await asyncio.gather(
            *(
                self._generate_once(
                    messages,
                    schema,
                    settings.model_copy(update={"seed": settings.seed + i + 1})
                    if settings.seed is not None
                    else settings,
                    1,
                )
                for i in range(missing)
            )
        )
        return merge_samples([first, *rest], (time.perf_counter() - started) * 1000)

    async def _generate_once(
        self,
        messages: list[ChatMessage],
        schema: dict[str, Any] | None,
        settings: ModelSettings,
        n: int,
    ) -> ModelResponse:
        mode: StructuredOutputMode | None = None if schema is None else self.structured_output_mode
        timeout = settings.timeout_s or self.timeout_s
        started = time.perf_counter()
        while True:
            send_n = n if n > 1 and (self.base_url, self._model) not in _ENDPOINTS_WITHOUT_N else 1
            request = self._request(messages, schema, settings, mode, n=send_n)
            body = dict(request)
            body.update(body.pop("extra_body", None) or {})
            try:
                completion = await self._post("/chat/completions", body, timeout)
            except _StatusError as exc:
                if send_n > 1 and _refuses_n(exc):
                    _ENDPOINTS_WITHOUT_N.add((self.base_url, self._model))
                    continue
                downgraded = self._downgrade_after_refusal(exc, mode)
                if downgraded is None:
                    raise self._translate(exc) from exc
                mode = downgraded
                continue
            break
        return self._response(completion, (time.perf_counter() - started) * 1000)

    async def _post(self, path: str, body: dict[str, Any], timeout: float) -> Any:
        """POST ``body`` as JSON to ``base_url + path`` within ``timeout`` seconds; the
        answer's JSON. A non-2xx answer raises ``_StatusError``; no answer raises
        ``ModelError`` (retryable) or ``ModelTimeoutError``."""
        transport, headers = self._transport()
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        url = f"{self.base_url}{path}"
        try:
            async with asyncio.timeout(timeout):
                reply = await transport.post(path + self._query_suffix, data, headers)
        except TimeoutError as exc:
            raise ModelTimeoutError(f"{self._label}: request timed out ({self.base_url})") from exc
        except TransportTimeoutError as exc:
            raise ModelTimeoutError(f"{self._label}: {exc}") from exc
        except TransportError as exc:
            raise ModelError(f"{self._label}: cannot reach {exc}", retryable=True) from exc
        parsed: Any = None
        try:
            parsed = json.loads(reply.body) if reply.body else None
        except ValueError:
            if 200 <= reply.status < 300:
                raise ModelError(
                    f"{self._label}: {url} answered HTTP {reply.status} with a body that is "
                    f"not JSON: {_snippet(reply.body)}"
                ) from None
        if not 200 <= reply.status < 300:
            detail, param = _error_detail(parsed, reply.body, reply.status)
            if 300 <= reply.status < 400:
                where = reply.headers.get("location", "an address it did not give")
                detail = f"redirected to {where} (set the base URL to it): {detail}"
            raise _StatusError(reply.status, reply.headers, detail, param, url)
        return parsed

    # ------------------------------------------------------------------ loglikelihood
    LOGLIKELIHOOD_BATCH = 32
    """Prompts per ``/completions`` request when scoring."""

    async def loglikelihood(
        self,
        requests: Sequence[tuple[str, str]],
        *,
        settings: ModelSettings | None = None,
    ) -> list[Loglikelihood]:
        """Score continuations through the completions endpoint with ``echo=True``,
        ``logprobs=1``, ``max_tokens=0`` (lm-eval's ``local-completions``, vLLM-style).

        The prompt is context + continuation; the continuation's tokens are those that end
        after the context (by ``text_offset``); their logprobs are summed, and the result is
        greedy when each of them is its position's top token. The context must not be empty
        (an echoed prompt's first token has no logprob). An endpoint without this
        (HTTP 404 on ``/completions``, no ``logprobs`` in the answer, ``echo`` refused) raises
        ``UnsupportedCapabilityError`` naming the endpoint.
        """
        pairs = [split_context(context, continuation) for context, continuation in requests]
        for index, (context, _) in enumerate(pairs):
            if not context:
                raise ValueError(
                    f"loglikelihood request {index}: empty context: an echoed prompt's first "
                    "token has no logprob, so the continuation needs a context before it"
                )
        results: list[Loglikelihood] = []
        for start in range(0, len(pairs), self.LOGLIKELIHOOD_BATCH):
            batch = pairs[start : start + self.LOGLIKELIHOOD_BATCH]
            echoed = await self._echo_logprobs([c + x for c, x in batch], settings)
            for (context, continuation), tokens in zip(batch, echoed, strict=True):
                results.append(
                    _continuation_loglikelihood(tokens, len(context), len(context + continuation))
                )
        return results

    async def loglikelihood_rolling(
        self, text: str, *, settings: ModelSettings | None = None
    ) -> float:
        """The summed logprob of ``text``'s tokens through the same echo request. The first
        token is not counted: an echo endpoint gives it no logprob (lm-eval prepends an
        end-of-text token id, which a text API cannot send)."""
        if not text:
            return 0.0
        [tokens] = await self._echo_logprobs([text], settings)
        return math.fsum(t.logprob for t in tokens if t.logprob is not None and t.start < len(text))

    async def _echo_logprobs(
        self, prompts: list[str], settings: ModelSettings | None
    ) -> list[list[_EchoToken]]:
        url = f"{self.base_url}/completions"
        timeout = (settings.timeout_s if settings else None) or self.timeout_s
        while True:
            zero_ok = self.base_url not in _ENDPOINTS_WITHOUT_ZERO_MAX_TOKENS
            body: dict[str, Any] = {
                "model": self._model,
                "prompt": prompts,
                "echo": True,
                "logprobs": 1,
                "max_tokens": 0 if zero_ok else 1,
                "temperature": 0,
                **self.extra_body,
            }
            try:
                completion = await self._post("/completions", body, timeout)
            except _StatusError as exc:
                lowered = exc.detail.lower()
                if exc.status == 404:
                    raise UnsupportedCapabilityError(
                        f"{self._label}: {url} does not exist (HTTP 404): "
                        "loglikelihood needs an OpenAI-compatible completions endpoint "
                        "that echoes prompt logprobs (echo=True, logprobs=1), such as vLLM"
                    ) from exc
                if exc.status in (400, 422):
                    if zero_ok and "max_tokens" in lowered:
                        _ENDPOINTS_WITHOUT_ZERO_MAX_TOKENS.add(self.base_url)
                        continue
                    if "echo" in lowered or "logprobs" in lowered:
                        raise UnsupportedCapabilityError(
                            f"{self._label}: {url} refused echoed "
                            f"logprobs (HTTP {exc.status}: {exc.detail}); loglikelihood "
                            "needs echo=True with logprobs"
                        ) from exc
                raise self._translate(exc) from exc
            break
        by_index: dict[int, list[_EchoToken]] = {}
        for choice in _choices(completion):
            logprobs = choice.get("logprobs")
            if (
                not isinstance(logprobs, dict)
                or not logprobs.get("tokens")
                or logprobs.get("token_logprobs") is None
            ):
                raise UnsupportedCapabilityError(
                    f"{self._label}: {url} answered without echoed prompt "
                    "logprobs (logprobs.tokens/token_logprobs); loglikelihood needs a "
                    "completions endpoint that echoes prompt logprobs (echo=True, logprobs=1), "
                    "such as vLLM"
                )
            by_index[choice.get("index") or 0] = _echo_tokens(logprobs)
        if sorted(by_index) != list(range(len(prompts))):
            raise ModelError(
                f"{self._label}: {url} answered {len(by_index)} choices for {len(prompts)} prompts"
            )
        return [by_index[i] for i in range(len(prompts))]

    async def aclose(self) -> None:
        """Close this event loop's connections (those of other loops are only dropped:
        they belong to those loops)."""
        entry = self._transports.pop(asyncio.get_running_loop(), None)
        self._transports.clear()
        if entry is not None:
            await entry[1].aclose()

    def _api_key_value(self) -> str:
        if self._api_key:
            return self._api_key
        for name in self.api_key_env:
            value = os.environ.get(name)
            if value:
                return value
        if self.require_api_key:
            names = " or ".join(self.api_key_env) or "an API key variable"
            raise MissingAPIKeyError(
                f"{self._provider}/{self._model}: no API key: set {names} "
                "(or pass api_key= to the model)"
            )
        return NO_KEY_PLACEHOLDER

    def _transport(self) -> tuple[Transport, dict[str, str]]:
        """This event loop's transport (a connection pool must not cross loops) and the
        request headers; both made again when the API key changes."""
        key = self._api_key_value()
        loop = asyncio.get_running_loop()
        entry = self._transports.get(loop)
        if entry is None:
            # the pools of loops that have ended: dropped, so their sockets are closed (they
            # hold their loop, which would otherwise keep them, one pool per asyncio.run)
            for ended in [other for other in self._transports if other.is_closed()]:
                del self._transports[ended]
        if entry is None or entry[0] != key:
            if entry is not None:  # the key changed: close the old pool, do not leak it
                closing = loop.create_task(entry[1].aclose())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
            try:
                _check_header("the API key", self._auth_header_name, key)
            except ValueError as exc:
                raise ModelError(f"{self._label}: {exc}") from None
            entry = (key, make_transport(self.base_url, self.http), self._headers(key))
            self._transports[loop] = entry
        return entry[1], entry[2]

    @property
    def _auth_header_name(self) -> str:
        return "api-key" if self.auth == "api-key" else "Authorization"

    def _headers(self, key: str) -> dict[str, str]:
        headers = {
            self._auth_header_name: key if self.auth == "api-key" else f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "User-Agent": USER_AGENT,
        }
        if self._provider == "openai" and self.api_key_env:  # the environment's identity
            # goes only where its keys may go (none: ``assay.models.env_keys`` withheld them)
            for header, variable in (
                ("OpenAI-Organization", "OPENAI_ORG_ID"),
                ("OpenAI-Project", "OPENAI_PROJECT_ID"),
            ):
                value = os.environ.get(variable)
                if value:
                    _check_header(variable, header, value)
                    headers[header] = value
        overridden = {name.lower() for name in self.default_headers}
        headers = {k: v for k, v in headers.items() if k.lower() not in overridden}
        headers.update(self.default_headers)
        return headers

    def _request(
        self,
        messages: list[ChatMessage],
        schema: dict[str, Any] | None,
        settings: ModelSettings,
        mode: StructuredOutputMode | None,
        *,
        n: int = 1,
    ) -> dict[str, Any]:
        wire = [{"role": m.role, "content": m.content} for m in messages]
        request: dict[str, Any] = {"model": self._model, "messages": wire}
        if schema is not None and mode is not None:
            if mode in ("strict", "json_schema"):
                strict = _strict(schema) if mode == "strict" else None
                request["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": schema_name(schema),
                        "schema": strict if strict is not None else schema,
                        "strict": strict is not None,
                    },
                }
            else:
                if mode == "json_object":
                    request["response_format"] = {"type": "json_object"}
                request["messages"] = _with_schema_in_prompt(wire, schema)
        if settings.temperature is not None:
            request["temperature"] = settings.temperature
        if settings.top_p is not None:
            request["top_p"] = settings.top_p
        if settings.max_output_tokens is not None:
            request[self.max_tokens_param] = settings.max_output_tokens
        if settings.seed is not None:
            request["seed"] = settings.seed
        if settings.stop:
            request["stop"] = list(settings.stop)
        if n > 1:
            request["n"] = n
        if self.extra_body:
            request["extra_body"] = dict(self.extra_body)
        return request

    def _downgrade_after_refusal(
        self, exc: _StatusError, mode: StructuredOutputMode | None
    ) -> StructuredOutputMode | None:
        """The next structured-output level if ``exc`` is a refusal of the current one."""
        if mode is None or mode == "prompt" or exc.status not in (400, 422):
            return None
        detail = exc.detail.lower()
        about_format = exc.param == "response_format"
        if not about_format and not any(word in detail for word in _REFUSAL_WORDS):
            return None
        nxt: StructuredOutputMode = (
            "json_schema" if mode == "strict" and "strict" in detail else "prompt"
        )
        _ENDPOINT_MODES[(self.base_url, self._model)] = nxt
        return nxt

    def _translate(self, exc: _StatusError) -> ModelError:
        status = exc.status
        return ModelError(
            f"{self._label}: HTTP {status} from {exc.url}: {exc.detail}"[:1000],
            status_code=status,
            retryable=retryable_status(status),
            throttled=is_throttle_status(status),
            retry_after_s=parse_retry_after(exc.headers),
        )

    def _response(self, completion: Any, duration_ms: float) -> ModelResponse:
        label = self._label
        choices = _choices(completion)
        if not choices:
            raise ModelError(f"{label}: the response has no choices")
        choices.sort(key=lambda c: c.get("index") or 0)
        samples: list[str] = []
        for choice in choices:
            message = choice.get("message")
            text = _message_text(message.get("content") if isinstance(message, dict) else None)
            if text is None:
                refusal = message.get("refusal") if isinstance(message, dict) else None
                why = f" (refusal: {refusal})" if refusal else ""
                raise ModelError(f"{label}: the response has no text{why}")
            samples.append(text)
        usage = _usage(completion)
        cost = self.prices.cost(self._provider, self._model, usage) if self.prices else None
        return ModelResponse(
            text=samples[0],
            samples=samples,
            usage=usage,
            model_id=self._model,
            provider=self._provider,
            finish_reason=choices[0].get("finish_reason"),
            duration_ms=duration_ms,
            cost_usd=cost,
        )


@dataclass(frozen=True, slots=True)
class _EchoToken:
    """One echoed prompt token: its text span, logprob, and whether it was the top token."""

    text: str
    start: int
    end: int
    logprob: float | None
    is_top: bool | None


def _echo_tokens(logprobs: Mapping[str, Any]) -> list[_EchoToken]:
    """The echoed tokens of a legacy ``logprobs`` object (``tokens``, ``token_logprobs``,
    ``top_logprobs``, ``text_offset``); offsets are derived from token lengths when absent."""
    tokens: list[str] = list(logprobs.get("tokens") or [])
    values: list[float | None] = list(logprobs.get("token_logprobs") or [])
    tops: list[Any] = list(logprobs.get("top_logprobs") or [])
    offsets: list[int] = list(logprobs.get("text_offset") or [])
    if len(offsets) != len(tokens):
        offsets, position = [], 0
        for token in tokens:
            offsets.append(position)
            position += len(token)
    out: list[_EchoToken] = []
    for i, token in enumerate(tokens):
        end = offsets[i + 1] if i + 1 < len(tokens) else offsets[i] + len(token)
        top = tops[i] if i < len(tops) else None
        is_top: bool | None = None
        if isinstance(top, dict) and top:
            best = max(top.items(), key=lambda kv: kv[1])[0]
            is_top = best == token
        value = values[i] if i < len(values) else None
        out.append(_EchoToken(token, offsets[i], max(end, offsets[i]), value, is_top))
    return out


def _continuation_loglikelihood(
    tokens: Sequence[_EchoToken], context_end: int, prompt_end: int
) -> Loglikelihood:
    """Sum the logprobs of the tokens ending after the context (and starting inside the
    prompt: tokens the endpoint generated past it are ignored)."""
    total: list[float] = []
    greedy = True
    for token in tokens:
        if token.end <= context_end or token.start >= prompt_end:
            continue
        if token.logprob is None:
            raise ModelError(
                f"no logprob for the continuation token {token.text!r} (at {token.start}); "
                "is the context empty?"
            )
        total.append(token.logprob)
        greedy = greedy and bool(token.is_top)
    return Loglikelihood(math.fsum(total), greedy)


def _refuses_n(exc: _StatusError) -> bool:
    """An HTTP 400/422 about the ``n`` parameter (only one choice per request)."""
    if exc.status not in (400, 422):
        return False
    if exc.param == "n":
        return True
    detail = exc.detail.lower()
    return any(p in detail for p in ("'n'", '"n"', "`n`", "n must", "parameter n", "n > 1", "n=1"))


def _choices(completion: Any) -> list[dict[str, Any]]:
    """The ``choices`` of an answer that are objects (none when the answer has none)."""
    raw = completion.get("choices") if isinstance(completion, dict) else None
    return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def _message_text(content: Any) -> str | None:
    """A message's text: the string, or the text parts of a content-part list joined."""
    if isinstance(content, str) or content is None:
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        texts = [p for p in parts if isinstance(p, str)]
        return "".join(texts) if texts else None
    return None


def _usage(completion: Any) -> Usage:
    raw = completion.get("usage") if isinstance(completion, dict) else None
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("completion_tokens_details")
    prompt_details = raw.get("prompt_tokens_details")
    return Usage(
        input_tokens=raw.get("prompt_tokens") or 0,
        output_tokens=raw.get("completion_tokens") or 0,
        total_tokens=raw.get("total_tokens") or 0,
        reasoning_tokens=details.get("reasoning_tokens") if isinstance(details, dict) else None,
        cached_input_tokens=prompt_details.get("cached_tokens")
        if isinstance(prompt_details, dict)
        else None,
    )


def _with_schema_in_prompt(
    wire: list[dict[str, str]], schema: dict[str, Any]
) -> list[dict[str, str]]:
    """Append the schema instruction to the last user message (once)."""
    out = [dict(m) for m in wire]
    for message in reversed(out):
        if message["role"] == "user":
            if not prompt_contains_schema(message["content"], schema):
                message["content"] = f"{message['content']}\n\n{schema_instruction(schema)}"
            return out
    out.append({"role": "user", "content": schema_instruction(schema)})
    return out


def _error_detail(parsed: Any, raw: bytes, status: int) -> tuple[str, str | None]:
    """The server's error message and ``param`` from an error body (``{"error": {"message",
    "param"}}``, ``{"error": "..."}``, ``{"message": ...}``), else the body's text."""
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed)
        if isinstance(error, dict):
            param = error.get("param")
            message = error.get("message")
            if isinstance(message, str):
                return message, param if isinstance(param, str) else None
        elif isinstance(error, str):
            return error, None
    text = _snippet(raw)
    return (text or f"HTTP {status} with an empty body"), None


def _snippet(raw: bytes, limit: int = 500) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else f"{text[:limit]}…"


def _check_header(what: str, name: str, value: str) -> None:
    """Refuse a header that would break (or inject into) the request head, naming ``what``
    (never the value: it may be a key)."""
    try:
        check_header(name, value)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
