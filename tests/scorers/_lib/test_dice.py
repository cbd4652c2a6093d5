"""Tests for the string-similarity port (``compare_two_strings``) and its JS-string helpers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assay.scorers._lib import dice
from assay.scorers._lib.dice import (
    compare_two_strings,
    has_astral,
    js_remove_whitespace,
    js_trim,
    js_words,
    to_utf16_units,
)

_CASES_FILE = Path(__file__).parents[2] / "fixtures" / "scorer_cases.json"
_CASES: list[dict[str, Any]] = [
    case
    for case in json.loads(_CASES_FILE.read_text("utf-8"))
    if case["scorer"] == "content-similarity"
]


def _joined(messages: list[dict[str, Any]]) -> str:
    return ", ".join(str(message["content"]) for message in messages)


def test_spec_examples() -> None:
    assert compare_two_strings("the quick brown fox", "the quick brown fox") == 1.0
    assert compare_two_strings("The Quick Brown FOX", "the quick brown fox") == pytest.approx(
        7 / 15, abs=1e-15
    )
    partial = compare_two_strings(
        "the quick brown fox jumps over the lazy dog", "the quick brown fox runs past the lazy dog"
    )
    assert partial == pytest.approx(0.7164179104477612, abs=1e-15)
    assert compare_two_strings("", "the quick brown fox") == 0.0
    assert compare_two_strings("", "") == 1.0


def test_all_whitespace_is_removed_before_comparing() -> None:
    assert compare_two_strings("a b\tc\nd", "abcd") == 1.0
    # U+FEFF is JavaScript whitespace; U+0085 and U+001C are not (Python thinks they are).
    assert compare_two_strings("ab\ufeffcd", "abcd") == 1.0
    assert compare_two_strings("ab\x85cd", "abcd") < 1.0
    assert compare_two_strings("ab\x1ccd", "abcd") < 1.0


def test_short_strings_score_zero_unless_equal() -> None:
    assert compare_two_strings("a", "a") == 1.0
    assert compare_two_strings("a", "ab") == 0.0
    assert compare_two_strings("ab", " a ") == 0.0


def test_bigrams_count_with_multiplicity() -> None:
    # "aaaa" has bigram aa x3, "aa" has it x1: intersection 1 -> 2*1/(4+2-2) = 0.5.
    assert compare_two_strings("aaaa", "aa") == 0.5
    assert compare_two_strings("aa", "aaaa") == 0.5
    # Reversed order shares no bigram.
    assert compare_two_strings("ab", "ba") == 0.0


def test_astral_characters_count_as_two_utf16_units() -> None:
    # In JS "😀" is 2 code units, so it is long enough to have a bigram (its surrogates).
    assert compare_two_strings("😀", "😀😀") == pytest.approx(2 * 1 / (2 + 4 - 2))
    # 😀 (U+1F600) and 😁 (U+1F601) share their high surrogate U+D83D: as code points
    # "x😀"/"x😁" share no bigram, in UTF-16 they share (x, D83D). Values checked with Node.
    assert compare_two_strings("😀a", "😁a") == 0.0
    assert compare_two_strings("x😀", "x😁") == pytest.approx(2 * 1 / (3 + 3 - 2))


def test_js_helpers() -> None:
    assert js_words("  a\tb \u00a0c\x1cd  ") == ["a", "b", "c\x1cd"]
    assert js_words("a\x85b") == ["a\x85b"]
    assert js_words("") == []
    assert js_remove_whitespace(" a \u3000b\ufeff") == "ab"
    assert js_trim("\ufeff a \u2028") == "a"
    assert js_trim("\x85a\x1c") == "\x85a\x1c"
    assert has_astral("a😀") and not has_astral("aé")
    assert to_utf16_units("a😀") == "a\ud83d\ude00"
    assert to_utf16_units("abc") == "abc"


def test_count_elements_fallback_matches_counter() -> None:
    counts: dict[Any, int] = {}
    dice._count_elements_fallback(counts, ["x", "y", "x"])
    assert counts == Counter(["x", "y", "x"])
    assert dice.count_elements("abracadabra") == Counter("abracadabra")


def test_multiset_intersection_size_is_sum_of_minimums() -> None:
    first = dice.count_elements("aaabbc")
    second = dice.count_elements("abbbd")
    assert dice.multiset_intersection_size(first, second) == 1 + 2
    assert dice.multiset_intersection_size(second, first) == 3
    assert dice.multiset_intersection_size(first, {}) == 0


@pytest.mark.parametrize("case", _CASES, ids=[case["id"] for case in _CASES])
def test_content_similarity_cases(case: dict[str, Any]) -> None:
    options = case["options"]
    if options is None:
        options = {"ignoreCase": True, "ignoreWhitespace": True}
    first = _joined(case["input"]["inputMessages"])
    second = _joined(case["output"])
    if options.get("ignoreCase"):
        first, second = first.lower(), second.lower()
    if options.get("ignoreWhitespace"):
        first = js_trim(" ".join(js_words(first)))
        second = js_trim(" ".join(js_words(second)))
    step = (case.get("reference_step_results") or {}).get("preprocessStepResult")
    if step is not None:
        assert (first, second) == (step["processedInput"], step["processedOutput"])
    score = compare_two_strings(first, second)
    assert abs(score - case["expected_score"]) <= case["tolerance"]


def test_case_file_has_the_content_similarity_cases() -> None:
    assert len(_CASES) == 10
