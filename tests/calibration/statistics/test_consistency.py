"""Self-consistency over repeats: spread, flips and Krippendorff's α across repeats."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from assay.calibration.statistics import self_consistency
from tests.calibration.statistics.conftest import Labelled


def repeats_of(stsb: Labelled, seed: int = 5) -> np.ndarray:
    """Three noisy "repeats" of the lexical judge, on its 0-5 scale rounded to 0.5."""
    rng = np.random.default_rng(seed)
    noisy = stsb.scores[:, None] + rng.normal(0.0, 0.4, (stsb.scores.shape[0], 3))
    return np.round(noisy * 2) / 2


def test_statistics_equal_their_definitions(stsb: Labelled) -> None:
    matrix = repeats_of(stsb)
    matrix[3, 1] = np.nan  # a repeat that errored
    matrix[7, :2] = np.nan  # an item with one scored repeat left
    result = self_consistency(matrix, threshold=2.5, n_resamples=200, seed=0)
    alpha = krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="interval")
    assert result["krippendorff_alpha_interval"].value == pytest.approx(alpha, abs=1e-9)  # type: ignore[union-attr]
    spreads, flips = [], []
    for row in matrix:
        scored = row[~np.isnan(row)]
        if scored.shape[0] < 2:
            continue
        spreads.append(scored.max() - scored.min())
        passes = scored >= 2.5
        flips.append(passes.any() and not passes.all())
    assert result["mean_spread"].value == pytest.approx(np.mean(spreads))  # type: ignore[union-attr]
    assert result["flip_rate"].value == pytest.approx(np.mean(flips))  # type: ignore[union-attr]
    assert result.spread[7] is None
    assert result.spread[3] == pytest.approx(np.nanmax(matrix[3]) - np.nanmin(matrix[3]))
    assert result.flipped is not None and len(result.flipped) == matrix.shape[0]
    for name in ("mean_spread", "flip_rate", "krippendorff_alpha_interval"):
        estimate = result[name]
        assert estimate is not None and estimate.ci_low <= estimate.value <= estimate.ci_high


def test_identical_repeats_are_perfectly_consistent(stsb: Labelled) -> None:
    matrix = np.repeat(stsb.scores[:, None], 4, axis=1)
    result = self_consistency(matrix, threshold=2.5, n_resamples=50)
    assert result["krippendorff_alpha_interval"].value == 1.0  # type: ignore[union-attr]
    assert result["flip_rate"].value == 0.0  # type: ignore[union-attr]
    assert result["mean_spread"].value == 0.0  # type: ignore[union-attr]


def test_without_threshold_flip_rate_is_undefined(stsb: Labelled) -> None:
    result = self_consistency(repeats_of(stsb), n_resamples=20)
    assert result["flip_rate"] is None
    assert "threshold" in (result.reason("flip_rate") or "")
    assert result.flipped is None


def test_no_item_with_two_repeats() -> None:
    result = self_consistency([[1.0, np.nan], [np.nan, 0.5]], threshold=0.5, n_resamples=20)
    assert result.statistics == {}
    assert set(result.undefined) == {"mean_spread", "flip_rate", "krippendorff_alpha_interval"}
    with pytest.raises(ValueError, match="items x repeats"):
        self_consistency([1.0, 2.0])
