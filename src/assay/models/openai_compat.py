"""A ``Model`` for any OpenAI-compatible chat-completions endpoint, on the official SDK.

One client speaks to OpenAI, OpenRouter, Together, Groq, vLLM, Ollama, LM Studio, llama.cpp
servers and the OpenAI-compatible endpoints of Anthropic and Google: they differ only in base
URL, key, and how much of ``response_format`` they honour.

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

The SDK's own retries are off (``max_retries=0``): retries, backoff and concurrency belong
to ``ReliableModel``, which sees every failure. Errors come out as ``ModelError`` with
``status_code``/``retryable``/``throttled``/``retry_after_s`` filled in. An API key that is
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

The ``openai`` package is not imported by ``import assay``: making a model starts importing it
in a background thread (``assay.models.sdk_import``), and the first call waits for that.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

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
from assay.models.prices import DEFAULT_PRICES, PriceTable
from assay.models.reliability import is_throttle_status, parse_retry_after, retryable_status
from assay.models.sdk_import import start_openai_import, wait_for_openai
from assay.models.structured import (
    prompt_contains_schema,
    schema_instruction,
    schema_name,
    strict_schema,
)
from assay.types import Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion

StructuredOutputMode = Literal["strict", "json_schema", "json_object", "prompt"]
MaxTokensParam = Literal["max_tokens", "max_completion_tokens"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY_PLACEHOLDER = "assay-no-key"
"""Sent as the bearer token to endpoints that need no key (local servers ignore it)."""

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


class OpenAICompatibleModel:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``api_key`` wins; else the first set variable of ``api_key_env``; else, when
    ``require_api_key`` is false, a placeholder. By default the ``openai`` provider without a
    ``base_url`` talks to api.openai.com and requires ``OPENAI_API_KEY``; with a ``base_url``
    (a local server) the key is optional. ``max_tokens_param`` names the request field for
    ``ModelSettings.max_output_tokens`` (OpenAI's reasoning models accept only
    ``max_completion_tokens``; many other servers know only ``max_tokens``).
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
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )
        self._closing: set[asyncio.Task[None]] = set()
        start_openai_import()

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
        wait_for_openai()
        client = self._client()
        from openai import OpenAIError

        mode: StructuredOutputMode | None = None if schema is None else self.structured_output_mode
        started = time.perf_counter()
        while True:
            send_n = n if n > 1 and (self.base_url, self._model) not in _ENDPOINTS_WITHOUT_N else 1
            request = self._request(messages, schema, settings, mode, n=send_n)
            try:
                completion = await self._create(client, request, settings)
            except OpenAIError as exc:
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
        wait_for_openai()
        from openai import APIStatusError, OpenAIError
        from openai.types import Completion

        client = self._client()
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
                completion = await client.post(
                    "/completions", cast_to=Completion, body=body, options={"timeout": timeout}
                )
            except OpenAIError as exc:
                if isinstance(exc, APIStatusError):
                    detail = _error_detail(exc)
                    lowered = detail.lower()
                    if exc.status_code == 404:
                        raise UnsupportedCapabilityError(
                            f"{self._provider}/{self._model}: {url} does not exist (HTTP 404): "
                            "loglikelihood needs an OpenAI-compatible completions endpoint "
                            "that echoes prompt logprobs (echo=True, logprobs=1), such as vLLM"
                        ) from exc
                    if exc.status_code in (400, 422):
                        if zero_ok and "max_tokens" in lowered:
                            _ENDPOINTS_WITHOUT_ZERO_MAX_TOKENS.add(self.base_url)
                            continue
                        if "echo" in lowered or "logprobs" in lowered:
                            raise UnsupportedCapabilityError(
                                f"{self._provider}/{self._model}: {url} refused echoed "
                                f"logprobs (HTTP {exc.status_code}: {detail}); loglikelihood "
                                "needs echo=True with logprobs"
                            ) from exc
                raise self._translate(exc) from exc
            break
        by_index: dict[int, list[_EchoToken]] = {}
        for choice in completion.choices:
            logprobs = choice.logprobs
            if logprobs is None or not logprobs.tokens or logprobs.token_logprobs is None:
                raise UnsupportedCapabilityError(
                    f"{self._provider}/{self._model}: {url} answered without echoed prompt "
                    "logprobs (logprobs.tokens/token_logprobs); loglikelihood needs a "
                    "completions endpoint that echoes prompt logprobs (echo=True, logprobs=1), "
                    "such as vLLM"
                )
            by_index[choice.index or 0] = _echo_tokens(logprobs)
        if sorted(by_index) != list(range(len(prompts))):
            raise ModelError(
                f"{self._provider}/{self._model}: {url} answered {len(by_index)} choices "
                f"for {len(prompts)} prompts"
            )
        return [by_index[i] for i in range(len(prompts))]

    async def aclose(self) -> None:
        """Close this event loop's HTTP client (clients of other loops are only dropped:
        their connections belong to those loops)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        self._clients.clear()
        if client is not None:
            await client.close()

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

    def _client(self) -> AsyncOpenAI:
        """One SDK client per event loop: an HTTP connection pool must not cross loops."""
        key = self._api_key_value()
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.api_key != key:
            if client is not None:  # the key changed: close the old pool, do not leak it
                closing = loop.create_task(client.close())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
            wait_for_openai()
            try:
                from openai import AsyncOpenAI
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ModelError(
                    "the 'openai' package is needed for OpenAI-compatible models: "
                    "pip install openai"
                ) from exc
            client = AsyncOpenAI(
                api_key=key,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout_s,
                default_headers=self.default_headers or None,
            )
            self._clients[loop] = client
        return client

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
                strict = strict_schema(schema) if mode == "strict" else None
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

    async def _create(
        self, client: AsyncOpenAI, request: dict[str, Any], settings: ModelSettings
    ) -> ChatCompletion:
        """POST the request as is through the SDK's generic ``post`` (documented for
        undocumented endpoints): the same HTTP, auth, errors and response parsing as
        ``chat.completions.create``, without re-validating our already-plain JSON body,
        which is a third of the SDK's CPU per call and matters at hundreds of calls/s."""
        from openai.types.chat import ChatCompletion

        body = dict(request)
        body.update(body.pop("extra_body", None) or {})
        return await client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            body=body,
            options={"timeout": settings.timeout_s or self.timeout_s},
        )

    def _downgrade_after_refusal(
        self, exc: Exception, mode: StructuredOutputMode | None
    ) -> StructuredOutputMode | None:
        """The next structured-output level if ``exc`` is a refusal of the current one."""
        from openai import APIStatusError

        if mode is None or mode == "prompt" or not isinstance(exc, APIStatusError):
            return None
        if exc.status_code not in (400, 422):
            return None
        detail = _error_detail(exc).lower()
        about_format = getattr(exc, "param", None) == "response_format"
        if not about_format and not any(word in detail for word in _REFUSAL_WORDS):
            return None
        nxt: StructuredOutputMode = (
            "json_schema" if mode == "strict" and "strict" in detail else "prompt"
        )
        _ENDPOINT_MODES[(self.base_url, self._model)] = nxt
        return nxt

    def _translate(self, exc: Exception) -> ModelError:
        import openai

        label = f"{self._provider}/{self._model}"
        if isinstance(exc, openai.APITimeoutError):
            return ModelTimeoutError(f"{label}: request timed out ({self.base_url})")
        if isinstance(exc, openai.APIConnectionError):
            return ModelError(f"{label}: cannot reach {self.base_url}: {exc}", retryable=True)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _error_detail(exc)
            return ModelError(
                f"{label}: HTTP {status}: {detail}"[:1000],
                status_code=status,
                retryable=retryable_status(status),
                throttled=is_throttle_status(status),
                retry_after_s=parse_retry_after(exc.response.headers),
            )
        return ModelError(f"{label}: {type(exc).__name__}: {exc}")

    def _response(self, completion: ChatCompletion, duration_ms: float) -> ModelResponse:
        label = f"{self._provider}/{self._model}"
        if not completion.choices:
            raise ModelError(f"{label}: the response has no choices")
        choices = sorted(completion.choices, key=lambda c: c.index or 0)
        samples: list[str] = []
        for choice in choices:
            text = choice.message.content
            if text is None:
                refusal = getattr(choice.message, "refusal", None)
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
            finish_reason=choices[0].finish_reason,
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


def _echo_tokens(logprobs: Any) -> list[_EchoToken]:
    """The echoed tokens of a legacy ``logprobs`` object (``tokens``, ``token_logprobs``,
    ``top_logprobs``, ``text_offset``); offsets are derived from token lengths when absent."""
    tokens: list[str] = list(logprobs.tokens or [])
    values: list[float | None] = list(logprobs.token_logprobs or [])
    tops: list[Any] = list(logprobs.top_logprobs or [])
    offsets: list[int] = list(logprobs.text_offset or [])
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


def _refuses_n(exc: Exception) -> bool:
    """An HTTP 400/422 about the ``n`` parameter (only one choice per request)."""
    from openai import APIStatusError

    if not isinstance(exc, APIStatusError) or exc.status_code not in (400, 422):
        return False
    if getattr(exc, "param", None) == "n":
        return True
    detail = _error_detail(exc).lower()
    return any(p in detail for p in ("'n'", '"n"', "`n`", "n must", "parameter n", "n > 1", "n=1"))


def _usage(completion: ChatCompletion) -> Usage:
    raw = completion.usage
    if raw is None:
        return Usage()
    details = raw.completion_tokens_details
    prompt_details = raw.prompt_tokens_details
    return Usage(
        input_tokens=raw.prompt_tokens or 0,
        output_tokens=raw.completion_tokens or 0,
        total_tokens=raw.total_tokens or 0,
        reasoning_tokens=details.reasoning_tokens if details is not None else None,
        cached_input_tokens=prompt_details.cached_tokens if prompt_details is not None else None,
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


def _error_detail(exc: Any) -> str:
    """The server's error message from an SDK status error (body ``error.message``)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return str(getattr(exc, "message", None) or exc)
