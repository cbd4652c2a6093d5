"""Repeat reductions: first, mean, max, majority, pass@k, and v0.5's reduce rules."""

from __future__ import annotations

from math import comb

import pytest

from assay.tasks.metrics import REDUCTIONS, default_reductions, reduce_scores, score_generation
from assay.tasks.metrics.reductions import default_k_values, pass_at_k


def test_simple_reductions() -> None:
    values = [0, 1, 1, 0, 1]
    assert REDUCTIONS.get("first").fn(None, values) == 0
    assert REDUCTIONS.get("take_first").fn(None, values) == 0
    assert REDUCTIONS.get("mean").fn(None, values) == pytest.approx(0.6)
    assert REDUCTIONS.get("max").fn(None, values) == 1
    assert REDUCTIONS.get("majority").fn(None, ["b", "a", "a", "b"]) == "b"  # tie: earliest
    assert REDUCTIONS.get("majority").fn(None, ["b", "a", "a"]) == "a"


@pytest.mark.parametrize(("n", "c"), [(5, 0), (5, 2), (10, 3), (10, 10), (20, 1)])
def test_pass_at_k_is_the_unbiased_estimator(n: int, c: int) -> None:
    values = [1] * c + [0] * (n - c)
    out = pass_at_k(None, values)
    for key, value in out.items():
        k = int(key.removeprefix("pass@"))
        exact = 1.0 - comb(n - c, k) / comb(n, k)
        assert value == pytest.approx(exact, abs=1e-12), key


def test_default_k_values() -> None:
    assert default_k_values(1) == [1]
    assert default_k_values(8) == [1, 3, 5, 8]
    assert default_k_values(64) == [1, 3, 5, 10, 20, 50, 64]
    ks = default_k_values(1000)
    assert ks[:7] == [1, 3, 5, 10, 20, 50, 100] and ks[-1] == 1000 and len(ks) > 8
    assert pass_at_k(None, [1, 0, 1], k=[1, 2]) == pytest.approx({"pass@1": 2 / 3, "pass@2": 1.0})
    with pytest.raises(ValueError, match="pass@4 needs at least 4 repeats"):
        pass_at_k(None, [1, 0, 1], k=4)


def test_reduce_rules() -> None:
    assert reduce_scores({"m": [0.5]}, {}) == {"m": 0.5}
    assert reduce_scores({"m": [1, 0, 1, 1]}, {"m": "mean"}) == {"m": 0.75}
    with pytest.raises(ValueError, match=r"'m' has 3 values .* no reduction"):
        reduce_scores({"m": [1, 2, 3]}, {})
    out = reduce_scores(
        {"exact_match": [1, 0, 1]}, {"exact_match": "pass@k"}, kwargs={"exact_match": {"k": [1, 2]}}
    )
    assert out == pytest.approx({"pass@1(exact_match)": 2 / 3, "pass@2(exact_match)": 1.0})


def test_generation_repeats_through_score_and_reduce() -> None:
    scores = score_generation("42", ["42", "41", "42", "42"], [("exact_match", {}), ("rouge", {})])
    assert scores["exact_match"] == [1, 0, 1, 1]
    reductions = default_reductions(list(scores), scores.sources)
    assert reductions["exact_match"] == "pass@k" and reductions["rouge1"] == "first"
    reduced = reduce_scores(scores, reductions)
    assert reduced["pass@1(exact_match)"] == pytest.approx(0.75)
    assert reduced["pass@4(exact_match)"] == 1.0
    assert reduced["rouge1"] == 1.0
