"""Trajectory accuracy (LLM): was the agent's sequence of actions necessary and well ordered?

Formula (a perfect run scores 0.9) and deviations: docs/scorers.md, "trajectory-accuracy-llm"."""

from __future__ import annotations

from typing import Any

from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, View, listed
from assay.scorers._lib.trajectory_format import final_response, trajectory_payload
from assay.scorers._lib.trajectory_judgement import (
    PERFECT_SCORE_NOTE,
    TrajectoryAnalysis,
    check_step_count,
    trajectory_score,
)
from assay.scorers._lib.trajectory_params import TrajectoryAccuracyLLMParams
from assay.scoring.registry import register_scorer

INSTRUCTIONS = """\
You assess the sequence of actions (tool calls, model generations, workflow steps) an AI
agent took to fulfil a user's request. For every step decide whether it was necessary for the
task and whether it came at a sensible point in the sequence, given the dependencies between
steps. A good trajectory is complete, efficient and logically ordered: redundant or repeated
steps lower its quality even when the final answer is right, and a missing critical step is a
serious flaw. When an expected trajectory is given, use it as the reference path; its order is
a guide, not an absolute rule. Give short, specific reasoning."""


def _expected(j: TrajectoryAccuracyLLMView) -> str | None:
    return j.pre["expectedTrajectoryFormatted"] or None


def _after(j: TrajectoryAccuracyLLMView) -> str:
    compare = (
        "Compare with the expected trajectory: were all expected steps performed, "
        "in a sensible order, without unnecessary extra steps?"
        if _expected(j)
        else "No expected trajectory is given: judge from the request whether the steps "
        "were complete, free of redundancy, appropriate and in a logical order."
    )
    return compare + (
        '\n\nReturn one entry in "stepEvaluations" per numbered step of the actual '
        'trajectory, in order; list in "missingSteps" the steps that should have been '
        'taken but were not, in "extraSteps" the unnecessary or redundant ones, and give a '
        'short "overallAssessment".'
    )


TrajectoryAccuracyLLMView = View[TrajectoryAccuracyLLMParams, dict[str, Any], TrajectoryAnalysis]
"""What TrajectoryAccuracyLLM's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "trajectory-accuracy-llm",
    label="Trajectory Accuracy (LLM)",
    params=TrajectoryAccuracyLLMParams,
    reference="createTrajectoryAccuracyScorerLLM (llm-trajectory-accuracy-scorer)",
    preview_notes=(
        f"{PERFECT_SCORE_NOTE} One judge call, plus one for the reason when "
        "reason='llm'. The output may be a trajectory or agent messages (tool calls become steps)."
    ),
)
class TrajectoryAccuracyLLM(
    JudgeScorer[TrajectoryAccuracyLLMParams, dict[str, Any], TrajectoryAnalysis]
):
    """A judge rates each step of the agent's trajectory as necessary and in order (against
    expected steps when given): 0.6·necessary + 0.3·in order − 0.1·missing."""

    instructions = INSTRUCTIONS
    reason_sentences = 1

    def describe_score(self, j: TrajectoryAccuracyLLMView) -> str:
        best = format(0.9 * j.params.scale, "g")
        return f"0 = poor; {best} = every step necessary and in order"

    analyze = Prompt(
        "Evaluate the sequence of actions the agent took for the user's request.",
        TrajectoryAnalysis,
        inputs={
            "user request": lambda j: j.input,
            "agent final response": lambda j: final_response(j.ctx.call.output),
            "actual trajectory": lambda j: j.pre["actualTrajectoryFormatted"] or "(no steps taken)",
            "expected trajectory": _expected,
        },
        after=_after,
        check=check_step_count,
        description="Judge each step of the trajectory: necessary, in order",
    )

    def prepare(self, j: TrajectoryAccuracyLLMView) -> dict[str, Any]:
        call = j.ctx.call
        return trajectory_payload(
            call.output, j.params.expected_trajectory, call.expected_trajectory
        )

    def score(self, j: TrajectoryAccuracyLLMView) -> float:
        return trajectory_score(j.analysis, j.pre["stepCount"])

    def findings(self, j: TrajectoryAccuracyLLMView) -> dict[str, Any]:
        return {"evaluation": j.analysis.findings()}

    def reason(self, j: TrajectoryAccuracyLLMView) -> str:
        analysis: TrajectoryAnalysis = j.analysis
        n, necessary, in_order = analysis.counts()
        text = f"Score {format(j.score or 0.0, 'g')}:"
        if n:
            text += f" {necessary}/{n} steps necessary, {in_order}/{n} in order."
        else:
            text += " no steps were taken."
        text += listed("Missing", analysis.missingSteps or [], ", ")
        text += listed("Extra", analysis.extraSteps or [], ", ")
        return text + (f" {analysis.overallAssessment}" if analysis.overallAssessment else "")
