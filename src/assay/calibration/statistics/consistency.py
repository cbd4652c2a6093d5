"""Self-consistency: does a scorer give the same item the same score when asked again?

Input is an items x repeats matrix of scores; NaN marks a repeat that produced no score
(an error), which is left out rather than counted. Krippendorff's α treats the repeats as
coders at the interval level, so α = 1 means the repeats never disagree and α ≈ 0 means
they disagree as much as scores of different items do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from assay.calibration.statistics.estimate import Estimate, PointOnly, estimate_from
from assay.calibration.statistics.resample import (
    FloatArray,
    StatGroup,
    cells_of,
    run_bootstrap,
    safe_divide,
)
from assay.calibration.statistics.results import SelfConsistency

CONSISTENCY_STATISTICS: dict[str, str] = {
    "mean_spread": "no item has two scored repeats",
    "flip_rate": "no item has two scored repeats",
    "krippendorff_alpha_interval": "no item has two scored repeats, or all scores are equal",
}


def repeats_matrix(repeats: Sequence[Sequence[float]] | FloatArray) -> FloatArray:
    """Items x repeats as floats (NaN allowed: a missing repeat), or ``ValueError``."""
    try:
        matrix = np.asarray(repeats, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"repeats must be an items x repeats table of numbers: {exc}") from None
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError(
            f"repeats must be items x repeats with at least one item, got shape {matrix.shape}"
        )
    if np.isinf(matrix).any():
        row = int(np.flatnonzero(np.isinf(matrix).any(axis=1))[0])
        raise ValueError(f"repeats[{row}] holds an infinite score")
    return matrix


def _per_item(
    matrix: FloatArray, threshold: float | None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per item: scored-repeat count, spread (NaN below two), flipped (NaN below two)."""
    scored = np.isfinite(matrix)
    m = scored.sum(axis=1).astype(np.float64)
    filled_hi = np.where(scored, matrix, -np.inf).max(axis=1)
    filled_lo = np.where(scored, matrix, np.inf).min(axis=1)
    spread = np.where(m >= 2, filled_hi - filled_lo, np.nan)
    if threshold is None:
        flipped = np.full(matrix.shape[0], np.nan)
    else:
        passes = (np.where(scored, matrix, -np.inf) >= threshold).sum(axis=1)
        flipped = np.where(m >= 2, ((passes > 0) & (passes < m)).astype(np.float64), np.nan)
    return m, spread, flipped


def _group(matrix: FloatArray, threshold: float | None) -> StatGroup:
    m, spread, flipped = _per_item(matrix, threshold)
    pairable = m >= 2
    centred = matrix - np.nanmean(matrix[pairable]) if pairable.any() else matrix
    values = np.where(np.isfinite(centred) & pairable[:, None], centred, 0.0)
    s1 = values.sum(axis=1)
    s2 = (values * values).sum(axis=1)
    m_p = np.where(pairable, m, 0.0)
    # Σ_{i≠j in unit} (v_i - v_j)² / (m_u - 1): the unit's contribution to observed disagreement
    within = np.where(pairable, (2.0 * m_p * s2 - 2.0 * s1 * s1) / np.maximum(m_p - 1.0, 1.0), 0.0)
    features = np.column_stack(
        [
            pairable.astype(np.float64),
            np.nan_to_num(spread),
            np.nan_to_num(flipped),
            m_p,
            s1,
            s2,
            within,
        ]
    )
    has_threshold = threshold is not None

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        s = weights @ features
        units = s[:, 0]
        pooled = s[:, 3]
        observed = safe_divide(s[:, 6], pooled)
        expected = safe_divide(2.0 * pooled * s[:, 5] - 2.0 * s[:, 4] ** 2, pooled * (pooled - 1.0))
        out = {
            "mean_spread": safe_divide(s[:, 1], units),
            "krippendorff_alpha_interval": 1.0 - safe_divide(observed, expected),
        }
        out["flip_rate"] = (
            safe_divide(s[:, 2], units) if has_threshold else np.full(units.shape, np.nan)
        )
        return out

    return group


def self_consistency(
    repeats: Sequence[Sequence[float]] | FloatArray,
    *,
    threshold: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> SelfConsistency:
    """Per-item spread, flip rate at ``threshold`` and α across repeats, with item-bootstrap CIs.

    Items with fewer than two scored repeats carry no information about consistency: they
    are counted in ``n`` but left out of every statistic (their spread is ``None``)."""
    matrix = repeats_matrix(repeats)
    if threshold is not None and not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    n = matrix.shape[0]
    # Missing repeats become +inf (never a valid score) so identical rows share one cell.
    cells, counts = cells_of(np.where(np.isnan(matrix), np.inf, matrix))
    cells = np.where(np.isinf(cells), np.nan, cells)
    result = run_bootstrap(
        {"consistency": _group(cells, threshold)}, counts, n_resamples=n_resamples, seed=seed
    )
    statistics: dict[str, Estimate] = {}
    undefined: dict[str, str] = {}
    points: dict[str, float] = {}
    for name, reason in CONSISTENCY_STATISTICS.items():
        if name == "flip_rate" and threshold is None:
            undefined[name] = "no threshold: a flip is a verdict that changes between repeats"
            continue
        outcome = estimate_from(result.point[name], result.replicates[name], n, reason)
        if isinstance(outcome, Estimate):
            statistics[name] = outcome
        elif isinstance(outcome, PointOnly):
            undefined[name], points[name] = outcome.reason, outcome.value
        else:
            undefined[name] = outcome
    _, spread, flipped = _per_item(matrix, threshold)
    return SelfConsistency(
        n=n,
        threshold=threshold,
        n_resamples=n_resamples,
        seed=seed,
        statistics=statistics,
        undefined=undefined,
        points=points,
        spread=[None if math.isnan(v) else float(v) for v in spread],
        flipped=None if threshold is None else [bool(v == 1.0) for v in flipped],
    )
