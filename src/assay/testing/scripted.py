"""A deterministic scripted model for tests and offline demos.

It answers from a script instead of a network: a list of replies consumed in order, or a
function of the request. Every request is recorded so tests can assert what a judge step
sent. It is the right tool for testing scorer logic; it is not a judge.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.models.base import ChatMessage, ModelError, ModelResponse, ModelSettings
from assay.types import Usage

Reply = str | dict[str, Any] | list[Any] | BaseException
Responder = Callable[[list[ChatMessage], dict[str, Any] | None], Reply]


@dataclass(frozen=True)
class ScriptedCall:
    """One request the scripted model received."""

    messages: list[ChatMessage]
    schema: dict[str, Any] | None
    settings: ModelSettings | None


@dataclass
class ScriptedModel:
    """Replies from ``script`` in order (or from ``responder``), recording every request.

    A reply may be a string (returned as is), a dict or list (returned as JSON text), or an
    exception (raised, to simulate failures such as timeouts or HTTP 429). Token usage is a
    whitespace word count, so usage plumbing is testable without a tokenizer.
    """

    script: Sequence[Reply] = ()
    responder: Responder | None = None
    name: str = "scripted"
    delay_s: float = 0.0
    calls: list[ScriptedCall] = field(default_factory=list)
    _cursor: int = 0

    @property
    def model_id(self) -> str:
        return self.name

    @property
    def provider(self) -> str | None:
        return "scripted"

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        self.calls.append(ScriptedCall(list(messages), schema, settings))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        reply = self._next_reply(messages, schema)
        if isinstance(reply, BaseException):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        prompt_words = sum(len(m.content.split()) for m in messages)
        usage = Usage(input_tokens=prompt_words, output_tokens=len(text.split()))
        return ModelResponse(
            text=text, usage=usage, model_id=self.name, provider="scripted", finish_reason="stop"
        )

    def _next_reply(self, messages: list[ChatMessage], schema: dict[str, Any] | None) -> Reply:
        if self.responder is not None:
            return self.responder(messages, schema)
        if self._cursor >= len(self.script):
            raise ModelError(
                f"scripted model {self.name!r} ran out of replies after {len(self.script)} calls"
            )
        reply = self.script[self._cursor]
        self._cursor += 1
        return reply
