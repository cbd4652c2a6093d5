"""Pairwise statistics on LLMBar / MT-Bench preferences against a position-biased judge."""

from __future__ import annotations

import pytest

from assay.calibration.statistics import calibration_statistics
from tests.calibration.statistics.conftest import Pairs


def by_definition(human: list[str], verdicts: list[tuple[str, str]]) -> dict[str, float]:
    """The published definitions, one pair at a time: a verdict that changes with the
    order is position bias and counts as a tie."""
    agree = ties = biased = 0
    for h, (first, second) in zip(human, verdicts, strict=True):
        final = first if first == second else "tie"
        agree += final == h
        ties += final == "tie"
        biased += first != second
    n = len(human)
    return {"agreement": agree / n, "tie_rate": ties / n, "position_bias_rate": biased / n}


def test_pairwise_statistics_match_their_definition(llmbar: Pairs) -> None:
    stats = calibration_statistics("pairwise", llmbar.human, llmbar.verdicts, n_resamples=200)
    expected = by_definition(llmbar.human, llmbar.verdicts)
    assert 0 < expected["position_bias_rate"] < 1, "the judge should be biased on some pairs"
    for name, value in expected.items():
        estimate = stats[name]
        assert estimate is not None
        assert estimate.value == pytest.approx(value, abs=1e-12)
        assert estimate.ci_low <= estimate.value <= estimate.ci_high
        assert estimate.n == len(llmbar.human)
    assert stats.confusion_matrix is None and stats.reliability_curve is None


def test_judged_in_one_order_has_no_position_bias_rate(llmbar: Pairs) -> None:
    once = [first for first, _ in llmbar.verdicts]
    stats = calibration_statistics("pairwise", llmbar.human, once, n_resamples=50)
    agreement = sum(v == h for v, h in zip(once, llmbar.human, strict=True)) / len(once)
    assert stats["agreement"].value == pytest.approx(agreement)  # type: ignore[union-attr]
    assert stats["tie_rate"].value == 0.0  # type: ignore[union-attr]
    assert stats["position_bias_rate"] is None
    assert "one order" in (stats.reason("position_bias_rate") or "")


def test_human_ties_and_case_are_accepted() -> None:
    stats = calibration_statistics(
        "pairwise", ["a", "tie", "B"], [("A", "A"), ("A", "B"), ("tie", "B")], n_resamples=20
    )
    # pair 2 flips -> tie, matching the human tie; pair 3 is inconsistent -> tie, human B
    assert stats["agreement"].value == pytest.approx(2 / 3)  # type: ignore[union-attr]
    assert stats["tie_rate"].value == pytest.approx(2 / 3)  # type: ignore[union-attr]


def test_bad_verdicts_name_the_row() -> None:
    with pytest.raises(ValueError, match=r"scores\[1\] is 'C'"):
        calibration_statistics("pairwise", ["A", "B"], [("A", "A"), ("C", "B")])
    with pytest.raises(ValueError, match=r"labels\[0\] is 1"):
        calibration_statistics("pairwise", [1, "B"], ["A", "B"])
    with pytest.raises(ValueError, match=r"scores\[0\] is \('A', 'B', 'A'\)"):
        calibration_statistics("pairwise", ["A"], [("A", "B", "A")])
