"""``take_first``, ``take_first_k``, ``majority_vote`` and ``noop``: lm-eval v0.4's shapes."""

from __future__ import annotations

from typing import Any

import pytest

from assay.tasks.filters import FilterError, FilterStep, apply_filter_pipeline, build_filter


def run(name: str, resps: list[Any], **kwargs: Any) -> list[Any]:
    return apply_filter_pipeline([(name, kwargs)], resps, [{} for _ in resps])


def test_take_first_returns_the_bare_element_not_a_list() -> None:
    assert run("take_first", [["a", "b"], ["c"]]) == ["a", "c"]


def test_take_first_on_a_string_takes_its_first_character() -> None:
    # what a second take_first sees after the first one (v0.4 quirk)
    assert apply_filter_pipeline([("take_first", {}), ("take_first", {})], [["abc"]], [{}]) == ["a"]


def test_take_first_of_no_responses_names_the_doc() -> None:
    with pytest.raises(FilterError, match="take_first: doc 1 has no responses"):
        run("take_first", [["a"], []])


def test_take_first_k_keeps_the_first_k_repeats() -> None:
    assert run("take_first_k", [["1", "2", "3"], ["4", "5", "6"]], k=2) == [["1", "2"], ["4", "5"]]


def test_take_first_k_checks_every_doc_and_says_to_raise_repeats() -> None:
    with pytest.raises(
        FilterError, match=r"doc 1 has 2 responses, fewer than k=3; set the task's repeats"
    ):
        run("take_first_k", [["1", "2", "3"], ["4", "5"]], k=3)


def test_majority_vote_returns_a_one_element_list() -> None:
    assert run("majority_vote", [["3", "5", "5"], ["1"]]) == [["5"], ["1"]]


def test_majority_vote_ties_go_to_the_value_seen_first() -> None:
    assert run("majority_vote", [["7", "3", "3", "7"], ["3", "7", "7", "3"]]) == [["7"], ["3"]]


def test_majority_vote_counts_invalid_as_a_vote() -> None:
    assert run("majority_vote", [["[invalid]", "4", "[invalid]"]]) == [["[invalid]"]]


def test_majority_vote_then_take_first_gives_the_bare_vote() -> None:
    steps: list[FilterStep] = [("majority_vote", {}), ("take_first", {})]
    assert apply_filter_pipeline(steps, [["a", "b", "b"]], [{}]) == ["b"]


def test_majority_vote_of_unhashable_responses_names_the_doc() -> None:
    with pytest.raises(
        FilterError, match="majority_vote: doc 0 has responses that cannot be counted"
    ):
        run("majority_vote", [[["DET"], ["DET"]]])


def test_noop_keeps_every_repeat_and_leaves_the_input_alone() -> None:
    resps = [["a", "b"], ["c"]]
    out = build_filter("noop").apply(resps, [{}, {}])
    assert out == [["a", "b"], ["c"]] and out is not resps
