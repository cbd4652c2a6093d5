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
