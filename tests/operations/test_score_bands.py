"""Score bands of the run page: pass/fail against a threshold, else by range (issue 25)."""

from __future__ import annotations

import math

import pytest

from assay.operations.score_bands import score_band, scorer_threshold
from assay.types import ScorerSpec


def _spec(**fields: object) -> ScorerSpec:
    return ScorerSpec.model_validate({"id": "s", "label": "S", **fields})


def test_threshold_of_the_scorer_wins_over_the_run_level() -> None:
    assert scorer_threshold(_spec(threshold=3.0, score_range=(1, 5)), 0.5) == 3.0
    assert scorer_threshold(_spec(score_range=(1, 5)), 0.5) == 3.0
    assert scorer_threshold(
        _spec(score_range=(0, 10), higher_is_better=False), 0.8
    ) == pytest.approx(2.0)
    assert scorer_threshold(_spec(score_range=(0, math.inf)), 0.5) is None
    assert scorer_threshold(_spec(), None) is None


@pytest.mark.parametrize(
    ("score", "fields", "threshold", "band"),
    [
        (0.7, {}, 0.7, ("good", "pass", "✓")),
        (0.69, {}, 0.7, ("bad", "fail", "✗")),
        (0.2, {"higher_is_better": False}, 0.3, ("good", "pass", "✓")),
        (0.4, {"higher_is_better": False}, 0.3, ("bad", "fail", "✗")),
        (0.9, {}, None, ("good", "good", "▲")),
        (0.5, {}, None, ("mid", "fair", "●")),
        (0.1, {}, None, ("bad", "poor", "▼")),
        (0.1, {"higher_is_better": False}, None, ("good", "good", "▲")),
        (5.0, {"score_range": (1, 5)}, None, ("good", "good", "▲")),
        (2.0, {"score_range": (1, 5)}, None, ("bad", "poor", "▼")),
    ],
)
def test_bands(
    score: float, fields: dict[str, object], threshold: float | None, band: tuple[str, ...]
) -> None:
    assert tuple(score_band(score, _spec(**fields), threshold) or ()) == band


def test_no_band_without_a_number_or_a_scale() -> None:
    assert score_band(None, _spec(), 0.5) is None
    assert score_band(12.0, _spec(score_range=(0, math.inf)), None) is None
