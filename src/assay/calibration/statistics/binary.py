"""Binary calibration: human labels 0/1 against scores and the verdict ``score >= threshold``.

Each function builds a ``StatGroup`` (weights -> statistics) for ``resample.run_bootstrap``.
Definitions are scikit-learn's (tests check equality to 1e-9), except that a statistic
scikit-learn reports as 0.0 with a warning when it is undefined (precision with no
positive verdict, MCC with one verdict class) is NaN here, which becomes ``None`` with a
reason in the result.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assay.calibration.statistics import compiled as compiled_groups
from assay.calibration.statistics.resample import (
    FloatArray,
    IntArray,
    StatGroup,
    indicator,
    safe_divide,
    sum_by,
)

CONFUSION_STATISTICS: dict[str, str] = {
    "accuracy": "no items",
    "precision": "no positive verdicts at the threshold",
    "recall": "no positive labels",
    "tpr": "no positive labels",
    "tnr": "no negative labels",
    "f1": "no positive labels and no positive verdicts",
    "balanced_accuracy": "needs both positive and negative labels",
    "kappa": "chance agreement is 1 (labels and verdicts each use one and the same class)",
    "mcc": "labels or verdicts use one class only",
}
"""Statistics from the confusion counts, with when each is undefined."""

RANKING_STATISTICS: dict[str, str] = {
    "roc_auc": "needs both positive and negative labels",
    "pr_auc": "no positive labels",
    "best_threshold_youden": "needs both classes and a threshold better than chance",
    "best_youden_j": "needs both positive and negative labels",
    "best_threshold_f1": "no positive labels",
    "best_f1": "no positive labels",
}
"""Statistics of the score ranking (threshold-free), with when each is undefined."""

RELIABILITY_STATISTICS: dict[str, str] = {"ece": "scores outside [0, 1]"}

N_BINS = 10


def confusion_group(labels: IntArray, verdicts: IntArray) -> StatGroup:
    """Accuracy … MCC from the four confusion counts of each resample."""
    codes = labels * 2 + verdicts  # 0 tn, 1 fp, 2 fn, 3 tp
    cells = indicator(codes.astype(np.int64), 4)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        counts = sum_by(weights, cells)
        return confusion_statistics(counts[:, 3], counts[:, 1], counts[:, 2], counts[:, 0])

    return group


def confusion_statistics(
    tp: FloatArray, fp: FloatArray, fn: FloatArray, tn: FloatArray
) -> dict[str, FloatArray]:
    """The confusion-count statistics for arrays of counts (NaN where undefined)."""
    total = tp + fp + fn + tn
    pos, neg = tp + fn, tn + fp
    pred_pos, pred_neg = tp + fp, tn + fn
    tpr = safe_divide(tp, pos)
    tnr = safe_divide(tn, neg)
    accuracy = safe_divide(tp + tn, total)
    chance = safe_divide(pred_pos * pos + pred_neg * neg, total * total)
    kappa = safe_divide(accuracy - chance, 1.0 - chance)
    kappa[~np.isfinite(chance)] = np.nan
    mcc_den = np.sqrt(pred_pos * pos * neg * pred_neg)
    return {
        "accuracy": accuracy,
        "precision": safe_divide(tp, pred_pos),
        "recall": tpr,
        "tpr": tpr,
        "tnr": tnr,
        "f1": safe_divide(2.0 * tp, 2.0 * tp + fp + fn),
        "balanced_accuracy": (tpr + tnr) / 2.0,
        "kappa": kappa,
        "mcc": safe_divide(tp * tn - fp * fn, mcc_den),
    }


TIE_TOLERANCE = 1e-12
"""Relative difference under which two J or F1 values are the same best value."""


def _best_highest(values: FloatArray) -> IntArray:
    """Per row, the position (ascending scores) of the best value, the highest threshold
    among values equal to it within ``TIE_TOLERANCE``: equal values computed in different
    orders differ in the last bit, and a tie must not be broken by rounding. Highest is
    the conservative choice (fewest positive verdicts) and what ``roc_curve``'s order
    gives for Youden's J; ``precision_recall_curve``'s ascending order would give the
    lowest for a tie in F1."""
    best = values.max(axis=1)
    near = values >= (best - TIE_TOLERANCE * np.maximum(1.0, np.abs(best)))[:, None]
    first_from_top = np.argmax(near[:, ::-1], axis=1).astype(np.int64)
    last: IntArray = values.shape[1] - 1 - first_from_top
    return last


def _columns(at: IntArray) -> Callable[[FloatArray], FloatArray]:
    """Take these columns: a slice (a view, no copy) when they are one ascending run."""
    if at.shape[0] and np.array_equal(at, np.arange(at[0], at[0] + at.shape[0])):
        start, stop = int(at[0]), int(at[0]) + at.shape[0]
        return lambda weights: weights[:, start:stop]
    return lambda weights: weights[:, at]


def ranking_group(
    labels: IntArray, scores: FloatArray, *, compiled: bool | None = None
) -> StatGroup:
    """ROC-AUC, average precision and the best thresholds, evaluated at the positives.

    Definitions are scikit-learn's, ties included: one curve point per distinct score, a
    positive tied with a negative counts one half in the AUC. Every statistic here is
    decided at positive cells: the AUC and average precision sum over positives, and the
    best Youden J and best F1 are reached at a threshold equal to a drawn positive's score
    (lowering the threshold past negatives only adds false positives). So a resample
    costs a cumulative sum over the negatives and arrays as wide as the positives, not a
    dozen passes over arrays as wide as the data (with continuous scores every item is a
    cell). Cells ordered by label, then score (``statistics._ordered_cells``) make each class
    a slice of the weights."""
    pos_at = np.flatnonzero(labels == 1)
    neg_at = np.flatnonzero(labels == 0)
    pos_at = pos_at[np.argsort(scores[pos_at], kind="stable")]
    neg_at = neg_at[np.argsort(scores[neg_at], kind="stable")]
    pos_scores, neg_scores = scores[pos_at], scores[neg_at]
    # per positive (ascending): negatives scored lower, and lower or equal
    neg_lower = np.searchsorted(neg_scores, pos_scores, side="left").astype(np.int64)
    neg_level = np.searchsorted(neg_scores, pos_scores, side="right").astype(np.int64)
    ties_across = bool(np.any(neg_level != neg_lower))
    # the first positive with the same score: positives at or above a threshold start there
    pos_first = np.searchsorted(pos_scores, pos_scores, side="left").astype(np.int64)
    n_pos = pos_at.shape[0]
    if n_pos and compiled_groups.enabled(compiled):
        return compiled_groups.ranking_group(
            pos_at.astype(np.int64),
            neg_at.astype(np.int64),
            neg_lower,
            neg_level,
            pos_first,
            pos_scores,
            TIE_TOLERANCE,
        )
    take_pos, take_neg = _columns(pos_at), _columns(neg_at)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        rows = weights.shape[0]
        pos = take_pos(weights)
        cneg = np.zeros((rows, neg_at.shape[0] + 1))
        np.cumsum(take_neg(weights), axis=1, out=cneg[:, 1:])
        n_total = cneg[:, -1]
        lower = cneg[:, neg_lower]
        if ties_across:  # a tied negative counts one half
            auc_num = 0.5 * np.einsum("ij,ij->i", pos, lower + cneg[:, neg_level])
        else:
            auc_num = np.einsum("ij,ij->i", pos, lower)
        cpos = np.zeros((rows, n_pos + 1))
        np.cumsum(pos, axis=1, out=cpos[:, 1:])
        p_total = cpos[:, -1].copy()
        tps = np.subtract(p_total[:, None], cpos[:, pos_first])  # positives at or above
        fps = np.subtract(n_total[:, None], lower, out=lower)  # negatives at or above
        predicted = tps + fps
        undrawn = pos == 0
        # predicted is 0 only where nothing at or above is drawn (the term is 0 there); a
        # plain division is several times faster than a masked one
        terms = pos * tps
        terms /= np.where(predicted > 0.0, predicted, 1.0)
        both = (p_total > 0) & (n_total > 0)
        out: dict[str, FloatArray] = {
            "roc_auc": np.where(both, safe_divide(auc_num, p_total * n_total), np.nan),
            "pr_auc": safe_divide(terms.sum(axis=1), p_total),
        }
        if n_pos == 0:
            nothing = np.full(rows, np.nan)
            out.update(
                best_threshold_youden=nothing,
                best_youden_j=nothing,
                best_threshold_f1=nothing,
                best_f1=nothing,
            )
            return out
        inv_p = np.divide(1.0, p_total, out=np.zeros_like(p_total), where=p_total > 0)
        inv_n = np.divide(1.0, n_total, out=np.zeros_like(n_total), where=n_total > 0)
        youden = tps * inv_p[:, None]
        youden -= fps * inv_n[:, None]
        np.copyto(youden, -np.inf, where=undrawn)  # not drawn: no threshold of this resample
        predicted += p_total[:, None]
        f1 = 2.0 * tps
        f1 /= np.where(predicted > 0.0, predicted, 1.0)
        np.copyto(f1, -np.inf, where=undrawn)
        index = np.arange(rows)
        best_j_at = _best_highest(youden)
        best_j = np.where(both, youden[index, best_j_at], np.nan)
        best_f1_at = _best_highest(f1)
        best_f1 = np.where(p_total > 0, f1[index, best_f1_at], np.nan)
        out.update(
            # J = 0 is chance: no threshold to recommend then.
            best_threshold_youden=np.where(best_j > TIE_TOLERANCE, pos_scores[best_j_at], np.nan),
            best_youden_j=best_j,
            best_threshold_f1=np.where(np.isfinite(best_f1), pos_scores[best_f1_at], np.nan),
            best_f1=best_f1,
        )
        return out

    return group


def reliability_bins(scores: FloatArray, n_bins: int = N_BINS) -> IntArray:
    """Bin of each score in [0, 1], as ``sklearn.calibration.calibration_curve(strategy=
    "uniform")`` assigns it (a score on an inner edge goes to the lower bin)."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins: IntArray = np.searchsorted(edges[1:-1], scores).astype(np.int64)
    return bins


def reliability_group(labels: IntArray, scores: FloatArray, n_bins: int = N_BINS) -> StatGroup:
    """Expected calibration error: sum over bins of |positives - sum of scores| / n."""
    bins = reliability_bins(scores, n_bins)
    # Per item, label minus score lands in its bin: a bin's sum is (observed - predicted) * count.
    gap_cells = indicator(bins, n_bins, labels.astype(np.float64) - scores)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        gaps = sum_by(weights, gap_cells)
        return {"ece": np.abs(gaps).sum(axis=1) / weights.sum(axis=1)}

    return group
