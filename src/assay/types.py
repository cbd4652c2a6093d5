"""Core value types shared by every layer: score results, judge-call records, usage.

These are plain pydantic models with no I/O so that the store, the runner, the API and the
CLI all speak the same shapes. Results are immutable (``frozen``): a scorer never mutates a
result after returning it, which is what lets one scorer instance serve many items at once.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ScoreStatus = Literal["ready", "not_scorable", "error"]
"""``ready``: a numeric score; ``not_scorable``: a step declined to score; ``error``: it failed."""

StepName = Literal["preprocess", "analyze", "score", "reason"]
STEP_ORDER: tuple[StepName, ...] = ("preprocess", "analyze", "score", "reason")


class Usage(BaseModel):
    """Token usage of one model call (OpenAI naming normalised to input/output)."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None

    @model_validator(mode="after")
    def _fill_total(self) -> Usage:
        if self.total_tokens == 0 and (self.input_tokens or self.output_tokens):
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)
        return self

    def __add__(self, other: Usage) -> Usage:
        def _opt(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            reasoning_tokens=_opt(self.reasoning_tokens, other.reasoning_tokens),
            cached_input_tokens=_opt(self.cached_input_tokens, other.cached_input_tokens),
        )


class JudgeCall(BaseModel):
    """The record of one judge step: what was asked, how often, what came back, what it cost.

    ``attempts`` counts model invocations including the repair retry; ``output`` is the
    validated answer (a number for a score step, text for a reason step, an object
    otherwise); ``raw_output`` keeps the model's last raw text so a failed parse can be
    inspected instead of silently becoming a score.
    """

    model_config = ConfigDict(frozen=True)

    step: StepName
    status: Literal["success", "failed"]
    prompt: str
    model_id: str
    provider: str | None = None
    attempts: int = 1
    duration_ms: float = 0.0
    output: Any = None
    raw_output: str | None = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    cached: bool = False
    cost_usd: float | None = None
    """Summed over attempts when the model reports a price (see ``assay.models.prices``)."""


class ScoreError(BaseModel):
    """Why a scorer run failed: the message, the step that failed, the steps that completed."""

    model_config = ConfigDict(frozen=True)

    message: str
    failed_step: StepName | None = None
    completed_steps: list[StepName] = Field(default_factory=list)
    kind: str = "ScorerRunError"


class ScoreResult(BaseModel):
    """The outcome of one ``scorer.run``.

    Invariant (enforced): ``score`` is a finite number exactly when ``status == "ready"``;
    an error or a not-scorable result never carries a number, so nothing downstream can
    average a failure in by accident.
    """

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    scorer_name: str
    run_id: str
    status: ScoreStatus
    score: float | None = None
    reason: str | None = None
    steps: dict[str, Any] = Field(default_factory=dict)
    """Results of the completed steps keyed by step name (``preprocess``, ``analyze`` ...)."""
    prompts: dict[str, str] = Field(default_factory=dict)
    """Prompts sent by judge steps, keyed by step name."""
    judge_calls: list[JudgeCall] = Field(default_factory=list)
    error: ScoreError | None = None
    not_scorable_step: StepName | None = None
    duration_ms: float = 0.0

    @model_validator(mode="after")
    def _score_matches_status(self) -> ScoreResult:
        if self.status == "ready":
            if self.score is None or not math.isfinite(self.score):
                raise ValueError("a ready ScoreResult needs a finite score")
        elif self.score is not None:
            raise ValueError(f"a ScoreResult with status {self.status!r} cannot carry a score")
        if self.status == "error" and self.error is None:
            raise ValueError("an error ScoreResult needs an error")
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ready"

    @property
    def usage(self) -> Usage:
        """Total token usage of every judge call of this run."""
        total = Usage()
        for call in self.judge_calls:
            total = total + call.usage
        return total
