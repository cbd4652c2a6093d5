"""Tests for the completeness scorer's element extraction and coverage (reference §2.4).

Fixture cases come from tests/fixtures/scorer_cases.json. Every case must satisfy its
``test_bounds`` (the minimum bar); exact agreement with the reference score and element lists
is recorded as well, since element extraction approximates compromise with spaCy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.scorers._lib import completeness_terms as ct
from assay.scorers._lib.completeness_terms import (
    completeness,
    coverage_score,
    extract_elements,
    extract_elements_many,
    normalize_words,
)

_CASES_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "scorer_cases.json"
_ALL_CASES: list[dict[str, Any]] = [
    c for c in json.loads(_CASES_PATH.read_text()) if c["scorer"] == "completeness"
]
# Invalid-input cases (null messages) belong to the scorer wrapper's tests.
_CASES = [c for c in _ALL_CASES if c["expected_error"] is None]


def _texts(case: dict[str, Any]) -> tuple[str, str]:
    inp = ", ".join(m["content"] for m in case["input"]["inputMessages"])
    out = ", ".join(m["content"] for m in case["output"])
    return inp, out


def _check_bounds(score: float, bounds: dict[str, float]) -> None:
    checks = {
        "close_to": lambda v: abs(score - v) < 5e-3,  # vitest toBeCloseTo (2 digits)
        "eq": lambda v: score == v,
        "lt": lambda v: score < v,
        "lte": lambda v: score <= v,
        "gt": lambda v: score > v,
        "gte": lambda v: score >= v,
    }
    for key, value in bounds.items():
        assert key in checks, f"unknown bound {key}"
        assert checks[key](value), f"score {score} violates {key} {value}"


def test_fixture_has_completeness_cases() -> None:
    assert len(_CASES) >= 9
    assert len(_ALL_CASES) > len(_CASES)


@pytest.mark.parametrize("case", _CASES, ids=[c["id"] for c in _CASES])
def test_case_bounds(case: dict[str, Any]) -> None:
    result = completeness(*_texts(case))
    _check_bounds(result["score"], case["test_bounds"])
    assert result["elementCounts"] == {
        "input": len(result["inputElements"]),
        "output": len(result["outputElements"]),
    }
    assert set(result["missingElements"]) <= set(result["inputElements"])


@pytest.mark.parametrize("case", _CASES, ids=[c["id"] for c in _CASES])
def test_case_missing_elements_assertions(case: dict[str, Any]) -> None:
    result = completeness(*_texts(case))
    for assertion in case["test_assertions"]:
        if assertion.startswith("missingElements contains "):
            word = assertion.split("'")[1]
            assert word in result["missingElements"]


def test_agreement_with_reference() -> None:
    """Record exact agreement with the reference; all current cases agree exactly."""
    exact_scores = 0
    exact_lists = 0
    for case in _CASES:
        result = completeness(*_texts(case))
        if math.isclose(result["score"], case["expected_score"], rel_tol=0, abs_tol=1e-9):
            exact_scores += 1
        ref = case["reference_step_results"]["preprocessStepResult"]
        if (
            result["inputElements"] == ref["inputElements"]
            and result["outputElements"] == ref["outputElements"]
        ):
            exact_lists += 1
    print(
        f"completeness exact scores {exact_scores}/{len(_CASES)}, lists {exact_lists}/{len(_CASES)}"
    )
    assert exact_scores == len(_CASES)
    assert exact_lists == len(_CASES)


# ---- extraction details ------------------------------------------------------------------


def test_verbs_replaced_by_infinitive() -> None:
    assert extract_elements("The quick brown fox jumps over the lazy dog") == [
        "the", "quick", "brown", "fox", "over", "lazy", "dog", "jump",
    ]  # fmt: skip
    elements = extract_elements("The weather is sunny today")
    assert "be" in elements
    assert "is" not in elements


def test_negation_and_contractions() -> None:
    elements = extract_elements("The dogs don't bark.")
    assert elements[-3:] == ["do", "not", "bark"]
    assert "n" not in elements and "t" not in elements
    she = extract_elements("She's happy.")
    assert she[:2] == ["she", "s"]  # noun phrases keep the surface form
    assert "be" in she


def test_auxiliaries_dropped() -> None:
    elements = extract_elements("She has been eating apples.")
    assert set(elements) == {"she", "apples", "eat"}


def test_empty_and_whitespace() -> None:
    assert extract_elements("") == []
    assert extract_elements("  \n ") == []
    assert extract_elements_many(["", "cat"]) == [[], ["cat"]]


def test_batch_matches_single() -> None:
    texts = ["A man is playing a flute.", "", "I can't swim.", "Two dogs play in the snow."]
    assert extract_elements_many(texts) == [extract_elements(t) for t in texts]


def test_normalize_words() -> None:
    assert normalize_words("Café-au-lait, NAÏVE!") == ["cafe", "au", "lait", "naive"]
    assert normalize_words("3.5% of $5") == ["3", "5", "of", "5"]
    assert normalize_words("  ") == []


# ---- coverage rules ----------------------------------------------------------------------


def test_coverage_empty_input() -> None:
    assert coverage_score([], []) == 1.0
    assert coverage_score([], ["x"]) == 0.0
    assert coverage_score(["cat"], []) == 0.0


def test_coverage_short_words_need_exact_match() -> None:
    assert coverage_score(["cat"], ["cats"]) == 0.0
    assert coverage_score(["cat"], ["cat"]) == 1.0
    assert coverage_score(["ai"], ["aim"]) == 0.0


def test_coverage_long_words_containment_ratio() -> None:
    # "cats" vs "cat": 3/4 = 0.75 > 0.6, and the output may be the shorter one
    assert coverage_score(["cats"], ["cat"]) == 1.0
    # "paragraph" vs "para": 4/9 ≈ 0.44, not enough
    assert coverage_score(["paragraph"], ["para"]) == 0.0
    # ratio exactly 0.6 is not enough ("abcde" in "abcdefgh" is 5/8 = 0.625 > 0.6 though)
    assert coverage_score(["abcdef"], ["abcdefghij"]) == 0.0
    assert coverage_score(["abcde"], ["abcdefgh"]) == 1.0
    # containment is required, not just similar length
    assert coverage_score(["jumps"], ["jumpy"]) == 0.0


def test_coverage_fraction_unrounded() -> None:
    score = coverage_score(["apple", "banana", "cherry"], ["banana"])
    assert score == 1 / 3


def test_missing_elements_are_literal() -> None:
    result = completeness("cats", "cat")
    assert result["score"] == 1.0  # fuzzy coverage
    assert result["missingElements"] == ["cats"]  # literal membership


# ---- tagging: the fast path against spaCy's own pipeline ---------------------------------

# Texts that exercise every kind of attribute-ruler rule the element rules can see: the
# tag→POS map, (tag, word) exceptions ("something", "that", auxiliaries, "not"), rules on
# DEP (never firing without a parser), multi-token rules ("ai n't", "gon na", "let 's"),
# whitespace tokens, curly apostrophes and punctuation.
_TAGGING_TEXTS = [
    "A man is playing a flute.",
    "I ain't gonna do it, y'all, but that is fine.",
    "Let's go!  \n It's  done\tnow.",
    "Nothin' doin', ol' 'em somethin' 'nuff.",
    "Something happened to everyone; nobody knows if it will, though.",
    "They didn’t say whether he’d been there or had left once.",
    "Those who could've gone did; these ones wouldn't.",
    "The $5 (five dollars) - paid \u201cin full\u201d - was his, not hers.",
    "Gotta run... c'mon",
    "She has been eating apples, hasn't she?",
]


def _as_rows(tagged: list[ct._Tokens]) -> list[list[tuple[str, str, str, str, bool]]]:
    return [list(zip(t.text, t.low, t.tag, t.pos, t.space, strict=True)) for t in tagged]


def test_fast_tagging_equals_the_pipeline() -> None:
    tagger = ct._get_tagger()
    assert tagger.fast  # the installed model has the layout and rules the fast path reads
    fast = _as_rows(tagger.tag(_TAGGING_TEXTS))
    pipeline = _as_rows(tagger.tag_with_pipeline(_TAGGING_TEXTS))
    assert fast == pipeline
    # the texts do reach the rules that differ from the plain tag→POS map
    pos_of = {(row[1], row[2]): row[3] for doc in fast for row in doc}
    assert pos_of[("something", "NN")] == "PRON"
    assert any(row[2] == "_SP" and row[3] == "SPACE" for doc in fast for row in doc)


def test_fast_tagging_one_text_equals_a_batch() -> None:
    tagger = ct._get_tagger()
    batch = _as_rows(tagger.tag(_TAGGING_TEXTS))
    assert [_as_rows(tagger.tag([text]))[0] for text in _TAGGING_TEXTS] == batch


def test_replayed_forward_is_bit_identical_to_thinc() -> None:
    """The replayed tok2vec + tagger gives the very floats thinc computes, alone or batched."""
    tagger = ct._get_tagger()
    forward = tagger._forward
    assert forward is not None  # the installed model has the layout it replays
    nlp = ct._get_nlp()
    batches = ([_TAGGING_TEXTS[0]], _TAGGING_TEXTS[1:3], _TAGGING_TEXTS, ["", "A cat.", ""])
    for batch in batches:
        docs = [nlp.make_doc(text) for text in batch]
        expected = tagger._head.predict(tagger._tok2vec.predict(docs))
        got = forward.scores(docs)
        assert len(got) == len(expected)
        for mine, theirs in zip(got, expected, strict=True):
            assert mine.dtype == theirs.dtype
            assert np.array_equal(mine, theirs)


def test_replayed_forward_rejects_another_layout() -> None:
    tagger = ct._get_tagger()
    with pytest.raises(ct._UnsupportedModel):
        ct._TaggerForward(tagger._head, tagger._head)  # not a tok2vec
    tok2vec = tagger._tok2vec
    with pytest.raises(ct._UnsupportedModel):
        ct._TaggerForward(tok2vec, tok2vec.layers[1])  # not a softmax head


def test_thinc_path_when_the_layout_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def unknown(tok2vec: Any, head: Any) -> None:
        raise ct._UnsupportedModel("test")

    monkeypatch.setattr(ct, "_TaggerForward", unknown)
    tagger = ct._Tagger(ct._get_nlp())
    assert tagger._forward is None and tagger.fast
    assert _as_rows(tagger.tag(_TAGGING_TEXTS)) == _as_rows(
        tagger.tag_with_pipeline(_TAGGING_TEXTS)
    )


def test_unsupported_rules_fall_back_to_the_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    nlp = ct._get_nlp()

    def unsupported(patterns: Any) -> None:
        raise ct._UnsupportedRule("test")

    monkeypatch.setattr(ct, "_PosRules", unsupported)
    tagger = ct._Tagger(nlp)
    assert not tagger.fast
    calls: list[int] = []
    original = tagger.tag_with_pipeline

    def spy(texts: Any) -> list[ct._Tokens]:
        calls.append(len(texts))
        return original(texts)

    monkeypatch.setattr(tagger, "tag_with_pipeline", spy)
    assert _as_rows(tagger.tag(_TAGGING_TEXTS[:2])) == _as_rows(original(_TAGGING_TEXTS[:2]))
    assert calls == [2]


def test_pos_rules_order_and_scope() -> None:
    rules = ct._PosRules(
        [
            {"patterns": [[{"TAG": "NN"}]], "attrs": {"POS": "NOUN", "MORPH": "x"}, "index": 0},
            {"patterns": [[{"TAG": "NN", "LOWER": "thing"}]], "attrs": {"POS": "PRON"}},
            {"patterns": [[{"TAG": "NN", "DEP": "nsubj"}]], "attrs": {"POS": "VERB"}},
            {"patterns": [[{"TAG": "_SP", "IS_SPACE": False}]], "attrs": {"POS": "X"}},
            {"patterns": [[{"IS_SPACE": True}]], "attrs": {"TAG": "_SP", "POS": "SPACE"}},
            {"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "go"}},
            {"patterns": [[{"DEP": "expl"}, {"LOWER": "is"}]], "attrs": {"POS": "AUX"}},
            {
                "patterns": [[{"LOWER": {"REGEX": "^wh"}, "TAG": {"IN": ["IN"]}}]],
                "attrs": {"POS": "SCONJ"},
            },
        ]
    )
    assert rules.apply("NN", "cat", False) == ("NN", "NOUN")
    assert rules.apply("NN", "thing", False) == ("NN", "PRON")  # the later rule wins
    assert rules.apply("NNS", "thing", False) == ("NNS", "")  # no rule: no POS
    # the matcher sees the tagger's tag, so "_SP" on a space token is first X, then SPACE
    assert rules.apply("_SP", "\n", True) == ("_SP", "SPACE")
    assert rules.apply("NN", "  ", True) == ("_SP", "SPACE")
    assert rules.apply("_SP", "x", False) == ("_SP", "X")
    assert rules.apply("IN", "whether", False) == ("IN", "SCONJ")
    assert rules.apply("IN", "if", False) == ("IN", "")
    # words no rule names share one memo entry per (tag, is_space)
    for word in ("dog", "house", "tree"):
        rules.apply("NN", word, False)
    assert len([k for k in rules._memo if k[0] == "NN" and not k[2]]) == 2


@pytest.mark.parametrize(
    "pattern",
    [
        [{"TAG": "NN", "OP": "+"}],
        [{"TAG": "NN", "LEMMA": "be"}],
        [{"TAG": {"FUZZY": "NN"}}],
        [{"LOWER": "a"}, {"LOWER": "b"}],
    ],
)
def test_pos_rules_reject_what_they_cannot_evaluate(pattern: list[dict[str, Any]]) -> None:
    with pytest.raises(ct._UnsupportedRule):
        ct._PosRules([{"patterns": [pattern], "attrs": {"POS": "X"}}])
