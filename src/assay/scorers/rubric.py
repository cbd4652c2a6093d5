"""Rubric: does the output meet every required criterion of a checklist? (binary judge)

Parity with ``createRubricScorer`` (``rubric-scorer``, reference §2.22). One judge call grades
each criterion independently; the score is ``scale`` when every *required* criterion is
satisfied (every criterion, if none is required) and ``0`` otherwise. The reason is written
from the verdicts (no model call): one ✅/❌ line per criterion and what is left to do, which
makes it usable as feedback for an agent that iterates until the rubric passes.

Where the rubric comes from: the ``criteria`` param (a list of ``{id?, description,
required=true}`` or a checklist string, one criterion per non-empty line, leading ``-``, ``*``,
``•``, ``1.`` or ``1)`` markers stripped, all required); else the item's ``metadata["rubric"]``;
else ``input["rubric"]`` (same two forms). The task shown to the judge is ``input.originalTask``
or the user message; the output is the last assistant text, else ``input.currentText``.

Deviations from the reference
- No rubric at all → ``not_scorable`` and no judge call. The reference still calls the judge
  (asking it to return an empty list) and scores a "no-op pass" of 1, which would inflate an
  evaluation's mean; the reference does this only so its agent loop is not blocked.
- A judge answer with no verdicts, or with a different number of verdicts than criteria, gets
  one repair turn and is then an error, not a pass (the reference scores 1 when the list is
  empty): a criterion nobody graded is not satisfied, and guessing which one was skipped would
  invent a verdict.
- The required/optional flag and the criterion text come from the rubric, not from the judge's
  echo of them (verdicts are matched by position). In the reference a judge that flips
  ``required`` to false — or an output that talks it into doing so — would pass a failing
  output.
- The per-run rubric is read from ``metadata["rubric"]`` (this project's equivalent of the
  reference's ``requestContext``/``additionalContext``) and ``input["rubric"]``. A list entry may
  be a plain string (a required criterion) as well as a criterion object.
- The reason's ✅ header follows the scaled score (the reference compares with 1, so with a
  scale below 1 it called a passing rubric "not yet satisfied"); when no criterion is
  required, the footer counts the unmet criteria (the reference would say "0 unmet required").
- Judged texts are fenced with ``data_block`` (prompt-injection guard); the prompts are our own.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assay.scorers._lib.judge_common import ScaledJudgeParams
from assay.scorers._lib.judge_scorer import JudgeScorer, Prompt, Unrounded, View, one_per_item
from assay.scorers._lib.rubric_criteria import (
    RubricCriterion,
    input_field,
    normalize_rubric,
    source_rubric,
)
from assay.scorers._lib.rubric_criteria import parse_rubric_string as parse_rubric_string
from assay.scoring.context import NotScorable, not_scorable

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


class CriterionVerdict(BaseModel):
    criterion: str = Field(description="The criterion's text, as given in the rubric.")
    satisfied: bool = Field(description="True only if the output clearly and fully meets it.")
    required: bool = Field(default=True, description="The criterion's required flag, as given.")
    reasoning: str = Field(description="Why it is or is not satisfied (what is present/missing).")


class RubricAnalysis(BaseModel):
    criteria: list[CriterionVerdict] = Field(
        description="One verdict per rubric criterion, in the rubric's order."
    )
    overallAssessment: str = Field(
        default="", description="One or two sentences: what passed and what is missing."
    )


def _criteria_lines(criteria: list[RubricCriterion]) -> str:
    """Rubric text is not fenced (it is the standard, not the judged data); ``Prompt.after``
    neutralises data-marker look-alikes in it."""
    return "\n".join(
        f"{i}. [{'required' if c.required else 'optional'}] {c.description}"
        for i, c in enumerate(criteria, start=1)
    )


def _plural(n: int) -> str:
    return "criterion" if n == 1 else "criteria"


def criteria_of(j: View[Any]) -> list[RubricCriterion]:
    return [RubricCriterion.model_validate(c) for c in j.pre["criteria"]]


def _after(j: View[Any]) -> str:
    criteria = criteria_of(j)
    return (
        f"Rubric ({len(criteria)} {_plural(len(criteria))}):\n{_criteria_lines(criteria)}\n\n"
        f'Return exactly {len(criteria)} entries in "criteria", one per rubric criterion '
        "in the same order, each copying the criterion's text and required flag; then an "
        '"overallAssessment" of one or two sentences.'
    )


class Rubric(JudgeScorer[RubricParams]):
    """1 only when the output satisfies every required criterion of a rubric (a checklist
    judged criterion by criterion), else 0."""

    type_id, label, params_model = "rubric", "Rubric (LLM)", RubricParams
    reference = "createRubricScorer (rubric-scorer)"
    preview_notes = (
        "Binary (0 or scale); one judge call; the reason is built from the verdicts. "
        "Items without a rubric (criteria param, metadata['rubric'] or input['rubric']) are not "
        "scorable rather than a free pass."
    )
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

    def prepare(self, j: View[RubricParams]) -> dict[str, Any] | NotScorable:
        source, raw = source_rubric(j.ctx, normalize_rubric(j.params.criteria))
        criteria = normalize_rubric(raw)
        if not criteria:
            return not_scorable(
                "no rubric: set the criteria param, or give the item a rubric in "
                "metadata['rubric'] or input['rubric']"
            )
        return {"source": source, "criteria": [c.model_dump(exclude_none=True) for c in criteria]}

    def pairs(self, j: View[RubricParams]) -> list[tuple[RubricCriterion, CriterionVerdict]]:
        return list(zip(criteria_of(j), j.analysis.criteria, strict=True))  # one per (check)

    def score(self, j: View[RubricParams]) -> float:
        pairs = self.pairs(j)
        gating = [v for c, v in pairs if c.required] or [v for _, v in pairs]
        return Unrounded(1.0 if all(v.satisfied for v in gating) else 0.0)

    def reason(self, j: View[RubricParams]) -> str:
        pairs = self.pairs(j)
        complete = j.score is not None and j.score >= j.params.scale
        header = (
            "✅ Rubric satisfied: every required criterion is met."
            if complete
            else "❌ Rubric not yet satisfied."
        )
        lines = [
            f"{'✅' if v.satisfied else '❌'} [{'required' if c.required else 'optional'}] "
            f"{c.description}\n   → {v.reasoning}"
            for c, v in pairs
        ]
        text = f"{header}\n\n" + "\n".join(lines)
        if j.analysis.overallAssessment:
            text += f"\n\n{j.analysis.overallAssessment}"
        if not complete:
            has_required = any(c.required for c, _ in pairs)
            unmet = sum(1 for c, v in pairs if (c.required or not has_required) and not v.satisfied)
            kind = "required " if has_required else ""
            text += f"\n\nTo finish, address the {unmet} unmet {kind}{_plural(unmet)} above."
        return text
