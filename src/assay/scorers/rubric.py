"""Rubric: does the output meet every required criterion of a checklist? (binary judge)

Where the rubric comes from, and deviations from the reference: docs/scorers.md, "rubric"."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.scorers._lib.judge_common import ScaledJudgeParams
from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, Unrounded, View, one_per_item
from assay.scorers._lib.rubric_criteria import (
    CriterionVerdict,
    RubricAnalysis,
    RubricCriterion,
    criteria_lines,
    criteria_of,
    input_field,
    plural,
    prepared_rubric,
    verdict_lines,
    what_is_left,
)
from assay.scoring.context import NotScorable
from assay.scoring.registry import register_scorer

INSTRUCTIONS = """\
You grade an agent's output against a rubric: a checklist of criteria.
Decide for every criterion, on its own and independently of the others, whether the output
satisfies it. A criterion is satisfied only when the output clearly and completely meets it;
when in doubt, it is not satisfied. Use only evidence that is present in the output (the task
is there for context); do not assume anything else. Effort, intent or partial progress do not
count. Keep each reasoning short and concrete: say what is present or what is missing."""


class RubricParams(ScaledJudgeParams):
    criteria: list[RubricCriterion] | str | None = Field(
        default=None,
        description="The rubric: a list of {id?, description, required=true} or a checklist "
        "string (one required criterion per line). If unset, each item's metadata['rubric'] "
        "or input['rubric'] is used.",
    )


def _after(j: RubricView) -> str:
    criteria = criteria_of(j)
    return (
        f"Rubric ({len(criteria)} {plural(len(criteria))}):\n{criteria_lines(criteria)}\n\n"
        f'Return exactly {len(criteria)} entries in "criteria", one per rubric criterion '
        "in the same order, each copying the criterion's text and required flag; then an "
        '"overallAssessment" of one or two sentences.'
    )


RubricView = View[RubricParams, dict[str, Any], RubricAnalysis]
"""What Rubric's functions see (typed: ``j.pre``, ``j.analysis``)."""


@register_scorer(
    "rubric",
    label="Rubric (LLM)",
    params=RubricParams,
    reference="createRubricScorer (rubric-scorer)",
    preview_notes=(
        "Binary (0 or scale); one judge call; the reason is built from the verdicts. "
        "Items without a rubric (criteria param, metadata['rubric'] or input['rubric']) are not "
        "scorable rather than a free pass."
    ),
)
class Rubric(JudgeScorer[RubricParams, dict[str, Any], RubricAnalysis]):
    """1 only when the output satisfies every required criterion of a rubric (a checklist
    judged criterion by criterion), else 0."""

    instructions = INSTRUCTIONS
    analyze = Prompt(
        "Grade the agent's output against each criterion of the rubric.",
        RubricAnalysis,
        inputs={
            "task": lambda j: input_field(j.ctx, "originalTask") or j.input or "(no task given)",
            "output to grade": lambda j: (
                j.output or input_field(j.ctx, "currentText") or "(empty output)"
            ),
        },
        after=_after,
        check=one_per_item(criteria_of, "criteria", "rubric criterion"),
        description="Judge the output against each rubric criterion",
    )

    def prepare(self, j: RubricView) -> dict[str, Any] | NotScorable:
        return prepared_rubric(j.ctx, j.params.criteria)

    def pairs(self, j: RubricView) -> list[tuple[RubricCriterion, CriterionVerdict]]:
        return list(zip(criteria_of(j), j.analysis.criteria, strict=True))  # one per (check)

    def score(self, j: RubricView) -> float:
        pairs = self.pairs(j)
        gating = [v for c, v in pairs if c.required] or [v for _, v in pairs]
        return Unrounded(1.0 if all(v.satisfied for v in gating) else 0.0)

    def reason(self, j: RubricView) -> str:
        pairs = self.pairs(j)
        complete = j.score is not None and j.score >= j.params.scale
        header = "✅ Rubric satisfied: every required criterion is met."
        if not complete:
            header = "❌ Rubric not yet satisfied."
        text = f"{header}\n\n{verdict_lines(pairs)}"
        if j.analysis.overallAssessment:
            text += f"\n\n{j.analysis.overallAssessment}"
        return text if complete else f"{text}\n\n{what_is_left(pairs)}"
