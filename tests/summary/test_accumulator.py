from __future__ import annotations

import pytest

from assay.summary.accumulator import ItemIdTable, SummaryAccumulator
from assay.summary.columns import ScoreColumnsBuilder
from assay.summary.stats import summarize_scorer
from tests.analysis.factories import judge_call, result, score, spec


def _results() -> list:  # type: ignore[type-arg]
    return [
        result("q-1", 0, {"acc": score(1.0, judge=[judge_call(10, 2, 0.001)])}, latency_ms=5.0),
        result("q-2", 1, {"acc": score(0.0)}, latency_ms=15.0),
        result("q-3", 2, {}, error="boom", latency_ms=1.0),
        result(
            "q-1", 0, {"acc": score(0.0, judge=[judge_call(4, 1, None)])}, repeat=1, latency_ms=None
        ),
        result("q-2", 1, {"acc": score(None)}, repeat=1, latency_ms=25.0),
    ]


def test_accumulator_summary_matches_direct_statistics() -> None:
    acc = SummaryAccumulator()
    for r in _results():
        acc.add(r)
    s = acc.summary([spec()], threshold=0.5, duration_s=3.0)
    assert (s.items, s.results, s.item_errors, s.repeats) == (3, 5, 1, 2)
    assert s.judge_calls == 2
    assert s.usage.input_tokens == 14 and s.usage.output_tokens == 3
    assert s.cost_usd == pytest.approx(0.001)
    assert s.latency_ms_mean == pytest.approx((5 + 15 + 1 + 25) / 4)
    acc_s = s.scorers["acc"]
    # q-1: mean(1, 0) = 0.5, q-2: 0.0 (the error repeat is not averaged)
    assert acc_s.count == 2 and acc_s.mean == pytest.approx(0.25) and acc_s.errors == 1
    assert acc_s.flipped_items == ["q-1"]  # ids come from the accumulator's own table

    direct = ScoreColumnsBuilder()
    for r in _results():
        for sid, sc in r.scores.items():
            direct.add(sid, r.position, r.repeat, sc.status, sc.score)
    expected = summarize_scorer(
        spec(), direct.columns("acc"), threshold=0.5, item_id_for=lambda p: f"q-{p + 1}"
    )
    assert acc_s == expected


def test_accumulator_without_cost_or_judges() -> None:
    acc = SummaryAccumulator()
    acc.add(result("a", 0, {"acc": score(1.0)}))
    s = acc.summary([spec()], threshold=None, duration_s=None, repeats=3)
    assert s.cost_usd is None and s.judge_calls == 0 and s.repeats == 3
    assert s.scorers["acc"].pass_rate is None


def test_item_id_table_lookup() -> None:
    t = ItemIdTable()
    for pos, item_id in [(9, "nine"), (2, "zwei ✓"), (9, "nine"), (0, "")]:
        t.add(pos, item_id)
    lookup = t.lookup()
    assert [lookup(p) for p in (0, 2, 9)] == ["", "zwei ✓", "nine"]
    assert t.distinct_positions() == 3
    with pytest.raises(KeyError):
        lookup(3)
    with pytest.raises(KeyError):
        lookup(100)


def test_accumulator_keeps_no_results() -> None:
    import tracemalloc

    acc = SummaryAccumulator()
    n = 20_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            acc.add(result(f"item-{i:06d}", i, {"acc": score(i % 2)}, output="x" * 200))
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # a retained ItemResult with its 200-char output alone would be well over 500 bytes
    assert used / n < 100, f"{used / n:.0f} bytes per result"
    assert acc.items == n


def test_without_ids_the_accumulator_keeps_about_thirty_bytes_per_result() -> None:
    """What a stored run's summary holds per result while the run goes on: latency (8),
    one byte per position, and the score's 21 bytes (position, repeat, value, status) — no
    item id (with ids it was ~52 bytes per result here)."""
    import tracemalloc

    acc = SummaryAccumulator(keep_ids=False)
    n = 50_000
    results = [
        result(f"item-{i:06d}", i, {"acc": score(float(i % 2))}, latency_ms=1.0) for i in range(n)
    ]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for r in results:
            acc.add(r)
        used = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.reset_peak()
        summary = acc.summary([spec()], threshold=0.5, duration_s=None, item_id_for=str)
        transient = tracemalloc.get_traced_memory()[1] - before - used
    finally:
        tracemalloc.stop()
    assert acc.items == n and summary.scorers["acc"].count == n
    assert summary.scorers["acc"].pass_rate == 0.5
    assert used / n < 34, f"{used / n:.1f} bytes per result kept"
    # the summary's own arrays at the end (~160 bytes per result before the one-number-per-
    # item path and the latencies-first order)
    assert transient / n < 90, f"{transient / n:.1f} bytes per result at the summary"


def test_without_ids_the_summary_asks_for_flipped_ids_and_needs_a_way_to_find_them() -> None:
    acc = SummaryAccumulator(keep_ids=False)
    for r in _results():
        acc.add(r)
    asked: list[int] = []

    def item_id_for(position: int) -> str:
        asked.append(position)
        return f"q-{position + 1}"

    s = acc.summary([spec()], threshold=0.5, duration_s=None, item_id_for=item_id_for)
    assert s.scorers["acc"].flipped_items == ["q-1"] and asked == [0]
    assert s.items == 3
    with pytest.raises(ValueError, match="needs item_id_for"):
        acc.summary([spec()], threshold=0.5, duration_s=None)
