"""The pipeline's ``ScoreResult``, built without pydantic's per-field validation.

Why: every ``Scorer.run`` ends in one ``ScoreResult``; validating it field by field cost as
much as a whole cheap scorer (exact-match) and is repeated work, because the pipeline made
every part itself from checked inputs: the number and named values by ``check_score``, the
status, step names and messages by its own code, the judge calls by ``execute_judge_step``
(each ``JudgeCall`` validated where it was made).

Trust is only taken where it is earned: ``score_result`` checks, cheaply, the types of the
parts that can come from a user's definition (a label, a call id rewritten by
``prepare_call``, a not-scorable reason, step names given to ``Scorer(steps=...)``, prompt
texts) and hands anything unexpected to pydantic, which validates (and converts or rejects)
exactly as before. The model's own invariant (``_score_matches_status``: a finite score
exactly when ready, no values on a failure, an error on an error result) is checked on every
result either way: inline for the common ready result with a finite number and no named
values (the invariant's whole rule for that shape), by the model's validator otherwise.
"""

from __future__ import annotations

import math
from typing import Any, get_args

from assay.types import JudgeCall, ScoreError, ScoreResult, ScoreStatus, StepName

_FIELDS = frozenset(ScoreResult.model_fields)
_STEP_NAMES = frozenset(get_args(StepName))
_STATUSES = frozenset(get_args(ScoreStatus))
_set = object.__setattr__


def score_result(
    *,
    scorer_id: str,
    scorer_label: str,
    call_id: str,
    status: ScoreStatus,
    score: float | None,
    values: dict[str, float],
    corpus: Any,
    reason: str | None,
    steps: dict[StepName, Any],
    prompts: dict[str, str],
    judge_calls: list[JudgeCall],
    error: ScoreError | None,
    not_scorable_step: StepName | None,
    duration_ms: float,
) -> ScoreResult:
    """A ``ScoreResult`` of these fields (every one named by the signature; the dicts and
    the list fresh, owned by the result from now on), validated by pydantic unless every
    part already has the type validation would give it; the status invariant is checked
    either way."""
    fields = {
        "scorer_id": scorer_id,
        "scorer_label": scorer_label,
        "call_id": call_id,
        "status": status,
        "score": score,
        "values": values,
        "corpus": corpus,
        "reason": reason,
        "steps": steps,
        "prompts": prompts,
        "judge_calls": judge_calls,
        "error": error,
        "not_scorable_step": not_scorable_step,
        "duration_ms": duration_ms,
    }
    if not _trustworthy(fields):
        return ScoreResult(**fields)
    result = ScoreResult.__new__(ScoreResult)
    _set(result, "__dict__", fields)
    _set(result, "__pydantic_fields_set__", set(_FIELDS))
    _set(result, "__pydantic_extra__", None)
    _set(result, "__pydantic_private__", None)
    if status == "ready" and score is not None and not values and math.isfinite(score):
        return result  # what the invariant demands of a ready result without named values
    try:
        # the model's own "after" validator, called as the method it wraps
        result._score_matches_status()  # type: ignore[operator]
    except ValueError:
        return ScoreResult(**fields)  # raises pydantic's ValidationError, as before
    return result


def _trustworthy(fields: dict[str, Any]) -> bool:
    """Whether every field already has the exact type validation would leave it with."""
    if (
        type(fields["scorer_id"]) is not str
        or type(fields["scorer_label"]) is not str
        or type(fields["call_id"]) is not str
        or fields["status"] not in _STATUSES
        or type(fields["duration_ms"]) is not float
    ):
        return False
    score, reason = fields["score"], fields["reason"]
    error, step = fields["error"], fields["not_scorable_step"]
    if (
        (score is not None and type(score) is not float)
        or (reason is not None and type(reason) is not str)
        or (error is not None and type(error) is not ScoreError)
        or (step is not None and step not in _STEP_NAMES)
    ):
        return False
    for key in fields["steps"]:
        if type(key) is not str:
            return False
    for name, number in fields["values"].items():
        if type(name) is not str or type(number) is not float:
            return False
    for name, text in fields["prompts"].items():
        if type(name) is not str or type(text) is not str:
            return False
    return all(type(call) is JudgeCall for call in fields["judge_calls"])
