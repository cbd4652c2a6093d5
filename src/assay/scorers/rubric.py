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

import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from assay.scorers._lib.judge_common import ScaledJudgeParams, data_block, judge_config
from assay.scorers._lib.verdicts import one_per
from assay.scoring.context import NotScorable, StepContext, not_scorable
from assay.scoring.registry import register_scorer
from assay.scoring.scorer import Scorer
from assay.scoring.steps import judge_step

INSTRUCTIONS = """\
You grade an agent's output against a rubric: a checklist of criteria.
Decide for every criterion, on its own and independently of the others, whether the output
satisfies it. A criterion is satisfied only when the output clearly and completely meets it;
when in doubt, it is not satisfied. Use only evidence that is present in the output (the task
is there for context); do not assume anything else. Effort, intent or partial progress do not
count. Keep each reasoning short and concrete: say what is present or what is missing."""

_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


class RubricCriterion(BaseModel):
    """One criterion of a rubric."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True
    )

    id: str | None = Field(default=None, description="Optional stable identifier.")
    description: str = Field(min_length=1, description="What the output must satisfy.")
    required: bool = Field(
        default=True,
        description="Required criteria gate the score; optional ones are graded and reported.",
    )

    @field_validator("description")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a criterion description must not be blank")
        return value.strip()


def parse_rubric_string(text: str) -> list[RubricCriterion]:
    """A checklist string → required criteria, one per non-empty line, list markers stripped."""
    criteria = []
    for line in text.split("\n"):
        description = _MARKER.sub("", line, count=1).strip()
        if description:
            criteria.append(RubricCriterion(description=description))
    return criteria


def normalize_rubric(value: Any) -> list[RubricCriterion]:
    """A rubric in any accepted form → criteria. ``None``/empty → ``[]``.

    Raises:
        ValueError: the rubric is neither a string nor a list of criteria.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return parse_rubric_string(value)
    if isinstance(value, list | tuple):
        criteria: list[RubricCriterion] = []
        for index, item in enumerate(value):
            if isinstance(item, RubricCriterion):
                criteria.append(item)
            elif isinstance(item, str):
                criteria.extend(parse_rubric_string(item))
            elif isinstance(item, Mapping):
                try:
                    criteria.append(RubricCriterion.model_validate(dict(item)))
                except ValidationError as exc:
                    problem = exc.errors()[0]
                    raise ValueError(
                        f"rubric criterion {index} is invalid: "
                        f"{'.'.join(map(str, problem['loc']))}: {problem['msg']}"
                    ) from exc
            else:
                raise ValueError(
                    f"rubric criterion {index} must be a string or an object with a "
                    f"description, got {type(item).__name__}"
                )
        return criteria
    raise ValueError(
        f"a rubric must be a checklist string or a list of criteria, got {type(value).__name__}"
    )


class RubricParams(ScaledJudgeParams):
    criteria: list[RubricCriterion] | str | None = Field(
        default=None,
        description="The rubric: a list of {id?, description, required=true} or a checklist "
        "string (one required criterion per line). If unset, each item's metadata['rubric'] "
        "or input['rubric'] is used.",
    )

    @field_validator("scale")
    @classmethod
    def _finite_scale(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("scale must be a finite number")
        return value


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


def _source_rubric(ctx: StepContext, static: list[RubricCriterion]) -> tuple[str, Any]:
    if static:
        return "params", static
    from_metadata = ctx.call.metadata.get("rubric") if ctx.call.metadata else None
    if from_metadata:
        return "metadata", from_metadata
    run_input = ctx.call.input
    if isinstance(run_input, Mapping) and run_input.get("rubric"):
        return "input", run_input["rubric"]
    return "none", None


def _input_field(ctx: StepContext, key: str) -> str | None:
    value = ctx.call.input.get(key) if isinstance(ctx.call.input, Mapping) else None
    return value if isinstance(value, str) else None


def _neutral(text: str) -> str:
    """Rubric text is not fenced (it is the standard, not the judged data), but must not
    be able to forge the data markers."""
    return text.replace("<<<", "‹‹‹").replace(">>>", "›››")


def _criteria_lines(criteria: list[RubricCriterion]) -> str:
    return "\n".join(
        f"{i}. [{'required' if c.required else 'optional'}] {_neutral(c.description)}"
        for i, c in enumerate(criteria, start=1)
    )


def _plural(n: int) -> str:
    return "criterion" if n == 1 else "criteria"


@register_scorer(
    "rubric",
    label="Rubric (LLM)",
    description="1 only when the output satisfies every required criterion of a rubric "
    "(a checklist judged criterion by criterion), else 0.",
    params=RubricParams,
    kind="judge",
    higher_is_better=True,
    score_range=(0.0, 1.0),
    reference="createRubricScorer (rubric-scorer)",
    preview_notes="Binary (0 or scale); one judge call; the reason is built from the verdicts. "
    "Items without a rubric (criteria param, metadata['rubric'] or input['rubric']) are not "
    "scorable rather than a free pass.",
)
def build(params: RubricParams) -> Scorer:
    static = normalize_rubric(params.criteria)

    def preprocess(ctx: StepContext) -> dict[str, Any] | NotScorable:
        source, raw = _source_rubric(ctx, static)
        criteria = normalize_rubric(raw)
        if not criteria:
            return not_scorable(
                "no rubric: set the criteria param, or give the item a rubric in "
                "metadata['rubric'] or input['rubric']"
            )
        return {
            "source": source,
            "criteria": [c.model_dump(exclude_none=True) for c in criteria],
        }

    def criteria_of(ctx: StepContext) -> list[RubricCriterion]:
        return [RubricCriterion.model_validate(c) for c in ctx.preprocess_result["criteria"]]

    def analyze_prompt(ctx: StepContext) -> str:
        task = _input_field(ctx, "originalTask") or ctx.input_text
        output = ctx.output_text or _input_field(ctx, "currentText") or ""
        criteria = criteria_of(ctx)
        return (
            "Grade the agent's output against each criterion of the rubric.\n\n"
            f"{data_block('task', task or '(no task given)')}\n\n"
            f"{data_block('output to grade', output or '(empty output)')}\n\n"
            f"Rubric ({len(criteria)} {_plural(len(criteria))}):\n{_criteria_lines(criteria)}\n\n"
            f'Return exactly {len(criteria)} entries in "criteria", one per rubric criterion '
            "in the same order, each copying the criterion's text and required flag; then an "
            '"overallAssessment" of one or two sentences.'
        )

    def verdicts(ctx: StepContext) -> list[tuple[RubricCriterion, CriterionVerdict]]:
        criteria = criteria_of(ctx)
        analysis: RubricAnalysis = ctx.analyze_result
        if len(analysis.criteria) != len(criteria):
            raise ValueError(
                f"the judge returned {len(analysis.criteria)} verdicts for {len(criteria)} "
                "rubric criteria; every criterion needs exactly one verdict"
            )
        return list(zip(criteria, analysis.criteria, strict=True))

    def score(ctx: StepContext) -> float:
        pairs = verdicts(ctx)
        required = [v for c, v in pairs if c.required]
        gating = required or [v for _, v in pairs]
        return (1.0 if all(v.satisfied for v in gating) else 0.0) * params.scale

    def reason(ctx: StepContext) -> str:
        pairs = verdicts(ctx)
        complete = ctx.score is not None and ctx.score >= params.scale
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
        analysis: RubricAnalysis = ctx.analyze_result
        if analysis.overallAssessment:
            text += f"\n\n{analysis.overallAssessment}"
        if not complete:
            has_required = any(c.required for c, _ in pairs)
            unmet = sum(1 for c, v in pairs if (c.required or not has_required) and not v.satisfied)
            kind = "required " if has_required else ""
            text += f"\n\nTo finish, address the {unmet} unmet {kind}{_plural(unmet)} above."
        return text

    return (
        Scorer("rubric", description="Rubric (LLM)", judge=judge_config(params, INSTRUCTIONS))
        .preprocess(preprocess)
        .analyze(
            judge_step(
                analyze_prompt,
                RubricAnalysis,
                description="Judge the output against each rubric criterion",
                version="1",
                check=one_per(criteria_of, "criteria", "rubric criterion"),
            )
        )
        .score(score)
        .reason(reason)
    )
