"""Exact sums and order-statistic percentiles (``assay.summary.exact``)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.summary.exact import (
    ExactSum,
    counted_stderr,
    exact_mean,
    linear_percentile,
    sample_stderr,
)

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e200, max_value=1e200)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=300), st.integers(1, 7))
def test_the_sum_is_fsum_whatever_the_chunking(values: list[float], parts: int) -> None:
    total = ExactSum()
    for part in np.array_split(np.array(values), parts):
        total.add(part)
    assert total.value() == math.fsum(values)
    assert total.count == len(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=200))
def test_the_mean_is_the_exact_mean_rounded_once(values: list[float]) -> None:
    exact = sum((Fraction(v) for v in values), Fraction(0)) / len(values)
    assert exact_mean(np.array(values)) == float(exact)


def test_subnormals_and_large_exponents_are_exact() -> None:
    tiny = 5e-324  # the smallest subnormal
    values = np.array([1e300, tiny, -1e300, tiny, 3 * tiny])
    total = ExactSum()
    total.add(values)
    assert total.value() == 5 * tiny  # a float sum gives 3 * tiny or 0.0 depending on order
    assert float(np.sum(values)) != total.value()


def test_blocks_larger_than_one_bincount_stay_exact() -> None:
    values = np.random.default_rng(0).random(50_000) * 1e6  # several blocks of 8,192
    total = ExactSum()
    total.add(values)
    assert total.value() == math.fsum(values.tolist())


def test_counted_numbers_equal_their_repetitions() -> None:
    numbers = np.array([0.1, 0.2, 0.7])
    counts = np.array([3, 1_000_001, 17], dtype=np.int64)
    by_counts = ExactSum()
    by_counts.add_counted(numbers, counts)
    repeated = ExactSum()
    repeated.add(np.repeat(numbers, counts))
    assert by_counts.value() == repeated.value() and by_counts.count == repeated.count
    assert by_counts.mean() == repeated.mean()


def test_non_finite_numbers_are_refused_not_averaged() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        ExactSum().add(np.array([1.0, math.nan]))
    with pytest.raises(ValueError, match="non-finite"):
        ExactSum().add_counted(np.array([math.inf]), np.array([1], dtype=np.int64))
    assert ExactSum().mean() is None and exact_mean(np.empty(0)) is None


def test_stderr_from_values_and_from_their_histogram_is_the_same_number() -> None:
    rng = np.random.default_rng(4)
    values = rng.integers(1, 6, size=999).astype(np.float64) / 10
    mean = exact_mean(values)
    assert mean is not None
    numbers, counts = np.unique(values, return_counts=True)
    stderr = sample_stderr(values, mean)
    assert stderr == counted_stderr(numbers, counts, mean)
    assert stderr == pytest.approx(values.std(ddof=1) / math.sqrt(999), rel=1e-12)
    assert sample_stderr(values[:1], mean) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=120),
    st.sampled_from([0.0, 2.5, 50.0, 95.0, 97.5, 100.0, 33.3]),
)
def test_linear_percentile_is_numpy_percentile(values: list[float], q: float) -> None:
    ordered = sorted(values)
    got = linear_percentile(len(values), q, lambda i: ordered[i])
    assert got == float(np.percentile(np.array(values), q))


def test_linear_percentile_needs_numbers() -> None:
    with pytest.raises(ValueError, match="no numbers"):
        linear_percentile(0, 50.0, lambda i: 0.0)
