"""Prediction-powered inference: a judge's mean corrected by a few human labels.

Classical PPI for a mean (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered
inference", Science 2023, the mean estimator of section 2 without the power-tuning of
PPI++): the judge's mean over all items plus the mean human-minus-judge difference (the
"rectifier") on the labelled items, with the normal-theory interval

    θ = mean(f(all)) + mean(y - f(labelled))
    θ ± z_{1-α/2} · sqrt(var(f(all)) / N + var(y - f(labelled)) / n)

(sample variances, ddof = 1). The estimate is unbiased whatever the judge's errors; the
interval is narrower than the labelled-only interval when the judge tracks the labels
(var(y - f) < var(y)). The two variances are added as for independent samples; when the
labelled items are also among ``judge_all`` (the usual case) the small covariance term of
order 1/N is ignored, which is negligible when N is much larger than n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from assay.analysis.calibration.resample import FloatArray
from assay.analysis.calibration.results import PPIEstimate


def _values(values: Sequence[float] | FloatArray, field: str, minimum: int) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{field} must be one-dimensional, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{field}[{int(bad[0])}] is {array[bad[0]]}; drop unscored items first")
    if array.shape[0] < minimum:
        raise ValueError(f"{field} has {array.shape[0]} values; PPI needs at least {minimum}")
    return array


def ppi_mean(
    judge_all: Sequence[float] | FloatArray,
    judge_labelled: Sequence[float] | FloatArray,
    human_labelled: Sequence[float] | FloatArray,
    *,
    alpha: float = 0.05,
) -> PPIEstimate:
    """The judge-corrected mean with a (1 - alpha) CI (classical PPI, see the module)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    f_all = _values(judge_all, "judge_all", 2)
    f_lab = _values(judge_labelled, "judge_labelled", 2)
    y_lab = _values(human_labelled, "human_labelled", 2)
    if f_lab.shape != y_lab.shape:
        raise ValueError(
            f"judge_labelled has {f_lab.shape[0]} values but human_labelled has {y_lab.shape[0]}"
        )
    judge_mean = float(f_all.mean())
    rectifier = y_lab - f_lab
    value = judge_mean + float(rectifier.mean())
    variance = (
        float(f_all.var(ddof=1)) / f_all.shape[0] + float(rectifier.var(ddof=1)) / y_lab.shape[0]
    )
    half = NormalDist().inv_cdf(1.0 - alpha / 2.0) * math.sqrt(variance)
    return PPIEstimate(
        value=value,
        ci_low=value - half,
        ci_high=value + half,
        n=int(f_all.shape[0]),
        n_labelled=int(y_lab.shape[0]),
        judge_mean=judge_mean,
    )
