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
import numpy.typing as npt
from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import cgutils
from numba.extending import intrinsic

from assay.calibration.statistics.resample import FloatArray, IntArray

F = TypeVar("F", bound=Callable[..., Any])
F32Array = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]


def _jit(function: F) -> F:
    """Compiled once per install (``cache=True`` keeps the machine code next to this
    file, or in numba's user cache when that is read-only); the GIL is released."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))


AHEAD = 16
"""Rows fetched ahead of a walk in a data-dependent order (``prefetch_row``)."""


def _prefetch_row(typingctx: Any, array: Any, row: Any) -> Any:
    """Ask the CPU to fetch row ``row`` of a 2-D C-contiguous array into cache (its first
    byte, the next cache line, its last byte), without waiting for it: a hint only, it
    never changes a value or faults.

    Why: the walks in label order, or bucket by bucket, read the weight rows of cells
    scattered over a matrix of several MB (out of L2), and each read waits ~100 ns for
    memory while the loop body between two reads is too long for the CPU to run ahead to
    the next. Fetching ``AHEAD`` rows ahead overlaps those waits (a walk in random order
    over 100,000 rows of 20 resamples: 0.25-0.55 s per 1,000 resamples without, 0.06
    with)."""
    import numba.core.types as nbtypes

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array_type = signature.args[0]
        made = context.make_array(array_type)(context, builder, args[0])
        zero = context.get_constant(nbtypes.intp, 0)
        first = cgutils.get_item_pointer(  # type: ignore[no-untyped-call]
            context, builder, array_type, made, [args[1], zero], wraparound=False
        )
        byte = ir.IntType(8).as_pointer()
        i32, i64 = ir.IntType(32), ir.IntType(64)
        prefetch = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte], ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32])
        )
        start = builder.bitcast(first, byte)
        width = builder.mul(
            cgutils.unpack_tuple(builder, made.shape, 2)[1],  # type: ignore[no-untyped-call]
            context.get_constant(
                nbtypes.intp, context.get_abi_sizeof(context.get_data_type(array_type.dtype))
            ),
        )
        last = builder.sub(width, context.get_constant(nbtypes.intp, 1))
        for offset in (i64(0), i64(64), last):
            address = builder.gep(start, [offset])
            builder.call(prefetch, [address, i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return nbtypes.void(array, row), codegen


prefetch_row = cast(Callable[[Any, Any], None], intrinsic(_prefetch_row))


@_jit
def count_draws(drawn: npt.NDArray[np.int32], weights: FloatArray, items: F32Array) -> float:
    """Bootstrap weights from drawn item indices, in the two layouts the statistics read:
    ``weights[r, i]`` (resamples x items, float64, for the numpy groups) and ``items[i,
    r]`` (items x resamples, float32, for these kernels), in one pass over the draws, and
    the largest weight. A row's counts are kept in an int32 vector that stays in cache
    (numpy's ``bincount`` checks the range first and counts in int64, then the two layouts
    are copies of their own); the transpose goes item by item, so both sides stream."""
    rows, n = drawn.shape
    counts = np.zeros(n, dtype=np.int32)
    largest = 0
    for r in range(rows):
        counts[:] = 0
        row = drawn[r]
        for t in range(n):
            counts[row[t]] += 1
        into = weights[r]
        for i in range(n):
            c = counts[i]
            into[i] = c
            largest = max(largest, c)
    for i in range(n):
        out = items[i]
        for r in range(rows):
            out[r] = weights[r, i]
    return float(largest)


@_jit
def spearman_rows(
    items: F32Array | FloatArray,
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
    to about 200,000), the same sums as the numpy path. Weights and the centred label
    ranks are stored in the weights' type: float32 (half the memory traffic) holds them
    exactly while N < 2**24, which the caller checks."""
    n, lanes = items.shape
    # weight per label value, then (in place) each label value's centred mid-rank
    # (labels all distinct, as continuous labels are: the codes are a permutation of the
    # cells, and each label's weight is one cell's, copied rather than added)
    distinct = n_labels == n
    if distinct:
        per_label = np.empty((n_labels, lanes), dtype=items.dtype)
    else:
        per_label = np.zeros((n_labels, lanes), dtype=items.dtype)
    mean = np.zeros(lanes)
    for cell in range(n):
        if cell + AHEAD < n:
            prefetch_row(per_label, label_codes[cell + AHEAD])
        row = items[cell]
        into = per_label[label_codes[cell]]
        if distinct:
            for r in range(lanes):
                into[r] = row[r]
                mean[r] += row[r]
        else:
            for r in range(lanes):
                into[r] += row[r]
                mean[r] += row[r]
    for r in range(lanes):
        mean[r] = (mean[r] + 1.0) * 0.5
    before = np.zeros(lanes)
    sxx = np.zeros(lanes)
    for code in range(n_labels):
        value = per_label[code]
        for r in range(lanes):
            w = np.float64(value[r])
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
        if first + AHEAD < n:
            ahead = score_order[first + AHEAD]
            prefetch_row(items, ahead)
            prefetch_row(per_label, label_codes[ahead])
        if end - first == 1:  # an untied score: most of them when scores are continuous
            cell = score_order[first]
            row = items[cell]
            label = per_label[label_codes[cell]]
            for r in range(lanes):
                w = np.float64(row[r])
                centred = before[r] + (w + 1.0) * 0.5 - mean[r]
                before[r] += w
                syy[r] += w * centred * centred
                sxy[r] += w * np.float64(label[r]) * centred
            continue
        run[:] = 0.0
        cross[:] = 0.0
        for t in range(first, end):
            cell = score_order[t]
            row = items[cell]
            label = per_label[label_codes[cell]]
            for r in range(lanes):
                w = np.float64(row[r])
                run[r] += w
                cross[r] += w * np.float64(label[r])
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
    items: F32Array | FloatArray,
    x_order: IntArray,
    x_starts: IntArray,
    joint_last: BoolArray,
    y_codes: IntArray,
    n_codes: int,
    codes_are_values: bool,
    y_tied_cells: IntArray,
    y_tied_starts: IntArray,
) -> FloatArray:
    """Pair counts of Kendall τ-b per resample (scipy's τ-b, with ties), Knight's way
    with weights: rows all pairs, tied on x, tied on y, tied on both, and discordant
    across y codes (resamples in columns).

    The cells are walked in (x, y) order (``x_order``); ``x_starts`` are the first
    positions of its runs of equal x, then n, and ``joint_last[t]`` says position t ends
    a run of equal (x, y). ``y_codes[cell]`` orders y (equal codes: equal y when
    ``codes_are_values``, else buckets of consecutive y whose inner pairs the caller
    counts). The discordant weight is Σ_j w_j · (weight already walked with a higher
    code), read from a Fenwick tree over the codes (a row of resamples per node); a run
    of equal x enters the tree once all of it is walked, so pairs tied on x count as
    neither. Tied pairs are Σ c (c - 1) / 2 over the weights c of runs (x, both), of
    codes (y, when they are values) or of the tied y runs (``y_tied_cells`` grouped by
    ``y_tied_starts``) added to Σ w (w - 1) / 2 over single cells. Sums of weights are
    in the weights' type: float32 (half the memory traffic) is exact while every weight
    times the resample's total is below 2**24, which the caller checks; the pair counts
    are float64."""
    lanes = items.shape[1]
    kind = items.dtype
    tree = np.zeros((n_codes + 1, lanes), dtype=kind)
    per_code = np.zeros((n_codes if codes_are_values else 0, lanes), dtype=kind)
    walked = np.zeros(lanes, dtype=kind)
    run = np.zeros(lanes, dtype=kind)
    joint = np.zeros(lanes, dtype=kind)
    higher = np.zeros(lanes, dtype=kind)
    out = np.zeros((5, lanes))
    pairs, x_ties, y_ties, both_ties, discordant = out[0], out[1], out[2], out[3], out[4]
    # Σ w (w - 1) over single cells: twice the tied pairs of every run of one cell, kept
    # in the weights' type (exact: at most the largest weight times the total); runs of
    # several cells add their own pairs less their cells' below
    singles = np.zeros(lanes, dtype=kind)
    for k in range(x_starts.shape[0] - 1):
        first, end = x_starts[k], x_starts[k + 1]
        if end - first == 1:  # an untied x (most of them when x is continuous)
            if first + AHEAD < x_order.shape[0]:
                prefetch_row(items, x_order[first + AHEAD])
            cell = x_order[first]
            row = items[cell]
            code = y_codes[cell]
            higher[:] = walked
            j = code + 1
            while j > 0:
                node = tree[j]
                for r in range(lanes):
                    higher[r] -= node[r]
                j -= j & (-j)
            for r in range(lanes):
                w = row[r]
                discordant[r] += w * higher[r]
                singles[r] += w * w - w
                walked[r] += w
            if codes_are_values:
                into = per_code[code]
                for r in range(lanes):
                    into[r] += row[r]
            j = code + 1
            while j <= n_codes:
                node = tree[j]
                for r in range(lanes):
                    node[r] += row[r]
                j += j & (-j)
            continue
        run[:] = 0.0
        for t in range(first, end):
            if t + AHEAD < x_order.shape[0]:
                prefetch_row(items, x_order[t + AHEAD])
            cell = x_order[t]
            row = items[cell]
            # weight walked in earlier x runs with a code <= this one, subtracted below
            higher[:] = walked
            j = y_codes[cell] + 1
            while j > 0:
                node = tree[j]
                for r in range(lanes):
                    higher[r] -= node[r]
                j -= j & (-j)
            for r in range(lanes):
                w = row[r]
                discordant[r] += w * higher[r]
                singles[r] += w * w - w
                run[r] += w
                joint[r] += w
                c = np.float64(w)
                x_ties[r] -= c * (c - 1.0) * 0.5
                both_ties[r] -= c * (c - 1.0) * 0.5
            if joint_last[t]:
                for r in range(lanes):
                    c = np.float64(joint[r])
                    both_ties[r] += c * (c - 1.0) * 0.5
                joint[:] = 0.0
        for r in range(lanes):
            c = np.float64(run[r])
            x_ties[r] += c * (c - 1.0) * 0.5
            walked[r] += run[r]
        for t in range(first, end):
            cell = x_order[t]
            row = items[cell]
            code = y_codes[cell]
            if codes_are_values:
                into = per_code[code]
                for r in range(lanes):
                    into[r] += row[r]
            j = code + 1
            while j <= n_codes:
                node = tree[j]
                for r in range(lanes):
                    node[r] += row[r]
                j += j & (-j)
    for r in range(lanes):
        c = np.float64(singles[r]) * 0.5
        x_ties[r] += c
        both_ties[r] += c
        if not codes_are_values:
            y_ties[r] += c
    if codes_are_values:
        for code in range(n_codes):
            weight = per_code[code]
            for r in range(lanes):
                c = np.float64(weight[r])
                y_ties[r] += c * (c - 1.0) * 0.5
    else:
        # tied y runs: their pairs replace the pairs of their cells alone
        for k in range(y_tied_starts.shape[0] - 1):
            run[:] = 0.0
            for t in range(y_tied_starts[k], y_tied_starts[k + 1]):
                row = items[y_tied_cells[t]]
                for r in range(lanes):
                    c = np.float64(row[r])
                    y_ties[r] -= c * (c - 1.0) * 0.5
                    run[r] += row[r]
            for r in range(lanes):
                c = np.float64(run[r])
                y_ties[r] += c * (c - 1.0) * 0.5
    for r in range(lanes):
        c = np.float64(walked[r])
        pairs[r] = c * (c - 1.0) * 0.5
    return out


@_jit
def ranking_rows(
    items: F32Array | FloatArray,
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
            w = np.float64(pos[r])
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


@_jit
def pairs_inside_buckets(
    items: F32Array | FloatArray,
    members: IntArray,
    bucket_starts: IntArray,
    first: IntArray,
    second: IntArray,
    pair_starts: IntArray,
) -> FloatArray:
    """Σ w_a w_b over the listed pairs of each bucket, per resample: the discordant
    pairs inside the buckets of y positions that ``kendall_rows`` counts only across.

    ``members[bucket_starts[b]:bucket_starts[b + 1]]`` are bucket b's cells and
    ``first`` / ``second`` the positions among them of its discordant pairs
    (``pair_starts`` as for the members). A bucket's rows are copied to a small buffer
    once, so each pair reads the cache, not the whole weight matrix, and a bucket's sum
    is kept in the weights' type, float64 only when added to the total (float32 is exact
    while every bucket's sum, at most BUCKET (BUCKET - 1) / 2 times the largest weight
    squared, is below 2**24, which the caller checks)."""
    lanes = items.shape[1]
    widest = 0
    for b in range(bucket_starts.shape[0] - 1):
        widest = max(widest, bucket_starts[b + 1] - bucket_starts[b])
    buffer = np.zeros((widest, lanes), dtype=items.dtype)
    bucket = np.zeros(lanes, dtype=items.dtype)
    total = np.zeros(lanes)
    for b in range(bucket_starts.shape[0] - 1):
        start = bucket_starts[b]
        for k in range(bucket_starts[b + 1] - start):
            if start + k + AHEAD < members.shape[0]:
                prefetch_row(items, members[start + k + AHEAD])
            source = items[members[start + k]]
            into = buffer[k]
            for r in range(lanes):
                into[r] = source[r]
        bucket[:] = 0.0
        for p in range(pair_starts[b], pair_starts[b + 1]):
            a = buffer[first[p]]
            c = buffer[second[p]]
            for r in range(lanes):
                bucket[r] += a[r] * c[r]
        for r in range(lanes):
            total[r] += np.float64(bucket[r])
    return total
