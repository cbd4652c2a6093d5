"""Step definitions: a step is a Python function or a judge prompt.

A function step is any callable of a ``StepContext`` (sync or async). A judge step is a
prompt builder plus, for ``preprocess``/``analyze``, a pydantic output model the judge's
answer must validate against. The score step of a judge returns ``{"score": number}`` unless
another output model is given; the reason step returns plain text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from assay.models.base import Model, ModelSettings
from assay.scoring.context import StepContext

StepFunction = Callable[[StepContext], Any]
"""A function step: returns the step's result, or an awaitable of it."""

PromptBuilder = Callable[[StepContext], "str | Awaitable[str]"]

AnswerCheck = Callable[[StepContext, BaseModel], None]
"""Checks a judge's validated answer against what came before (e.g. one verdict per claim
of the preprocess step); raises ``ValueError(message)`` when they do not fit."""


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """Which model judges and with what system instructions.

    Set on the scorer as its default; a judge step may carry its own ``JudgeConfig`` whose
    set fields override the scorer's field by field.
    """

    model: str | Model | None = None
    instructions: str | None = None
    settings: ModelSettings | None = None

    def overridden_by(self, other: JudgeConfig | None) -> JudgeConfig:
        if other is None:
            return self
        settings = (
            self.settings.merged(other.settings) if self.settings is not None else other.settings
        )
        return JudgeConfig(
            model=other.model if other.model is not None else self.model,
            instructions=other.instructions
            if other.instructions is not None
            else self.instructions,
            settings=settings,
        )

    @property
    def model_label(self) -> str | None:
        """A stable name of the model for fingerprints and records."""
        if self.model is None:
            return None
        if isinstance(self.model, str):
            return self.model
        provider = self.model.provider
        return f"{provider}/{self.model.model_id}" if provider else self.model.model_id


@dataclass(frozen=True, slots=True)
class JudgeStep:
    """An LLM-judge step.

    ``version`` names the prompt template's revision; it is part of the scorer's
    fingerprint, so editing a prompt (and bumping the version) never reuses cached answers
    of the old prompt.

    ``check``, when set, runs on every answer that validated against ``output``; a
    ``ValueError`` it raises is handled like a schema validation error (one repair turn
    that shows the model the message, then the step fails).
    """

    prompt: PromptBuilder
    output: type[BaseModel] | None = None
    description: str = ""
    judge: JudgeConfig | None = None
    version: str = "1"
    check: AnswerCheck | None = None


@dataclass(frozen=True, slots=True)
class FunctionStep:
    """A plain Python step (sync or async)."""

    fn: StepFunction
    description: str = ""


Step = FunctionStep | JudgeStep


def judge_step(
    prompt: PromptBuilder,
    output: type[BaseModel] | None = None,
    *,
    description: str = "",
    judge: JudgeConfig | None = None,
    version: str = "1",
    check: AnswerCheck | None = None,
) -> JudgeStep:
    """Build a judge step: ``prompt(ctx)`` is sent to the judge, whose answer must match
    ``output`` (required for ``preprocess`` and ``analyze`` steps) and pass ``check(ctx,
    answer)`` if given (see ``JudgeStep``)."""
    return JudgeStep(prompt, output, description, judge, version, check)


def as_step(step: Step | StepFunction) -> Step:
    if isinstance(step, FunctionStep | JudgeStep):
        return step
    if callable(step):
        return FunctionStep(step)
    raise TypeError(f"a step must be a function or a JudgeStep, got {type(step).__name__}")
