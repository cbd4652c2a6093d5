"""The trajectory judge's answer: one evaluation per step (necessary? in order?), missing and
extra steps, and the check that every numbered step of the actual trajectory was evaluated.

Kept apart from ``trajectory_accuracy_llm`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import clamp, count
from assay.scorers._lib.judge_scorer import AnyView, Unrounded
from assay.scorers._lib.trajectory_format import step_count_problem

PERFECT_SCORE_NOTE = (
    "Known reference property: a perfect trajectory scores 0.9, not 1.0 "
    "(0.6·necessary + 0.3·in order − 0.1·missing penalty; the 0.1 is never earned). "
    "Set thresholds at or below 0.9."
)


class StepEvaluation(BaseModel):
    stepName: str = Field(description="Name of the step (tool name or action).")
    wasNecessary: bool = Field(description="Whether this step was necessary for the task.")
    wasInOrder: bool = Field(
        description="Whether this step was in a logical position in the sequence."
    )
    reasoning: str = Field(description="Brief explanation of the evaluation.")


class TrajectoryAnalysis(BaseModel):
    stepEvaluations: list[StepEvaluation] = Field(
        description="One evaluation per numbered step of the actual trajectory, in order."
    )
    missingSteps: list[str] | None = Field(
        default=None, description="Steps that should have been taken but were not."
    )
    extraSteps: list[str] | None = Field(
        default=None, description="Steps that were unnecessary or redundant."
    )
    overallAssessment: str = Field(
        default="", description="Brief overall assessment of the trajectory quality."
    )

    def counts(self) -> tuple[int, int, int]:
        """(steps evaluated, necessary, in order)."""
        steps = self.stepEvaluations
        return len(steps), count(steps, "wasNecessary", True), count(steps, "wasInOrder", True)

    def findings(self) -> dict[str, Any]:
        """The evaluations, missing and extra steps, for the LLM reason."""
        return {
            "stepEvaluations": [e.model_dump() for e in self.stepEvaluations],
            "missingSteps": self.missingSteps or [],
            "extraSteps": self.extraSteps or [],
        }


def check_step_count(j: AnyView, answer: BaseModel) -> None:
    """The judge step's check: one evaluation per numbered step of the actual trajectory."""
    if not isinstance(answer, TrajectoryAnalysis):
        raise TypeError(f"expected a TrajectoryAnalysis, got {type(answer).__name__}")
    problem = step_count_problem(j.ctx.call.output, len(answer.stepEvaluations))
    if problem:
        raise ValueError(problem)


def trajectory_score(analysis: TrajectoryAnalysis, steps: int) -> float:
    """The reference formula, unscaled: 0.6·necessary/n + 0.3·in order/n − 0.1·missing/(n+m),
    clamped; with no evaluations 0 if steps are missing, 0.5 if only extras, else 1."""
    n, necessary, in_order = analysis.counts()
    missing = analysis.missingSteps or []
    if not n:
        if steps:
            no_evaluations = "the judge returned no step evaluations for a trajectory of"
            raise ValueError(f"{no_evaluations} {steps} steps")
        return 0.0 if missing else Unrounded(0.5 if analysis.extraSteps else 1.0)
    penalty = len(missing) / (n + len(missing)) if missing else 0.0
    return clamp(necessary / n * 0.6 + in_order / n * 0.3 - penalty * 0.1)
