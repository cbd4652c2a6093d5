"""Compiled (numba) statistic groups, used when numba is installed.

numba comes with the ``calibration`` extra. Without it every statistic still runs, on
numpy alone (``ordinal``), with the same numbers: numpy's best for continuous scores is
a dozen passes over resamples x cells temporaries per statistic, which with 100,000
items and 1,000 resamples is seconds per statistic, where the kernels of
``compiled_kernels`` walk each resample once or twice in a fixed order.

``enabled(compiled)`` is the one switch: ``None`` means "if numba is installed" (and
``ASSAY_CALIBRATION_NUMPY`` is not set: the numpy path on demand, for the benchmark's A/B
or to rule the kernels out), ``False`` forces numpy (the tests run both and compare),
``True`` insists.
"""

from __future__ import annotations

import functools
import os
import weakref

import numpy as np
import numpy.typing as npt

from assay.calibration.statistics.inversions import F32Array
from assay.calibration.statistics.resample import FloatArray, IntArray, StatGroup, safe_divide
from assay.extras import is_installed


@functools.cache
def installed() -> bool:
    """Whether numba is installed and imports (checked once per process): a numba built
    for another numpy refuses to import, and then numpy alone does the work."""
    if not is_installed("numba"):
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def enabled(compiled: bool | None) -> bool:
    """Whether to use the compiled groups: ``compiled`` if given, else whether numba is
    installed. ``True`` without numba is an error naming the extra."""
    if compiled is None:
        return installed() and not os.environ.get("ASSAY_CALIBRATION_NUMPY")
    if compiled and not installed():
        raise ImportError(
            "compiled calibration statistics need numba: pip install 'assay[calibration]'"
        )
    return compiled


def runs(values: FloatArray) -> tuple[IntArray, IntArray]:
    """Cells in ascending order of ``values`` (stable) and the first position of each run
    of equal values in that order, followed by n."""
    order = np.argsort(values, kind="stable").astype(np.int64)
    return order, _run_starts(values[order])


def _run_starts(*ordered: FloatArray) -> IntArray:
    """First position of each run of equal rows (over all ``ordered`` columns), then n."""
    n = ordered[0].shape[0]
    new_run = np.zeros(n, dtype=bool)
    if n:
        new_run[0] = True
    for column in ordered:
        new_run[1:] |= column[1:] != column[:-1]
    return np.append(np.flatnonzero(new_run), n).astype(np.int64)


def item_major(weights: FloatArray) -> FloatArray:
    """The weights cells x resamples, contiguous: what every kernel walks."""
    return np.ascontiguousarray(weights.T)


def item_major_f32(weights: FloatArray) -> F32Array:
    """``item_major`` in float32 (exact for integer weights below 2**24): the copy
    ``counted_draws`` made with the weights if there is one, else a new one."""
    shared = _SHARED.get(id(weights))
    if shared is not None and shared[0]() is weights:
        return shared[1]
    return np.ascontiguousarray(weights.T, dtype=np.float32)


EXACT_FLOAT32 = float(1 << 24)
"""Below this, integer sums (and weight times a resample's total) are exact in float32."""


_SHARED: dict[int, tuple[weakref.ReferenceType[FloatArray], F32Array, float, float]] = {}
"""Item-major float32 copies of drawn weight chunks, by the chunk's id, with the chunk's
largest weight and largest row total, while the chunk lives (a weak reference, and a
finaliser that drops the entry): every compiled group of a resample chunk reads the one
copy ``counted_draws`` made, instead of transposing the chunk again for each group."""


def counted_draws(drawn: npt.NDArray[np.int32]) -> FloatArray:
    """Bootstrap weights (resamples x items) from drawn item indices (resamples x draws),
    counted by ``compiled_kernels.count_draws``, which lays them out item-major in float32
    in the same pass (kept in ``_SHARED`` for the groups)."""
    from assay.calibration.statistics.compiled_kernels import count_draws

    rows, n = drawn.shape
    weights = np.empty((rows, n))
    items = np.empty((n, rows), dtype=np.float32)
    largest = count_draws(drawn, weights, items)
    key = id(weights)
    _SHARED[key] = (weakref.ref(weights), items, largest, float(n))
    weakref.finalize(weights, _SHARED.pop, key, None)
    return weights


def _sizes(weights: FloatArray) -> tuple[float, float]:
    """(largest weight, largest row total) of a weight chunk, known for drawn chunks."""
    shared = _SHARED.get(id(weights))
    if shared is not None and shared[0]() is weights:
        return shared[2], shared[3]
    return float(weights.max(initial=0.0)), float(weights.sum(axis=1).max(initial=0.0))


def spearman_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Spearman ρ (``compiled_kernels.spearman_rows``)."""
    from assay.calibration.statistics.compiled_kernels import spearman_rows

    label_values, label_codes = np.unique(labels, return_inverse=True)
    codes = label_codes.astype(np.int64).ravel()
    n_labels = int(label_values.shape[0])
    score_order, score_starts = runs(scores)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        small = _sizes(weights)[1] < EXACT_FLOAT32
        items = item_major_f32(weights) if small else item_major(weights)
        rows = spearman_rows(items, codes, n_labels, score_order, score_starts)
        return {"spearman": rows}

    return group


MAX_KENDALL_CODES = 4096
"""Distinct values on the smaller side up to which the compiled Kendall τ-b uses them as
its codes. Above it the codes are buckets of ``BUCKET`` consecutive y positions: a
Fenwick tree with a row of resamples per distinct value would not stay in cache
(measured at 100,000 items, both sides continuous, at load 11: a tree over every value
4.3 s per 1,000 resamples, numpy's inversion counter 4.0 s, buckets 1.5-1.8 s)."""


BUCKET = 16
"""y positions per bucket when there are too many values to be the codes themselves: the
Fenwick tree has n / BUCKET nodes (in cache) and each bucket's ~BUCKET² / 4 discordant
pairs are listed once and summed per resample (``pairs_inside_buckets``)."""


def _pairs_inside(
    x_order: IntArray, codes: IntArray, rank: IntArray, n_codes: int
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """(members, bucket_starts, first, second, pair_starts) for ``pairs_inside_buckets``:
    each bucket's cells in x order and its discordant pairs (earlier in x, later in y
    position), positions among the members."""
    walk = x_order[np.argsort(codes[x_order], kind="stable")]  # bucket-major, x inside
    sizes = np.bincount(codes, minlength=n_codes)
    bucket_starts = np.append(0, np.cumsum(sizes)).astype(np.int64)
    slot = np.arange(walk.shape[0]) - np.repeat(bucket_starts[:-1], sizes)
    table = np.full((n_codes, BUCKET), -1, dtype=np.int64)
    table[codes[walk], slot] = rank[walk]
    i, j = np.triu_indices(BUCKET, 1)
    inverted = (table[:, i] > table[:, j]) & (table[:, j] >= 0)
    bucket_of, pair = np.nonzero(inverted)
    pair_starts = np.append(0, np.cumsum(np.bincount(bucket_of, minlength=n_codes)))
    return (
        walk.astype(np.int64),
        bucket_starts,
        i[pair].astype(np.int64),
        j[pair].astype(np.int64),
        pair_starts.astype(np.int64),
    )


def kendall_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Kendall τ-b (``compiled_kernels.kendall_rows``). τ is symmetric: with values as
    codes, y is the side with fewer of them; with buckets, y is the labels."""
    from assay.calibration.statistics.compiled_kernels import kendall_rows, pairs_inside_buckets

    label_values, label_codes = np.unique(labels, return_inverse=True)
    score_values, score_codes = np.unique(scores, return_inverse=True)
    codes_are_values = min(label_values.shape[0], score_values.shape[0]) <= MAX_KENDALL_CODES
    if codes_are_values and label_values.shape[0] <= score_values.shape[0]:
        x, y, y_codes, n_codes = scores, labels, label_codes, int(label_values.shape[0])
    elif codes_are_values:
        x, y, y_codes, n_codes = labels, scores, score_codes, int(score_values.shape[0])
    else:
        # buckets of y positions: x is the scores, the order the cells come in
        # (``statistics._ordered_cells``), so the walk reads the weights in sequence
        x, y, y_codes, n_codes = scores, labels, label_codes, 0
    n = int(x.shape[0])
    x_order = np.lexsort((y, x)).astype(np.int64)
    x_starts = _run_starts(x[x_order])
    joint_starts = _run_starts(x[x_order], y[x_order])
    joint_last = np.zeros(n, dtype=bool)
    joint_last[joint_starts[1:] - 1] = True
    inside = None
    none = np.zeros(1, dtype=np.int64)
    tied_cells, tied_starts = none[:0], none
    if codes_are_values:
        codes = y_codes.astype(np.int64).ravel()
    else:
        # y position with ties broken by x position (no inversion among tied y), cut into
        # buckets of BUCKET positions; the pairs inside a bucket are listed once
        xpos = np.empty(n, dtype=np.int64)
        xpos[x_order] = np.arange(n)
        y_order = np.lexsort((xpos, y)).astype(np.int64)
        rank = np.empty(n, dtype=np.int64)
        rank[y_order] = np.arange(n)
        codes = rank // BUCKET
        n_codes = int(codes.max(initial=0)) + 1
        inside = _pairs_inside(x_order, codes, rank, n_codes)
        ordered, starts = runs(y)
        sizes = np.diff(starts)
        tied_cells = ordered[np.repeat(sizes > 1, sizes)]
        tied_starts = np.append(0, np.cumsum(sizes[sizes > 1])).astype(np.int64)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        largest, heaviest = _sizes(weights)
        small = largest * max(heaviest, largest * BUCKET * (BUCKET - 1) / 2) < EXACT_FLOAT32
        items = item_major_f32(weights) if small else item_major(weights)
        counts = kendall_rows(
            items,
            x_order,
            x_starts,
            joint_last,
            codes,
            n_codes,
            codes_are_values,
            tied_cells,
            tied_starts,
        )
        pairs, x_ties, y_ties, both_ties, discordant = counts
        if inside is not None:
            discordant = discordant + pairs_inside_buckets(items, *inside)
        difference = pairs - x_ties - y_ties + both_ties - 2.0 * discordant
        den = np.sqrt((pairs - x_ties) * (pairs - y_ties))
        return {"kendall_tau_b": np.clip(safe_divide(difference, den), -1.0, 1.0)}

    return group


def ranking_group(
    pos_at: IntArray,
    neg_at: IntArray,
    neg_lower: IntArray,
    neg_level: IntArray,
    pos_first: IntArray,
    pos_scores: FloatArray,
    tolerance: float,
) -> StatGroup:
    """ROC-AUC, average precision and the best thresholds (``compiled_kernels.
    ranking_rows``), from the arrays ``binary.ranking_group`` prepares (at least one
    positive cell)."""
    from assay.calibration.statistics.compiled_kernels import ranking_rows

    ties_across = bool(np.any(neg_level != neg_lower))

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        small = _sizes(weights)[1] < EXACT_FLOAT32
        roc_auc, pr_auc, best_j, j_at, best_f1, f1_at, totals = ranking_rows(
            item_major_f32(weights) if small else item_major(weights),
            pos_at,
            neg_at,
            neg_lower,
            neg_level,
            pos_first,
            ties_across,
            tolerance,
        )
        p_total, n_total = totals[0], totals[1]
        best_j = np.where((p_total > 0) & (n_total > 0), best_j, np.nan)
        best_f1 = np.where(p_total > 0, best_f1, np.nan)
        return {
            "roc_auc": roc_auc,
            "pr_auc": pr_auc,
            # J = 0 is chance: no threshold to recommend then.
            "best_threshold_youden": np.where(best_j > tolerance, pos_scores[j_at], np.nan),
            "best_youden_j": best_j,
            "best_threshold_f1": np.where(np.isfinite(best_f1), pos_scores[f1_at], np.nan),
            "best_f1": best_f1,
        }

    return group
