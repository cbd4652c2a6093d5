"""The ``Model`` protocol: the one seam between judge steps and any language model.

Judge steps only ever call ``await model.generate(messages, schema=..., settings=...)``.
Network clients, the in-process local model and the scripted test double all implement it,
so a scorer never knows (or cares) which one answers. ``models`` knows nothing of scorers.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from assay.types import Usage

Role = Literal["system", "user", "assistant", "tool"]


class ChatMessage(BaseModel):
    """One message of a chat request (OpenAI shape, text content only)."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class ModelSettings(BaseModel):
    """Sampling settings passed through to the model. ``None`` means the model's default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    seed: int | None = None
    timeout_s: float | None = Field(default=None, gt=0.0)

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
