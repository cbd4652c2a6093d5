"""The statistics a calibration reports, as JSON-ready sections.

The numbers come from ``assay.calibration.statistics`` (the statistics room: every statistic
with a seeded bootstrap CI, checked against scipy / scikit-learn). This module only chooses
which to compute for a calibration's ``kind`` and shapes them for the report, the gates and
the certificate: ``{name: {value, ci_low, ci_high, n}}``, with an undefined statistic as
``value: null`` plus its ``reason`` (never NaN, so a gate cannot pass on a missing number).

The one piece counted here is the ordinal confusion matrix (labels against scores snapped
to the nearest label value); the statistics room's confusion matrix is the binary one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.calibration.config import CalibrationKind
from assay.calibration.statistics import StatisticsTable

FloatArray = npt.NDArray[np.float64]

LOWER_IS_BETTER = frozenset(
    {"mae", "rmse", "ece", "position_bias_rate", "tie_rate", "flip_rate", "mean_spread"}
)
"""Statistics where smaller is better: a ``min`` gate on them would be meaningless."""

HEADLINE = {
    "binary": ("kappa", "mcc", "balanced_accuracy", "accuracy"),
    "ordinal": ("quadratic_weighted_kappa", "spearman", "kendall_tau_b"),
    "numeric": ("spearman", "pearson", "kendall_tau_b"),
    "pairwise": ("agreement",),
}
"""The statistic a one-line summary shows first, per kind (the first one present)."""

SYMBOLS = {
    "kappa": "κ",
    "quadratic_weighted_kappa": "κw",
    "spearman": "ρ",
    "pearson": "r",
    "kendall_tau_b": "τb",
}


def verdicts(scores: FloatArray, threshold: float) -> FloatArray:
    """Binary verdicts: a score at or above ``threshold`` is positive."""
    return (scores >= threshold).astype(np.float64)


def _statistics_map(result: StatisticsTable) -> dict[str, dict[str, Any]]:
    """``{name: {value, ci_low, ci_high, n}}`` for every statistic of ``result``, the
    undefined ones included (``value: null`` and their ``reason``)."""
    return {name: dict(data) for name, data in result.to_json().items()}


def statistics_json(
    kind: CalibrationKind,
    labels: Any,
    scores: Any,
    *,
    threshold: float | None,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Every statistic of ``kind`` with its bootstrap CI (see the module docstring), plus
    the binary confusion matrix and reliability curve when the statistics room gives them:
    ``{"statistics": {...}, "confusion_matrix": ..., "reliability": ...}``."""
    from assay.calibration.statistics import calibration_statistics

    result = calibration_statistics(
        kind, labels, scores, threshold=threshold, n_resamples=n_resamples, seed=seed
    )
    out: dict[str, Any] = {"statistics": _statistics_map(result)}
    matrix = getattr(result, "confusion_matrix", None)
    if matrix is not None:
        counts = matrix.model_dump()
        out["confusion_matrix"] = {
            "labels": [0, 1],
            "matrix": [[counts["tn"], counts["fp"]], [counts["fn"], counts["tp"]]],
            "threshold": counts.get("threshold"),
        }
    curve = getattr(result, "reliability_curve", None)
    if curve is not None:
        ece = out["statistics"].get("ece", {}).get("value")
        out["reliability"] = {
            "bins": [
                {
                    "low": b.low,
                    "high": b.high,
                    "n": b.count,
                    "mean_score": b.mean_predicted,
                    "positive_rate": b.observed_frequency,
                }
                for b in curve.bins
                if b.count
            ],
            "ece": ece,
        }
    return out


def confusion_json(labels: FloatArray, predicted: FloatArray) -> dict[str, Any]:
    """The confusion matrix over every value either side uses (rows: human label, columns:
    scorer verdict), counted with numpy."""
    classes = np.unique(np.concatenate([labels, predicted]))
    rows = np.searchsorted(classes, labels)
    cols = np.searchsorted(classes, predicted)
    matrix = np.zeros((len(classes), len(classes)), dtype=np.int64)
    np.add.at(matrix, (rows, cols), 1)
    return {"labels": [_plain(float(c)) for c in classes], "matrix": matrix.tolist()}


def ordinal_predictions(labels: FloatArray, scores: FloatArray) -> FloatArray:
    """Scores snapped to the nearest label value (for an ordinal confusion matrix)."""
    classes = np.unique(labels)
    index = np.abs(scores[:, None] - classes[None, :]).argmin(axis=1)
    return np.asarray(classes[index], dtype=np.float64)


def self_consistency_json(
    by_repeat: FloatArray, threshold: float | None, *, n_resamples: int, seed: int
) -> dict[str, Any]:
    """How much a scorer disagrees with itself across repeats (items x repeats; NaN where a
    repeat failed): ``mean_spread``, ``flip_rate`` at ``threshold`` and Krippendorff's α
    with the repeats as coders, each with its CI, plus the per-item spread."""
    from assay.calibration.statistics import self_consistency

    result = self_consistency(by_repeat, threshold=threshold, n_resamples=n_resamples, seed=seed)
    return {
        "repeats": int(by_repeat.shape[1]),
        "n": result.n,
        "statistics": _statistics_map(result),
        "per_item_spread": result.spread,
    }


def paired_differences_json(
    kind: CalibrationKind,
    labels: Any,
    baseline: Any,
    candidate: Any,
    *,
    threshold: float | None,
    n_resamples: int,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """Each statistic of ``candidate`` minus ``baseline`` on the same items, with a paired
    bootstrap 95% CI (the same resampled items for both)."""
    from assay.calibration.statistics import paired_difference

    result = paired_difference(
        kind, labels, candidate, baseline, threshold=threshold, n_resamples=n_resamples, seed=seed
    )
    return _statistics_map(result)


def ppi_json(
    judge_all: FloatArray, judge_labelled: FloatArray, human_labelled: FloatArray
) -> dict[str, Any]:
    """The prediction-powered (judge-corrected) mean with its 95% CI beside the plain judge
    mean; ``value: null`` with a ``reason`` when there are too few items."""
    from assay.calibration.statistics import ppi_mean

    try:
        result = ppi_mean(judge_all, judge_labelled, human_labelled)
    except ValueError as exc:
        return {
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "n": len(judge_all),
            "n_labelled": len(human_labelled),
            "judge_mean": float(judge_all.mean()) if len(judge_all) else None,
            "reason": str(exc),
        }
    return result.to_json()


def headline(kind: str, statistics: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The name of the statistic a one-line summary shows for ``kind``."""
    for name in HEADLINE.get(kind, ()):
        if name in statistics:
            return name
    return next(iter(statistics), None)


def describe_estimate(name: str, estimate: Mapping[str, Any]) -> str:
    """``κ 0.71 [0.64, 0.77]`` (or ``κ undefined``)."""
    symbol = SYMBOLS.get(name, name)
    value = estimate.get("value")
    if value is None:
        return f"{symbol} undefined"
    low, high = estimate.get("ci_low"), estimate.get("ci_high")
    if low is None or high is None:
        return f"{symbol} {value:.2f}"
    return f"{symbol} {value:.2f} [{low:.2f}, {high:.2f}]"


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else float(value)


def as_array(values: Sequence[float]) -> FloatArray:
    return np.asarray(values, dtype=np.float64)
