"""One scorer's statistics from its scores streamed in (position, repeat) order.

Why streaming: a stored run of 100,000 items should not hold its scores in memory to
summarise them; the store streams them back in chunks and the statistics are gathered chunk
by chunk. The in-memory path (``run_evals``) sorts its columns and goes through the same
code, so a run gives the same summary, bit for bit, whether it was kept in memory, stored,
or resumed across sessions.

What is kept while streaming, whatever the number of items: counts, the exact sum of the
item means (``ExactSum``), min, max, the pass count, the exact sum of spreads, the flipped
positions (part of the summary itself), and a histogram of the item means while it has at
most ``HISTOGRAM_MAX_NUMBERS`` distinct numbers. Discrete scores (0/1, a 1–5 scale) are
summarised from that histogram alone: standard error and the bootstrap CI (per-number
counts, ``bootstrap_mean_cis``) need nothing per item. Continuous scores need every item
mean for the bootstrap's index draws; a second pass collects them (8 bytes per item), and
so does a declared aggregation over the item means.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from assay.summary.bootstrap import HISTOGRAM_MAX_NUMBERS, counts_ci, indices_ci, is_discrete
from assay.summary.columns import ERROR, NOT_SCORABLE, READY, ScoreColumns
from assay.summary.exact import ExactSum, counted_stderr, sample_stderr

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Chunks = Callable[[], Iterable[ScoreColumns]]
"""Streams one scorer's (or named value's) results in (position, repeat) order, in chunks
of any size; called once per pass, so a source must be able to stream them again."""


def sorted_columns(cols: ScoreColumns) -> ScoreColumns:
    """``cols`` in (position, repeat) order (unchanged order among equal keys): ``cols``
    itself when already in order, else a copy."""
    if len(cols) < 2:
        return cols
    position, repeat = cols.position, cols.repeat
    later = position[1:] > position[:-1]
    same = position[1:] == position[:-1]
    in_order = bool((later | (same & (repeat[1:] >= repeat[:-1]))).all())
    del later, same
    if in_order:
        return cols
    order = np.lexsort((repeat, position))
    return ScoreColumns(
        position=position[order],
        repeat=repeat[order],
        value=cols.value[order],
        status=cols.status[order],
    )


def whole_items(chunks: Iterable[ScoreColumns]) -> Iterator[ScoreColumns]:
    """The same rows re-cut so that no item's repeats straddle two chunks (the rows of the
    last position of a chunk wait for the next one), so every item is grouped at once
    whatever chunk sizes the source chose."""
    carry: ScoreColumns | None = None
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        if carry is not None:
            chunk = _concat(carry, chunk)
        cut = int(np.searchsorted(chunk.position, chunk.position[-1], side="left"))
        carry = _slice(chunk, cut, len(chunk))
        if cut:
            yield _slice(chunk, 0, cut)
    if carry is not None and len(carry):
        yield carry


@dataclass(frozen=True, eq=False)
class ItemGroups:
    """Per-item aggregates of one chunk of whole items (``n``/``spread`` are ``None`` when
    every item has one number: the common single-repeat case, without the arrays)."""

    position: IntArray
    mean: FloatArray
    n: IntArray | None
    spread: FloatArray | None
    passes: IntArray | None
    errors: int
    not_scorable: int


def group_items(
    cols: ScoreColumns, *, threshold: float | None, higher_is_better: bool
) -> ItemGroups:
    """Group one chunk of whole items (sorted by position, repeat) over its ready repeats:
    mean (summed in repeat order, ``+ 0.0`` so ``-0.0`` reads ``0.0``), count, max-min and
    the repeats on the good side of ``threshold``."""
    status = cols.status
    errors = int(np.count_nonzero(status == ERROR))
    not_scorable = int(np.count_nonzero(status == NOT_SCORABLE))
    ready = status == READY
    positions = cols.position[ready]
    values = cols.value[ready]
    size = int(positions.shape[0])
    if size < 2 or bool((positions[1:] != positions[:-1]).all()):
        mean = values + 0.0
        passes = None
        if threshold is not None:
            passes = _passing(mean, threshold, higher_is_better).astype(np.int64)
        return ItemGroups(positions, mean, None, None, passes, errors, not_scorable)
    starts = np.flatnonzero(np.concatenate(([True], positions[1:] != positions[:-1])))
    n = np.diff(np.append(starts, size)).astype(np.int64)
    mean = np.add.reduceat(values, starts) / n
    mean += 0.0
    spread = np.maximum.reduceat(values, starts) - np.minimum.reduceat(values, starts)
    passes = None
    if threshold is not None:
        verdicts = _passing(values, threshold, higher_is_better).astype(np.int64)
        passes = np.add.reduceat(verdicts, starts)
    return ItemGroups(positions[starts], mean, n, spread, passes, errors, not_scorable)


@dataclass
class ScorerNumbers:
    """What a scorer summary needs from its scores (see ``scorer_numbers``)."""

    count: int = 0
    mean: float | None = None
    stderr: float | None = None
    ci: tuple[float, float] | None = None
    min: float | None = None
    max: float | None = None
    errors: int = 0
    not_scorable: int = 0
    passing: int = 0
    flipped_positions: list[int] = field(default_factory=list)
    mean_spread: float | None = None
    means: FloatArray | None = None
    """Every item mean in position order, only when asked for (``keep_means``)."""


def scorer_numbers(
    chunks: Chunks,
    *,
    threshold: float | None = None,
    higher_is_better: bool = True,
    keep_means: bool = False,
    n_boot: int = 2000,
    seed: int = 0,
) -> ScorerNumbers:
    """Count, mean, stderr, bootstrap CI, min/max, errors, passes and flips of the item means
    streamed by ``chunks`` (one pass; a second one only when the scores are continuous or
    ``keep_means`` asks for every item mean)."""
    out = ScorerNumbers()
    total, spreads = ExactSum(), ExactSum()
    low, high = math.inf, -math.inf
    histogram: tuple[FloatArray, IntArray] | None = (np.empty(0), np.empty(0, dtype=np.int64))
    for chunk in whole_items(chunks()):
        groups = group_items(chunk, threshold=threshold, higher_is_better=higher_is_better)
        out.errors += groups.errors
        out.not_scorable += groups.not_scorable
        mean = groups.mean
        if mean.shape[0] == 0:
            continue
        out.count += int(mean.shape[0])
        total.add(mean)
        low, high = min(low, float(mean.min())), max(high, float(mean.max()))
        if threshold is not None:
            out.passing += int(np.count_nonzero(_passing(mean, threshold, higher_is_better)))
            if groups.n is not None and groups.passes is not None:
                flips = (groups.passes > 0) & (groups.passes < groups.n)
                out.flipped_positions.extend(groups.position[flips].tolist())
        if groups.n is not None and groups.spread is not None:
            spreads.add(groups.spread[groups.n >= 2])
        if histogram is not None:
            histogram = _merge_histogram(histogram, mean)
    if out.count == 0:
        return out
    out.mean = total.mean()
    out.min, out.max = low, high
    out.mean_spread = spreads.mean()
    assert out.mean is not None
    discrete = histogram is not None and is_discrete(histogram[0].shape[0], out.count)
    if keep_means or not discrete:
        out.means = item_means(chunks)
    if discrete:
        assert histogram is not None
        numbers, counts = histogram
        out.stderr = counted_stderr(numbers, counts, out.mean)
        out.ci = counts_ci(numbers, counts, n_boot=n_boot, seed=seed)
    else:
        assert out.means is not None
        out.stderr = sample_stderr(out.means, out.mean)
        out.ci = indices_ci(out.means, n_boot=n_boot, seed=seed)
    if not keep_means:
        out.means = None
    return out


def item_means(chunks: Chunks) -> FloatArray:
    """Every item mean (over its ready repeats) in position order."""
    parts = [
        group_items(chunk, threshold=None, higher_is_better=True).mean
        for chunk in whole_items(chunks())
    ]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.float64)


def item_counts(
    chunks: Chunks, *, threshold: float, higher_is_better: bool
) -> tuple[IntArray, IntArray]:
    """Per item (position order, items with a number): ready repeats and repeats on the good
    side of ``threshold`` (what a repeats aggregation such as pass@k needs)."""
    ns: list[IntArray] = []
    passes: list[IntArray] = []
    for chunk in whole_items(chunks()):
        groups = group_items(chunk, threshold=threshold, higher_is_better=higher_is_better)
        k = int(groups.mean.shape[0])
        ns.append(groups.n if groups.n is not None else np.ones(k, dtype=np.int64))
        assert groups.passes is not None
        passes.append(groups.passes)
    if not ns:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(ns), np.concatenate(passes)


# ---------------------------------------------------------------------- helpers
def _passing(values: FloatArray, threshold: float, higher_is_better: bool) -> npt.NDArray[np.bool_]:
    return values >= threshold if higher_is_better else values <= threshold


def _merge_histogram(
    histogram: tuple[FloatArray, IntArray], mean: FloatArray
) -> tuple[FloatArray, IntArray] | None:
    """``histogram`` plus the numbers of ``mean``; ``None`` once it holds more than
    ``HISTOGRAM_MAX_NUMBERS`` distinct numbers."""
    numbers, counts = np.unique(mean, return_counts=True)
    if numbers.shape[0] > HISTOGRAM_MAX_NUMBERS:
        return None
    if histogram[0].shape[0]:
        merged, inverse = np.unique(np.concatenate((histogram[0], numbers)), return_inverse=True)
        weights = np.concatenate((histogram[1], counts)).astype(np.float64)
        counts = np.bincount(inverse, weights=weights).astype(np.int64)
        numbers = merged
    if numbers.shape[0] > HISTOGRAM_MAX_NUMBERS:
        return None
    return numbers, counts


def _concat(a: ScoreColumns, b: ScoreColumns) -> ScoreColumns:
    return ScoreColumns(
        position=np.concatenate((a.position, b.position)),
        repeat=np.concatenate((a.repeat, b.repeat)),
        value=np.concatenate((a.value, b.value)),
        status=np.concatenate((a.status, b.status)),
    )


def _slice(cols: ScoreColumns, start: int, stop: int) -> ScoreColumns:
    return ScoreColumns(
        position=cols.position[start:stop],
        repeat=cols.repeat[start:stop],
        value=cols.value[start:stop],
        status=cols.status[start:stop],
    )
