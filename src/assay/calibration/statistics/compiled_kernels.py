"""numba kernels of the rank statistics, one bootstrap resample (weight row) at a time.

Imported only through ``compiled`` (which checks that numba is installed): this module
imports numba at its top. Every kernel takes the weights item-major (cells x resamples,
``weights.T`` made contiguous: one row of resamples per cell, so every step below is a
short loop over the resamples that the compiler vectorises) and arrays prepared once per
data set (orders, runs of tied values, codes), and returns one value per resample. The
cells are walked once or twice in a fixed order, with the tied runs read off as they go
by, instead of numpy's dozen passes over resamples x cells temporaries.

Sums are the same exact sums of small integers and half-integers as the numpy path
(``ordinal``), so the two give the same numbers (tests run both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np

from assay.calibration.statistics.resample import FloatArray, IntArray

F = TypeVar("F", bound=Callable[..., Any])


def _jit(function: F) -> F:
    """Compiled once per install (``cache=True`` keeps the machine code next to this
    file, or in numba's user cache when that is read-only); the GIL is released."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))


@_jit
def spearman_rows(
    items: FloatArray,
    label_codes: IntArray,
    n_labels: int,
    score_order: IntArray,
    score_starts: IntArray,
) -> FloatArray:
    """Spearman ρ per resample: Pearson r of the mid-ranks, ties given their mean rank.

    ``label_codes[cell]`` is the dense rank of the cell's label among ``n_labels``
    values; ``score_order`` walks the cells by score and ``score_starts`` are the first
    positions of its runs of equal scores, then n. A mid-rank is R = (weight drawn
    before the value) + (weight on it + 1) / 2, centred on the mean mid-rank (N + 1) / 2:
    half-integers, so every product and sum is exact in float64 while N³ < 2**53 (N up
    to about 200,000), the same sums as the numpy path."""
    n, lanes = items.shape
    # weight per label value, then (in place) each label value's centred mid-rank
    per_label = np.zeros((n_labels, lanes))
    for cell in range(n):
        row = items[cell]
        into = per_label[label_codes[cell]]
        for r in range(lanes):
            into[r] += row[r]
    mean = np.zeros(lanes)
    for code in range(n_labels):
        weight = per_label[code]
        for r in range(lanes):
            mean[r] += weight[r]
    for r in range(lanes):
        mean[r] = (mean[r] + 1.0) * 0.5
    before = np.zeros(lanes)
    sxx = np.zeros(lanes)
    for code in range(n_labels):
        value = per_label[code]
        for r in range(lanes):
            w = value[r]
            centred = before[r] + (w + 1.0) * 0.5 - mean[r]
            before[r] += w
            sxx[r] += w * centred * centred
            value[r] = centred
    before[:] = 0.0
    syy = np.zeros(lanes)
    sxy = np.zeros(lanes)
    run = np.zeros(lanes)
    cross = np.zeros(lanes)
    for k in range(score_starts.shape[0] - 1):
        first, end = score_starts[k], score_starts[k + 1]
        if end - first == 1:  # an untied score: most of them when scores are continuous
            cell = score_order[first]
            row = items[cell]
            label = per_label[label_codes[cell]]
            for r in range(lanes):
                w = row[r]
                centred = before[r] + (w + 1.0) * 0.5 - mean[r]
                before[r] += w
                syy[r] += w * centred * centred
                sxy[r] += w * label[r] * centred
            continue
        run[:] = 0.0
        cross[:] = 0.0
        for t in range(first, end):
            cell = score_order[t]
            row = items[cell]
            label = per_label[label_codes[cell]]
            for r in range(lanes):
                run[r] += row[r]
                cross[r] += row[r] * label[r]
        for r in range(lanes):
            centred = before[r] + (run[r] + 1.0) * 0.5 - mean[r]
            before[r] += run[r]
            syy[r] += run[r] * centred * centred
            sxy[r] += cross[r] * centred
    out = np.empty(lanes)
    for r in range(lanes):
        den = np.sqrt(sxx[r] * syy[r])
        out[r] = np.nan if den == 0.0 else min(1.0, max(-1.0, sxy[r] / den))
    return out


@_jit
def kendall_rows(
    items: FloatArray,
    x_order: IntArray,
    x_starts: IntArray,
    joint_starts: IntArray,
    y_codes: IntArray,
    n_codes: int,
) -> FloatArray:
    """Kendall τ-b per resample (scipy's, with ties), Knight's way with weights.

    The cells are walked in (x, y) order (``x_order``); ``x_starts`` and ``joint_starts``
    are the first positions of its runs of equal x and of equal (x, y), then n;
    ``y_codes[cell]`` is the dense rank of the cell's y among ``n_codes`` values. The
    discordant weight is Σ_j w_j · (weight already walked with a higher y), read from a
    Fenwick tree over the y codes (one row of resamples per node); a run of equal x
    enters the tree only once all of it is walked, so pairs tied on x count as neither
    concordant nor discordant. Tied pairs on x, on y and on both are Σ c (c - 1) / 2 over
    the run (or code) weights c. All sums are of integers, exact in float64."""
    lanes = items.shape[1]
    tree = np.zeros((n_codes + 1, lanes))
    per_code = np.zeros((n_codes, lanes))
    walked = np.zeros(lanes)
    discordant = np.zeros(lanes)
    x_ties = np.zeros(lanes)
    both_ties = np.zeros(lanes)
    run = np.zeros(lanes)
    higher = np.zeros(lanes)
    for k in range(x_starts.shape[0] - 1):
        first, end = x_starts[k], x_starts[k + 1]
        run[:] = 0.0
        for t in range(first, end):
            cell = x_order[t]
            row = items[cell]
            # weight walked in earlier x runs with y code <= this one, subtracted below
            higher[:] = walked
            j = y_codes[cell] + 1
            while j > 0:
                node = tree[j]
                for r in range(lanes):
                    higher[r] -= node[r]
                j -= j & (-j)
            for r in range(lanes):
                discordant[r] += row[r] * higher[r]
                run[r] += row[r]
        for r in range(lanes):
            x_ties[r] += run[r] * (run[r] - 1.0) * 0.5
            walked[r] += run[r]
        for t in range(first, end):
            cell = x_order[t]
            row = items[cell]
            code = y_codes[cell]
            into = per_code[code]
            for r in range(lanes):
                into[r] += row[r]
            j = code + 1
            while j <= n_codes:
                node = tree[j]
                for r in range(lanes):
                    node[r] += row[r]
                j += j & (-j)
    for k in range(joint_starts.shape[0] - 1):
        run[:] = 0.0
        for t in range(joint_starts[k], joint_starts[k + 1]):
            row = items[x_order[t]]
            for r in range(lanes):
                run[r] += row[r]
        for r in range(lanes):
            both_ties[r] += run[r] * (run[r] - 1.0) * 0.5
    y_ties = np.zeros(lanes)
    for code in range(n_codes):
        weight = per_code[code]
        for r in range(lanes):
            y_ties[r] += weight[r] * (weight[r] - 1.0) * 0.5
    out = np.empty(lanes)
    for r in range(lanes):
        pairs = walked[r] * (walked[r] - 1.0) * 0.5
        # concordant - discordant = all - x ties - y ties + both - 2 discordant
        difference = pairs - x_ties[r] - y_ties[r] + both_ties[r] - 2.0 * discordant[r]
        den = np.sqrt((pairs - x_ties[r]) * (pairs - y_ties[r]))
        out[r] = np.nan if den == 0.0 else min(1.0, max(-1.0, difference / den))
    return out


@_jit
def ranking_rows(
    items: FloatArray,
    pos_at: IntArray,
    neg_at: IntArray,
    neg_lower: IntArray,
    neg_level: IntArray,
    pos_first: IntArray,
    ties_across: bool,
    tolerance: float,
) -> tuple[FloatArray, FloatArray, FloatArray, IntArray, FloatArray, IntArray, FloatArray]:
    """ROC-AUC, average precision, best Youden J and best F1 (with their positions among
    the positives), and the weight on positives and on negatives, per resample, as
    ``binary.ranking_group`` defines them, expression for expression (the values agree
    to the last bit but for the order of the sums).

    ``pos_at`` / ``neg_at``: the positive / negative cells by ascending score;
    ``neg_lower[p]`` / ``neg_level[p]``: negatives scored below / at or below positive p;
    ``pos_first[p]``: the first positive with p's score. The negatives are walked once,
    alongside the positives; J and F1 per positive are kept (positives x resamples) for
    the highest position within ``tolerance`` of the best."""
    lanes = items.shape[1]
    n_pos = pos_at.shape[0]
    n_neg = neg_at.shape[0]
    p_total = np.zeros(lanes)
    n_total = np.zeros(lanes)
    for t in range(n_pos):
        row = items[pos_at[t]]
        for r in range(lanes):
            p_total[r] += row[r]
    for t in range(n_neg):
        row = items[neg_at[t]]
        for r in range(lanes):
            n_total[r] += row[r]
    inv_p = np.zeros(lanes)
    inv_n = np.zeros(lanes)
    for r in range(lanes):
        if p_total[r] > 0.0:
            inv_p[r] = 1.0 / p_total[r]
        if n_total[r] > 0.0:
            inv_n[r] = 1.0 / n_total[r]
    youden = np.empty((n_pos, lanes))
    f1 = np.empty((n_pos, lanes))
    lower = np.zeros(lanes)  # negatives below the current positive
    level = np.zeros(lanes)  # negatives at or below it
    walked_pos = np.zeros(lanes)  # positives before the current one
    run_start = np.zeros(lanes)  # positives before the current run of equal scores
    auc_num = np.zeros(lanes)
    ap_sum = np.zeros(lanes)
    next_lower = 0
    next_level = 0
    for p in range(n_pos):
        while next_lower < neg_lower[p]:
            row = items[neg_at[next_lower]]
            for r in range(lanes):
                lower[r] += row[r]
            next_lower += 1
        if ties_across:
            while next_level < neg_level[p]:
                row = items[neg_at[next_level]]
                for r in range(lanes):
                    level[r] += row[r]
                next_level += 1
        if pos_first[p] == p:
            run_start[:] = walked_pos
        pos = items[pos_at[p]]
        j_out = youden[p]
        f_out = f1[p]
        for r in range(lanes):
            w = pos[r]
            if ties_across:
                auc_num[r] += 0.5 * (w * (lower[r] + level[r]))
            else:
                auc_num[r] += w * lower[r]
            tps = p_total[r] - run_start[r]
            fps = n_total[r] - lower[r]
            predicted = tps + fps
            ap_sum[r] += w * tps / (predicted if predicted > 0.0 else 1.0)
            if w == 0.0:  # not drawn: no threshold of this resample
                j_out[r] = -np.inf
                f_out[r] = -np.inf
            else:
                j_out[r] = tps * inv_p[r] - fps * inv_n[r]
                both = predicted + p_total[r]
                f_out[r] = 2.0 * tps / (both if both > 0.0 else 1.0)
            walked_pos[r] += w
    roc_auc = np.full(lanes, np.nan)
    pr_auc = np.full(lanes, np.nan)
    best_j = np.full(lanes, -np.inf)
    best_f1 = np.full(lanes, -np.inf)
    for r in range(lanes):
        if p_total[r] > 0.0 and n_total[r] > 0.0:
            roc_auc[r] = auc_num[r] / (p_total[r] * n_total[r])
        if p_total[r] != 0.0:
            pr_auc[r] = ap_sum[r] / p_total[r]
    for p in range(n_pos):
        for r in range(lanes):
            best_j[r] = max(best_j[r], youden[p, r])
            best_f1[r] = max(best_f1[r], f1[p, r])
    j_at = np.zeros(lanes, dtype=np.int64)
    f1_at = np.zeros(lanes, dtype=np.int64)
    for r in range(lanes):
        j_floor = best_j[r] - tolerance * max(1.0, abs(best_j[r]))
        f1_floor = best_f1[r] - tolerance * max(1.0, abs(best_f1[r]))
        j_at[r] = n_pos - 1
        while j_at[r] > 0 and not youden[j_at[r], r] >= j_floor:
            j_at[r] -= 1
        f1_at[r] = n_pos - 1
        while f1_at[r] > 0 and not f1[f1_at[r], r] >= f1_floor:
            f1_at[r] -= 1
        # the value where it was found (within the tolerance of the maximum)
        best_j[r] = youden[j_at[r], r]
        best_f1[r] = f1[f1_at[r], r]
    totals = np.empty((2, lanes))
    totals[0] = p_total
    totals[1] = n_total
    return roc_auc, pr_auc, best_j, j_at, best_f1, f1_at, totals
