"""One bootstrap for every statistic: resamples as weight matrices, computed in chunks.

A bootstrap resample of ``n`` items drawn with replacement is the same thing as a weight
per item (how many times it was drawn), and items with the same label and score can share
one weight (a *cell*: how many draws fell on that label and score). Every statistic here is
written once as a function of a weight matrix ``W`` (resamples x cells): the row of cell
counts is the data itself, so the point value and the bootstrap replicates run through the
same code and cannot drift apart. Sums over a resample become ``W @ features`` (one BLAS
call for all resamples); counts per category become ``W @ indicator`` (dense for a few
categories, sparse otherwise).

With continuous scores every item is its own cell and the item indices are drawn the way
``assay.summary.stats.bootstrap_mean_cis`` draws them (``default_rng(seed).integers(0, n,
(rows, n))`` in chunks of at most ``BOOTSTRAP_MAX_CELLS``), so a 100,000-item,
1,000-resample bootstrap never holds more than ~16 MB of weights (~32 MB with numba: the
draws are then int32 and counted by ``compiled.counted_draws``, which also keeps an
item-major float32 copy for the compiled statistics). With discrete scores the
cell counts are drawn from their exact multinomial distribution instead. Either way every
statistic of one call sees the same resamples (which is what makes ``paired_difference``
paired).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from assay.extras import extra_import
from assay.summary.stats import BOOTSTRAP_MAX_CELLS

if TYPE_CHECKING:
    import scipy.sparse as sp  # type: ignore[import-untyped]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MULTINOMIAL_RATIO = 8
"""Cells at most 1/8 of the items: draw per-cell counts (multinomial), not item indices."""

StatGroup = Callable[[FloatArray], dict[str, FloatArray]]
"""Statistics that share intermediate sums: weights (R x n) -> {name: values (R,)}."""


def resample_weights(counts: FloatArray, n_resamples: int, seed: int) -> Iterator[FloatArray]:
    """Bootstrap weight matrices (rows = resamples, columns = cells), chunk by chunk.

    ``counts[d]`` is how many items share cell ``d`` (a distinct combination of label and
    score); a resample's weights are how many of its ``n = sum(counts)`` draws fell in
    each cell. When cells are few compared with items, those weights are drawn directly
    from their exact distribution, ``Multinomial(n, counts / n)`` (the same bootstrap,
    at a cost that grows with the cells, not the items); otherwise ``n`` item indices are
    drawn per resample and counted. Deterministic for ``seed``; each row sums to ``n``."""
    rng = np.random.default_rng(seed)
    n_cells = counts.shape[0]
    n = round(float(counts.sum()))
    rows = max(1, BOOTSTRAP_MAX_CELLS // max(n_cells, 1))
    multinomial = n_cells * MULTINOMIAL_RATIO <= n
    if not multinomial and not np.all(counts == 1.0):
        raise ValueError("resampling items one by one needs one item per cell")
    for start in range(0, n_resamples, rows):
        k = min(n_resamples, start + rows) - start
        if multinomial:
            yield rng.multinomial(n, counts / n, size=k).astype(np.float64)
            continue
        if n < 1 << 31 and _compiled():
            # the same draws (numpy's int32 and int64 bounded integers are one stream, for
            # a bound below 2**32), counted by a kernel that also lays them out item-major
            from assay.calibration.statistics.compiled import counted_draws

            yield counted_draws(rng.integers(0, n, size=(k, n), dtype=np.int32))
            continue
        idx = rng.integers(0, n, size=(k, n))
        # one bincount per row: its counts stay in cache, and no offsets are added
        drawn = np.empty((k, n))
        for row in range(k):
            drawn[row] = np.bincount(idx[row], minlength=n)
        yield drawn


def _compiled() -> bool:
    """Whether the compiled statistics are on (``compiled.enabled``), imported here so
    that ``compiled`` (which builds on this module) loads only when resampling items."""
    from assay.calibration.statistics.compiled import enabled

    return enabled(None)


def cells_of(columns: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Distinct rows of ``columns`` (items x values) and how many items each stands for.

    Every statistic here depends on the items only through how often each distinct
    (label, score, ...) row occurs, so the bootstrap can run over the distinct rows. When
    they are not much fewer than the items (continuous scores) the items are kept as they
    are, one per cell."""
    n = columns.shape[0]
    order, starts = _sorted_runs(columns)
    if starts.shape[0] * MULTINOMIAL_RATIO <= n:
        cells = columns[order[starts]]
        counts = np.diff(np.append(starts, n))
        return cells.astype(np.float64), counts.astype(np.float64)
    return columns, np.ones(n)


def _sorted_runs(columns: FloatArray) -> tuple[IntArray, IntArray]:
    """Rows in lexicographic order and where each run of equal rows starts in it (as
    ``np.unique(axis=0)`` orders them, at a tenth of its cost: no structured view)."""
    order = np.lexsort(columns.T[::-1]).astype(np.int64)
    ordered = columns[order]
    new_run = np.ones(columns.shape[0], dtype=bool)
    new_run[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    return order, np.flatnonzero(new_run).astype(np.int64)


def row_codes(columns: FloatArray) -> IntArray:
    """Each row's position among the distinct rows of ``columns`` (lexicographic)."""
    order, starts = _sorted_runs(columns)
    new_run = np.zeros(columns.shape[0], dtype=np.int64)
    new_run[starts] = 1
    codes = np.empty(columns.shape[0], dtype=np.int64)
    codes[order] = np.cumsum(new_run) - 1
    return codes


DENSE_INDICATOR_CODES = 8
"""Indicators with at most this many codes are dense: one BLAS product beats sparse there."""


def indicator(
    codes: IntArray, n_codes: int, values: FloatArray | None = None
) -> sp.csc_array | FloatArray:
    """(n x n_codes) matrix with ``values[i]`` (default 1) at ``(i, codes[i])``, else 0.

    ``W @ indicator(codes, k)`` sums each resample's weights per code: confusion counts,
    counts per score group, contingency tables. Dense for a few codes, sparse otherwise."""
    n = codes.shape[0]
    data = np.ones(n) if values is None else values
    if n_codes <= DENSE_INDICATOR_CODES:
        dense = np.zeros((n, n_codes))
        dense[np.arange(n), codes] = data
        return dense
    with extra_import("calibration", "judge calibration statistics"):
        import scipy.sparse as sp

    return sp.csc_array((data, (np.arange(n), codes)), shape=(n, n_codes))


def sum_by(weights: FloatArray, matrix: sp.csc_array | FloatArray) -> FloatArray:
    """``weights @ matrix`` for a dense weight chunk and an ``indicator``, as a dense array."""
    if isinstance(matrix, np.ndarray):
        return np.asarray(weights @ matrix, dtype=np.float64)
    return np.asarray((matrix.T @ weights.T).T, dtype=np.float64)


def dense_groups(values: FloatArray) -> tuple[FloatArray, IntArray]:
    """Distinct values in ascending order and each item's position among them."""
    uniq, inverse = np.unique(values, return_inverse=True)
    return uniq.astype(np.float64), inverse.astype(np.int64).ravel()


class Groups:
    """The cells grouped by the distinct values of one column, ascending.

    ``sums(W)`` is each resample's weight per distinct value and ``expand(per_group)``
    hands a per-value quantity back to the cells. For ordinal and numeric kinds the cells
    are sorted by the score column before the statistics are planned, so for that column
    the groups are contiguous runs
    (a ``reduceat``, or nothing at all when every value is distinct) instead of a sparse
    product or a gather over all cells; other columns use the general path."""

    def __init__(self, values: FloatArray) -> None:
        self.values, self.inverse = dense_groups(values)
        self.n_groups = int(self.values.shape[0])
        self.contiguous = bool(np.all(np.diff(self.inverse) >= 0))
        self.distinct = self.contiguous and self.n_groups == values.shape[0]
        if self.contiguous:
            self.starts = np.flatnonzero(np.diff(self.inverse, prepend=-1)).astype(np.int64)
            self.sizes = np.diff(np.append(self.starts, values.shape[0])).astype(np.int64)
        else:
            self.matrix = indicator(self.inverse, self.n_groups)

    def sums(self, weights: FloatArray) -> FloatArray:
        """Weights summed per distinct value (resamples x values)."""
        if self.distinct:
            return weights
        if self.contiguous:
            return np.add.reduceat(weights, self.starts, axis=1)
        return sum_by(weights, self.matrix)

    def expand(self, per_group: FloatArray) -> FloatArray:
        """A per-value array (resamples x values) as a per-cell one (resamples x cells)."""
        if self.distinct:
            return per_group
        if self.contiguous:
            return np.repeat(per_group, self.sizes, axis=1)
        return per_group[:, self.inverse]


@dataclass
class BootstrapResult:
    """Point values and replicates (one per resample) of every statistic of a bootstrap."""

    point: dict[str, float]
    replicates: dict[str, FloatArray]
    timings: dict[str, float] = field(default_factory=dict)


def run_bootstrap(
    groups: Mapping[str, StatGroup], counts: FloatArray, *, n_resamples: int, seed: int
) -> BootstrapResult:
    """Evaluate every group on the data (weights = ``counts``) and on ``n_resamples``
    resamples of it (see ``resample_weights``).

    ``timings`` holds the CPU seconds spent in each group (point value plus all
    resamples; CPU rather than wall time so a benchmark on a shared machine measures this
    code, not its neighbours); drawing the resamples is timed as ``"(resampling)"``."""
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be >= 0, got {n_resamples}")
    data_weights = counts[None, :].astype(np.float64)
    point: dict[str, float] = {}
    timings: dict[str, float] = {}
    for label, group in groups.items():
        start = time.process_time()
        for name, values in group(data_weights).items():
            point[name] = float(values[0])
        timings[label] = time.process_time() - start
    parts: dict[str, list[FloatArray]] = {name: [] for name in point}
    timings["(resampling)"] = 0.0
    draws = resample_weights(counts, n_resamples, seed)
    while True:
        start = time.process_time()
        chunk = next(draws, None)
        timings["(resampling)"] += time.process_time() - start
        if chunk is None:
            break
        for label, group in groups.items():
            start = time.process_time()
            for name, values in group(chunk).items():
                parts[name].append(np.asarray(values, dtype=np.float64))
            timings[label] += time.process_time() - start
    replicates = {
        name: np.concatenate(chunks) if chunks else np.empty(0) for name, chunks in parts.items()
    }
    return BootstrapResult(point=point, replicates=replicates, timings=timings)


def safe_divide(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den`` with NaN (undefined) where ``den`` is zero, without warnings."""
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out
