"""Mid-rank sums and tied pairs by cumulative weights equal explicit counts and scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from assay.calibration.statistics import ordinal
from assay.calibration.statistics.ranks import Ranking, sum_of_squares
from assay.calibration.statistics.resample import resample_weights
from tests.optional import required_module


def _values(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    """Distinct values, a few tied runs (clipped at the ends of a scale), or few levels."""
    raw = rng.normal(2.5, 1.2, n)
    if kind == "distinct":
        return raw
    if kind == "clipped":
        return np.clip(raw, 1.0, 4.0)
    return np.round(raw)


def _explicit(row: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(row.shape[0]), row.astype(np.int64))


@pytest.mark.parametrize("kind", ["distinct", "clipped", "levels"])
def test_tied_pairs_and_cubes_equal_counts_per_value(kind: str) -> None:
    rng = np.random.default_rng(5)
    values = _values(rng, 700, kind)
    weights = rng.integers(0, 4, size=(5, values.shape[0])).astype(np.float64)
    ranking = Ranking(values)
    _, code = np.unique(values, return_inverse=True)
    per_value = np.stack([np.bincount(code, weights=row) for row in weights])
    pairs = ranking.tied_pairs(weights, sum_of_squares(weights))
    np.testing.assert_array_equal(pairs, (per_value * (per_value - 1.0)).sum(axis=1) / 2.0)
    cubes = ranking.cubes(weights, (weights**3).sum(axis=1))
    np.testing.assert_array_equal(cubes, (per_value**3).sum(axis=1))


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("label_kind", ["distinct", "clipped", "levels"])
@pytest.mark.parametrize("score_kind", ["distinct", "clipped", "levels"])
def test_spearman_equals_scipy_on_the_items_drawn(
    label_kind: str, score_kind: str, compiled: bool
) -> None:
    """Every combination of distinct, clipped (tied runs among distinct values) and few
    values on either side, cells in score order as the statistics order them: the point
    value and each replicate equal scipy's ρ on the expanded items to 1e-12, on the numpy
    path and the compiled one."""
    if compiled:
        required_module("numba")
    rng = np.random.default_rng(11)
    n = 600
    labels = _values(rng, n, label_kind)
    scores = _values(rng, n, score_kind) + 0.3 * labels
    order = np.lexsort((labels, scores))
    labels, scores = labels[order], scores[order]
    weights = np.vstack([np.ones(n), next(resample_weights(np.ones(n), 6, seed=9))])
    got = ordinal.spearman_group(labels, scores, compiled=compiled)(weights)["spearman"]
    for r in range(weights.shape[0]):
        drawn = _explicit(weights[r])
        expected = scipy.stats.spearmanr(labels[drawn], scores[drawn]).statistic
        assert abs(got[r] - expected) <= 1e-12, (r, got[r], expected)


@pytest.mark.parametrize("compiled", [False, True])
def test_spearman_in_any_cell_order(compiled: bool) -> None:
    """Cells not in score order (a caller that did not sort them) give the same ρ."""
    if compiled:
        required_module("numba")
    rng = np.random.default_rng(2)
    labels, scores = _values(rng, 300, "clipped"), _values(rng, 300, "clipped")
    weights = next(resample_weights(np.ones(300), 4, seed=1))
    order = np.lexsort((labels, scores))
    shuffled = ordinal.spearman_group(labels, scores, compiled=compiled)(weights)["spearman"]
    ordered = ordinal.spearman_group(labels[order], scores[order], compiled=compiled)(
        weights[:, order]
    )["spearman"]
    np.testing.assert_allclose(shuffled, ordered, rtol=0, atol=1e-12)
