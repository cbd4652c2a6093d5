"""Tests for the keyword-extractor port and the keyword-coverage score built on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.scorers._lib.keywords import extract
from assay.scorers._lib.stopwords_en import STOPWORDS_EN

_CASES_FILE = Path(__file__).parents[2] / "fixtures" / "scorer_cases.json"
_CASES: list[dict[str, Any]] = [
    case
    for case in json.loads(_CASES_FILE.read_text("utf-8"))
    if case["scorer"] == "keyword-coverage"
]


def _joined(messages: list[dict[str, Any]]) -> str:
    return ", ".join(str(message["content"]) for message in messages)


def _coverage(reference: str, response: str) -> tuple[float, int, int]:
    """The scorer's arithmetic: (score, total, matched) over keyword sets."""
    if not reference and not response:
        return 1.0, 0, 0
    reference_keywords = set(extract(reference))
    response_keywords = set(extract(response))
    total = len(reference_keywords)
    matched = len(reference_keywords & response_keywords)
    return (matched / total if total else 1.0), total, matched


def test_stop_list_is_the_vendored_smart_list() -> None:
    assert len(STOPWORDS_EN) == 570
    assert {"a", "a's", "ain't", "the", "zero", "would"} <= STOPWORDS_EN
    assert "fox" not in STOPWORDS_EN


def test_spec_examples() -> None:
    assert extract("The quick brown fox jumps over the lazy dog") == [
        "quick",
        "brown",
        "fox",
        "jumps",
        "lazy",
        "dog",
    ]
    assert extract("The quick-brown fox!") == ["quick-brown", "fox"]
    assert _coverage("The quick-brown fox!", "The quick brown fox")[0] == 0.5
    assert _coverage("", "anything here")[0] == 1.0


def test_empty_and_blank_input() -> None:
    assert extract("") == []
    assert extract(" \t\n ") == []
    assert extract("<p></p>") == []


def test_punctuation_and_apostrophes() -> None:
    assert extract('fox. (dog), "cat"; bird? “owl” ‘emu’') == [
        "fox",
        "dog",
        "cat",
        "bird",
        "owl",
        "emu",
    ]
    # Only an apostrophe at the token's first/last position (before other deletions) goes.
    assert extract("'tis rock'n'roll dogs'") == ["tis", "rock'n'roll", "dogs"]
    assert extract("\"'quoted'\"") == ["'quoted'"]
    assert extract("''") == []


def test_digits_single_symbols_and_case() -> None:
    assert extract("123 4.5 x1 ²") == ["x1", "²"]
    assert extract("_ @ & # $ % fox") == ["$", "%", "fox"]
    assert extract("Fox FOX fox") == ["fox"]


def test_html_tags_are_removed() -> None:
    assert extract("<b>bold</b> <a href='x'>link</a>") == ["bold", "link"]


def test_urls_are_kept_verbatim() -> None:
    assert extract("See https://Example.com/A, now") == ["https://Example.com/A,"]
    # Case-sensitive prefix: an upper-case scheme is an ordinary token.
    assert extract("HTTP://UP.com") == ["http//upcom"]


def test_whitespace_is_javascript_whitespace() -> None:
    assert extract("fox\ufeffdog") == ["fox", "dog"]
    assert extract("fox\x85dog") == ["fox\x85dog"]


def test_final_sigma_is_lowercased_per_token() -> None:
    # Lower-casing per token (as the reference does) gives a final sigma; lower-casing the
    # whole text would not, because Python's sigma context reaches across U+FEFF.
    assert extract("ΣΑΣ\ufeffno") == ["σας"]


@pytest.mark.parametrize("case", _CASES, ids=[case["id"] for case in _CASES])
def test_keyword_coverage_cases(case: dict[str, Any]) -> None:
    reference = _joined(case["input"]["inputMessages"])
    response = _joined(case["output"])
    score, total, matched = _coverage(reference, response)
    assert abs(score - case["expected_score"]) <= case["tolerance"]
    steps = case.get("reference_step_results") or {}
    preprocess = steps.get("preprocessStepResult") or {}
    preprocess = preprocess.get("result", preprocess)
    if "referenceKeywords" in preprocess:
        assert extract(reference) == preprocess["referenceKeywords"]
        assert extract(response) == preprocess["responseKeywords"]
    if "analyzeStepResult" in steps:
        analysis = steps["analyzeStepResult"]
        assert (total, matched) == (
            analysis["totalKeywordsLength"],
            analysis["matchedKeywordsLength"],
        )


def test_case_file_has_the_keyword_coverage_cases() -> None:
    assert len(_CASES) == 10
