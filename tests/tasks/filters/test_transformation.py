"""``lowercase``, ``uppercase``, ``map`` and ``format_span``, with the v0.4 quirks."""

from __future__ import annotations

from typing import Any

import pytest

from assay.tasks.filters import FilterError, FilterStep, apply_filter_pipeline

POLEMO2: list[FilterStep] = [
    ("regex", {"regex_pattern": r"(\b[ABCD]\b)"}),
    ("take_first", {}),
    ("map", {"mapping_dict": {"A": 0, "B": 1, "C": 2, "D": 3}, "default_value": -1}),
    ("take_first", {}),
]


def run(name: str, resps: list[Any], **kwargs: Any) -> list[Any]:
    return apply_filter_pipeline([(name, kwargs)], resps, [{} for _ in resps])


def test_lowercase_and_uppercase() -> None:
    assert run("lowercase", [["Paris", "ÉTÉ"]]) == [["paris", "été"]]
    assert run("uppercase", [["Paris"]]) == [["PARIS"]]


def test_after_take_first_they_walk_the_strings_characters() -> None:
    out = apply_filter_pipeline([("take_first", {}), ("lowercase", {})], [["AbC", "x"]], [{}])
    assert out == [["a", "b", "c"]]


def test_lowercase_of_non_text_names_the_doc_and_response() -> None:
    with pytest.raises(FilterError, match="lowercase: doc 1 response 0 is NoneType None, not text"):
        run("lowercase", [["a"], [None]])


def test_map_replaces_each_response_or_gives_the_default() -> None:
    out = run("map", [["A", "Z"]], mapping_dict={"A": "yes"}, default_value="no")
    assert out == [["yes", "no"]]
    assert run("map", [["A"]]) == [[None]]  # no mapping_dict: everything is the default


def test_map_keys_are_compared_as_given() -> None:
    # YAML keys are strings: a "1" key does not match the int 1
    assert run("map", [[1, "1"]], mapping_dict={"1": "one"}) == [[None, "one"]]


def test_polemo2_pipeline_relies_on_map_walking_characters() -> None:
    resps = [["The answer is C"], ["B"], ["no idea"]]
    assert apply_filter_pipeline(POLEMO2, resps, [{}, {}, {}]) == [2, 1, -1]
    # "[invalid]" became nine default values before the last take_first
    assert apply_filter_pipeline(POLEMO2[:3], [["no idea"]], [{}]) == [[-1] * 9]


def test_map_of_an_unhashable_response_names_it() -> None:
    with pytest.raises(FilterError, match="map: doc 0 response 0 is list"):
        run("map", [[["A"]]], mapping_dict={"A": 0})


def test_format_span_rewrites_labels_only_and_drops_none() -> None:
    text = "Person: Ann, none\nCOMPANY: Country Time Ltd $$ date: none"
    assert run("format_span", [[text]]) == [["per: ann $ org: country time ltd"]]


def test_format_span_splits_grouped_entities_and_keeps_order() -> None:
    out = run("format_span", [["LOC: kenya, uganda $ persons: Bob"]])
    assert out == [["loc: kenya $ loc: uganda $ per: bob"]]
    assert run("format_span", [["nothing labelled"]]) == [[""]]
