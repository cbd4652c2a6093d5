"""``construct``: the runner's trusted constructor builds exactly what validation builds."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, PrivateAttr

from assay.runner.trusted import construct
from assay.types import ItemResult, ScoreResult, TargetError, Usage


def _fields() -> dict[str, object]:
    score = ScoreResult(scorer_id="s", scorer_label="S", call_id="c", status="ready", score=0.5)
    return {
        "item_id": "i1",
        "repeat": 1,
        "position": 3,
        "input": "q",
        "output": {"answer": "a"},
        "expected_output": "a",
        "error": None,
        "latency_ms": 1.5,
        "scores": {"s": score},
        "warnings": ["w"],
        "started_at": 10.0,
        "completed_at": 11.0,
        "usage": Usage(input_tokens=3, output_tokens=4),
        "cost_usd": 0.25,
        "samples": ["a", "b"],
        "meta": {"decision": "sampled", "rate": 0.5},
    }


def test_construct_equals_the_validated_model_and_dumps_the_same() -> None:
    built = construct(ItemResult, _fields())
    validated = ItemResult(**_fields())  # type: ignore[arg-type]
    assert built == validated
    assert built.model_dump(mode="json") == validated.model_dump(mode="json")
    assert built.model_fields_set == validated.model_fields_set
    assert ItemResult.model_validate_json(built.model_dump_json()) == validated


def test_construct_keeps_the_model_frozen() -> None:
    built = construct(ItemResult, _fields())
    with pytest.raises(ValueError, match="frozen"):
        built.position = 4  # type: ignore[misc]
    copy = built.model_copy(update={"error": TargetError(message="x")})
    assert copy.error is not None and built.error is None


def test_a_missing_or_unknown_field_is_an_error_not_a_silent_default() -> None:
    fields = _fields()
    del fields["latency_ms"]
    with pytest.raises(TypeError, match=r"missing fields \['latency_ms'\]"):
        construct(ItemResult, fields)
    fields = {**_fields(), "latency": 1.0}
    with pytest.raises(TypeError, match=r"unknown fields \['latency'\]"):
        construct(ItemResult, fields)


def test_models_that_need_pydantic_construction_are_refused() -> None:
    class WithPrivate(BaseModel):
        value: int
        _cache: int = PrivateAttr(default=0)

    with pytest.raises(TypeError, match="pydantic's own construction"):
        construct(WithPrivate, {"value": 1})


def test_the_runner_builds_results_with_every_field_of_the_model() -> None:
    """The engine builds ``ItemResult`` from a dict literal without the per-call key check
    (``construct_named``): a field added to the model and not to the engine fails here."""
    from assay.runner.api import run_evals
    from assay.scoring.scorer import Scorer

    def fails(text: str) -> str:
        raise RuntimeError("no")

    two = [Scorer("a").score(lambda ctx: 1.0), Scorer("b").score(lambda ctx: 0.5)]
    for target, scorers in ((str.upper, ["exact-match"]), (fails, two), (str.lower, two)):
        run = run_evals([{"id": "x", "input": "q", "expected_output": "Q"}], target, scorers)
        built = run.results[0]
        assert built.__dict__.keys() == ItemResult.model_fields.keys()
        assert built.model_fields_set == set(ItemResult.model_fields)
        assert ItemResult.model_validate(built.model_dump()) == built
