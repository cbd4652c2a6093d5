"""Rubrics: their criteria, the accepted forms (a list of criteria or a checklist string),
where a run's rubric comes from (params, ``metadata["rubric"]``, ``input["rubric"]``), and
the judge's verdict per criterion.

Kept apart from ``rubric`` so the scorer module is its declaration only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from assay.scorers._lib.judge_scorer import AnyView
from assay.scoring.context import NotScorable, StepContext, not_scorable

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


def source_rubric(ctx: StepContext, static: list[RubricCriterion]) -> tuple[str, Any]:
    if static:
        return "params", static
    from_metadata = ctx.call.metadata.get("rubric") if ctx.call.metadata else None
    if from_metadata:
        return "metadata", from_metadata
    run_input = ctx.call.input
    if isinstance(run_input, Mapping) and run_input.get("rubric"):
        return "input", run_input["rubric"]
    return "none", None


def input_field(ctx: StepContext, key: str) -> str | None:
    value = ctx.call.input.get(key) if isinstance(ctx.call.input, Mapping) else None
    return value if isinstance(value, str) else None


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


def criteria_lines(criteria: list[RubricCriterion]) -> str:
    """Rubric text is not fenced (it is the standard, not the judged data); ``Prompt.after``
    neutralises data-marker look-alikes in it."""
    return "\n".join(
        f"{i}. [{'required' if c.required else 'optional'}] {c.description}"
        for i, c in enumerate(criteria, start=1)
    )


def plural(n: int) -> str:
    """``criterion`` or ``criteria``."""
    return "criterion" if n == 1 else "criteria"


def criteria_of(j: AnyView) -> list[RubricCriterion]:
    """The run's rubric, as the prepare step found it."""
    return [RubricCriterion.model_validate(c) for c in j.pre["criteria"]]


def prepared_rubric(ctx: StepContext, criteria_param: Any) -> dict[str, Any] | NotScorable:
    """The rubric step's result: where the run's rubric came from and its criteria, or
    ``not_scorable`` when there is none (no judge call, no free pass)."""
    source, raw = source_rubric(ctx, normalize_rubric(criteria_param))
    criteria = normalize_rubric(raw)
    if not criteria:
        return not_scorable(
            "no rubric: set the criteria param, or give the item a rubric in "
            "metadata['rubric'] or input['rubric']"
        )
    return {"source": source, "criteria": [c.model_dump(exclude_none=True) for c in criteria]}


def verdict_lines(pairs: list[tuple[RubricCriterion, CriterionVerdict]]) -> str:
    """One ✅/❌ line per criterion with the judge's reasoning under it."""
    return "\n".join(
        f"{'✅' if v.satisfied else '❌'} [{'required' if c.required else 'optional'}] "
        f"{c.description}\n   → {v.reasoning}"
        for c, v in pairs
    )


def what_is_left(pairs: list[tuple[RubricCriterion, CriterionVerdict]]) -> str:
    """The footer of a failing rubric: how many (required) criteria are still unmet."""
    has_required = any(c.required for c, _ in pairs)
    unmet = sum(1 for c, v in pairs if (c.required or not has_required) and not v.satisfied)
    kind = "required " if has_required else ""
    return f"To finish, address the {unmet} unmet {kind}{plural(unmet)} above."
