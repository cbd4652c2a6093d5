"""The compiled (numba) Spearman, Kendall τ-b and ranking statistics (ROC-AUC, average
precision, best thresholds) equal scipy / scikit-learn on the items each resample drew, a
brute-force O(n²) weighted count, and the numpy path, run side by side."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats

from assay.calibration.statistics import binary, compiled, ordinal
from assay.calibration.statistics.resample import FloatArray, resample_weights
from tests.calibration.statistics.conftest import Labelled
from tests.optional import required_module

required_module("numba")


def _explicit(weights_row: FloatArray) -> np.ndarray:
    return np.repeat(np.arange(weights_row.shape[0]), weights_row.astype(np.int64))


def _weights(n: int, resamples: int, seed: int) -> FloatArray:
    """The data itself (all ones) and bootstrap resamples of it."""
    return np.vstack([np.ones(n), next(resample_weights(np.ones(n), resamples, seed))])


def _pairs(fixtures: dict[str, Labelled]) -> dict[str, tuple[FloatArray, FloatArray]]:
    stsb, rounded = fixtures["stsb"], fixtures["stsb_rounded"]
    qa, qa_ordinal = fixtures["feedbackqa"], fixtures["feedbackqa_ordinal"]
    return {
        "stsb": (stsb.labels, stsb.scores),
        "stsb_rounded": (rounded.labels, rounded.scores),
        "feedbackqa": (qa.labels, qa.scores),
        "feedbackqa_ordinal": (qa_ordinal.labels, qa_ordinal.scores),
        # four ordinal levels against continuous scores, either way round
        "levels_vs_continuous": (qa_ordinal.labels, qa.scores),
        "continuous_vs_levels": (qa.scores, qa_ordinal.labels),
    }


@pytest.fixture
def fixture_pairs(
    stsb: Labelled, stsb_rounded: Labelled, feedbackqa: Labelled, feedbackqa_ordinal: Labelled
) -> dict[str, tuple[FloatArray, FloatArray]]:
    return _pairs(
        {
            "stsb": stsb,
            "stsb_rounded": stsb_rounded,
            "feedbackqa": feedbackqa,
            "feedbackqa_ordinal": feedbackqa_ordinal,
        }
    )


PAIRS = [
    "stsb",
    "stsb_rounded",
    "feedbackqa",
    "feedbackqa_ordinal",
    "levels_vs_continuous",
    "continuous_vs_levels",
]


@pytest.mark.parametrize("pair", PAIRS)
def test_compiled_equals_scipy_and_numpy_on_the_fixtures(
    pair: str, fixture_pairs: dict[str, tuple[FloatArray, FloatArray]]
) -> None:
    """Point value and every replicate: scipy on the expanded items to 1e-12, and the
    numpy path (same weights, same call) to 1e-12."""
    x, y = fixture_pairs[pair]
    order = np.argsort(y, kind="stable")  # the statistics hand cells over in score order
    x, y = x[order], y[order]
    weights = _weights(x.shape[0], 10, seed=5)
    spearman = compiled.spearman_group(x, y)(weights)["spearman"]
    kendall = compiled.kendall_group(x, y)(weights)["kendall_tau_b"]
    for r in range(weights.shape[0]):
        drawn = _explicit(weights[r])
        expected_rho = scipy.stats.spearmanr(x[drawn], y[drawn]).statistic
        expected_tau = scipy.stats.kendalltau(x[drawn], y[drawn]).statistic
        assert abs(spearman[r] - expected_rho) <= 1e-12, (r, spearman[r], expected_rho)
        assert abs(kendall[r] - expected_tau) <= 1e-12, (r, kendall[r], expected_tau)
    numpy_rho = ordinal.spearman_group(x, y, compiled=False)(weights)["spearman"]
    numpy_tau = ordinal.kendall_group(x, y, compiled=False)(weights)["kendall_tau_b"]
    np.testing.assert_allclose(spearman, numpy_rho, rtol=0, atol=1e-12)
    np.testing.assert_allclose(kendall, numpy_tau, rtol=0, atol=1e-12)


def _brute_force_tau_b(x: FloatArray, y: FloatArray, w: FloatArray) -> float:
    """τ-b over every pair of cells, each pair weighted by w_i w_j, a cell with itself by
    w (w - 1) / 2 (tied on both): the definition, O(n²)."""
    concordant = discordant = x_ties = y_ties = 0.0
    total = w.sum()
    for i, j in itertools.combinations(range(x.shape[0]), 2):
        pair = w[i] * w[j]
        sign = np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
        concordant += pair * (sign > 0)
        discordant += pair * (sign < 0)
        x_ties += pair * (x[i] == x[j])
        y_ties += pair * (y[i] == y[j])
    own = float((w * (w - 1.0) / 2.0).sum())
    x_ties += own
    y_ties += own
    pairs = total * (total - 1.0) / 2.0
    return float((concordant - discordant) / np.sqrt((pairs - x_ties) * (pairs - y_ties)))


@pytest.mark.parametrize("buckets", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kendall_equals_a_brute_force_weighted_count_with_heavy_ties(
    seed: int, buckets: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random cells with heavy ties on x, on y and on both, weighted by bootstrap-like
    counts (zeros included): the compiled τ-b equals the O(n²) weighted definition and
    the numpy path, with the values as codes and with buckets of y positions (the path
    for many values, whose inner pairs ``inversions`` counts)."""
    if buckets:
        monkeypatch.setattr(compiled, "MAX_KENDALL_CODES", 3)
    rng = np.random.default_rng(seed)
    n = 150
    x = rng.integers(0, 6, n).astype(np.float64)
    y = np.where(rng.random(n) < 0.5, x, rng.integers(0, 9, n)).astype(np.float64)
    weights = rng.poisson(1.3, (5, n)).astype(np.float64)
    got = compiled.kendall_group(x, y)(weights)["kendall_tau_b"]
    for r in range(weights.shape[0]):
        assert abs(got[r] - _brute_force_tau_b(x, y, weights[r])) <= 1e-12
    numpy_tau = ordinal.kendall_group(x, y, compiled=False)(weights)["kendall_tau_b"]
    np.testing.assert_allclose(got, numpy_tau, rtol=0, atol=1e-12)


def _weighted_spearman(x: FloatArray, y: FloatArray, w: FloatArray) -> float:
    """Pearson r of weighted mid-ranks computed cell by cell, straight from the
    definition (a value's mid-rank: weight strictly below it plus (its weight + 1) / 2)."""

    def midranks(v: FloatArray) -> FloatArray:
        below = np.array([w[v < value].sum() for value in v])
        same = np.array([w[v == value].sum() for value in v])
        return below + (same + 1.0) / 2.0

    rx, ry = midranks(x), midranks(y)
    mean = (w.sum() + 1.0) / 2.0
    sxy = (w * (rx - mean) * (ry - mean)).sum()
    return float(sxy / np.sqrt((w * (rx - mean) ** 2).sum() * (w * (ry - mean) ** 2).sum()))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spearman_equals_a_direct_weighted_computation_with_heavy_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 120
    x = rng.integers(0, 7, n).astype(np.float64)
    y = np.round(x + rng.normal(0.0, 2.0, n), 0)
    weights = rng.poisson(1.0, (5, n)).astype(np.float64)
    got = compiled.spearman_group(x, y)(weights)["spearman"]
    for r in range(weights.shape[0]):
        assert abs(got[r] - _weighted_spearman(x, y, weights[r])) <= 1e-12
    numpy_rho = ordinal.spearman_group(x, y, compiled=False)(weights)["spearman"]
    np.testing.assert_allclose(got, numpy_rho, rtol=0, atol=1e-12)


def test_compiled_equals_numpy_at_scale_with_few_label_values() -> None:
    """20,000 cells, 26 label levels against continuous scores (the benchmark's shape):
    every replicate of both statistics equal on both paths."""
    rng = np.random.default_rng(26)
    n = 20_000
    labels = np.round(rng.uniform(0.0, 5.0, n) * 5.0) / 5.0
    scores = np.sort(np.clip(labels / 5.0 + rng.normal(0.0, 0.2, n), 0.0, 1.0) * 5.0)
    weights = _weights(n, 20, seed=3)
    pairs = [
        (compiled.spearman_group(labels, scores), ordinal.spearman_group, "spearman"),
        (compiled.kendall_group(labels, scores), ordinal.kendall_group, "kendall_tau_b"),
    ]
    for fast, build, name in pairs:
        slow = build(labels, scores, compiled=False)  # type: ignore[operator]
        np.testing.assert_allclose(fast(weights)[name], slow(weights)[name], rtol=0, atol=1e-12)


@pytest.mark.parametrize("clipped", [False, True])
def test_kendall_with_many_values_equals_scipy_and_numpy(clipped: bool) -> None:
    """Both sides continuous (more than ``MAX_KENDALL_CODES`` values: buckets of y
    positions, pairs inside them by ``inversions``), optionally with runs of ties at the
    ends of the scale: every replicate equals scipy on the items drawn and the numpy
    path."""
    rng = np.random.default_rng(8)
    n = 6000
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    if clipped:
        x, y = np.clip(x, -1.5, 1.5), np.clip(y, -2.0, 2.0)
    assert np.unique(y).shape[0] > compiled.MAX_KENDALL_CODES
    weights = _weights(n, 4, seed=1)
    got = compiled.kendall_group(x, y)(weights)["kendall_tau_b"]
    for r in range(weights.shape[0]):
        drawn = _explicit(weights[r])
        assert abs(got[r] - scipy.stats.kendalltau(x[drawn], y[drawn]).statistic) <= 1e-12
    numpy_tau = ordinal.kendall_group(x, y, compiled=False)(weights)["kendall_tau_b"]
    np.testing.assert_allclose(got, numpy_tau, rtol=0, atol=1e-12)


@pytest.mark.parametrize("buckets", [False, True])
def test_kendall_keeps_large_weights_exact(buckets: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cell counts too large for float32 sums (weight x total >= 2**24): the float64
    kernel (and float64 products for the pairs inside buckets), still equal to the
    brute-force count."""
    if buckets:
        monkeypatch.setattr(compiled, "MAX_KENDALL_CODES", 3)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, 40).astype(np.float64)
    y = rng.integers(0, 7, 40).astype(np.float64)
    weights = rng.integers(0, 5000, (2, 40)).astype(np.float64)
    assert weights.max() * weights.sum(axis=1).max() >= compiled.EXACT_FLOAT32
    got = compiled.kendall_group(x, y)(weights)["kendall_tau_b"]
    for r in range(2):
        assert abs(got[r] - _brute_force_tau_b(x, y, weights[r])) <= 1e-12


def test_constant_side_is_undefined() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.full(4, 2.0)
    weights = _weights(4, 3, seed=0)
    assert np.all(np.isnan(compiled.spearman_group(x, y)(weights)["spearman"]))
    assert np.all(np.isnan(compiled.kendall_group(x, y)(weights)["kendall_tau_b"]))


def test_enabled_follows_the_argument_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert compiled.enabled(False) is False
    assert compiled.enabled(True) is True
    monkeypatch.delenv("ASSAY_CALIBRATION_NUMPY", raising=False)
    assert compiled.enabled(None) is True  # numba is installed (the module skips otherwise)
    monkeypatch.setenv("ASSAY_CALIBRATION_NUMPY", "1")
    assert compiled.enabled(None) is False
    assert compiled.enabled(True) is True


def test_counted_draws_are_the_numpy_draws_in_both_layouts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The compiled path draws the same resamples as numpy's (int64 indices, bincount per
    row: the stream the summary bootstrap also draws), in every chunk of a bootstrap, and
    its item-major float32 copy is the one the groups read, dropped with its chunk."""
    n, resamples = 997, 45  # chunks of 2**21 // 997 = 2103 rows: one; and a small n
    for items in (n, 7):
        monkeypatch.setenv("ASSAY_CALIBRATION_NUMPY", "1")
        numpy_chunks = list(resample_weights(np.ones(items), resamples, seed=3))
        monkeypatch.delenv("ASSAY_CALIBRATION_NUMPY")
        compiled_chunks = list(resample_weights(np.ones(items), resamples, seed=3))
        assert len(numpy_chunks) == len(compiled_chunks)
        for ours, theirs in zip(compiled_chunks, numpy_chunks, strict=True):
            assert ours.dtype == np.float64 and np.array_equal(ours, theirs)
            shared = compiled.item_major_f32(ours)
            assert shared is compiled.item_major_f32(ours)  # one copy, not one per group
            assert shared.flags.c_contiguous and np.array_equal(shared, ours.T)
    rng = np.random.default_rng(3)
    expected = rng.integers(0, 50, size=(4, 50))
    drawn = compiled.counted_draws(np.random.default_rng(3).integers(0, 50, (4, 50), np.int32))
    assert np.array_equal(drawn, [np.bincount(row, minlength=50) for row in expected])
    key = id(drawn)
    assert key in compiled._SHARED
    del drawn
    assert key not in compiled._SHARED


def test_the_chunk_size_does_not_change_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks are drawn one after another from one generator: 45 resamples in chunks of
    2, 7 or all at once are the same 45 rows (so memory limits never move a CI)."""
    from assay.calibration.statistics import resample

    whole = np.vstack(list(resample_weights(np.ones(300), 45, seed=8)))
    for rows in (2, 7):
        monkeypatch.setattr(resample, "BOOTSTRAP_MAX_CELLS", 300 * rows)
        chunks = list(resample_weights(np.ones(300), 45, seed=8))
        assert chunks[0].shape[0] == rows
        assert np.array_equal(np.vstack(chunks), whole)


@pytest.mark.parametrize("seed", range(6))
def test_ranking_equals_numpy_with_heavy_ties_and_empty_classes(seed: int) -> None:
    """Scores with 0-2 decimals (ties within and across classes), weights with zeros,
    rows where a class is not drawn at all: every statistic equal on both paths (NaN
    where numpy says NaN), the best thresholds identical."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    labels = (rng.random(n) < rng.uniform(0.1, 0.9)).astype(np.int64)
    labels[0] = 1  # at least one positive cell (the compiled group's precondition)
    scores = np.round(rng.random(n), int(rng.integers(0, 3)))
    order = np.lexsort((scores, labels))
    labels, scores = labels[order], scores[order]
    weights = rng.poisson(0.8, (7, n)).astype(np.float64)
    weights[1, labels == 1] = 0.0  # no positives drawn
    weights[2, labels == 0] = 0.0  # no negatives drawn
    weights[3] = 0.0  # nothing drawn
    fast = binary.ranking_group(labels, scores, compiled=True)(weights)
    slow = binary.ranking_group(labels, scores, compiled=False)(weights)
    assert set(fast) == set(slow)
    for name in slow:
        np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12, err_msg=name)
