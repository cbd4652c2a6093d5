"""A stored run's summary from its rows (``StoredSummarySource``), on both backends: the same
summary, bit for bit, as the in-memory accumulator gives for the same results."""

from __future__ import annotations

import numpy as np
import pytest

from assay.store import Store
from assay.summary.accumulator import SummaryAccumulator
from assay.types import (
    ItemResult,
    RunInfo,
    RunSummary,
    ScoreResult,
    ScorerSpec,
    TargetError,
    TargetSpec,
    Usage,
)
from tests.store.factories import error_score, item_result, not_scorable, ready_score

SPECS = [
    ScorerSpec(id="judge", label="Judge", threshold=0.5, aggregations=("mean", "median", "pass@1")),
    ScorerSpec(id="rouge", label="Rouge"),
]


def _score(scorer_id: str, value: float, values: dict[str, float] | None = None) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id,
        call_id=f"{scorer_id}-{value}",
        status="ready",
        score=value,
        values=values or {},
    )


def _results(n: int, repeats: int, seed: int) -> list[ItemResult]:
    rng = np.random.default_rng(seed)
    out = []
    for position in range(n):
        for repeat in range(repeats):
            judge = float(rng.random())
            roll = rng.random()
            scores = {
                "judge": (
                    error_score("judge")
                    if roll < 0.05
                    else not_scorable("judge")
                    if roll < 0.08
                    else _score("judge", judge)
                ),
                "rouge": _score(
                    "rouge",
                    float(rng.integers(0, 5)) / 4,
                    {"rouge1": float(rng.random()), "rouge2": float(rng.integers(0, 3))},
                ),
            }
            result = item_result(f"i{position}", position, repeat, scores=scores)
            out.append(result.model_copy(update={"latency_ms": float(rng.random() * 100)}))
    order = rng.permutation(len(out))  # the order results finished in
    return [out[i] for i in order]


def _in_memory(results: list[ItemResult], repeats: int) -> RunSummary:
    acc = SummaryAccumulator(SPECS)
    for result in results:
        acc.add(result)
    return acc.summary(SPECS, threshold=None, duration_s=None, repeats=repeats)


def _from_store(store: Store, run_id: str, results: list[ItemResult], repeats: int) -> RunSummary:
    acc = SummaryAccumulator(SPECS, keep_ids=False, keep_columns=False)
    for result in results:
        acc.add(result)
    return acc.summary(
        SPECS,
        threshold=None,
        duration_s=None,
        repeats=repeats,
        source=store.runs.summary_source(run_id),
    )


@pytest.mark.parametrize("repeats", [1, 3])
def test_the_stored_summary_is_the_in_memory_summary(store: Store, repeats: int) -> None:
    info = RunInfo(
        id=f"run-{repeats}", target=TargetSpec(kind="callable", label="x"), scorers=SPECS
    )
    store.runs.create(info)
    results = _results(1500 if repeats == 1 else 400, repeats, seed=repeats)
    for start in range(0, len(results), 700):
        store.runs.write_results(info.id, results[start : start + 700])
    source = store.runs.summary_source(info.id)
    source.CHUNK = 97  # type: ignore[misc]  # pages smaller than an item's repeats now and then
    # what the store itself says (a run's summary takes these from what it saw go by)
    assert source.scorer_ids() == ["judge", "rouge"]
    assert set(source.value_keys("rouge")) == {"rouge1", "rouge2"}
    assert source.value_keys("judge") == []

    expected = _in_memory(results, repeats)
    stored = _from_store(store, info.id, results, repeats)
    assert stored == expected
    judge = stored.scorers["judge"]
    assert judge.errors > 0 and judge.not_scorable > 0 and judge.ci_low is not None
    assert set(stored.scorers["rouge"].values) == {"rouge1", "rouge2"}
    assert stored.latency_ms_p95 is not None
    if repeats > 1:
        assert judge.flipped_items and judge.mean_spread is not None
    # the page size does not change a number either
    small = SummaryAccumulator(SPECS, keep_ids=False, keep_columns=False)
    for result in results:
        small.add(result)
    assert (
        small.summary(SPECS, threshold=None, duration_s=None, repeats=repeats, source=source)
        == expected
    )


def test_a_run_without_latencies_or_scores(store: Store) -> None:
    info = RunInfo(id="run-empty", target=TargetSpec(kind="callable", label="x"), scorers=SPECS)
    store.runs.create(info)
    result = item_result("i0", 0).model_copy(update={"latency_ms": None})
    store.runs.write_results(info.id, [result])
    source = store.runs.summary_source(info.id)
    assert source.latency_stats() == (None, None, None)
    assert source.scorer_ids() == []
    summary = _from_store(store, info.id, [result], 1)
    assert summary.scorers["judge"].count == 0 and summary.scorers["judge"].mean is None


def test_completed_units_stream_in_order_across_pages(store: Store) -> None:
    info = RunInfo(id="run-units", target=TargetSpec(kind="callable", label="x"), scorers=SPECS)
    store.runs.create(info)
    results = _results(60, 2, seed=7)
    store.runs.write_results(info.id, results)
    store.runs.CHUNK = 2  # type: ignore[misc]  # pages of 16 units
    units = list(store.runs.completed_units(info.id))
    assert units == sorted((r.position, r.repeat, r.item_id) for r in results)
    assert store.runs.completed_count(info.id) == len(results) == 120


def test_counts_from_the_store_are_the_accumulators(store: Store) -> None:
    """``counts()`` (aggregate queries: what a Ray run's summary counts with) gives what
    the accumulator counts as the same results go by: items over repeats, item errors,
    judge calls of every score status with their tokens and cost, the target's usage and
    cost (only some results report them), and nothing of another run."""
    info = RunInfo(id="run-counts", target=TargetSpec(kind="callable", label="x"), scorers=SPECS)
    other = RunInfo(id="run-other", target=TargetSpec(kind="callable", label="x"), scorers=SPECS)
    store.runs.create(info)
    store.runs.create(other)
    results = []
    for position in range(40):
        for repeat in range(2):
            scores = {
                "judge": error_score("judge")
                if position % 9 == 4
                else ready_score("judge", 0.5, calls=position % 3),
                "rouge": _score("rouge", 0.25),
            }
            failed = (
                TargetError(message="down", kind="RuntimeError") if position % 11 == 5 else None
            )
            result = item_result(f"i{position}", position, repeat, scores=scores, error=failed)
            if position % 4 == 1:  # a target that reports usage and cost
                usage = Usage(input_tokens=position, output_tokens=2, cached_input_tokens=1)
                result = result.model_copy(update={"usage": usage, "cost_usd": 0.001 * position})
            results.append(result)
    store.runs.write_results(info.id, results[:50])
    store.runs.write_results(info.id, results[50:])
    store.runs.write_results(other.id, results[:10])  # must not be counted

    acc = SummaryAccumulator(SPECS, keep_ids=False, keep_columns=False)
    for result in results:
        acc.add(result)
    counts = store.runs.summary_source(info.id).counts()
    assert (counts.items, counts.results, counts.item_errors) == (40, 80, acc.item_errors)
    assert counts.item_errors == 8 and counts.judge_calls == acc.judge_calls > 0
    assert counts.usage == acc.usage and counts.usage.reasoning_tokens is not None
    assert counts.cost_usd == pytest.approx(acc.cost_usd)
    assert counts.target_usage == acc.target_usage and counts.target_usage.input_tokens > 0
    assert counts.target_cost_usd == pytest.approx(acc.target_cost_usd)


def test_counts_of_a_run_without_results(store: Store) -> None:
    info = RunInfo(id="run-none", target=TargetSpec(kind="callable", label="x"), scorers=SPECS)
    store.runs.create(info)
    counts = store.runs.summary_source(info.id).counts()
    assert (counts.items, counts.results, counts.item_errors, counts.judge_calls) == (0, 0, 0, 0)
    assert counts.usage == Usage() and counts.cost_usd is None
    assert counts.target_usage == Usage() and counts.target_cost_usd is None
