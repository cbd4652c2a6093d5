"""``apply_filter_pipeline``: fresh filters per run, chaining, and the one-entry-per-doc
contract enforced after every step."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from assay.tasks.filters import (
    DEFAULT_FILTER_STEPS,
    FILTERS,
    FilterConfigError,
    FilterError,
    FilterStep,
    apply_filter_pipeline,
    register_filter,
)

MAJ_AT_2: list[FilterStep] = [  # gsm8k-cot-self-consistency's maj@8, with k=2
    ("take_first_k", {"k": 2}),
    ("regex", {"regex_pattern": r"The answer is (\-?[0-9\.\,]*[0-9]+)"}),
    ("majority_vote", {}),
    ("take_first", {}),
]


class Counting:
    """Numbers each response with how many times this instance has been applied."""

    instances = 0

    def __init__(self) -> None:
        Counting.instances += 1
        self.calls = 0

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        self.calls += 1
        return [[f"{r}#{self.calls}" for r in entry] for entry in resps]


@pytest.fixture
def counting() -> Iterator[str]:
    register_filter("counting-test")(Counting)
    try:
        yield "counting-test"
    finally:
        FILTERS.unregister("counting-test")


def test_steps_chain_in_order() -> None:
    resps = [["The answer is 3", "The answer is 4", "The answer is 4"], ["x", "The answer is 1"]]
    assert apply_filter_pipeline(MAJ_AT_2, resps, [{}, {}]) == ["3", "[invalid]"]


def test_every_run_and_every_step_gets_a_fresh_filter(counting: str) -> None:
    before = Counting.instances
    steps: list[FilterStep] = [(counting, {}), (counting, {})]
    assert apply_filter_pipeline(steps, [["a"]], [{}]) == [["a#1#1"]]
    assert apply_filter_pipeline(steps, [["a"]], [{}]) == [["a#1#1"]]
    assert Counting.instances == before + 4


def test_the_default_pipeline_takes_the_first_repeat() -> None:
    assert apply_filter_pipeline(DEFAULT_FILTER_STEPS, [["a", "b"]], [{}]) == ["a"]


def test_no_steps_leave_the_responses_as_they_are() -> None:
    assert apply_filter_pipeline([], [["a", "b"]], [{}]) == [["a", "b"]]


def test_all_steps_are_built_before_any_runs() -> None:
    seen: list[Any] = []

    def record(resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        seen.append(resps)
        return resps

    steps: list[FilterStep] = [("custom", {"filter_fn": record}), ("take_first_k", {})]
    with pytest.raises(FilterConfigError, match="'take_first_k': missing required kwarg 'k'"):
        apply_filter_pipeline(steps, [["a"]], [{}])
    assert seen == []


def test_the_input_is_not_changed() -> None:
    resps = [[" a "]]
    apply_filter_pipeline([("remove_whitespace", {}), ("take_first", {})], resps, [{}])
    assert resps == [[" a "]]


def test_responses_and_docs_must_pair_up() -> None:
    with pytest.raises(FilterError, match="got 2 response entries for 1 docs"):
        apply_filter_pipeline([("take_first", {})], [["a"], ["b"]], [{}])


def test_a_step_that_drops_docs_is_named() -> None:
    steps: list[FilterStep] = [
        ("noop", {}),
        ("custom", {"filter_fn": lambda resps, docs: resps[:1]}),
    ]
    with pytest.raises(
        FilterError, match=r"filter step 2 \(custom\) returned 1 entries for 2 docs"
    ):
        apply_filter_pipeline(steps, [["a"], ["b"]], [{}, {}])


def test_a_step_that_returns_nothing_is_named() -> None:
    # lm-eval's decontaminate stub returns None; a pipeline must not pass that on
    steps: list[FilterStep] = [("custom", {"filter_fn": lambda resps, docs: None})]
    with pytest.raises(FilterError, match=r"filter step 1 \(custom\) returned NoneType"):
        apply_filter_pipeline(steps, [["a"]], [{}])


def test_lazy_results_become_lists() -> None:
    steps: list[FilterStep] = [("custom", {"filter_fn": lambda resps, docs: (e for e in resps)})]
    assert apply_filter_pipeline(steps, [["a"], ["b"]], [{}, {}]) == [["a"], ["b"]]


def test_a_step_error_names_the_step_and_keeps_the_cause() -> None:
    def broken(resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        raise KeyError("answer")

    with pytest.raises(FilterError, match=r"filter step 2 \(custom\) failed: KeyError") as info:
        apply_filter_pipeline([("noop", {}), ("custom", {"filter_fn": broken})], [["a"]], [{}])
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(FilterError, match=r"filter step 2 \(lowercase\): lowercase: doc 0"):
        apply_filter_pipeline([("regex_pos", {}), ("lowercase", {})], [["x"]], [{}])
