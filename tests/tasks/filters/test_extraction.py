"""``regex``, ``regex_pos`` and ``remove_whitespace``: lm-eval's exact extraction rules."""

from __future__ import annotations

from typing import Any

import pytest

from assay.tasks.filters import FilterError, apply_filter_pipeline, build_filter


def run(name: str, resps: list[Any], **kwargs: Any) -> list[Any]:
    return apply_filter_pipeline([(name, kwargs)], resps, [{} for _ in resps])


def test_regex_default_pattern_is_the_gsm8k_answer_line() -> None:
    assert run("regex", [["so #### 1,234.5", "no answer"]]) == [["1,234.5", "[invalid]"]]


def test_group_select_indexes_the_matches_not_the_groups() -> None:
    # two matches of a one-group pattern: group_select 1 is the second *match*
    assert run("regex", [["x=1 x=2 x=3"]], regex_pattern=r"x=(\d)", group_select=1) == [["2"]]
    assert run("regex", [["x=1 x=2 x=3"]], regex_pattern=r"x=(\d)", group_select=-1) == [["3"]]


def test_a_match_with_several_groups_gives_its_first_non_empty_group() -> None:
    flexible = r"(-?[$0-9.,]{2,})|(-?[0-9]+)"  # gsm8k flexible-extract
    out = run("regex", [["It costs $1,000. Then 7"]], regex_pattern=flexible, group_select=-1)
    assert out == [["7"]]
    out = run("regex", [["It costs $1,000."]], regex_pattern=flexible, group_select=-1)
    assert out == [["$1,000."]]  # the cleanup is the metric's job, not the filter's


def test_all_empty_groups_give_the_fallback_which_is_then_stripped() -> None:
    # lm-eval strips the fallback on this path only; without a match it is returned as is
    assert run("regex", [["abc"]], regex_pattern="()()", fallback=" none ") == [["none"]]
    assert run("regex", [["abc"]], regex_pattern="(z)", fallback=" none ") == [[" none "]]


def test_regex_strips_the_match_and_treats_non_text_as_empty() -> None:
    assert run("regex", [["#### 5 "]], regex_pattern=r"#### (.*)") == [["5"]]
    assert run("regex", [[None, 3]]) == [["[invalid]", "[invalid]"]]


@pytest.mark.parametrize("group_select", [2, -3])
def test_group_select_out_of_range_gives_the_fallback(group_select: int) -> None:
    out = run("regex", [["#### 1 #### 2"]], group_select=group_select, fallback="none")
    assert out == [["none"]]


def test_regex_pos_returns_lists_of_tags() -> None:
    out = run("regex_pos", [["[('a', 'DET'), ('dog', 'NOUN')]", "nothing"]])
    assert out == [[["DET", "NOUN"], ["invalid"]]]
    assert all(type(tags) is list for tags in out[0])


def test_regex_pos_reads_pairs_and_copies_its_fallback() -> None:
    out = run("regex_pos", [[[("a", "DET")], "x", "y"]], fallback=["?"])
    assert out == [[["DET"], ["?"], ["?"]]]
    out[0][1].append("changed")
    assert out[0][2] == ["?"]  # each fallback is its own list


def test_regex_pos_on_something_that_is_not_pairs_names_it() -> None:
    with pytest.raises(FilterError, match="regex_pos: doc 0 response 1 is int 5"):
        run("regex_pos", [["x", 5]])


def test_remove_whitespace_strips_both_ends() -> None:
    assert run("remove_whitespace", [["  Paris \n", "\tLyon"]]) == [["Paris", "Lyon"]]


def test_remove_whitespace_on_non_text_names_the_response() -> None:
    with pytest.raises(FilterError, match="remove_whitespace: doc 0 response 0 is NoneType"):
        build_filter("remove_whitespace").apply([[None]], [{}])
