"""The shared answer checks and label normalisers of the judge scorers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ValidationError

from assay.scorers._lib.verdicts import LOWERED, TRIMMED_LOWERED, each_once, one_per
from assay.scoring.context import ScorerCall, StepContext


class Entry(BaseModel):
    key: Any = None


class Answer(BaseModel):
    entries: list[Entry]


class Labels(BaseModel):
    lowered: Annotated[Literal["yes", "no"], LOWERED] = "no"
    trimmed: Annotated[Literal["yes", "no"], TRIMMED_LOWERED] = "no"


CTX = StepContext(ScorerCall(output="x"), {"preprocess": ["a", "b"]})


def _answer(*keys: Any) -> Answer:
    return Answer(entries=[Entry(key=k) for k in keys])


@pytest.mark.parametrize(
    ("items", "keys", "problem"),
    [
        (["a", "b"], ["a"], 'expected 2 entries in "entries", one per item, got 1'),
        (["a"], [], 'expected 1 entry in "entries", one per item, got 0'),
        ([], ["a"], 'expected 0 entries in "entries", one per item, got 1'),
    ],
)
def test_one_per_names_the_mismatch(items: list[str], keys: list[str], problem: str) -> None:
    check = one_per(lambda ctx: items, "entries", "item")
    with pytest.raises(ValueError) as caught:
        check(CTX, _answer(*keys))
    assert str(caught.value) == problem
    check(CTX, _answer(*items))  # the right count passes


def test_one_per_reads_the_earlier_results_and_none_skips() -> None:
    one_per(lambda ctx: ctx.preprocess_result, "entries", "item")(CTX, _answer(1, 2))
    one_per(lambda ctx: None, "entries", "item")(CTX, _answer(1, 2, 3))


def test_each_once_wants_every_key_exactly_once_in_any_order() -> None:
    check = each_once(lambda ctx: range(3), "entries", "key", "passage")
    check(CTX, _answer(2, 0, 1))
    with pytest.raises(ValueError, match=r"expected 3 entries .* got 2"):
        check(CTX, _answer(0, 1))
    with pytest.raises(ValueError) as caught:
        check(CTX, _answer(0, 7, 1))
    assert str(caught.value) == (
        '"entries" needs exactly one entry per passage, identified by "key": none for 2; '
        "unexpected or repeated 7"
    )
    each_once(lambda ctx: None, "entries", "key", "passage")(CTX, _answer())


def test_label_normalisers_keep_the_old_comparisons() -> None:
    assert Labels(lowered="YES", trimmed=" Yes ").model_dump() == {
        "lowered": "yes",
        "trimmed": "yes",
    }
    with pytest.raises(ValidationError):
        Labels(lowered=" yes")  # lower-cased only, not trimmed
    with pytest.raises(ValidationError):
        Labels(trimmed="maybe")
    assert Labels.model_json_schema()["properties"]["lowered"]["enum"] == ["yes", "no"]
