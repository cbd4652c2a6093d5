"""Trajectory accuracy (code): do the agent's steps match the expected steps?

Parity with ``createTrajectoryAccuracyScorerCode``. The output is a trajectory
(``{"steps": [...]}``) or agent messages, whose tool calls become ``tool_call`` steps.
Expected steps come from the params or, per item, from ``expected_trajectory``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.scorers._lib.trajectory_params import (
    ComparisonOptions,
    ExpectedStep,
    TrajectoryExpectation,
)
from assay.scorers._lib.trajectory_scoring import as_trajectory, expected_item, trajectory_accuracy
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer


class TrajectoryAccuracyCodeParams(ScorerParams):
    expected_trajectory: TrajectoryExpectation | list[ExpectedStep] | None = Field(
        default=None,
        description="Expected steps (a list, or a trajectory with steps); if unset, each "
        "item's expected_trajectory is used.",
    )
    comparison_options: ComparisonOptions = Field(default_factory=ComparisonOptions)


@register_scorer(
    "trajectory-accuracy-code",
    label="Trajectory Accuracy",
    description="Share of expected steps found in the agent's trajectory (strict, relaxed or "
    "unordered matching), with penalties for extra or repeated steps.",
    params=TrajectoryAccuracyCodeParams,
    reference="createTrajectoryAccuracyScorerCode (code-trajectory-accuracy-scorer)",
)
def build(params: TrajectoryAccuracyCodeParams) -> Scorer:
    expected: Any = params.expected_trajectory
    if isinstance(expected, TrajectoryExpectation):
        expected = expected.to_reference()
    elif isinstance(expected, list):
        expected = [step.to_reference() for step in expected]

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        result, score = trajectory_accuracy(
            as_trajectory(ctx.call.output),
            expected,
            expected_item(ctx.call.expected_trajectory),
            params.comparison_options.ordering,
            params.comparison_options.allow_repeated_steps,
        )
        return {**result, "score": score}

    return (
        Scorer("trajectory-accuracy-code", description="Trajectory accuracy (code)")
        .preprocess(preprocess)
        .score(lambda ctx: ctx.preprocess_result["score"])
    )
