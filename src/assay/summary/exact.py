"""Exact sums and order-statistic percentiles: statistics that do not depend on how the
numbers arrive.

Why: a stored run's summary is computed by streaming its scores back from the database in
chunks, an in-memory run's from its columns at once, a resumed run's from two sessions'
rows. A floating-point sum depends on the order and grouping of its additions (numpy's
pairwise sum over a whole array is not what adding chunk sums gives), so the same data would
give means that differ in the last digits depending on the path. ``ExactSum`` keeps the sum
exact (a Python integer in units of 2**-1126, the finest step any sum of doubles needs) and
rounds once when read, so every path gives the correctly rounded result, bit for bit, with
memory that does not grow with the number of values. It agrees with ``math.fsum``, which
needs every value in one iterable.

``linear_percentile`` is numpy's default ("linear", Hyndman & Fan 7) percentile written over
an order-statistic accessor, so the store can answer it with ``ORDER BY … LIMIT 2 OFFSET k``
instead of loading the column, and the in-memory path uses the same arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

_UNIT_EXP = 1126
"""Sums are kept as integers in units of 2**-1126: a double is m * 2**(e - 53) with
|m| < 2**53 and e >= -1073 (frexp's exponent of the smallest subnormal), so
e - 53 + 1126 >= 0 and every double is an integer number of units."""

_BLOCK = 1 << 13
"""Values summed per float64 ``bincount`` call: the mantissa halves are below 2**27, so a
block's sums stay below 2**40 and are exact integers in float64; the block also bounds the
working arrays (about 80 bytes per value) to under 1 MB."""


class ExactSum:
    """The exact sum of float64 numbers added in any order and grouping; ``value`` and
    ``mean`` round once. Non-finite numbers are refused (a NaN or inf in a summary is a bug
    upstream, not something to average)."""

    __slots__ = ("_units", "count")

    def __init__(self) -> None:
        self.count = 0
        self._units = 0

    def add(self, values: FloatArray) -> None:
        """Add every number of ``values`` (any shape, float64)."""
        flat = np.ascontiguousarray(values, dtype=np.float64).ravel()
        if flat.shape[0] == 0:
            return
        if not bool(np.isfinite(flat).all()):
            raise ValueError("ExactSum.add: non-finite number")
        for start in range(0, flat.shape[0], _BLOCK):
            self._add_block(flat[start : start + _BLOCK])
        self.count += int(flat.shape[0])

    def _add_block(self, block: FloatArray) -> None:
        fraction, exponent = np.frexp(block)
        mantissa = (fraction * 2.0**53).astype(np.int64)  # exact: |fraction| < 1
        high = (mantissa >> 26).astype(np.float64)  # mantissa = high * 2**26 + low
        low = (mantissa & ((1 << 26) - 1)).astype(np.float64)
        exponents, groups = np.unique(exponent, return_inverse=True)
        high_sums = np.bincount(groups, weights=high, minlength=exponents.shape[0])
        low_sums = np.bincount(groups, weights=low, minlength=exponents.shape[0])
        units = self._units
        for exp, hi, lo in zip(
            exponents.tolist(), high_sums.tolist(), low_sums.tolist(), strict=True
        ):
            units += ((int(hi) << 26) + int(lo)) << (exp - 53 + _UNIT_EXP)
        self._units = units

    def add_counted(self, numbers: FloatArray, counts: npt.NDArray[np.int64]) -> None:
        """Add each of ``numbers`` as many times as ``counts`` says (a histogram), exactly."""
        units = self._units
        for number, count in zip(numbers.tolist(), counts.tolist(), strict=True):
            if not math.isfinite(number):
                raise ValueError("ExactSum.add_counted: non-finite number")
            fraction, exp = math.frexp(number)
            units += (int(fraction * 2.0**53) * int(count)) << (exp - 53 + _UNIT_EXP)
            self.count += int(count)
        self._units = units

    def value(self) -> float:
        """The sum, correctly rounded (``±inf`` past the largest double)."""
        return _divide(self._units, 1 << _UNIT_EXP)

    def mean(self) -> float | None:
        """The sum over the count, rounded once; ``None`` without numbers."""
        if self.count == 0:
            return None
        return _divide(self._units, self.count << _UNIT_EXP)


def _divide(numerator: int, denominator: int) -> float:
    """``numerator / denominator`` correctly rounded (Python's int division is), with
    overflow as an infinity of the right sign."""
    try:
        return numerator / denominator
    except OverflowError:
        return math.inf if numerator > 0 else -math.inf


def exact_mean(values: FloatArray) -> float | None:
    """The correctly rounded mean of ``values``; ``None`` when empty."""
    total = ExactSum()
    total.add(values)
    return total.mean()


def sample_stderr(values: FloatArray, mean: float) -> float | None:
    """Standard error of the mean: sqrt(Σ (x - mean)² / (n - 1)) / sqrt(n), numpy's
    ``std(ddof=1) / sqrt(n)`` with the sum of squares exact; ``None`` below two values."""
    return _stderr(values, None, mean)


def counted_stderr(numbers: FloatArray, counts: npt.NDArray[np.int64], mean: float) -> float | None:
    """``sample_stderr`` of the values ``numbers`` occurring ``counts`` times: the same
    number, from the histogram (each squared deviation is rounded as ``sample_stderr``
    rounds it, then added ``count`` times exactly)."""
    return _stderr(numbers, counts, mean)


def _stderr(numbers: FloatArray, counts: npt.NDArray[np.int64] | None, mean: float) -> float | None:
    n = int(numbers.shape[0]) if counts is None else int(counts.sum())
    if n < 2:
        return None
    with np.errstate(over="ignore"):
        deviations = numbers - mean
        squared = deviations * deviations
    if not bool(np.isfinite(squared).all()):
        return math.inf  # numbers near the largest double: the spread overflows
    squares = ExactSum()
    if counts is None:
        squares.add(squared)
    else:
        squares.add_counted(squared, counts)
    return float(np.sqrt(squares.value() / (n - 1)) / np.sqrt(n))


def linear_percentile(n: int, q: float, kth: Callable[[int], float]) -> float:
    """The ``q``-th percentile (0–100) of ``n`` numbers by numpy's default method: the
    virtual index ``(n - 1) * q / 100`` between two order statistics, interpolated the way
    numpy's ``_lerp`` does (from the nearer end). ``kth(i)`` is the i-th smallest (0-based).
    """
    if n < 1:
        raise ValueError("linear_percentile of no numbers")
    virtual = (n - 1) * (q / 100.0)
    below = min(math.floor(virtual), n - 1)
    t = virtual - below
    a = kth(below)
    if below + 1 >= n or t == 0.0:
        return float(a)
    b = kth(below + 1)
    diff = b - a
    if t >= 0.5:
        return float(b - diff * (1.0 - t))
    return float(a + diff * t)
