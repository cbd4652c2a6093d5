"""Ordinal/numeric statistics equal scipy, scikit-learn and ``krippendorff`` on STS-B and
FeedbackQA, and the vectorised bootstrap equals the reference on explicit resamples."""

from __future__ import annotations

from collections.abc import Callable

import krippendorff
import numpy as np
import pytest
import scipy.stats
from sklearn import metrics

from assay.calibration.statistics import calibration_statistics, ordinal
from assay.calibration.statistics.resample import FloatArray, StatGroup, resample_weights
from tests.calibration.statistics.conftest import Labelled

TOL = 1e-9


def reference(labels: np.ndarray, scores: np.ndarray, *, discrete: bool) -> dict[str, float]:
    out = {
        "pearson": scipy.stats.pearsonr(labels, scores).statistic,
        "spearman": scipy.stats.spearmanr(labels, scores).statistic,
        "kendall_tau_b": scipy.stats.kendalltau(labels, scores, variant="b").statistic,
        "mae": metrics.mean_absolute_error(labels, scores),
        "rmse": metrics.root_mean_squared_error(labels, scores),
        "krippendorff_alpha_interval": krippendorff.alpha(
            reliability_data=[labels, scores], level_of_measurement="interval"
        ),
    }
    if discrete:
        out["quadratic_weighted_kappa"] = metrics.cohen_kappa_score(
            labels.astype(int), scores.astype(int), weights="quadratic"
        )
        out["krippendorff_alpha_ordinal"] = krippendorff.alpha(
            reliability_data=[labels, scores], level_of_measurement="ordinal"
        )
    return {k: float(v) for k, v in out.items()}


def test_numeric_stsb_equals_references(stsb: Labelled) -> None:
    stats = calibration_statistics("numeric", stsb.labels, stsb.scores, n_resamples=30)
    for name, value in reference(stsb.labels, stsb.scores, discrete=False).items():
        estimate = stats[name]
        assert estimate is not None, stats.reason(name)
        assert estimate.value == pytest.approx(value, abs=TOL), name
    # continuous scores: the category statistics say why they are missing
    for name in ("quadratic_weighted_kappa", "krippendorff_alpha_ordinal"):
        assert stats[name] is None
        assert "distinct values" in (stats.reason(name) or "")


@pytest.mark.parametrize("data", ["stsb_rounded", "feedbackqa_ordinal"])
def test_ordinal_equals_references(data: str, request: pytest.FixtureRequest) -> None:
    labelled: Labelled = request.getfixturevalue(data)
    stats = calibration_statistics("ordinal", labelled.labels, labelled.scores, n_resamples=30)
    expected = reference(labelled.labels, labelled.scores, discrete=True)
    assert set(expected) == set(stats.names())
    for name, value in expected.items():
        estimate = stats[name]
        assert estimate is not None, stats.reason(name)
        assert estimate.value == pytest.approx(value, abs=TOL), name


def _explicit(weights_row: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(weights_row.shape[0]), weights_row.astype(np.int64))


@pytest.mark.parametrize(
    ("build", "name", "discrete"),
    [
        (ordinal.moments_group, "pearson", False),
        (ordinal.moments_group, "rmse", False),
        (ordinal.spearman_group, "spearman", False),
        (ordinal.kendall_group, "kendall_tau_b", False),
        (ordinal.kendall_group, "kendall_tau_b", True),
        (ordinal.alpha_interval_group, "krippendorff_alpha_interval", False),
        (ordinal.qwk_group, "quadratic_weighted_kappa", True),
        (ordinal.alpha_ordinal_group, "krippendorff_alpha_ordinal", True),
    ],
)
def test_bootstrap_replicates_equal_the_reference_on_resampled_items(
    stsb: Labelled,
    stsb_rounded: Labelled,
    build: Callable[[FloatArray, FloatArray], StatGroup],
    name: str,
    discrete: bool,
) -> None:
    """Each vectorised replicate is the statistic of the items that resample drew."""
    data = stsb_rounded if discrete else stsb
    x, y = data.labels, data.scores
    weights = next(resample_weights(np.ones(x.shape[0]), 6, seed=3))
    replicates = build(x, y)(weights)[name]
    for r in range(weights.shape[0]):
        drawn = _explicit(weights[r])
        expected = reference(x[drawn], y[drawn], discrete=discrete)[name]
        assert replicates[r] == pytest.approx(expected, abs=TOL)


def test_kendall_table_levels_and_inversion_paths_agree(
    stsb_rounded: Labelled, monkeypatch: pytest.MonkeyPatch
) -> None:
    x, y = stsb_rounded.labels, stsb_rounded.scores
    weights = next(resample_weights(np.ones(x.shape[0]), 8, seed=1))
    by_table = ordinal.kendall_group(x, y)(weights)["kendall_tau_b"]
    monkeypatch.setattr(ordinal, "MAX_TABLE_CELLS", 0)
    # the numpy paths (the compiled one is compared in test_compiled.py)
    by_levels = ordinal.kendall_group(x, y, compiled=False)(weights)["kendall_tau_b"]
    monkeypatch.setattr(ordinal, "MAX_LEVELS", 0)
    by_inversions = ordinal.kendall_group(x, y, compiled=False)(weights)["kendall_tau_b"]
    np.testing.assert_allclose(by_levels, by_table, rtol=0, atol=1e-12)
    np.testing.assert_allclose(by_inversions, by_table, rtol=0, atol=1e-12)


@pytest.mark.parametrize("fixture", ["stsb", "feedbackqa", "stsb_rounded"])
def test_kendall_by_inversions_equals_scipy_on_expanded_items(
    fixture: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path for values with many distinct levels on both sides (no table, no level
    pairs): the point value and every replicate equal scipy's τ-b on the items the
    resample drew (each repeated as often as drawn) to 1e-12, ties included."""
    monkeypatch.setattr(ordinal, "MAX_TABLE_CELLS", 0)
    monkeypatch.setattr(ordinal, "MAX_LEVELS", 0)
    data: Labelled = request.getfixturevalue(fixture)
    x, y = data.labels, data.scores
    weights = np.vstack([np.ones(x.shape[0]), next(resample_weights(np.ones(x.shape[0]), 12, 7))])
    got = ordinal.kendall_group(x, y, compiled=False)(weights)["kendall_tau_b"]
    for r in range(weights.shape[0]):
        drawn = _explicit(weights[r])
        expected = scipy.stats.kendalltau(x[drawn], y[drawn]).statistic
        assert abs(got[r] - expected) <= 1e-12, (r, got[r], expected)


def test_constant_scores_are_undefined_with_a_reason() -> None:
    stats = calibration_statistics(
        "numeric", [1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0], n_resamples=20
    )
    for name in ("pearson", "spearman", "kendall_tau_b"):
        assert stats[name] is None
        assert "constant" in (stats.reason(name) or "")
    assert stats["mae"].value == pytest.approx(1.0)  # type: ignore[union-attr]


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("distinct", [False, True])
def test_kendall_by_levels_equals_scipy_on_resampled_items(
    feedbackqa_ordinal: Labelled,
    feedbackqa: Labelled,
    monkeypatch: pytest.MonkeyPatch,
    swap: bool,
    distinct: bool,
) -> None:
    """Ordinal labels (4 levels) against continuous scores (tied as computed, or made
    distinct), the level-pair path: the point value and each replicate equal scipy,
    whichever side holds the few levels."""
    monkeypatch.setattr(ordinal, "MAX_TABLE_CELLS", 0)
    x, y = feedbackqa_ordinal.labels, feedbackqa.scores
    if distinct:
        y = y + 1e-7 * np.arange(y.shape[0])
    if swap:
        x, y = y, x
    weights = np.vstack([np.ones(x.shape[0]), next(resample_weights(np.ones(x.shape[0]), 6, 4))])
    got = ordinal.kendall_group(x, y, compiled=False)(weights)["kendall_tau_b"]
    for r in range(weights.shape[0]):
        drawn = _explicit(weights[r])
        expected = scipy.stats.kendalltau(x[drawn], y[drawn]).statistic
        assert got[r] == pytest.approx(expected, abs=TOL)


def test_spearman_with_many_label_values_equals_scipy_on_expanded_items(
    stsb: Labelled,
) -> None:
    """Labels with more distinct values than one dense product takes (ranked in label
    order and handed back to the cells), ties among the scores kept: each replicate is
    scipy's ρ on the items drawn."""
    order = np.argsort(stsb.scores, kind="stable")  # cells arrive in score order
    x = (stsb.labels + 1e-6 * np.arange(stsb.labels.shape[0]))[order]
    y = stsb.scores[order]
    assert np.unique(x).shape[0] > ordinal.DENSE_LABEL_VALUES
    assert np.unique(y).shape[0] < y.shape[0]
    weights = np.vstack([np.ones(x.shape[0]), next(resample_weights(np.ones(x.shape[0]), 8, 2))])
    got = ordinal.spearman_group(x, y, compiled=False)(weights)["spearman"]
    for r in range(weights.shape[0]):
        drawn = _explicit(weights[r])
        expected = scipy.stats.spearmanr(x[drawn], y[drawn]).statistic
        assert abs(got[r] - expected) <= 1e-12, (r, got[r], expected)
