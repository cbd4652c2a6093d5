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
    """What a model returned: its text, usage, and provenance."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage = Field(default_factory=Usage)
    model_id: str
    provider: str | None = None
    finish_reason: str | None = None
    cached: bool = False


class ModelError(Exception):
    """A model call failed (network, HTTP status, timeout, refusal)."""


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
