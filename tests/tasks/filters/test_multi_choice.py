"""``multi_choice_regex`` (three steps) and ``anchored_multi_choice_regex`` (PR #3879)."""

from __future__ import annotations

from typing import Any

import pytest

from assay.tasks.filters import FilterError, apply_filter_pipeline

LETTER = r"(\([A-Z]\))"
FOUR = {"choices": ["alpha", "beta", "gamma", "delta"]}


def run(name: str, resps: list[str], doc: dict[str, Any] = FOUR, **kwargs: Any) -> list[str]:
    out = apply_filter_pipeline([(name, kwargs)], [resps], [doc])
    assert len(out) == 1
    return list(out[0])


def mcr(resps: list[str], doc: dict[str, Any] = FOUR, **kwargs: Any) -> list[str]:
    return run("multi_choice_regex", resps, doc, **kwargs)


def test_step_one_the_primary_regex_is_case_sensitive() -> None:
    assert mcr(["it is (C)", "it is (c)"], regex_pattern=LETTER) == ["(C)", "[invalid]"]


def test_step_two_finds_a_choice_text_with_case_and_punctuation_ignored() -> None:
    kwargs: dict[str, Any] = {"regex_pattern": LETTER}
    assert mcr(["I pick GAMMA!"], **kwargs) == ["[invalid]"]
    assert mcr(["I pick GAMMA!"], ignore_case=True, **kwargs) == ["(C)"]
    doc = {"choices": ["New-York", "Paris"]}
    assert mcr(["newyork, surely"], doc, ignore_case=True, **kwargs) == ["[invalid]"]
    assert mcr(["newyork, surely"], doc, ignore_case=True, ignore_punctuation=True, **kwargs) == [
        "(A)"
    ]


def test_step_two_applies_regexes_to_ignore_to_response_and_choices() -> None:
    doc = {"choices": ["the answer 12", "the answer 13"]}
    out = mcr(
        ["ANSWER 13"], doc, regex_pattern=LETTER, ignore_case=True, regexes_to_ignore=["the "]
    )
    assert out == ["(B)"]


def test_step_two_tries_the_longest_choice_first() -> None:
    doc = {"choices": ["be", "beta"]}
    assert mcr(["beta it is"], doc, regex_pattern=LETTER) == ["(B)"]


def test_step_three_maps_a_bare_letter_after_a_colon_within_the_choices() -> None:
    doc = {"choices": ["x1", "x2", "x3"]}
    assert mcr(["Answer: C", "Answer:  B", "Answer: D"], doc, regex_pattern=LETTER) == [
        "(C)",
        "(B)",
        "[invalid]",  # D is not among three choices
    ]


def test_group_select_also_picks_among_the_fallback_matches() -> None:
    # step 2 uses group_select too: -1 takes the last choice mentioned
    out = mcr(["alpha, no: delta"], regex_pattern=LETTER, group_select=-1)
    assert out == ["(D)"]
    assert mcr(["alpha, no: delta"], regex_pattern=LETTER) == ["(A)"]


def test_a_doc_without_choices_is_named() -> None:
    with pytest.raises(FilterError, match="multi_choice_regex: doc 0 has no 'choices' field"):
        mcr(["(A)"], {"question": "?"})


def test_choices_must_be_a_list_of_text() -> None:
    with pytest.raises(FilterError, match="'choices' is str"):
        mcr(["(A)"], {"choices": "AB"})
    with pytest.raises(FilterError, match="choice 1 is int 2, not text"):
        mcr(["(A)"], {"choices": ["1", 2]})


def test_more_than_26_choices_is_an_error_not_a_broken_regex() -> None:
    with pytest.raises(FilterError, match="27 choices; answer letters stop at Z"):
        mcr(["(A)"], {"choices": [f"c{i}" for i in range(27)]})


# ----------------------------------------------------------------------------- anchored


def anchored(resps: list[str], doc: dict[str, Any] = FOUR, **kwargs: Any) -> list[str]:
    kwargs = {"regex_pattern": LETTER, "group_select": -1, **kwargs}
    return run("anchored_multi_choice_regex", resps, doc, **kwargs)


def test_anchored_takes_the_letter_after_the_sentinel() -> None:
    resp = "The answer is (B). Eliminated: (A), (C), (D)."
    assert mcr([resp], regex_pattern=LETTER, group_select=-1) == ["(D)"]
    assert anchored([resp]) == ["(B)"]


def test_anchored_lowercase_letters_count_only_with_ignore_case() -> None:
    resp = "the answer is (b), not (D)"
    assert anchored([resp]) == ["(D)"]  # "(b)" is not a valid letter: positional answer
    assert anchored([resp], ignore_case=True) == ["(B)"]


def test_anchored_letters_beyond_the_choices_keep_the_positional_answer() -> None:
    doc = {"choices": ["x", "y"]}
    assert anchored(["the answer is (E). Maybe (A)"], doc) == ["(A)"]


def test_anchored_sentinels_are_case_sensitive_without_ignore_case() -> None:
    resp = "Therefore (A). Also (C)"
    assert anchored([resp]) == ["(C)"]
    assert anchored([resp], ignore_case=True) == ["(A)"]


def test_anchored_without_sentinels_or_positional_fallback_is_the_fallback() -> None:
    assert anchored(["(A)"], answer_sentinels=[]) == ["(A)"]
    assert anchored(["(A)"], answer_sentinels=[], fallback_to_positional=False) == ["[invalid]"]


def test_anchored_passes_non_text_to_the_positional_answer() -> None:
    out = apply_filter_pipeline(
        [("anchored_multi_choice_regex", {"regex_pattern": LETTER})], [[None]], [FOUR]
    )
    assert out == [["[invalid]"]]


def test_ignore_punctuation_removes_unicode_category_p_only() -> None:
    from assay.tasks.filters.multi_choice import strip_punctuation

    # P* (removed): ¿ — « » 。 ٪ ! - _ ; symbols (kept): $ + ° €
    assert strip_punctuation("¿a—b«c»d。e٪f!g-h_i $+°€") == "abcdefghi $+°€"
