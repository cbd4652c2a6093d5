"""Step definitions: a step is a Python function or a judge prompt.

A function step is any callable of a ``StepContext`` (sync or async). A judge step is a
prompt builder plus, for ``preprocess``/``analyze``, a pydantic output model the judge's
answer must validate against. The score step of a judge returns ``{"score": number}`` unless
another output model is given; the reason step returns plain text.
"""

from __future__ import annotations

import importlib
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


ModelResolver = Callable[[str], Model]
"""Turns a model string (``provider/model``) into a ``Model``, without I/O."""

DEFAULT_MODEL_RESOLVER = "assay.models.resolve:LazyModel"
"""The resolver used until ``set_model_resolver`` installs another: named, not imported, the
way a registry names its built-in modules, so the scoring room still sees only the ``Model``
protocol and ``import assay`` does not have to import scoring to wire it."""

_UNSET: Any = object()
_model_resolver: ModelResolver | None = _UNSET


def _default_resolver() -> ModelResolver:
    module, _, attribute = DEFAULT_MODEL_RESOLVER.partition(":")
    resolver: ModelResolver = getattr(importlib.import_module(module), attribute)
    return resolver


def set_model_resolver(resolver: ModelResolver | None) -> ModelResolver | None:
    """Install how ``JudgeConfig`` turns a model string into a ``Model``; returns the
    previous resolver (``None``: strings are refused).

    The scoring room knows only the ``Model`` protocol, never a provider. The default,
    ``assay.models.resolve.LazyModel`` (``DEFAULT_MODEL_RESOLVER``), resolves the string on
    the first call, so a config naming an unknown provider fails when a judge step runs (an
    error result), not when the scorer is built.
    """
    global _model_resolver
    previous = _default_resolver() if _model_resolver is _UNSET else _model_resolver
    _model_resolver = resolver
    return previous


def judge_model(model: str | Model | None) -> Model | None:
    """``model`` as a ``Model``: a string goes through the installed resolver."""
    global _model_resolver
    if not isinstance(model, str):
        return model
    if _model_resolver is _UNSET:
        _model_resolver = _default_resolver()
    if _model_resolver is None:
        raise TypeError(
            f"judge model {model!r}: no model resolver is installed "
            "(set_model_resolver(None) removed it); pass a Model"
        )
    return _model_resolver(model)


@dataclass(frozen=True, slots=True, init=False)
class JudgeConfig:
    """Which model judges and with what system instructions.

    Set on the scorer as its default; a judge step may carry its own ``JudgeConfig`` whose
    set fields override the scorer's field by field. ``model`` may be given as a model
    string (``"openai/gpt-4o-mini"``); it is stored as a ``Model`` (see
    ``set_model_resolver``), so a judge step only ever talks to the ``Model`` protocol.
    """

    model: Model | None
    instructions: str | None
    settings: ModelSettings | None

    def __init__(
        self,
        model: str | Model | None = None,
        instructions: str | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        object.__setattr__(self, "model", judge_model(model))
        object.__setattr__(self, "instructions", instructions)
        object.__setattr__(self, "settings", settings)

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
        """A stable name of the model for fingerprints and records: ``provider/model_id``
        (for a model given as a string: that string)."""
        if self.model is None:
            return None
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
