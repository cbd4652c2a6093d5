"""Estimates are finite or absent: NaN never reaches a result."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from assay.analysis.calibration.estimate import Estimate, estimate_from


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
    assert isinstance(dropped, str)
    assert "20 of 100" in dropped and "no positive labels" in dropped
    assert estimate_from(float("nan"), replicates, 10, "why") == "why"
