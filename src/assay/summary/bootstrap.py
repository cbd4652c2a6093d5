"""Percentile bootstrap CIs of a mean, drawn two ways that give the same distribution.

- **counts**, when the values take few distinct numbers (``is_discrete``: at most one per
  ``MULTINOMIAL_RATIO`` values and at most ``HISTOGRAM_MAX_NUMBERS``): a resample of n
  values drawn with replacement from numbers ``x`` occurring ``c`` times is fully described
  by how many draws fell on each number, and those counts follow ``Multinomial(n, c / n)``
  exactly. The resample's mean is ``counts @ x / n``. Only the histogram is needed, so a
  stored run's 0/1 scores are summarised without holding one number per item; 2,000
  resamples of 100,000 0/1 scores take a millisecond instead of drawing 200 million indices.
- **indices**, otherwise: ``default_rng(seed).integers(0, n, (rows, n))`` in chunks of at
  most ``BOOTSTRAP_MAX_CELLS`` values. These draws depend only on ``seed`` and the length,
  so index arrays of the same length share one draw per chunk.

They differ only in the random numbers drawn, so the same data gives a CI within Monte Carlo
error of the other way's (``tests/summary/test_stats.py`` compares the distributions).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

BOOTSTRAP_MAX_CELLS = 1 << 21
"""Resampled values held at once (~16 MB of indices): bounds bootstrap memory for large n."""

MULTINOMIAL_RATIO = 8
"""At most one distinct number per 8 values: resample counts per number, not indices (the
rule ``assay.calibration.statistics.resample`` uses for its cells)."""

HISTOGRAM_MAX_NUMBERS = 4096
"""At most this many distinct numbers for the counts method (what a streaming summary's
histogram keeps; beyond it the numbers are treated as continuous)."""


def is_discrete(numbers: int, n: int) -> bool:
    """Whether ``n`` values on ``numbers`` distinct numbers are resampled by counts."""
    return numbers * MULTINOMIAL_RATIO <= n and numbers <= HISTOGRAM_MAX_NUMBERS


def bootstrap_mean_ci(
    values: FloatArray,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean; ``None`` below two values (no spread to
    resample). Deterministic for a given ``seed``; counts or indices as the module says."""
    return bootstrap_mean_cis([values], n_boot=n_boot, seed=seed, confidence=confidence)[0]


def bootstrap_mean_cis(
    arrays: Sequence[FloatArray],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[tuple[float, float] | None]:
    """``bootstrap_mean_ci`` of several arrays, each CI exactly what it gives alone (index
    arrays of one length share their draws)."""
    out: list[tuple[float, float] | None] = [None] * len(arrays)
    by_length: dict[int, list[int]] = {}
    for k, values in enumerate(arrays):
        n = int(values.shape[0])
        if n < 2 or n_boot < 1:
            continue
        numbers, counts = np.unique(values, return_counts=True)
        if is_discrete(numbers.shape[0], n) and bool(np.isfinite(numbers).all()):
            out[k] = counts_ci(numbers, counts, n_boot=n_boot, seed=seed, confidence=confidence)
        else:
            by_length.setdefault(n, []).append(k)
    for members in by_length.values():
        cis = bootstrap_mean_cis_by_indices(
            [arrays[k] for k in members], n_boot=n_boot, seed=seed, confidence=confidence
        )
        for k, ci in zip(members, cis, strict=True):
            out[k] = ci
    return out


def indices_ci(
    values: FloatArray, *, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float] | None:
    """The index-draw CI of ``values`` (what ``bootstrap_mean_ci`` gives for continuous
    values); ``None`` below two values."""
    if int(values.shape[0]) < 2 or n_boot < 1:
        return None
    (ci,) = bootstrap_mean_cis_by_indices([values], n_boot=n_boot, seed=seed, confidence=confidence)
    return ci


def bootstrap_mean_cis_by_indices(
    arrays: Sequence[FloatArray], *, n_boot: int, seed: int, confidence: float
) -> list[tuple[float, float]]:
    """Index-draw CIs of arrays of one length (at least two values each)."""
    n = int(arrays[0].shape[0])
    rng = np.random.default_rng(seed)
    all_means = np.empty((len(arrays), n_boot), dtype=np.float64)
    rows = max(1, BOOTSTRAP_MAX_CELLS // n)
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        for j, values in enumerate(arrays):
            all_means[j, start:stop] = values[idx].mean(axis=1)
    return [percentile_ci(means, confidence) for means in all_means]


def counts_ci(
    numbers: FloatArray,
    counts: IntArray,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """The counts-draw CI of the values ``numbers`` (ascending) occurring ``counts`` times;
    ``None`` below two values."""
    if int(counts.sum()) < 2 or n_boot < 1:
        return None
    return percentile_ci(count_resample_means(numbers, counts, n_boot, seed), confidence)


def count_resample_means(
    numbers: FloatArray, counts: IntArray, n_boot: int, seed: int
) -> FloatArray:
    """Means of ``n_boot`` bootstrap resamples of the values ``numbers`` occurring
    ``counts`` times, drawn as per-number counts (the stream does not depend on chunking)."""
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    probabilities = counts / n
    means = np.empty(n_boot, dtype=np.float64)
    rows = max(1, BOOTSTRAP_MAX_CELLS // numbers.shape[0])
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        drawn = rng.multinomial(n, probabilities, size=stop - start)
        means[start:stop] = (drawn @ numbers) / n
    return means


def percentile_ci(means: FloatArray, confidence: float) -> tuple[float, float]:
    """The central ``confidence`` interval of resample means (percentile method)."""
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(low), float(high)
