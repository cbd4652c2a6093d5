from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from assay.summary import bootstrap
from assay.summary.columns import ScoreColumnsBuilder
from assay.summary.stats import bootstrap_mean_ci, item_stats, summarize_run, summarize_scorer
from assay.types import Usage
from tests.analysis.factories import spec


def _ids(position: int) -> str:
    return f"item-{position}"


def _builder(values: dict[int, list[float | None]], scorer_id: str = "acc") -> ScoreColumnsBuilder:
    """``{position: [repeat0, ...]}``; None is an error, NaN is a not-scorable result."""
    b = ScoreColumnsBuilder()
    for pos, reps in values.items():
        for rep, v in enumerate(reps):
            if v is None:
                b.add(scorer_id, pos, rep, "error", None)
            elif math.isnan(v):
                b.add(scorer_id, pos, rep, "not_scorable", None)
            else:
                b.add(scorer_id, pos, rep, "ready", v)
    return b


def test_mean_stderr_min_max_match_numpy() -> None:
    values = np.random.default_rng(7).random(57)
    b = _builder({i: [float(v)] for i, v in enumerate(values)})
    s = summarize_scorer(spec(), b.columns("acc"), threshold=None, item_id_for=_ids)
    assert s.count == 57
    assert s.mean == pytest.approx(values.mean())
    assert s.stderr == pytest.approx(values.std(ddof=1) / math.sqrt(57))
    assert (s.min, s.max) == (pytest.approx(values.min()), pytest.approx(values.max()))
    assert s.pass_rate is None and s.flipped_items == [] and s.mean_spread is None
    assert s.scorer_label == "acc scorer" and s.errors == 0


def test_hand_computed_small_case() -> None:
    # 0.2, 0.4, 0.9: mean 0.5, sd sqrt(((-.3)^2 + (-.1)^2 + .4^2) / 2) = sqrt(0.13)
    b = _builder({0: [0.2], 1: [0.4], 2: [0.9]})
    s = summarize_scorer(spec(), b.columns("acc"), threshold=0.4, item_id_for=_ids)
    assert s.mean == pytest.approx(0.5)
    assert s.stderr == pytest.approx(math.sqrt(0.13) / math.sqrt(3))
    assert s.pass_rate == pytest.approx(2 / 3)  # 0.4 itself passes (>=)


def test_bootstrap_ci_contains_mean_is_deterministic_and_seed_dependent() -> None:
    values = np.random.default_rng(1).normal(0.6, 0.2, size=200)
    ci = bootstrap_mean_ci(values, n_boot=2000, seed=0)
    assert ci is not None
    low, high = ci
    assert low < values.mean() < high
    # the bootstrap CI is close to the normal approximation mean ± 1.96 se
    se = values.std(ddof=1) / math.sqrt(200)
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.15)
    assert bootstrap_mean_ci(values, n_boot=2000, seed=0) == ci
    assert bootstrap_mean_ci(values, n_boot=2000, seed=1) != ci


def test_bootstrap_matches_reference_resampling_and_chunking_does_not_change_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = np.random.default_rng(3).random(40)
    rng = np.random.default_rng(5)
    ref_means = values[rng.integers(0, 40, size=(500, 40))].mean(axis=1)
    expected = tuple(np.percentile(ref_means, [2.5, 97.5]))
    assert bootstrap_mean_ci(values, n_boot=500, seed=5) == pytest.approx(expected)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_CELLS", 7 * 40)  # 7 resamples per chunk
    assert bootstrap_mean_ci(values, n_boot=500, seed=5) == pytest.approx(expected)


def _index_resample_means(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The bootstrap by item indices, the reference the count resampling must match."""
    n = values.shape[0]
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    means: np.ndarray = values[idx].mean(axis=1)
    return means


def test_count_resampling_draws_the_same_distribution_as_index_resampling() -> None:
    # 60 values on three numbers: the count path (3 * 8 <= 60) against index resampling
    values = np.repeat([0.0, 0.5, 1.0], [30, 10, 20])
    numbers, counts = np.unique(values, return_counts=True)
    by_counts = bootstrap.count_resample_means(numbers, counts, 40_000, seed=1)
    by_index = _index_resample_means(values, 40_000, seed=2)
    # exact moments of the bootstrap mean: mean of the data, population variance / n
    for means in (by_counts, by_index):
        assert means.mean() == pytest.approx(values.mean(), abs=0.002)
        assert means.var() == pytest.approx(values.var() / 60, rel=0.03)
    # the same probability on every attainable mean (multiples of 1/120), within MC error
    grid = np.arange(0, 121)
    pmf_counts = np.bincount(np.rint(by_counts * 120).astype(int), minlength=121) / 40_000
    pmf_index = np.bincount(np.rint(by_index * 120).astype(int), minlength=121) / 40_000
    assert grid.shape == pmf_counts.shape
    assert np.abs(pmf_counts - pmf_index).max() < 0.01
    assert np.percentile(by_counts, [2.5, 97.5]) == pytest.approx(
        np.percentile(by_index, [2.5, 97.5]), abs=1 / 60
    )


def test_count_resampling_of_binary_scores_is_the_binomial() -> None:
    from scipy.stats import binom  # type: ignore[import-untyped]

    values = np.repeat([0.0, 1.0], [28, 12])  # p = 0.3, n = 40
    numbers, counts = np.unique(values, return_counts=True)
    hits = np.rint(bootstrap.count_resample_means(numbers, counts, 50_000, seed=0) * 40)
    observed = np.bincount(hits.astype(int), minlength=41) / 50_000
    assert np.abs(observed - binom.pmf(np.arange(41), 40, 0.3)).max() < 0.008


def test_bootstrap_ci_of_few_distinct_values_uses_counts_deterministically(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = (np.arange(5000) % 3 == 0).astype(np.float64)  # 0/1 scores
    numbers, counts = np.unique(values, return_counts=True)
    means = bootstrap.count_resample_means(numbers, counts, 2000, 0)
    expected = tuple(np.percentile(means, [2.5, 97.5]))
    ci = bootstrap_mean_ci(values, n_boot=2000, seed=0)
    assert ci == expected
    assert bootstrap_mean_ci(values, n_boot=2000, seed=0) == ci
    assert bootstrap_mean_ci(values, n_boot=2000, seed=1) != ci
    # within Monte Carlo error of the index bootstrap (the stream differs, not the method)
    by_index = np.percentile(_index_resample_means(values, 2000, seed=0), [2.5, 97.5])
    assert ci == pytest.approx(tuple(by_index), abs=0.004)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_MAX_CELLS", 2 * 7)  # 7 resamples per chunk
    assert bootstrap_mean_ci(values, n_boot=2000, seed=0) == ci


def test_bootstrap_picks_counts_or_indices_per_array_and_each_ci_is_its_own() -> None:
    rng = np.random.default_rng(3)
    binary = (rng.random(40) < 0.4).astype(np.float64)  # 2 numbers: counts
    scale = rng.integers(1, 6, size=40).astype(np.float64)  # 5 numbers * 8 = 40: counts
    continuous = rng.random(40)  # indices
    few = np.array([0.0, 1.0, 1.0])  # 2 * 8 > 3: indices
    arrays = [binary, continuous, scale, few, rng.random(40)]
    together = bootstrap.bootstrap_mean_cis(arrays, n_boot=300, seed=5)
    assert together == [bootstrap_mean_ci(a, n_boot=300, seed=5) for a in arrays]
    reference = np.percentile(_index_resample_means(continuous, 300, seed=5), [2.5, 97.5])
    assert together[1] == pytest.approx(tuple(reference))
    reference = np.percentile(_index_resample_means(few, 300, seed=5), [2.5, 97.5])
    assert together[3] == pytest.approx(tuple(reference))


def test_bootstrap_memory_is_bounded_for_large_n() -> None:
    values = np.random.default_rng(0).random(100_000)
    tracemalloc.start()
    try:
        ci = bootstrap_mean_ci(values, n_boot=200, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ci is not None and ci[0] < values.mean() < ci[1]
    # unchunked, the 200 x 100k index matrix alone would be 160 MB
    assert peak < 4 * bootstrap.BOOTSTRAP_MAX_CELLS * 8 + 10_000_000


def test_repeats_are_averaged_per_item_and_errors_are_not_averaged() -> None:
    nan = math.nan
    b = _builder({0: [0.2, 0.4], 1: [1.0, None], 2: [None, nan], 3: [0.0, 0.6]})
    s = summarize_scorer(spec(), b.columns("acc"), threshold=None, item_id_for=_ids)
    # per-item means: 0.3, 1.0, (none), 0.3
    assert s.count == 3
    assert s.mean == pytest.approx((0.3 + 1.0 + 0.3) / 3)
    assert (s.min, s.max) == (pytest.approx(0.3), pytest.approx(1.0))
    assert s.errors == 2 and s.not_scorable == 1
    # spread only over items with two numbers: (0.2 + 0.6) / 2
    assert s.mean_spread == pytest.approx(0.4)
    st = item_stats(b.columns("acc"))
    assert st.position.tolist() == [0, 1, 3] and st.n.tolist() == [2, 1, 2]


def test_lower_is_better_pass_rate() -> None:
    b = _builder({0: [0.1], 1: [0.2], 2: [0.9], 3: [0.5]})
    cols = b.columns("acc")
    low = summarize_scorer(spec(higher_is_better=False), cols, threshold=0.5, item_id_for=_ids)
    high = summarize_scorer(spec(), cols, threshold=0.5, item_id_for=_ids)
    assert low.pass_rate == pytest.approx(3 / 4)  # 0.1, 0.2, 0.5
    assert high.pass_rate == pytest.approx(2 / 4)  # 0.9, 0.5
    assert low.higher_is_better is False and low.threshold == 0.5


def test_pass_rate_uses_per_item_means() -> None:
    # item 0: 0.4 and 0.8 -> mean 0.6 passes at 0.5 although one repeat fails
    b = _builder({0: [0.4, 0.8], 1: [0.1, 0.2]})
    s = summarize_scorer(spec(), b.columns("acc"), threshold=0.5, item_id_for=_ids)
    assert s.pass_rate == pytest.approx(0.5)


def test_flipped_items_are_sorted_by_position_and_direction_aware() -> None:
    b = ScoreColumnsBuilder()
    # added out of order, as a concurrent runner would
    for pos, rep, v in [
        (5, 1, 0.6),
        (2, 0, 0.4),
        (5, 0, 0.4),
        (2, 1, 0.7),
        (3, 0, 0.6),
        (3, 1, 0.9),
        (4, 0, 0.1),
        (4, 1, 0.2),
    ]:
        b.add("acc", pos, rep, "ready", v)
    b.add("acc", 6, 0, "ready", 0.9)
    b.add("acc", 6, 1, "error", None)  # one number: no flip
    cols = b.columns("acc")
    s = summarize_scorer(spec(), cols, threshold=0.5, item_id_for=_ids)
    assert s.flipped_items == ["item-2", "item-5"]
    s2 = summarize_scorer(spec(higher_is_better=False), cols, threshold=0.15, item_id_for=_ids)
    assert s2.flipped_items == ["item-4"]
    assert summarize_scorer(spec(), cols, threshold=None, item_id_for=_ids).flipped_items == []


def test_small_counts_have_no_stderr_or_ci() -> None:
    one = summarize_scorer(
        spec(), _builder({0: [0.7]}).columns("acc"), threshold=0.5, item_id_for=_ids
    )
    assert one.count == 1 and one.mean == 0.7 and one.stderr is None and one.ci_low is None
    none = summarize_scorer(
        spec(), _builder({0: [None]}).columns("acc"), threshold=0.5, item_id_for=_ids
    )
    assert none.count == 0 and none.mean is None and none.pass_rate is None
    assert none.errors == 1


def test_summarize_run_latency_and_scorer_order() -> None:
    b = _builder({0: [1.0], 1: [0.0], 2: [1.0]}, scorer_id="b")
    b.add("a", 0, 0, "ready", 0.5)
    b.add("extra", 0, 0, "ready", 3.0)
    lat = [12.0, 3.0, 50.0, float("nan"), 7.0]
    s = summarize_run(
        [spec("a"), spec("b")],
        b,
        threshold=0.5,
        latencies_ms=lat,
        items=3,
        results=3,
        item_errors=1,
        repeats=1,
        duration_s=2.5,
        judge_calls=4,
        usage=Usage(input_tokens=10, output_tokens=5),
        cost_usd=0.01,
        item_id_for=_ids,
    )
    assert list(s.scorers) == ["a", "b", "extra"]
    assert s.scorers["b"].mean == pytest.approx(2 / 3) and s.scorers["b"].pass_rate == 2 / 3
    assert s.scorers["extra"].scorer_label == "extra"
    finite = np.array([12.0, 3.0, 50.0, 7.0])
    assert s.latency_ms_mean == pytest.approx(finite.mean())
    assert s.latency_ms_p50 == pytest.approx(np.percentile(finite, 50))
    assert s.latency_ms_p95 == pytest.approx(np.percentile(finite, 95))
    assert (s.items, s.results, s.item_errors, s.judge_calls) == (3, 3, 1, 4)
    assert s.usage.total_tokens == 15 and s.cost_usd == 0.01 and s.duration_s == 2.5


def test_summarize_run_without_latencies() -> None:
    s = summarize_run(
        [],
        ScoreColumnsBuilder(),
        threshold=None,
        latencies_ms=np.array([]),
        items=0,
        results=0,
        item_errors=0,
        repeats=1,
        duration_s=None,
        judge_calls=0,
        usage=Usage(),
        cost_usd=None,
        item_id_for=_ids,
    )
    assert s.latency_ms_mean is None and s.latency_ms_p95 is None and s.scorers == {}


@pytest.mark.parametrize("threshold", [None, 0.5])
def test_item_stats_of_one_number_per_item_equals_the_grouped_computation(
    threshold: float | None,
) -> None:
    from assay.summary.columns import ScoreColumns

    rng = np.random.default_rng(7)
    k = 500
    positions = rng.permutation(k * 2)[:k].astype(np.int64)  # distinct, in any order
    values = np.round(rng.random(k), 2)
    values[:5] = -0.0  # the grouped sum turns -0.0 into 0.0; the fast path must too
    status = np.where(rng.random(k) < 0.1, 2, 0).astype(np.int8)  # some errors
    values[status == 2] = np.nan

    def columns(repeat: int) -> ScoreColumns:
        return ScoreColumns(
            position=positions, repeat=np.full(k, repeat, np.int32), value=values, status=status
        )

    fast = item_stats(columns(0), threshold=threshold, higher_is_better=False)
    grouped = item_stats(columns(1), threshold=threshold, higher_is_better=False)  # general
    for name in ("position", "mean", "n", "spread", "passes"):
        a, b = getattr(fast, name), getattr(grouped, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert not np.signbit(fast.mean).any()
    # a position given twice in one repeat is still grouped (averaged), never dropped
    twice = ScoreColumns(
        position=np.array([3, 3, 1], np.int64),
        repeat=np.zeros(3, np.int32),
        value=np.array([0.0, 1.0, 0.25]),
        status=np.zeros(3, np.int8),
    )
    stats_twice = item_stats(twice)
    assert stats_twice.position.tolist() == [1, 3] and stats_twice.mean.tolist() == [0.25, 0.5]
    assert stats_twice.n.tolist() == [1, 2]
