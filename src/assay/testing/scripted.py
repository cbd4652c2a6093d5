"""A deterministic scripted model for tests and offline demos.

It answers from a script instead of a network: a list of replies consumed in order, or a
function of the request. Every request is recorded so tests can assert what a judge step
sent. It is the right tool for testing scorer logic; it is not a judge.

It has the capabilities of the real models too: ``ModelSettings.n`` samples (one reply per
sample), ``loglikelihood`` from ``loglikelihoods`` (a mapping of ``(context, continuation)``
to ``(logprob, is_greedy)``, or a function of the pair) and ``loglikelihood_rolling`` from
``rolling`` (a mapping of text to logprob, or a function). Pairs are looked up exactly as
sent; a capability left unset raises ``UnsupportedCapabilityError``, like an endpoint
without it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    ModelError,
    ModelResponse,
    ModelSettings,
    unsupported,
)
from assay.types import Usage

Reply = str | dict[str, Any] | list[Any] | BaseException
Responder = Callable[[list[ChatMessage], dict[str, Any] | None], Reply]
LoglikelihoodScript = (
    Mapping[tuple[str, str], tuple[float, bool]] | Callable[[str, str], tuple[float, bool]]
)
RollingScript = Mapping[str, float] | Callable[[str], float]


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
    loglikelihoods: LoglikelihoodScript | None = None
    rolling: RollingScript | None = None
    scored: list[tuple[str, str]] = field(default_factory=list)
    """Every (context, continuation) pair ``loglikelihood`` received."""
    rolled: list[str] = field(default_factory=list)
    """Every text ``loglikelihood_rolling`` received."""
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
        samples: list[str] = []
        for _ in range(settings.samples if settings is not None else 1):
            reply = self._next_reply(messages, schema)
            if isinstance(reply, BaseException):
                raise reply
            samples.append(reply if isinstance(reply, str) else json.dumps(reply))
        prompt_words = sum(len(m.content.split()) for m in messages)
        usage = Usage(input_tokens=prompt_words, output_tokens=sum(len(t.split()) for t in samples))
        return ModelResponse(
            text=samples[0],
            samples=samples,
            usage=usage,
            model_id=self.name,
            provider="scripted",
            finish_reason="stop",
        )

    async def loglikelihood(
        self,
        requests: Sequence[tuple[str, str]],
        *,
        settings: ModelSettings | None = None,
    ) -> list[Loglikelihood]:
        script = self.loglikelihoods
        if script is None:
            raise unsupported(self, "loglikelihood", "no loglikelihoods were scripted")
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        results: list[Loglikelihood] = []
        for context, continuation in requests:
            self.scored.append((context, continuation))
            if callable(script):
                logprob, greedy = script(context, continuation)
            else:
                try:
                    logprob, greedy = script[(context, continuation)]
                except KeyError:
                    raise ModelError(
                        f"scripted model {self.name!r} has no loglikelihood for "
                        f"{(context, continuation)!r}"
                    ) from None
            results.append(Loglikelihood(float(logprob), bool(greedy)))
        return results

    async def loglikelihood_rolling(
        self, text: str, *, settings: ModelSettings | None = None
    ) -> float:
        script = self.rolling
        if script is None:
            raise unsupported(self, "loglikelihood_rolling", "no rolling logprobs were scripted")
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        self.rolled.append(text)
        if callable(script):
            return float(script(text))
        try:
            return float(script[text])
        except KeyError:
            raise ModelError(
                f"scripted model {self.name!r} has no rolling loglikelihood for {text!r}"
            ) from None

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
