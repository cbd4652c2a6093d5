"""Estimates are finite or absent: NaN never reaches a result."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from assay.calibration.statistics.estimate import Estimate, PointOnly, estimate_from
from assay.calibration.statistics.statistics import calibration_statistics


def test_estimate_rejects_nan_and_reversed_intervals() -> None:
    with pytest.raises(ValidationError, match="finite"):
        Estimate(value=float("nan"), ci_low=0.0, ci_high=1.0, n=3)
    with pytest.raises(ValidationError, match="reversed"):
        Estimate(value=0.5, ci_low=0.9, ci_high=0.1, n=3)
    assert Estimate(value=0.5, ci_low=0.1, ci_high=0.9, n=3).to_json() == {
        "value": 0.5,
        "ci_low": 0.1,
        "ci_high": 0.9,
        "n": 3,
    }


def test_estimate_from_drops_a_few_undefined_resamples_but_not_many() -> None:
    replicates = np.linspace(0.0, 1.0, 100)
    replicates[:5] = np.nan
    kept = estimate_from(0.5, replicates, 10, "why")
    assert isinstance(kept, Estimate)
    assert kept.ci_low == pytest.approx(np.percentile(replicates[5:], 2.5))
    replicates[:20] = np.nan
    dropped = estimate_from(0.5, replicates, 10, "no positive labels")
    assert isinstance(dropped, PointOnly) and dropped.value == 0.5
    assert dropped.reason.startswith("no CI: undefined on 20 of 100 resamples")
    assert "no positive labels" in dropped.reason
    assert estimate_from(float("nan"), replicates, 10, "why") == "why"


def test_a_statistic_defined_on_four_items_keeps_its_point_value_without_a_ci() -> None:
    # four items: many resamples have one class, so the CI is dropped, not the value
    stats = calibration_statistics(
        "binary", [1, 0, 1, 0], [0.9, 0.2, 0.5, 0.6], threshold=0.5, n_resamples=200, seed=0
    ).to_json()
    auc = stats["roc_auc"]
    assert auc["value"] == pytest.approx(0.75) and auc["ci_low"] is None
    assert auc["reason"].startswith("no CI: undefined on ") and "of 200 resamples" in auc["reason"]
    assert stats["precision"]["value"] == pytest.approx(2 / 3)
