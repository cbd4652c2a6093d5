"""Binary statistics equal scikit-learn's on FeedbackQA (human helpfulness vs a lexical judge)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics
from sklearn.calibration import calibration_curve

from assay.calibration.statistics import binary, calibration_statistics
from assay.calibration.statistics.resample import cells_of, resample_weights
from tests.calibration.statistics.conftest import Labelled
from tests.optional import required_module

TOL = 1e-9


def highest_best(thresholds: np.ndarray, values: np.ndarray) -> float:
    """The highest threshold among the best values (equal within 1e-12): assay's tie rule."""
    near = values >= values.max() - 1e-12 * max(1.0, abs(values.max()))
    return float(thresholds[near].max())


@pytest.mark.parametrize("threshold", [0.2, 0.35, 0.5])
def test_confusion_statistics_equal_sklearn(feedbackqa: Labelled, threshold: float) -> None:
    y, s = feedbackqa.labels.astype(int), feedbackqa.scores
    v = (s >= threshold).astype(int)
    stats = calibration_statistics("binary", y, s, threshold=threshold, n_resamples=50)
    expected = {
        "accuracy": metrics.accuracy_score(y, v),
        "precision": metrics.precision_score(y, v),
        "recall": metrics.recall_score(y, v),
        "tpr": metrics.recall_score(y, v),
        "tnr": metrics.recall_score(y, v, pos_label=0),
        "f1": metrics.f1_score(y, v),
        "balanced_accuracy": metrics.balanced_accuracy_score(y, v),
        "kappa": metrics.cohen_kappa_score(y, v),
        "mcc": metrics.matthews_corrcoef(y, v),
    }
    for name, value in expected.items():
        estimate = stats[name]
        assert estimate is not None, stats.reason(name)
        assert estimate.value == pytest.approx(value, abs=TOL), name
    tn, fp, fn, tp = metrics.confusion_matrix(y, v).ravel()
    cm = stats.confusion_matrix
    assert cm is not None
    assert (cm.tp, cm.fp, cm.fn, cm.tn) == (tp, fp, fn, tn)
    assert cm.threshold == threshold


def test_ranking_statistics_equal_sklearn(feedbackqa: Labelled) -> None:
    y, s = feedbackqa.labels.astype(int), feedbackqa.scores
    assert np.unique(s).shape[0] < s.shape[0], "the data should hold tied scores"
    stats = calibration_statistics("binary", y, s, threshold=0.5, n_resamples=50)
    assert stats["roc_auc"].value == pytest.approx(metrics.roc_auc_score(y, s), abs=TOL)  # type: ignore[union-attr]
    assert stats["pr_auc"].value == pytest.approx(  # type: ignore[union-attr]
        metrics.average_precision_score(y, s), abs=TOL
    )
    fpr, tpr, thresholds = metrics.roc_curve(y, s, drop_intermediate=False)
    j = tpr - fpr
    assert stats["best_youden_j"].value == pytest.approx(j.max(), abs=TOL)  # type: ignore[union-attr]
    assert stats["best_threshold_youden"].value == highest_best(thresholds, j)  # type: ignore[union-attr]
    precision, recall, pr_thresholds = metrics.precision_recall_curve(y, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.nan_to_num(2 * precision * recall / (precision + recall))[:-1]
    assert stats["best_f1"].value == pytest.approx(f1.max(), abs=TOL)  # type: ignore[union-attr]
    assert stats["best_threshold_f1"].value == highest_best(pr_thresholds, f1)  # type: ignore[union-attr]
    # the best-F1 threshold really gives that F1
    best = stats["best_threshold_f1"].value  # type: ignore[union-attr]
    assert metrics.f1_score(y, (s >= best).astype(int)) == pytest.approx(f1.max(), abs=TOL)


def test_scores_on_another_scale(feedbackqa: Labelled) -> None:
    """Ranking statistics do not care about the scale; verdicts follow the threshold."""
    y, s = feedbackqa.labels.astype(int), feedbackqa.scores
    unit = calibration_statistics("binary", y, s, threshold=0.3, n_resamples=20)
    tens = calibration_statistics("binary", y, 1 + 9 * s, threshold=1 + 9 * 0.3, n_resamples=20)
    for name in ("roc_auc", "pr_auc", "kappa", "f1"):
        assert tens[name].value == pytest.approx(unit[name].value, abs=TOL)  # type: ignore[union-attr]
    assert tens.reliability_curve is None
    assert tens["ece"] is None
    assert "[0, 1]" in (tens.reason("ece") or "")


def test_reliability_curve_equals_sklearn(feedbackqa: Labelled) -> None:
    y, s = feedbackqa.labels.astype(int), feedbackqa.scores
    stats = calibration_statistics("binary", y, s, threshold=0.5, n_resamples=50)
    curve = stats.reliability_curve
    assert curve is not None and len(curve.bins) == 10
    observed, predicted = calibration_curve(y, s, n_bins=10, strategy="uniform")
    filled = [b for b in curve.bins if b.count]
    assert [b.observed_frequency for b in filled] == pytest.approx(list(observed), abs=TOL)
    assert [b.mean_predicted for b in filled] == pytest.approx(list(predicted), abs=TOL)
    assert sum(b.count for b in curve.bins) == y.shape[0]
    # ECE by its published definition: Σ_b (n_b / n) |observed_b - predicted_b|
    ece = sum(b.count / y.shape[0] * abs(b.observed_frequency - b.mean_predicted) for b in filled)  # type: ignore[operator]
    assert stats["ece"].value == pytest.approx(ece, abs=TOL)  # type: ignore[union-attr]


def test_score_on_a_bin_edge_goes_to_the_lower_bin() -> None:
    y = [0, 1, 1, 0]
    s = [0.1, 0.1, 0.95, 0.3]
    curve = calibration_statistics("binary", y, s, threshold=0.5, n_resamples=0).reliability_curve
    assert curve is not None
    assert [b.count for b in curve.bins][:4] == [2, 0, 1, 0]
    observed, _ = calibration_curve(y, s, n_bins=10)
    assert curve.bins[0].observed_frequency == observed[0]


def test_one_class_of_labels_gives_reasons_not_nan() -> None:
    y = [0, 0, 0, 0, 0, 0]
    s = [0.1, 0.7, 0.2, 0.9, 0.4, 0.3]
    stats = calibration_statistics("binary", y, s, threshold=0.5, n_resamples=100)
    for name in ("recall", "roc_auc", "pr_auc", "balanced_accuracy", "mcc", "best_threshold_f1"):
        assert stats[name] is None, name
        assert stats.reason(name), name
    assert "positive" in (stats.reason("recall") or "")
    # accuracy and tnr stay defined
    assert stats["accuracy"].value == pytest.approx(4 / 6)  # type: ignore[union-attr]
    assert stats["tnr"].value == pytest.approx(4 / 6)  # type: ignore[union-attr]
    as_json = stats.to_json()
    assert as_json["roc_auc"]["value"] is None and as_json["roc_auc"]["reason"]


def test_kappa_undefined_when_everything_is_one_class() -> None:
    stats = calibration_statistics("binary", [1, 1, 1], [1, 1, 1], n_resamples=10)
    assert stats["kappa"] is None
    assert "chance" in (stats.reason("kappa") or "")
    assert stats["accuracy"].value == 1.0  # type: ignore[union-attr]
    assert stats.threshold == 0.5


def test_bad_inputs_name_the_row() -> None:
    with pytest.raises(ValueError, match=r"labels\[2\] is 2.0"):
        calibration_statistics("binary", [0, 1, 2], [0.1, 0.2, 0.3], threshold=0.5)
    with pytest.raises(ValueError, match=r"scores\[1\] is nan"):
        calibration_statistics("binary", [0, 1], [0.1, float("nan")], threshold=0.5)
    with pytest.raises(ValueError, match=r"scores\[1\] is None"):
        calibration_statistics("binary", [0, 1], [0.1, None], threshold=0.5)
    with pytest.raises(ValueError, match="needs a threshold"):
        calibration_statistics("binary", [0, 1], [0.1, 0.7])
    with pytest.raises(ValueError, match="labels has 2 items but scores has 3"):
        calibration_statistics("binary", [0, 1], [0.1, 0.7, 0.2], threshold=0.5)
    with pytest.raises(ValueError, match="no items"):
        calibration_statistics("binary", [], [], threshold=0.5)


def test_coarse_scores_use_cells_and_still_equal_sklearn(feedbackqa: Labelled) -> None:
    """Scores rounded to 0.1 make few (label, score) cells: the multinomial path."""
    y, s = feedbackqa.labels.astype(int), np.round(feedbackqa.scores, 1)
    _, counts = cells_of(np.column_stack([y.astype(float), s]))
    assert counts.shape[0] * 8 <= y.shape[0], "expected the cell path"
    stats = calibration_statistics("binary", y, s, threshold=0.3, n_resamples=50)
    v = (s >= 0.3).astype(int)
    assert stats["kappa"].value == pytest.approx(metrics.cohen_kappa_score(y, v), abs=TOL)  # type: ignore[union-attr]
    assert stats["mcc"].value == pytest.approx(metrics.matthews_corrcoef(y, v), abs=TOL)  # type: ignore[union-attr]
    assert stats["roc_auc"].value == pytest.approx(metrics.roc_auc_score(y, s), abs=TOL)  # type: ignore[union-attr]
    assert stats["pr_auc"].value == pytest.approx(  # type: ignore[union-attr]
        metrics.average_precision_score(y, s), abs=TOL
    )


def scores_as(feedbackqa: Labelled, layout: str) -> np.ndarray:
    """The judge's scores with ties (as computed), coarse (few cells) or all distinct."""
    if layout == "coarse":
        return np.round(feedbackqa.scores, 1)
    if layout == "distinct":
        return feedbackqa.scores + 1e-7 * np.arange(feedbackqa.scores.shape[0])
    return feedbackqa.scores


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("layout", ["ties", "coarse", "distinct"])
def test_bootstrap_replicates_equal_sklearn_on_resampled_items(
    feedbackqa: Labelled, layout: str, compiled: bool
) -> None:
    """Each replicate equals scikit-learn on the items its resample drew: item weights with
    tied scores, multinomial cell weights, and distinct scores (the positives-only path),
    on the numpy path and the compiled one."""
    if compiled:
        required_module("numba")
    y = feedbackqa.labels
    s = scores_as(feedbackqa, layout)
    cells, counts = cells_of(np.column_stack([y, s]))
    order = np.argsort(cells[:, 1], kind="stable")
    cells, counts = cells[order], counts[order]
    labels, scores = cells[:, 0].astype(np.int64), cells[:, 1]
    verdicts = (scores >= 0.3).astype(np.int64)
    weights = next(resample_weights(counts, 5, seed=2))
    got = {
        **binary.ranking_group(labels, scores, compiled=compiled)(weights),
        **binary.confusion_group(labels, verdicts)(weights),
    }
    for r in range(weights.shape[0]):
        drawn = np.repeat(np.arange(cells.shape[0]), weights[r].astype(np.int64))
        yy, ss, vv = labels[drawn], scores[drawn], verdicts[drawn]
        assert got["roc_auc"][r] == pytest.approx(metrics.roc_auc_score(yy, ss), abs=TOL)
        assert got["pr_auc"][r] == pytest.approx(metrics.average_precision_score(yy, ss), abs=TOL)
        assert got["kappa"][r] == pytest.approx(metrics.cohen_kappa_score(yy, vv), abs=TOL)
        assert got["f1"][r] == pytest.approx(metrics.f1_score(yy, vv), abs=TOL)
        fpr, tpr, thresholds = metrics.roc_curve(yy, ss, drop_intermediate=False)
        assert got["best_youden_j"][r] == pytest.approx((tpr - fpr).max(), abs=TOL)
        assert got["best_threshold_youden"][r] == highest_best(thresholds, tpr - fpr)
        precision, recall, pr_thresholds = metrics.precision_recall_curve(yy, ss)
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.nan_to_num(2 * precision * recall / (precision + recall))[:-1]
        assert got["best_f1"][r] == pytest.approx(f1.max(), abs=TOL)
        assert got["best_threshold_f1"][r] == highest_best(pr_thresholds, f1)


def test_distinct_scores_equal_sklearn(feedbackqa: Labelled) -> None:
    y, s = feedbackqa.labels.astype(int), scores_as(feedbackqa, "distinct")
    stats = calibration_statistics("binary", y, s, threshold=0.3, n_resamples=50)
    assert stats["roc_auc"].value == pytest.approx(metrics.roc_auc_score(y, s), abs=TOL)  # type: ignore[union-attr]
    assert stats["pr_auc"].value == pytest.approx(  # type: ignore[union-attr]
        metrics.average_precision_score(y, s), abs=TOL
    )
    fpr, tpr, thresholds = metrics.roc_curve(y, s)
    assert stats["best_threshold_youden"].value == highest_best(thresholds, tpr - fpr)  # type: ignore[union-attr]
    single = calibration_statistics("binary", [0, 0, 0], [0.1, 0.2, 0.3], threshold=0.5)
    assert single["roc_auc"] is None and single["best_f1"] is None


def test_ranking_statistics_on_many_small_tied_samples() -> None:
    """Small samples with heavy ties (scores with 0-2 decimals), where the tie rules of
    the AUC, the curves and the best thresholds matter most."""
    checked = 0
    for seed in range(150):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(3, 60))
        y = rng.integers(0, 2, n)
        s = np.round(rng.random(n), int(rng.integers(0, 3)))
        stats = calibration_statistics("binary", y, s, threshold=0.5, n_resamples=0)
        if len(set(y.tolist())) < 2:
            assert stats["roc_auc"] is None
            continue
        fpr, tpr, thresholds = metrics.roc_curve(y, s, drop_intermediate=False)
        precision, recall, pr_thresholds = metrics.precision_recall_curve(y, s)
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.nan_to_num(2 * precision * recall / (precision + recall))[:-1]
        assert stats["roc_auc"].value == pytest.approx(metrics.roc_auc_score(y, s), abs=TOL)  # type: ignore[union-attr]
        assert stats["pr_auc"].value == pytest.approx(  # type: ignore[union-attr]
            metrics.average_precision_score(y, s), abs=TOL
        )
        assert stats["best_f1"].value == pytest.approx(f1.max(), abs=TOL)  # type: ignore[union-attr]
        assert stats["best_threshold_f1"].value == highest_best(pr_thresholds, f1)  # type: ignore[union-attr]
        if (tpr - fpr).max() > 1e-12:
            assert stats["best_threshold_youden"].value == highest_best(thresholds, tpr - fpr)  # type: ignore[union-attr]
        else:
            assert stats["best_threshold_youden"] is None
        checked += 1
    assert checked > 100
