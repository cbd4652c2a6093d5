"""Trajectory accuracy (LLM): was the agent's sequence of actions necessary and well ordered?

Parity with ``createTrajectoryAccuracyScorerLLM`` (``llm-trajectory-accuracy-scorer``,
reference §2.21). The output is a trajectory (``{"steps": [...]}``, e.g. from a trace) or
agent messages, whose tool calls become ``tool_call`` steps. The steps are rendered as
numbered lines (``1. [tool_call] search (args: {...}, result: {...})``, children indented);
a judge evaluates each step (necessary? in a sensible position?) and lists missing and extra
steps, comparing with the expected steps when there are any (the ``expected_trajectory``
param, else the item's ``expected_trajectory``), else judging from the task alone.

Score (the reference formula): with ``n`` step evaluations and ``m`` missing steps,
``round2(clamp(0.6·necessary/n + 0.3·in_order/n − 0.1·m/(n+m), 0, 1))``; with no
evaluations, 0 if steps are missing, 0.5 if only extra steps are named, else 1.
Known reference property: **a perfect trajectory scores 0.9, never 1.0** — the remaining 0.1
is a penalty weight that can only be lost, never earned. Thresholds must take that into
account (1.0 is reachable only when the judge evaluates no step at all).

Deviations from the reference
- The step evaluations must be one per numbered step of the actual trajectory (top-level
  steps, or every numbered line when nested steps are evaluated too; none for an empty
  trajectory); otherwise the judge gets one repair turn and then the run fails (status
  "error"). The reference scores whatever evaluations came back, and with none a flawless 1.0
  (or 0.5) for a trajectory nobody graded.
- ``scale`` (default 1) multiplies the clamped score before rounding; the reference has none.
- Agent messages are accepted as the output (converted with ``extract_trajectory``); the
  reference expects the runner to have converted them. An expected trajectory on the item may
  also be a bare list of steps.
- ``reason`` can be ``"template"`` (no model call) or ``"none"``; the reference always asks
  the judge. The LLM reason prompt gets the score and the evaluations only.
  The LLM reason step, like every judge's, has plain-text system instructions (no JSON).
- Judged texts (request, response, both trajectories) are fenced with ``data_block``; the
  prompts are our own words.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assay.scorers._lib.formulas import clamp, count
from assay.scorers._lib.judge_common import ReasonedJudgeParams
from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, Unrounded, View
from assay.scorers._lib.trajectory_format import (
    final_response,
    step_count_problem,
    trajectory_payload,
)
from assay.scorers._lib.trajectory_format import format_expected_steps as format_expected_steps
from assay.scorers._lib.trajectory_format import format_trajectory as format_trajectory
from assay.scorers._lib.trajectory_params import ExpectedStep, TrajectoryExpectation

INSTRUCTIONS = """\
You assess the sequence of actions (tool calls, model generations, workflow steps) an AI
agent took to fulfil a user's request. For every step decide whether it was necessary for the
task and whether it came at a sensible point in the sequence, given the dependencies between
steps. A good trajectory is complete, efficient and logically ordered: redundant or repeated
steps lower its quality even when the final answer is right, and a missing critical step is a
serious flaw. When an expected trajectory is given, use it as the reference path; its order is
a guide, not an absolute rule. Give short, specific reasoning."""


PERFECT_SCORE_NOTE = (
    "Known reference property: a perfect trajectory scores 0.9, not 1.0 "
    "(0.6·necessary + 0.3·in order − 0.1·missing penalty; the 0.1 is never earned). "
    "Set thresholds at or below 0.9."
)


class TrajectoryAccuracyLLMParams(ReasonedJudgeParams):
    expected_trajectory: TrajectoryExpectation | list[ExpectedStep] | None = Field(
        default=None,
        description="Expected steps (a list, or a trajectory with steps); if unset, each "
        "item's expected_trajectory is used, and without one the judge works from the task.",
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


def check_step_count(j: View[Any], answer: BaseModel) -> None:
    """The judge step's check: one evaluation per numbered step of the actual trajectory."""
    if not isinstance(answer, TrajectoryAnalysis):
        raise TypeError(f"expected a TrajectoryAnalysis, got {type(answer).__name__}")
    problem = step_count_problem(j.ctx.call.output, len(answer.stepEvaluations))
    if problem:
        raise ValueError(problem)


def _expected(j: View[Any]) -> str | None:
    return j.pre["expectedTrajectoryFormatted"] or None


def _after(j: View[Any]) -> str:
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


class TrajectoryAccuracyLLM(JudgeScorer[TrajectoryAccuracyLLMParams]):
    """A judge rates each step of the agent's trajectory as necessary and in order (against
    expected steps when given): 0.6·necessary + 0.3·in order − 0.1·missing."""

    type_id, params_model = "trajectory-accuracy-llm", TrajectoryAccuracyLLMParams
    label = "Trajectory Accuracy (LLM)"
    reference = "createTrajectoryAccuracyScorerLLM (llm-trajectory-accuracy-scorer)"
    preview_notes = (
        f"{PERFECT_SCORE_NOTE} One judge call, plus one for the reason when "
        "reason='llm'. The output may be a trajectory or agent messages (tool calls become steps)."
    )
    instructions = INSTRUCTIONS
    reason_sentences = 1

    def describe_score(self, j: View[TrajectoryAccuracyLLMParams]) -> str:
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

    def prepare(self, j: View[TrajectoryAccuracyLLMParams]) -> dict[str, Any]:
        call = j.ctx.call
        return trajectory_payload(
            call.output, j.params.expected_trajectory, call.expected_trajectory
        )

    def score(self, j: View[TrajectoryAccuracyLLMParams]) -> float:
        analysis, steps = j.analysis, j.pre["stepCount"]
        evaluations, missing = analysis.stepEvaluations, analysis.missingSteps or []
        if not evaluations:
            if steps:
                no_evaluations = "the judge returned no step evaluations for a trajectory of"
                raise ValueError(f"{no_evaluations} {steps} steps")
            return 0.0 if missing else Unrounded(0.5 if analysis.extraSteps else 1.0)
        n = len(evaluations)
        necessary = count(evaluations, "wasNecessary", True)
        in_order = count(evaluations, "wasInOrder", True)
        penalty = len(missing) / (n + len(missing)) if missing else 0.0
        return clamp(necessary / n * 0.6 + in_order / n * 0.3 - penalty * 0.1)

    def findings(self, j: View[TrajectoryAccuracyLLMParams]) -> dict[str, Any]:
        a: TrajectoryAnalysis = j.analysis
        return {
            "evaluation": {
                "stepEvaluations": [e.model_dump() for e in a.stepEvaluations],
                "missingSteps": a.missingSteps or [],
                "extraSteps": a.extraSteps or [],
            }
        }

    def reason(self, j: View[TrajectoryAccuracyLLMParams]) -> str:
        analysis: TrajectoryAnalysis = j.analysis
        evaluations, n = analysis.stepEvaluations, len(analysis.stepEvaluations)
        parts = [f"Score {format(j.score or 0.0, 'g')}:"]
        if n:
            necessary = count(evaluations, "wasNecessary", True)
            in_order = count(evaluations, "wasInOrder", True)
            parts.append(f"{necessary}/{n} steps necessary, {in_order}/{n} in order.")
        else:
            parts.append("no steps were taken.")
        if analysis.missingSteps:
            parts.append(f"Missing: {', '.join(analysis.missingSteps)}.")
        if analysis.extraSteps:
            parts.append(f"Extra: {', '.join(analysis.extraSteps)}.")
        return " ".join(
            [*parts, analysis.overallAssessment] if analysis.overallAssessment else parts
        )
