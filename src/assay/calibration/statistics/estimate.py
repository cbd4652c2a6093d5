"""The result of one statistic: a point value with a bootstrap CI, or a reason it has none.

A calibration statistic is either a number with an interval or undefined on the data (κ
when humans used one class only, recall with no positive labels). Undefined is stored as
``None`` plus a sentence saying why, never as NaN: NaN does not survive JSON, compares
false with everything and would let a gate pass or fail silently.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, model_validator

FloatArray = npt.NDArray[np.float64]

CONFIDENCE = 0.95
"""Two-sided level of every bootstrap interval in this package."""

MIN_DEFINED_SHARE = 0.9
"""Share of bootstrap resamples on which a statistic must be defined to report its CI.

Resamples where the statistic is undefined (a resample with no positive label, say) are
dropped; when more than a tenth are dropped the interval describes a different population
than the data, so the CI is dropped (``PointOnly``): the point value, defined on the data
itself, is still reported, and a ``--gate-on point`` gate can use it; a CI gate cannot."""


class Estimate(BaseModel):
    """A statistic's value on the data with its percentile bootstrap 95% CI over ``n`` items."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float
    ci_low: float
    ci_high: float
    n: int

    @model_validator(mode="after")
    def _finite(self) -> Estimate:
        for name in ("value", "ci_low", "ci_high"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"Estimate.{name} must be finite, got {getattr(self, name)}")
        if self.ci_low > self.ci_high:
            raise ValueError(f"Estimate CI is reversed: {self.ci_low} > {self.ci_high}")
        return self

    def to_json(self) -> dict[str, Any]:
        """``{"value", "ci_low", "ci_high", "n"}`` (plus any fields a subclass adds)."""
        return self.model_dump(mode="json")


class PointOnly(BaseModel):
    """A statistic defined on the data whose bootstrap CI is not: ``value`` stands, and
    ``reason`` says why there is no CI ("no CI: undefined on K of N resamples ...")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float
    reason: str


def undefined_json(n: int, reason: str, value: float | None = None) -> dict[str, Any]:
    """The JSON of a statistic without a CI: the Estimate keys set to null (``value`` kept
    when the statistic is defined on the data but its CI is not), plus ``reason``.

    Same keys as a defined statistic so a reader taking ``["ci_low"]`` gets null, not a
    KeyError."""
    return {"value": value, "ci_low": None, "ci_high": None, "n": n, "reason": reason}


def percentile_interval(resampled: FloatArray) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles (numpy's default linear interpolation), the same
    percentile bootstrap as ``assay.summary.stats.bootstrap_mean_cis``."""
    alpha = (1.0 - CONFIDENCE) / 2.0
    low, high = np.percentile(resampled, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(low), float(high)


def estimate_from(
    value: float, resampled: FloatArray, n: int, undefined_reason: str
) -> Estimate | PointOnly | str:
    """An ``Estimate`` from a point value and its bootstrap replicates; a ``PointOnly`` when
    the CI is undefined (see ``MIN_DEFINED_SHARE``); or a reason string when the value is.

    ``undefined_reason`` says when the statistic is undefined (it is returned when the
    point value is NaN). Replicates that are NaN are dropped; too many of them make the
    CI undefined (see ``MIN_DEFINED_SHARE``). With no replicates at all (``n_resamples=0``)
    the interval collapses to the value.
    """
    if not math.isfinite(value):
        return undefined_reason
    if resampled.shape[0] == 0:
        return Estimate(value=value, ci_low=value, ci_high=value, n=n)
    finite = resampled[np.isfinite(resampled)]
    if finite.shape[0] < MIN_DEFINED_SHARE * resampled.shape[0]:
        dropped = resampled.shape[0] - finite.shape[0]
        return PointOnly(
            value=value,
            reason=f"no CI: undefined on {dropped} of {resampled.shape[0]} resamples "
            f"({undefined_reason}); more items are needed",
        )
    low, high = percentile_interval(finite)
    return Estimate(value=value, ci_low=low, ci_high=high, n=n)
