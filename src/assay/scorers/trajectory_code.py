"""Unified trajectory scorer (code): accuracy, efficiency, tool failures and blacklists.

Parity with ``createTrajectoryScorerCode``: a weighted mean of the active dimensions, nested
expectations for sub-agent steps, any blacklist violation scores 0, and a reason listing
each dimension.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.scorers._lib.trajectory_params import TrajectoryExpectation, TrajectoryWeightsParams
from assay.scorers._lib.trajectory_scoring import as_trajectory, expected_item, unified_trajectory
from assay.scoring.context import StepContext
from assay.scoring.registry import ScorerParams, register_scorer
from assay.scoring.scorer import Scorer


class TrajectoryCodeParams(ScorerParams):
    defaults: TrajectoryExpectation | None = Field(
        default=None,
        description="Expectations for every item; an item's expected_trajectory is merged over "
        "them (item wins).",
    )
    weights: TrajectoryWeightsParams = Field(default_factory=TrajectoryWeightsParams)


@register_scorer(
    "trajectory-code",
    label="Trajectory (unified)",
    description="Weighted trajectory score over step accuracy, efficiency budgets, tool "
    "failures and blacklisted tools or sequences.",
    params=TrajectoryCodeParams,
    reference="createTrajectoryScorerCode (code-trajectory-scorer)",
    preview_notes="Any blacklist violation scores 0.",
)
def build(params: TrajectoryCodeParams) -> Scorer:
    defaults = params.defaults.to_reference() if params.defaults else None
    weights = params.weights.to_reference()

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        result, score, reason = unified_trajectory(
            as_trajectory(ctx.call.output),
            defaults,
            weights,
            expected_item(ctx.call.expected_trajectory),
        )
        return {**result, "score": score, "reason": reason}

    return (
        Scorer("trajectory-code", description="Unified trajectory scorer (code)")
        .preprocess(preprocess)
        .score(lambda ctx: ctx.preprocess_result["score"])
        .reason(lambda ctx: ctx.preprocess_result["reason"])
    )
