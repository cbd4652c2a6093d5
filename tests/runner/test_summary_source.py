"""A sink that gives the summary's numbers back (``summary_source``): the engine keeps no
per-item columns and summarises from the sink; when that fails the run is left resumable."""

from __future__ import annotations

import asyncio

import pytest

from assay.runner.api import execute_run, plan_run
from assay.runner.engine import RunAborted
from assay.runner.options import RunOptions
from assay.runner.sink import MemorySink
from assay.summary.columns import ScoreColumnsBuilder
from assay.summary.source import MemorySource, SummarySource
from assay.types import Item, ItemResult, RunStatus, RunSummary

ITEMS = [
    Item(id=f"i{n}", input=f"q{n}", expected_output=f"q{n}" if n % 3 else "x") for n in range(30)
]


class SourceSink(MemorySink):
    """Keeps results like ``MemorySink`` and gives them back as a summary source."""

    keeps_results = False

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail
        self.served = 0
        self.finished: list[tuple[RunStatus, RunSummary]] = []

    async def summary_source(self) -> SummarySource:
        if self.fail:
            raise OSError("database went away")
        self.served += 1
        builder = ScoreColumnsBuilder()
        latencies = []
        for result in self.results:
            for scorer_id, score in result.scores.items():
                builder.add(scorer_id, result.position, result.repeat, score.status, score.score)
            if result.latency_ms is not None:
                latencies.append(result.latency_ms)
        ids = {r.position: r.item_id for r in self.results}
        return MemorySource(builder, latencies, item_id_for=ids.__getitem__)

    async def finish(self, run_id: str, status: RunStatus, summary: RunSummary) -> None:
        self.finished.append((status, summary))
        await super().finish(run_id, status, summary)


def _run(sink: MemorySink | SourceSink) -> RunSummary:
    options = RunOptions(concurrency=4, progress=False)
    plan = plan_run(lambda: ITEMS, lambda q: q, ["exact-match"], options, total_items=len(ITEMS))
    return asyncio.run(execute_run(plan, sink, options)).summary


def test_the_summary_comes_from_the_sinks_source() -> None:
    sink = SourceSink()
    memory, source = _run(MemorySink()), _run(sink)
    assert sink.served == 1
    keep = ("count", "mean", "stderr", "ci_low", "ci_high", "errors")
    for field in keep:
        assert getattr(source.scorers["exact-match"], field) == getattr(
            memory.scorers["exact-match"], field
        )
    assert source.scorers["exact-match"].mean == pytest.approx(20 / 30)
    assert source.results == memory.results == 30


def test_a_source_that_fails_leaves_the_run_interrupted_and_says_why() -> None:
    sink = SourceSink(fail=True)
    with pytest.raises(RunAborted, match="database went away"):
        _run(sink)
    ((status, summary),) = sink.finished
    assert status == "interrupted"  # resumable: a resume recomputes the summary
    assert summary.results == 30  # counted, while no score statistics are claimed
    assert summary.scorers["exact-match"].count == 0
    assert summary.scorers["exact-match"].mean is None


def test_the_accumulator_without_columns_keeps_nothing_per_result() -> None:
    """What a stored run holds per result while it goes: one byte per item position."""
    import tracemalloc

    from assay.summary.accumulator import SummaryAccumulator
    from tests.summary.test_accumulator import result, score

    n = 50_000
    results: list[ItemResult] = [
        result(f"item-{i:06d}", i, {"acc": score(float(i % 2))}, latency_ms=1.0) for i in range(n)
    ]
    acc = SummaryAccumulator(keep_ids=False, keep_columns=False)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for r in results:
            acc.add(r)
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert acc.results == n and acc.items == n
    assert used / n < 2, f"{used / n:.1f} bytes per result kept"
    with pytest.raises(ValueError, match="needs a summary source"):
        acc.summary([], threshold=None, duration_s=None)
