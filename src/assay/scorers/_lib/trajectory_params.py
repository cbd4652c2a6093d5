"""Typed params for the trajectory scorers (so forms and the CLI get a real schema).

Field names are snake_case with the reference's camelCase aliases; ``to_reference`` dumps
the camelCase JSON the trajectory helpers consume. Expected steps allow extra fields (the
step-type specific ones such as ``toolArgs``), which pass through unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from assay.scorers._lib.judge_common import ReasonedJudgeParams

Ordering = Literal["strict", "relaxed", "unordered"]


class _CamelModel(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    def to_reference(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class ExpectedStep(_CamelModel):
    """One expected step; extra keys (``toolArgs``, ``toolResult``, ``modelId``...) must
    match the actual step's JSON exactly."""

    model_config = ConfigDict(
        frozen=True, extra="allow", alias_generator=to_camel, populate_by_name=True
    )

    name: str
    step_type: str | None = Field(default=None, description="e.g. tool_call, model_generation.")
    children: TrajectoryExpectation | None = None


class TrajectoryExpectation(_CamelModel):
    steps: list[ExpectedStep] | None = None
    ordering: Ordering | None = None
    allow_repeated_steps: bool | None = None
    max_steps: int | None = Field(default=None, ge=0)
    max_total_tokens: int | None = Field(default=None, ge=0)
    max_total_duration_ms: float | None = Field(default=None, ge=0)
    no_redundant_calls: bool | None = None
    blacklisted_tools: list[str] | None = None
    blacklisted_sequences: list[list[str]] | None = None
    max_retries_per_tool: int | None = Field(default=None, ge=0)


class ComparisonOptions(_CamelModel):
    ordering: Ordering = "relaxed"
    allow_repeated_steps: bool = True


class TrajectoryWeightsParams(_CamelModel):
    accuracy: float = 0.4
    efficiency: float = 0.3
    tool_failures: float = 0.2
    blacklist: float = 0.1


ExpectedStep.model_rebuild()


class TrajectoryAccuracyLLMParams(ReasonedJudgeParams):
    expected_trajectory: TrajectoryExpectation | list[ExpectedStep] | None = Field(
        default=None,
        description="Expected steps (a list, or a trajectory with steps); if unset, each "
        "item's expected_trajectory is used, and without one the judge works from the task.",
    )
