from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from assay.summary import stats
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
    monkeypatch.setattr(stats, "BOOTSTRAP_MAX_CELLS", 7 * 40)  # 7 resamples per chunk
    assert bootstrap_mean_ci(values, n_boot=500, seed=5) == pytest.approx(expected)


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
    assert peak < 4 * stats.BOOTSTRAP_MAX_CELLS * 8 + 10_000_000


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
