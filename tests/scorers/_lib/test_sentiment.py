"""Tests for the sentiment@5.0.2 port and the tone scorer's preprocess step.

Expected values below were checked against the npm package under Node 20.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.scorers._lib import sentiment
from assay.scorers._lib.sentiment import analyze, comparative, tokenize, tone_scores

_CASES_FILE = Path(__file__).parents[2] / "fixtures" / "scorer_cases.json"
_CASES: list[dict[str, Any]] = [
    case for case in json.loads(_CASES_FILE.read_text("utf-8")) if case["scorer"] == "tone"
]


def _joined(messages: list[dict[str, Any]]) -> str:
    return ", ".join(str(message["content"]) for message in messages)


def test_lexicon_is_afinn_165_plus_emoji() -> None:
    labels = sentiment._lexicon().labels
    assert len(labels) == 3382 + 767
    assert (labels["love"], labels["amazing"], labels["terrible"]) == (3, 4, -3)
    assert labels["😍"] == 3
    assert all(isinstance(value, int) and -5 <= value <= 5 for value in labels.values())


def test_spec_example() -> None:
    result = analyze("I love this amazing product!")
    assert (result.score, result.comparative) == (7, 1.4)


def test_tokenizer_quirks() -> None:
    assert tokenize("") == [""]
    assert tokenize("   ") == [""]
    assert tokenize("good\tbad") == ["good\tbad"]  # a single tab is not a separator
    assert tokenize("good\t\tbad") == ["good", "bad"]
    assert tokenize("a\u00a0good") == ["a\u00a0good"]
    assert tokenize("a\u00a0\u00a0good") == ["a", "good"]
    assert tokenize("GOOD!!!GOOD") == ["good", "good"]
    assert tokenize("Good, not bad.") == ["good", "not", "bad"]


@pytest.mark.parametrize(
    ("text", "score", "expected_comparative"),
    [
        ("", 0, 0.0),
        ("good\tbad", 0, 0.0),
        ("not good", -3, -1.5),
        ("good not", 3, 1.5),
        ("dont like", -2, -1.0),
        ("Good, not bad.", 6, 2.0),
        ("constructor good", -3, -1.5),  # Object.prototype.constructor acts as a negator
        ("love😍", 0, 0.0),
        ("love 😍", 6, 3.0),
        ("does not work", 0, 0.0),  # multi-word AFINN entries never match
        ("a  good", 3, 1.5),
    ],
)
def test_analyze_matches_node(text: str, score: int, expected_comparative: float) -> None:
    result = analyze(text)
    assert (result.score, result.comparative) == (score, expected_comparative)
    assert comparative(text) == expected_comparative


def test_ascii_fast_path_agrees_with_general_tokenizer() -> None:
    for text in ["I love it. Not bad!", "x\ty  z", "a\rgood", "no\x1cgood  fun", ""]:
        fast = sentiment._ascii_tokens(text)
        general = [token.encode("ascii") for token in tokenize(text)]
        assert fast is None or fast == general


def test_tone_with_reference() -> None:
    result = tone_scores("I love this amazing product!", "This product is wonderful and fantastic!")
    assert result["responseSentiment"] == 1.4
    assert result["referenceSentiment"] == 8 / 6
    assert result["difference"] == abs(1.4 - 8 / 6)
    assert result["score"] == 1 - abs(1.4 - 8 / 6)
    assert (
        tone_scores("This is terrible and disappointing.", "This is excellent and amazing!")[
            "score"
        ]
        == 0.0
    )


def test_tone_empty_reference_uses_stability_branch() -> None:
    assert set(tone_scores("Good. Bad.", "")) == {"score", "avgSentiment", "sentimentVariance"}


def test_tone_stability() -> None:
    assert tone_scores("", None) == {"score": 1.0, "avgSentiment": 0.0, "sentimentVariance": 0.0}
    # Sentences "Good." (3/1) and "Bad." (-3/1): mean 0, population variance 9 -> score 0.
    result = tone_scores("Good. Bad.", None)
    assert (result["avgSentiment"], result["sentimentVariance"], result["score"]) == (0.0, 9.0, 0.0)
    # Text after the last terminator is dropped: only "Fine." (2/1) is analysed.
    trailing = tone_scores("Fine. terrible awful", None)
    assert (trailing["avgSentiment"], trailing["sentimentVariance"]) == (2.0, 0.0)


@pytest.mark.parametrize("case", _CASES, ids=[case["id"] for case in _CASES])
def test_tone_cases(case: dict[str, Any]) -> None:
    options = case["options"] or {}
    result = tone_scores(_joined(case["output"]), options.get("referenceTone"))
    assert abs(result["score"] - case["expected_score"]) <= case["tolerance"]
    step = (case.get("reference_step_results") or {}).get("preprocessStepResult")
    if step is not None:
        assert set(result) == set(step)
        for key, value in step.items():
            assert abs(result[key] - value) <= case["tolerance"], key


def test_case_file_has_the_tone_cases() -> None:
    assert len(_CASES) == 10
