"""Weighted inversion counts of one fixed permutation under many weight vectors.

Kendall τ-b of a bootstrap resample needs its discordant pairs. A resample is the original
items with integer counts (weights), so the items are sorted once and the question for
every resample is the same: with the items in x order and ``rank[i]`` the position of item
``i`` in y order, how much weight sits on inversions, ``D(w) = Σ_{i<j, rank_i > rank_j}
w_i w_j``. A merge sort per resample in numpy costs ~17 passes over the weights; here
the count is split by *where* the two items of a pair lie, so that nearly all of it is
done by matrix products (BLAS) on exact small integers:

1. x order is cut into chunks of ``CHUNK`` items and y order into coarse buckets of
   ``CHUNK * FINE`` items. Pairs in different coarse buckets: inside one chunk by a
   (chunk x chunk) 0/1 matrix product, across chunks from each chunk's weight per coarse
   bucket (a two-dimensional dominance sum over a small table).
2. Pairs in the same coarse bucket but different fine buckets (``CHUNK`` items of y
   order): the same again inside each coarse bucket, items in x order.
3. Pairs in the same fine bucket: one (chunk x chunk) product per fine bucket.

Weights and 0/1 matrices are small integers, exact in float32 products (partial sums stay
far below 2**24); everything summed over pairs is float64, exact below 2**53. The result
equals a count on the expanded items, so Kendall τ-b equals scipy's to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from assay.calibration.statistics.resample import FloatArray, IntArray

CHUNK = 64
"""Items per chunk (the size of the 0/1 matrices multiplied per resample)."""

FINE = 32
"""Fine buckets (of ``CHUNK`` items of y order) per coarse bucket."""

SMALL_WEIGHT = 64
"""Weights below this (bootstrap counts of single items) keep every sum inside a chunk
under 2**24 ((CHUNK * 63) squared), exact in float32, as long as a resample's total weight
is under 2**24 too; otherwise the products are taken in float64."""

F32Array = npt.NDArray[np.float32]


def _within_matrices(before: IntArray, after: IntArray, slots: IntArray) -> F32Array:
    """(chunks x CHUNK x CHUNK) 0/1 matrices, 1 where slot i precedes slot j in its chunk
    (``before``) and is after it by ``after``; ``slots < 0`` marks padding (all zero)."""
    k = slots.shape[0] // CHUNK
    b = before.reshape(k, CHUNK)
    a = after.reshape(k, CHUNK)
    real = (slots >= 0).reshape(k, CHUNK)
    m = (b[:, :, None] < b[:, None, :]) & (a[:, :, None] > a[:, None, :])
    m &= real[:, :, None] & real[:, None, :]
    return m.astype(np.float32)


def _one_hot(codes: IntArray, slots: IntArray, n_codes: int) -> F32Array:
    """(chunks x CHUNK x n_codes) indicators of each slot's code (padding: none)."""
    k = slots.shape[0] // CHUNK
    out = np.zeros((slots.shape[0], n_codes), dtype=np.float32)
    real = np.flatnonzero(slots >= 0)
    out[real, codes[real]] = 1.0
    return out.reshape(k, CHUNK, n_codes)


class _Level:
    """One layout of the items (slots; -1 = padding) and the pairs it counts."""

    def __init__(
        self,
        slots: IntArray,
        before: IntArray,
        after: IntArray,
        codes: IntArray | None,
        n_codes: int,
        chunks_per_group: int,
    ) -> None:
        self.slots = slots
        self.take = np.where(slots >= 0, slots, 0)
        self.identity = bool(
            np.array_equal(self.take, np.arange(slots.shape[0])) and np.all(slots >= 0)
        )
        self.n_chunks = slots.shape[0] // CHUNK
        # transposed: chunk products are (matrix.T @ weights) with items as rows
        self.within_t = np.ascontiguousarray(
            _within_matrices(before, after, slots).transpose(0, 2, 1)
        )
        self.codes_t = (
            None
            if codes is None
            else np.ascontiguousarray(_one_hot(codes, slots, n_codes).transpose(0, 2, 1))
        )
        self.n_codes = n_codes
        self.chunks_per_group = chunks_per_group
        # above[f, f'] = 1 where f' > f: weight with a strictly higher code
        self.above = np.triu(np.ones((n_codes, n_codes), dtype=np.float32), 1)

    def count(self, items: npt.NDArray[np.floating[Any]]) -> FloatArray:
        """Weight on the pairs this level counts, per resample (columns of ``items``,
        the weights item-major: items x resamples)."""
        rows = items.shape[1]
        laid = items if self.identity else np.take(items, self.take, axis=0)
        x = laid.reshape(self.n_chunks, CHUNK, rows)
        inside = np.matmul(self.within_t, x)  # (chunks, CHUNK, rows)
        # per chunk exact in float32 (< 2**24); across chunks in float64
        total: FloatArray = np.einsum("kjr,kjr->kr", inside, x).sum(axis=0, dtype=np.float64)
        if self.codes_t is None:
            return total
        per_chunk = np.matmul(self.codes_t, x)  # (chunks, codes, rows)
        groups = per_chunk.reshape(-1, self.chunks_per_group, self.n_codes * rows)
        # weight in earlier chunks of the same group, per code (a loop over chunks
        # adding rows of codes x resamples beats numpy's cumsum along a middle axis)
        earlier = np.empty_like(groups)
        earlier[:, 0] = 0.0
        for k in range(1, self.chunks_per_group):
            np.add(earlier[:, k - 1], groups[:, k - 1], out=earlier[:, k])
        higher = np.matmul(self.above, earlier.reshape(self.n_chunks, self.n_codes, rows))
        # products reach n * chunk weight: float64 from here on
        total += np.einsum("kfr,kfr->r", higher, per_chunk, dtype=np.float64)
        return total


def _within_chunks_level(xpos: IntArray, y_order: IntArray, rank: IntArray) -> _Level:
    """Items in y order, a chunk per CHUNK consecutive y positions: counts every pair
    inverted inside a chunk (``xpos``: x position of each item)."""
    n = int(y_order.shape[0])
    fine_padded = -(-n // CHUNK) * CHUNK
    slots = np.concatenate([y_order, np.full(fine_padded - n, -1, dtype=np.int64)])
    real = np.maximum(slots, 0)
    pos = np.where(slots >= 0, xpos[real], fine_padded)
    after = np.where(slots >= 0, rank[real], -1)
    return _Level(slots, pos, after, None, 0, 1)


MAX_INVERSION_LEVELS = 64
"""Distinct y values up to which the values themselves are the buckets (one level)."""


class WeightedInversions:
    """``D(w)`` for the permutation ``rank`` (item i in x order has y position
    ``rank[i]``), for many weight vectors over the items in their original order.

    ``x_order[t]`` is the item at x position t; ``rank`` is indexed by item.

    ``levels`` (optional, at most ``MAX_INVERSION_LEVELS`` codes, indexed by item): y
    takes few distinct values and ``rank`` orders them ascending with ties broken by x
    position. Then no two items of the same value are inverted, so the values themselves
    are the buckets and the first level alone counts every inversion (about a third of
    the work)."""

    def __init__(self, x_order: IntArray, rank: IntArray, levels: IntArray | None = None) -> None:
        n = int(x_order.shape[0])
        self.n = n
        if levels is not None:
            n_levels = int(levels.max(initial=0)) + 1
            padded = max(1, -(-n // CHUNK)) * CHUNK
            slots = np.concatenate([x_order, np.full(padded - n, -1, dtype=np.int64)])
            codes = np.where(slots >= 0, levels[np.maximum(slots, 0)], 0).astype(np.int64)
            self.levels = [
                _Level(slots, np.arange(padded), codes, codes, n_levels, padded // CHUNK)
            ]
            return
        xpos = np.empty(n, dtype=np.int64)
        xpos[x_order] = np.arange(n)
        y_order = np.empty(n, dtype=np.int64)
        y_order[rank] = np.arange(n)
        coarse_size = CHUNK * FINE
        n_coarse = max(1, -(-n // coarse_size))
        padded = n_coarse * coarse_size
        pad = np.full(padded - n, -1, dtype=np.int64)
        # 1. x order, codes = coarse bucket of the y position
        slots1 = np.concatenate([x_order, pad])
        pos1 = np.arange(padded)
        ycoarse = np.where(slots1 >= 0, rank[np.maximum(slots1, 0)] // coarse_size, 0)
        after1 = ycoarse
        self.levels = [_Level(slots1, pos1, after1, ycoarse, n_coarse, padded // CHUNK)]
        # 2. coarse-bucket major, x order inside; codes = fine bucket of the y position
        yfull = np.concatenate([y_order, pad])  # y order, padded to whole coarse buckets
        buckets = yfull.reshape(n_coarse, coarse_size)
        key = np.where(buckets >= 0, xpos[np.maximum(buckets, 0)], padded)
        inside = np.argsort(key, axis=1, kind="stable")
        slots2 = np.take_along_axis(buckets, inside, axis=1).ravel()
        real2 = np.maximum(slots2, 0)
        yfine = np.where(slots2 >= 0, (rank[real2] % coarse_size) // CHUNK, 0)
        pos2 = np.where(slots2 >= 0, xpos[real2], padded)
        self.levels.append(_Level(slots2, pos2, yfine, yfine, FINE, FINE))
        # 3. y order: each chunk is one fine bucket; every pair inverted inside it
        self.levels.append(_within_chunks_level(xpos, y_order, rank))

    def __call__(self, weights: FloatArray) -> FloatArray:
        """Inverted weight per resample: ``Σ_{x_i<x_j, rank_i>rank_j} w_i w_j``."""
        small = exact_in_float32(
            float(weights.max(initial=0.0)), float(weights.sum(axis=1).max(initial=0.0))
        )
        items: npt.NDArray[np.floating[Any]] = np.ascontiguousarray(
            weights.T, dtype=np.float32 if small else np.float64
        )
        return self.count_items(items)

    def count_items(self, items: npt.NDArray[np.floating[Any]]) -> FloatArray:
        """``__call__`` on weights already item-major (items x resamples, contiguous),
        float32 only where ``exact_in_float32`` says so."""
        total = np.zeros(items.shape[1])
        for level in self.levels:
            total += level.count(items)
        return total


def exact_in_float32(largest_weight: float, largest_total: float) -> bool:
    """Whether the products of the levels are exact in float32 for these weights: every
    weight under ``SMALL_WEIGHT`` and every resample's total under 2**24."""
    return largest_weight < SMALL_WEIGHT and largest_total < 1 << 24
