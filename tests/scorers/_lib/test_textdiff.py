"""Tests for the textual-difference preprocess port."""

from __future__ import annotations

import json
import random
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest

from assay.scorers._lib.textdiff import TextDiff, text_difference

_CASES_FILE = Path(__file__).parents[2] / "fixtures" / "scorer_cases.json"
_CASES: list[dict[str, Any]] = [
    case
    for case in json.loads(_CASES_FILE.read_text("utf-8"))
    if case["scorer"] == "textual-difference"
]


def _joined(messages: list[dict[str, Any]]) -> str:
    return ", ".join(str(message["content"]) for message in messages)


def _dp_lcs(first: str, second: str) -> int:
    """The reference's O(m·n) LCS, as an oracle for the bit-parallel ratio."""
    previous = [0] * (len(second) + 1)
    for char in first:
        current = [0]
        for j, other in enumerate(second, start=1):
            current.append(previous[j - 1] + 1 if char == other else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def test_spec_examples() -> None:
    diff = text_difference("The quick brown fox", "The quick brown cat")
    assert diff.ratio == 16 * 2 / 38
    assert diff.changes == 1
    assert (diff.length_diff, diff.confidence) == (0.0, 1.0)
    empty = text_difference("The quick brown fox", "")
    assert (empty.ratio, empty.changes, empty.length_diff, empty.confidence) == (0.0, 4, 1.0, 0.0)


def test_equal_and_empty() -> None:
    assert text_difference("", "") == TextDiff(ratio=1.0, confidence=1.0, changes=0, length_diff=0)
    assert text_difference("abc", "abc").changes == 0
    assert text_difference("", "two words").changes == 2


def test_whitespace_only_differences_count_one_change() -> None:
    diff = text_difference("a  b\n", "a b")
    assert diff.changes == 1
    assert diff.ratio == 2 * 3 / (5 + 3)


def test_greedy_word_matching_uses_multiplicity() -> None:
    # in: a a b; out: a b b -> matches a, b (the second "a" finds no unused "a") -> 3 - 2.
    assert text_difference("a a b", "a b b").changes == 1
    assert text_difference("x y", "y x z w").changes == 2


def test_ratio_is_lcs_not_difflib() -> None:
    # difflib.SequenceMatcher(None, "cbc", "bac").ratio() is 1/3 (one matching block of 1);
    # the reference's LCS is "bc", so its ratio is 2*2/6.
    assert text_difference("cbc", "bac").ratio == 2 * 2 / 6


def test_ratio_matches_a_dp_lcs_on_random_strings() -> None:
    rng = random.Random(7)
    for _ in range(200):
        first = "".join(rng.choice("ab c") for _ in range(rng.randint(1, 90)))
        second = "".join(rng.choice("ab c") for _ in range(rng.randint(1, 90)))
        if first == second:
            continue
        expected = 2 * _dp_lcs(first, second) / (len(first) + len(second))
        assert text_difference(first, second).ratio == expected


def test_lengths_are_utf16_code_units() -> None:
    # "😀" is two code units in JS: lengths 2 and 1, LCS 0 -> ratio 0, lengthDiff 1/2.
    diff = text_difference("😀", "a")
    assert (diff.ratio, diff.length_diff) == (0.0, 0.5)
    # 😀/😁 share their high surrogate, so the LCS over code units is 1.
    assert text_difference("😀", "😁").ratio == 2 * 1 / 4


def test_result_is_frozen() -> None:
    diff = text_difference("a", "b")
    with pytest.raises(FrozenInstanceError):
        diff.ratio = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("case", _CASES, ids=[case["id"] for case in _CASES])
def test_textual_difference_cases(case: dict[str, Any]) -> None:
    diff = text_difference(_joined(case["input"]["inputMessages"]), _joined(case["output"]))
    assert abs(diff.ratio - case["expected_score"]) <= case["tolerance"]
    step = (case.get("reference_step_results") or {}).get("preprocessStepResult")
    if step is not None:
        assert diff.changes == step["changes"]
        assert abs(diff.ratio - step["ratio"]) <= case["tolerance"]
        assert abs(diff.length_diff - step["lengthDiff"]) <= case["tolerance"]
        assert abs(diff.confidence - step["confidence"]) <= case["tolerance"]


def test_case_file_has_the_textual_difference_cases() -> None:
    assert len(_CASES) == 11
