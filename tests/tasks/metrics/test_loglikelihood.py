"""Loglikelihood metrics (v0.5 convention) and ``LLResults``."""

from __future__ import annotations

import math

import pytest

from assay.tasks.metrics import LLResults, score_loglikelihood
from assay.tasks.metrics import loglikelihood as ll


def test_defaults_and_validation() -> None:
    results = LLResults.build([-1.0, -2.0])
    assert results.choices == ("A", "B") and results.is_greedy == (False, False)
    with pytest.raises(ValueError, match="1 choices for 2 lls"):
        LLResults.build([-1.0, -2.0], choices=["x"])
    with pytest.raises(ValueError, match="at least one"):
        LLResults.build([])


def test_length_normalised_choice_probabilities() -> None:
    results = LLResults.build([-2.0, -3.0], choices=["ab", "cde"])
    weights = [-1.0, -1.0]  # ll ÷ bytes
    assert ll.choice_prob_norm(0, results) == pytest.approx(0.5, abs=1e-15)
    assert ll.choice_logprob_norm(1, results) == pytest.approx(math.log(0.5), abs=1e-15)
    assert weights[0] == weights[1]
    assert ll.choice_prob_norm(0, LLResults.build([-1.0, -4.0], choices=["a", "bc"])) == (
        pytest.approx(1 / (1 + math.exp(-1.0)))
    )


def test_exact_match_mc_and_invalid_gold() -> None:
    results = LLResults.build([-1.0, -2.0, -3.0], is_greedy=[False, True, False])
    assert ll.exact_match_mc(1, results) == 1
    assert ll.exact_match_mc(-100, results) == 0
    assert ll.exact_match_mc([0, -100, 1], results) == 1
    with pytest.raises(ValueError, match="gold index 5 is not one of the 3 choices"):
        ll.logprob(5, results)
    with pytest.raises(ValueError, match="needs one gold index"):
        ll.bpb([0, 1], results)
    with pytest.raises(TypeError, match="multiple_targets=True"):
        ll.acc([0, 1], results)


def test_score_loglikelihood_passes_multiple_targets_only_to_metrics_that_take_it() -> None:
    results = LLResults.build([-2.0, -1.0, -3.0], is_greedy=[False, True, False])
    out = score_loglikelihood(
        [1, 2], results, [("acc", {}), ("exact_match_mc", {})], multiple_targets=True
    )
    assert out == {"acc": [1], "exact_match_mc": [1]}
