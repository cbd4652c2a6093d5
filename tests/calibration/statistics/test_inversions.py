"""Weighted inversion counts equal a count over every pair, whatever the size and weights."""

from __future__ import annotations

import numpy as np
import pytest

from assay.calibration.statistics.inversions import CHUNK, FINE, WeightedInversions


def _by_pairs(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ w_i w_j over pairs ordered one way by x and the other by y, every pair looked at."""
    i, j = np.triu_indices(x.shape[0], 1)
    discordant = (x[i] - x[j]) * (y[i] - y[j]) < 0
    return np.asarray((weights[:, i] * weights[:, j] * discordant).sum(axis=1))


def _inversions(x: np.ndarray, y: np.ndarray) -> WeightedInversions:
    x_order = np.lexsort((y, x))
    xpos = np.empty_like(x_order)
    xpos[x_order] = np.arange(x.shape[0])
    rank = np.empty_like(x_order)
    rank[np.lexsort((xpos, y))] = np.arange(x.shape[0])
    return WeightedInversions(x_order, rank)


# sizes around every boundary: one chunk, one coarse bucket, more than one
SIZES = [1, 2, CHUNK - 1, CHUNK, CHUNK + 1, CHUNK * FINE, CHUNK * FINE + 1, 2 * CHUNK * FINE + 37]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ties", [False, True])
def test_equals_a_count_over_every_pair(n: int, ties: bool) -> None:
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    if ties:  # few distinct values on both sides, and repeated (x, y) items
        x, y = np.round(x), np.round(y * 2.0)
    weights = rng.integers(0, 5, size=(4, n)).astype(np.float64)
    weights[0] = 1.0
    np.testing.assert_array_equal(_inversions(x, y)(weights), _by_pairs(x, y, weights))


def test_large_weights_stay_exact() -> None:
    """Weights too large for exact float32 products (cells standing for many items) are
    counted in float64: the count is still exact."""
    rng = np.random.default_rng(3)
    n = 3 * CHUNK + 5
    x, y = rng.normal(size=n), rng.normal(size=n)
    weights = rng.integers(0, 100_000, size=(3, n)).astype(np.float64)
    np.testing.assert_array_equal(_inversions(x, y)(weights), _by_pairs(x, y, weights))


def test_reversed_order_inverts_every_pair() -> None:
    n = CHUNK * FINE + 3
    x = np.arange(n, dtype=np.float64)
    weights = np.ones((1, n))
    assert _inversions(x, -x)(weights)[0] == n * (n - 1) / 2
    assert _inversions(x, x)(weights)[0] == 0.0


@pytest.mark.parametrize("n", [1, CHUNK - 1, CHUNK + 1, 3 * CHUNK * FINE + 11])
def test_few_y_values_as_levels_equal_a_count_over_every_pair(n: int) -> None:
    """y with few values: the values are the buckets and one level counts every pair."""
    rng = np.random.default_rng(n + 1)
    x = rng.normal(size=n)
    y = np.round(0.5 * x + rng.normal(size=n))
    x_order = np.lexsort((y, x))
    xpos = np.empty_like(x_order)
    xpos[x_order] = np.arange(n)
    rank = np.empty_like(x_order)
    rank[np.lexsort((xpos, y))] = np.arange(n)
    _, levels = np.unique(y, return_inverse=True)
    inversions = WeightedInversions(x_order, rank, levels.astype(np.int64))
    assert len(inversions.levels) == 1
    weights = rng.integers(0, 5, size=(3, n)).astype(np.float64)
    np.testing.assert_array_equal(inversions(weights), _by_pairs(x, y, weights))
