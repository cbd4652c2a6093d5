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
