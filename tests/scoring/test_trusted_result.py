"""``score_result``: the pipeline's trusted ``ScoreResult`` equals the validated one, and
anything it cannot vouch for goes through pydantic exactly as before."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from assay.scoring.trusted_result import score_result
from assay.types import JudgeCall, ScoreError, ScoreResult, Usage


def _fields(**changes: Any) -> dict[str, Any]:
    call = JudgeCall(step="analyze", status="success", prompt="p", model_id="m", usage=Usage())
    fields: dict[str, Any] = {
        "scorer_id": "s",
        "scorer_label": "S",
        "call_id": "c1",
        "status": "ready",
        "score": 0.5,
        "values": {"precision": 0.25},
        "corpus": {"pair": ["a", ["b"]]},
        "reason": "because",
        "steps": {"analyze": {"x": 1}, "score": 0.5},
        "prompts": {"analyze": "judge this"},
        "judge_calls": [call],
        "error": None,
        "not_scorable_step": None,
        "duration_ms": 1.25,
    }
    fields.update(changes)
    return fields


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"values": {}, "corpus": None, "judge_calls": [], "prompts": {}, "reason": None},
        {
            "status": "not_scorable",
            "score": None,
            "values": {},
            "corpus": None,
            "not_scorable_step": "score",
            "reason": "not applicable",
        },
        {
            "status": "error",
            "score": None,
            "values": {},
            "corpus": None,
            "error": ScoreError(message="boom", failed_step="score", kind="ValueError"),
        },
    ],
)
def test_trusted_result_equals_the_validated_one(changes: dict[str, Any]) -> None:
    built = score_result(**_fields(**changes))
    validated = ScoreResult(**_fields(**changes))
    assert built == validated
    assert built.model_dump(mode="json") == validated.model_dump(mode="json")
    assert built.model_fields_set == validated.model_fields_set
    assert ScoreResult.model_validate_json(built.model_dump_json()) == validated


def test_a_part_of_an_unexpected_type_is_validated_by_pydantic() -> None:
    # an int score and an int value are what validation converts to float
    built = score_result(**_fields(score=1, values={"precision": 0}))
    assert type(built.score) is float and type(built.values["precision"]) is float
    with pytest.raises(ValidationError, match="reason"):
        score_result(**_fields(reason=["not", "a", "string"]))
    with pytest.raises(ValidationError, match="not_scorable_step"):
        score_result(
            **_fields(
                status="not_scorable", score=None, values={}, corpus=None, not_scorable_step="grade"
            )
        )


@pytest.mark.parametrize(
    "changes",
    [
        {"score": float("nan")},
        {"score": float("inf"), "values": {}},  # the inline check of a ready result
        {"score": -float("inf"), "values": {}, "corpus": None},
        {"score": None},
        {"values": {"x": float("nan")}},
        {"values": {"": 1.0}},
        {"status": "error", "score": None, "values": {}, "corpus": None},
        {"status": "not_scorable", "score": 0.5},
    ],
)
def test_the_status_invariant_still_raises_pydantics_error(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        score_result(**_fields(**changes))
