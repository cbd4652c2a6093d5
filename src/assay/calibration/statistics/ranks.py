"""Mid-ranks and tied pairs of one value column under many bootstrap weight vectors.

Spearman's ρ needs each cell's mid-rank in a resample and Kendall's τ-b the number of
pairs tied on a value. Both depend on the resample only through cumulative weights in
value order, so the cells are put in value order once (``Ranking``) and every resample
costs one cumulative sum. Values shared by several cells (ties) are the exception with
continuous scores (a few clipped at the ends of the scale), so they are handled apart,
on those cells alone: summing per distinct value over all cells (a ``reduceat`` with a
run per cell) costs more than the cumulative sum itself.
"""

from __future__ import annotations

import numpy as np

from assay.calibration.statistics.resample import FloatArray, IntArray

FEW_VALUES = 64
"""Distinct values up to which weights are summed per value rather than ranked by cell."""


def sum_of_squares(weights: FloatArray) -> FloatArray:
    """Σ w² per resample (shared by every tie count of the same weights)."""
    squares: FloatArray = np.einsum("ij,ij->i", weights, weights)
    return squares


class Ranking:
    """The cells in ascending order of ``values`` (stable), and their tied runs.

    ``order[t]`` is the cell at position t; ``identity`` when the cells already are in
    that order (no gather). ``tied`` are the positions in value order of cells that share
    their value with another cell, each with the first and last position of its run."""

    def __init__(self, values: FloatArray) -> None:
        n = int(values.shape[0])
        self.n = n
        self.order: IntArray = np.argsort(values, kind="stable").astype(np.int64)
        self.identity = bool(np.array_equal(self.order, np.arange(n)))
        ordered = values[self.order]
        new_run = np.ones(n, dtype=bool)
        new_run[1:] = ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(new_run)
        ends = np.append(starts[1:], n) - 1
        run_of = np.cumsum(new_run) - 1
        self.n_values = int(starts.shape[0])
        in_tie = (ends - starts)[run_of] > 0
        self.tied: IntArray = np.flatnonzero(in_tie).astype(np.int64)
        self.tied_first: IntArray = starts[run_of[self.tied]].astype(np.int64)
        self.tied_last: IntArray = ends[run_of[self.tied]].astype(np.int64)
        # the tied cells in the caller's order, and where each run starts among them
        self.tied_cells: IntArray = self.order[self.tied]
        self.tied_runs: IntArray = np.flatnonzero(new_run[self.tied]).astype(np.int64)
        # few values, all tied: weights are summed per value code (cells in caller order)
        self.codes: IntArray | None = None
        if self.n_values <= FEW_VALUES and self.n_values < n:
            self.codes = np.empty(n, dtype=np.int64)
            self.codes[self.order] = run_of

    def per_value(self, weights: FloatArray, codes: IntArray | None = None) -> FloatArray:
        """Sum of ``weights`` (resamples x cells) per value, ascending (few values only);
        ``codes`` when the cells are in another order than the caller's."""
        at = self.codes if codes is None else codes
        assert at is not None  # only called when the values are few
        # a bincount per row beats a product with a 0/1 matrix (half the time, measured)
        return np.stack([np.bincount(at, weights=row, minlength=self.n_values) for row in weights])

    def laid_out(self, weights: FloatArray) -> FloatArray:
        """Weights (resamples x cells) with the cells in value order."""
        return weights if self.identity else np.take(weights, self.order, axis=1)

    def tied_pairs(self, weights: FloatArray, squares: FloatArray) -> FloatArray:
        """Pairs tied on the value per resample, Σ_v c_v (c_v - 1) / 2 with c_v the weight
        on value v, given ``squares = sum_of_squares(weights)`` (cells in any order).

        Σ_v c_v² is Σ w² over all cells, corrected on the tied runs alone."""
        count = weights.sum(axis=1)
        if self.codes is not None:
            squares = sum_of_squares(self.per_value(weights))
        elif self.tied.shape[0]:
            per_run, sub = self.run_sums(weights)
            squares = squares + sum_of_squares(per_run) - sum_of_squares(sub)
        pairs: FloatArray = (squares - count) / 2.0
        return pairs

    def cubes(self, weights: FloatArray, cubes: FloatArray) -> FloatArray:
        """Σ_v c_v³ per resample, given ``cubes = Σ w³`` over all cells (cells in any
        order): the tie term of the variance of mid-ranks, Σ w (R - mean)² =
        (N³ - Σ_v c_v³) / 12."""
        if self.codes is not None:
            per_value = self.per_value(weights)
            total: FloatArray = np.einsum("ij,ij,ij->i", per_value, per_value, per_value)
            return total
        if self.tied.shape[0]:
            per_run, sub = self.run_sums(weights)
            cubes = cubes + np.einsum("ij,ij,ij->i", per_run, per_run, per_run)
            cubes -= np.einsum("ij,ij,ij->i", sub, sub, sub)
        return cubes

    def run_sums(self, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(weight per tied run, weight per tied cell), resamples x runs / cells: what
        ``tied_pairs`` and the Spearman tie corrections need, on the tied cells alone."""
        sub = np.take(weights, self.tied_cells, axis=1)
        return np.add.reduceat(sub, self.tied_runs, axis=1), sub

    def rank_shift(self, laid: FloatArray, cumulative: FloatArray) -> FloatArray:
        """On the tied cells (positions ``tied`` in value order), their run's mid-rank
        minus the mid-rank they would have alone, ``C - w/2 + 1/2`` (resamples x tied
        cells), from weights ``laid_out`` and their cumulative sum."""
        first, last, tied = self.tied_first, self.tied_last, self.tied
        before = np.take(cumulative, first, axis=1) - np.take(laid, first, axis=1)
        through = np.take(cumulative, last, axis=1)
        alone = np.take(cumulative, tied, axis=1) - 0.5 * np.take(laid, tied, axis=1)
        shift: FloatArray = (before + through) / 2.0 - alone
        return shift
