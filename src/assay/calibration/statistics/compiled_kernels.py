"""numba kernels of the rank statistics, one bootstrap resample (weight row) at a time.

Imported only through ``compiled`` (which checks that numba is installed): this module
imports numba at its top. Every kernel takes the weight matrix (resamples x cells) and
arrays prepared once per data set (orders, runs of tied values, codes), and returns one
value per resample. Each resample is a few passes over the cells in a fixed order, with
the tied runs read off as they go by, instead of numpy's dozen passes over
resamples x cells temporaries: the work is the same O(n) (O(n log m) for Kendall's τ-b),
but it stays in cache.

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
def _midrank_pass(
    row: FloatArray, order: IntArray, starts: IntArray, mean: float, out: FloatArray
) -> float:
    """Each cell's mid-rank minus ``mean`` into ``out`` (by cell), walking the cells in
    value order run by run (``starts``: first position of each run of equal values, then
    n); returns Σ w (R - mean)²."""
    before = 0.0
    spread = 0.0
    for k in range(starts.shape[0] - 1):
        weight = 0.0
        for t in range(starts[k], starts[k + 1]):
            weight += row[order[t]]
        if weight == 0.0:
            continue
        centred = before + (weight + 1.0) / 2.0 - mean
        before += weight
        spread += weight * centred * centred
        for t in range(starts[k], starts[k + 1]):
            out[order[t]] = centred
    return spread


@_jit
def spearman_rows(
    weights: FloatArray,
    label_order: IntArray,
    label_starts: IntArray,
    score_order: IntArray,
    score_starts: IntArray,
) -> FloatArray:
    """Spearman ρ per resample: Pearson r of the mid-ranks, ties given their mean rank.

    Mid-ranks are R = (weight drawn before the value) + (weight on it + 1) / 2, centred on
    the mean mid-rank (N + 1) / 2: half-integers, so every product and sum is exact in
    float64 while N³ < 2**53 (N up to about 200,000)."""
    rows, n = weights.shape
    out = np.empty(rows)
    label_centred = np.zeros(n)
    for r in range(rows):
        row = weights[r]
        total = 0.0
        for i in range(n):
            total += row[i]
        mean = (total + 1.0) / 2.0
        sxx = _midrank_pass(row, label_order, label_starts, mean, label_centred)
        before = 0.0
        syy = 0.0
        sxy = 0.0
        for k in range(score_starts.shape[0] - 1):
            weight = 0.0
            cross = 0.0
            for t in range(score_starts[k], score_starts[k + 1]):
                cell = score_order[t]
                w = row[cell]
                weight += w
                cross += w * label_centred[cell]
            if weight == 0.0:
                continue
            centred = before + (weight + 1.0) / 2.0 - mean
            before += weight
            syy += weight * centred * centred
            sxy += cross * centred
        den = np.sqrt(sxx * syy)
        out[r] = np.nan if den == 0.0 else min(1.0, max(-1.0, sxy / den))
    return out


@_jit
def kendall_rows(
    weights: FloatArray,
    x_order: IntArray,
    x_starts: IntArray,
    joint_starts: IntArray,
    y_codes: IntArray,
    n_codes: int,
) -> FloatArray:
    """Kendall τ-b per resample (scipy's, with ties), Knight's way with weights.

    The cells are walked in (x, y) order (``x_order``); ``x_starts`` and ``joint_starts``
    are the first positions of the runs of equal x and of equal (x, y) in it, then n;
    ``y_codes[cell]`` is the dense rank of the cell's y among ``n_codes`` values. The
    discordant weight is Σ_j w_j · (weight already walked with a higher y), read from a
    Fenwick tree over the y codes; a run of equal x enters the tree only after all of it
    is walked, so pairs tied on x count as neither concordant nor discordant. Tied pairs
    on x, on y and on both are Σ c (c - 1) / 2 over the run (or code) weights c."""
    rows = weights.shape[0]
    out = np.empty(rows)
    tree = np.zeros(n_codes + 1)
    per_code = np.zeros(n_codes)
    for r in range(rows):
        row = weights[r]
        tree[:] = 0.0
        per_code[:] = 0.0
        walked = 0.0
        discordant = 0.0
        x_ties = 0.0
        both_ties = 0.0
        for k in range(x_starts.shape[0] - 1):
            run = 0.0
            for t in range(x_starts[k], x_starts[k + 1]):
                cell = x_order[t]
                w = row[cell]
                if w == 0.0:
                    continue
                run += w
                # weight walked (earlier x runs) with y code <= this one
                j = y_codes[cell] + 1
                lower = 0.0
                while j > 0:
                    lower += tree[j]
                    j -= j & (-j)
                discordant += w * (walked - lower)
            if run == 0.0:
                continue
            x_ties += run * (run - 1.0) / 2.0
            for t in range(x_starts[k], x_starts[k + 1]):
                cell = x_order[t]
                w = row[cell]
                if w == 0.0:
                    continue
                code = y_codes[cell]
                per_code[code] += w
                j = code + 1
                while j <= n_codes:
                    tree[j] += w
                    j += j & (-j)
            walked += run
        for k in range(joint_starts.shape[0] - 1):
            run = 0.0
            for t in range(joint_starts[k], joint_starts[k + 1]):
                run += row[x_order[t]]
            both_ties += run * (run - 1.0) / 2.0
        y_ties = 0.0
        for code in range(n_codes):
            c = per_code[code]
            y_ties += c * (c - 1.0) / 2.0
        pairs = walked * (walked - 1.0) / 2.0
        # concordant - discordant = all - x ties - y ties + both - 2 discordant
        difference = pairs - x_ties - y_ties + both_ties - 2.0 * discordant
        den = np.sqrt((pairs - x_ties) * (pairs - y_ties))
        out[r] = np.nan if den == 0.0 else min(1.0, max(-1.0, difference / den))
    return out
