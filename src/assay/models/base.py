"""The ``Model`` protocol: the one seam between judge steps and any language model.

Judge steps only ever call ``await model.generate(messages, schema=..., settings=...)``.
Network clients, the in-process local model and the scripted test double all implement it,
so a scorer never knows (or cares) which one answers. ``models`` knows nothing of scorers.

Capabilities beyond chat are separate runtime-checkable protocols, so a task that needs them
asks for them: ``LoglikelihoodModel`` (``loglikelihood([(context, continuation), ...])`` ->
``[Loglikelihood(logprob, is_greedy), ...]``) and ``RollingLoglikelihoodModel``
(``loglikelihood_rolling(text)`` -> summed logprob). Wrappers (cache, retries, lazy
resolution) pass them through; a model whose endpoint cannot do it raises
``UnsupportedCapabilityError`` naming the endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.types import Usage

Role = Literal["system", "user", "assistant", "tool"]


class ChatMessage(BaseModel):
    """One message of a chat request (OpenAI shape, text content only)."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class ModelSettings(BaseModel):
    """Typed request settings passed through to the model. ``None`` means the model's default.

    - ``temperature``, ``top_p``, ``seed``: sampling, as in the OpenAI API;
    - ``max_output_tokens``: the most tokens to generate. assay's one name for it: clients send
      it as the endpoint's ``max_tokens`` or ``max_completion_tokens``; writing
      ``max_tokens`` here is an error that says so;
    - ``n``: how many samples to draw for one request (``ModelResponse.samples``); endpoints
      that ignore or refuse ``n`` are called once per sample instead;
    - ``stop``: stop sequences (the endpoint's ``stop``);
    - ``timeout_s``: the per-call timeout (not part of cache keys).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    seed: int | None = None
    timeout_s: float | None = Field(default=None, gt=0.0)
    n: int | None = Field(default=None, ge=1, le=128)
    stop: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_name_for_max_tokens(cls, data: Any) -> Any:
        if isinstance(data, dict) and "max_tokens" in data:
            raise ValueError(
                "unknown setting 'max_tokens': assay calls it 'max_output_tokens' (sent to the "
                "endpoint as max_tokens or max_completion_tokens)"
            )
        return data

    @property
    def samples(self) -> int:
        """How many samples a request with these settings asks for (``n``, default 1)."""
        return self.n or 1

    def merged(self, override: ModelSettings | None) -> ModelSettings:
        """Field-by-field override: a set field of ``override`` wins."""
        if override is None:
            return self
        data = self.model_dump()
        data.update(override.model_dump(exclude_none=True))
        return ModelSettings(**data)


class ModelResponse(BaseModel):
    """What a model returned: its text, usage, and provenance.

    ``duration_ms`` is the wall time of the call that produced this response (for a cache hit:
    of the lookup); ``attempts`` counts the HTTP attempts behind it (0 for a cache hit);
    ``cost_usd`` is the price of this call when the model is in the price table (0.0 for a
    cache hit, since nothing was spent; ``usage`` keeps the original token counts).
    """

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage = Field(default_factory=Usage)
    model_id: str
    provider: str | None = None
    finish_reason: str | None = None
    cached: bool = False
    duration_ms: float | None = None
    attempts: int = 1
    cost_usd: float | None = None
    smoke_test: bool = False
    """True when a tiny smoke-test model (the embedded SmolLM2) wrote the answer: it proves
    the plumbing, it is not a trustworthy judgement."""
    samples: list[str] = Field(default_factory=list)
    """Every sample of the request (``ModelSettings.n``); ``text`` is the first. Filled with
    ``[text]`` when not given; ``usage`` and ``cost_usd`` cover all samples."""

    @model_validator(mode="after")
    def _text_is_first_sample(self) -> ModelResponse:
        if not self.samples:
            object.__setattr__(self, "samples", [self.text])
        elif self.samples[0] != self.text:
            raise ValueError("ModelResponse.text must be the first of its samples")
        return self


def merge_samples(responses: Sequence[ModelResponse], duration_ms: float) -> ModelResponse:
    """One response holding the samples of several calls (usage and cost summed)."""
    first = responses[0]
    usage = Usage()
    for response in responses:
        usage = usage + response.usage
    costs = [r.cost_usd for r in responses if r.cost_usd is not None]
    samples = [sample for r in responses for sample in r.samples]
    return first.model_copy(
        update={
            "samples": samples,
            "usage": usage,
            "cost_usd": sum(costs) if costs else None,
            "duration_ms": duration_ms,
            "attempts": sum(r.attempts for r in responses),
        }
    )


class ModelError(Exception):
    """A model call failed (network, HTTP status, timeout, refusal).

    The keyword fields let the retry layer decide without parsing messages: ``retryable``
    (worth another attempt), ``throttled`` (the endpoint asked us to slow down: HTTP 429/503,
    which shrinks the adaptive concurrency limit), ``retry_after_s`` (the server's
    Retry-After) and ``status_code`` (the HTTP status, when there was one). A plain
    ``ModelError("...")`` is a permanent failure.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool = False,
        throttled: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = retryable
        self.throttled = throttled
        self.retry_after_s = retry_after_s


class ModelTimeoutError(ModelError):
    """A model call did not finish within its per-call timeout (retryable)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


class ModelRateLimitError(ModelError):
    """The endpoint throttled the call (HTTP 429 or 503): retry later, and send less at once.

    Scripted models raise it to simulate throttling without a server.
    """

    def __init__(
        self, message: str, *, status_code: int = 429, retry_after_s: float | None = None
    ) -> None:
        super().__init__(
            message,
            status_code=status_code,
            retryable=True,
            throttled=True,
            retry_after_s=retry_after_s,
        )


class MissingAPIKeyError(ModelError):
    """The provider needs an API key and none was given or found in the environment."""


class UnsupportedCapabilityError(ModelError):
    """The model (or its endpoint) cannot do what was asked, such as loglikelihoods from a
    chat-only endpoint. Permanent: retrying will not help."""


@runtime_checkable
class Model(Protocol):
    """An async chat model.

    ``schema`` is the JSON Schema the answer must follow (structured output); implementations
    send it natively when the endpoint supports it and otherwise may put it in the prompt.
    The caller validates the answer either way.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def provider(self) -> str | None: ...

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse: ...


# ---------------------------------------------------------------------- capabilities
class Loglikelihood(NamedTuple):
    """The log-probability of a continuation given its context, and whether greedy decoding
    would have produced exactly that continuation (every token the model's top token)."""

    logprob: float
    is_greedy: bool


@runtime_checkable
class LoglikelihoodModel(Protocol):
    """A model that scores continuations (lm-eval's ``loglikelihood``).

    ``requests`` are ``(context, continuation)`` pairs; the answer has one ``Loglikelihood``
    per request, in order. Trailing whitespace of a context belongs to its continuation
    (``split_context``), as in lm-eval, so ``("Answer: ", "Paris")`` scores ``" Paris"``.
    A model or endpoint that cannot do it raises ``UnsupportedCapabilityError``.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def provider(self) -> str | None: ...

    async def loglikelihood(
        self,
        requests: Sequence[tuple[str, str]],
        *,
        settings: ModelSettings | None = None,
    ) -> list[Loglikelihood]: ...


@runtime_checkable
class RollingLoglikelihoodModel(Protocol):
    """A model that scores a whole text (lm-eval's ``loglikelihood_rolling``, for perplexity):
    the summed log-probability of every token of ``text``."""

    @property
    def model_id(self) -> str: ...

    @property
    def provider(self) -> str | None: ...

    async def loglikelihood_rolling(
        self, text: str, *, settings: ModelSettings | None = None
    ) -> float: ...


def split_context(context: str, continuation: str) -> tuple[str, str]:
    """Move the context's trailing whitespace to the continuation (lm-eval's convention:
    tokenizers attach a space to the word after it)."""
    stripped = context.rstrip()
    return stripped, context[len(stripped) :] + continuation


def unsupported(model: Any, capability: str, why: str = "") -> UnsupportedCapabilityError:
    """The error for a model that lacks ``capability`` (it names the model)."""
    provider = getattr(model, "provider", None)
    model_id = getattr(model, "model_id", type(model).__name__)
    label = f"{provider}/{model_id}" if provider else str(model_id)
    detail = f": {why}" if why else ""
    return UnsupportedCapabilityError(f"{label} does not support {capability}{detail}")
