"""StoreSink: the runner's results persisted in batches, with backpressure and loud errors."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Sequence

import pytest
import sqlalchemy as sa

from assay.runner.sink import ResultSink
from assay.store import Store, StoreSink, StoreWriteError
from assay.store.results_codec import result_rows
from assay.store.tables import item_results, item_scores, judge_calls, scores
from assay.types import ItemResult, RunInfo, RunSummary, TargetSpec
from tests.store.factories import item_result, ready_score
from tests.store.test_result_inserts import _raw, _varied_results
from tests.store.test_runs import run_info


def info(run_id: str = "sink-run") -> RunInfo:
    return RunInfo(id=run_id, target=TargetSpec(kind="callable", label="app:f"), total_items=50)


async def test_end_to_end_and_resume(store: Store) -> None:
    sink: ResultSink = StoreSink(store, batch_size=16)
    results = [
        item_result(f"i{n}", n, scores={"exact": ready_score("exact", n % 2)}) for n in range(50)
    ]
    await sink.start(info(), resumed=False)
    assert store.runs.get("sink-run").status == "running"
    for result in results[:30]:
        await sink.write(result)
    await sink.finish("sink-run", "interrupted", RunSummary(results=30))
    assert store.runs.get("sink-run").status == "interrupted"
    assert len(store.runs.completed_keys("sink-run")) == 30

    resumed = StoreSink(store, batch_size=16)
    await resumed.start(info(), resumed=True)
    assert store.runs.get("sink-run").status == "running"
    done = store.runs.completed_keys("sink-run")
    for result in results:
        if (result.item_id, result.repeat) not in done:
            await resumed.write(result)
    summary = RunSummary(items=50, results=50)
    await resumed.finish("sink-run", "completed", summary)
    record = store.runs.get("sink-run")
    assert (record.status, record.summary, record.completed_results) == ("completed", summary, 50)
    assert list(store.runs.results("sink-run")) == results
    with pytest.raises(RuntimeError, match="after finish"):  # never a silently lost result
        await resumed.write(results[0])


async def test_start_keeps_a_run_created_with_inline_items(store: Store) -> None:
    store.runs.create(info("pre"), [{"id": "a", "input": "x"}])
    sink = StoreSink(store)
    await sink.start(info("pre"), resumed=False)
    await sink.finish("pre", "completed", RunSummary())
    assert [item.id for item in store.runs.inline_items("pre")] == ["a"]
    assert store.runs.get("pre").status == "completed"


class _GatedRuns:
    """Wraps ``store.runs.write_results`` so the test decides when a batch may commit."""

    def __init__(self, store: Store) -> None:
        self.gate = threading.Event()
        self.calls = 0
        self._write = store.runs.write_results

    def __call__(self, run_id: str, results: Sequence[ItemResult]) -> None:
        self.gate.wait(timeout=30)
        self.calls += 1
        self._write(run_id, results)


async def test_backpressure_bounds_the_queue(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    gated = _GatedRuns(store)
    monkeypatch.setattr(store.runs, "write_results", gated)
    sink = StoreSink(store, batch_size=4, max_pending=8)
    await sink.start(info(), resumed=False)
    for n in range(8):  # fills every slot; the writer is blocked on the gate
        await sink.write(item_result(f"i{n}", n))
    blocked = asyncio.ensure_future(sink.write(item_result("i8", 8)))
    await asyncio.sleep(0.3)
    assert not blocked.done()  # the 9th result waits instead of growing the queue
    gated.gate.set()
    await asyncio.wait_for(blocked, timeout=10)
    await sink.finish("sink-run", "completed", RunSummary())
    assert len(store.runs.completed_keys("sink-run")) == 9
    assert gated.calls >= 3  # batches of at most 4


async def test_by_default_at_most_two_batches_wait_for_the_writer(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default bound is what keeps a long stored run's memory flat: 1,000 pending
    results (two batches of 500), not 5,000 (~6 MiB of results, which a 100k-item run
    filled and a 10k-item one did not)."""
    gated = _GatedRuns(store)
    monkeypatch.setattr(store.runs, "write_results", gated)
    sink = StoreSink(store)
    await sink.start(info(), resumed=False)
    for n in range(1000):
        await sink.write(item_result(f"i{n}", n))
    blocked = asyncio.ensure_future(sink.write(item_result("i1000", 1000)))
    await asyncio.sleep(0.3)
    assert not blocked.done()
    gated.gate.set()
    await asyncio.wait_for(blocked, timeout=10)
    await sink.finish("sink-run", "completed", RunSummary())
    assert len(store.runs.completed_keys("sink-run")) == 1001


async def test_writer_errors_surface_on_the_next_write_and_on_finish(store: Store) -> None:
    sink = StoreSink(store, batch_size=1, max_delay_s=0)
    await sink.start(info(), resumed=False)
    await sink.write(item_result("a", 0))
    await sink.write(item_result("a", 0))  # same (item, repeat): the database refuses it
    with pytest.raises(StoreWriteError, match="duplicate results"):
        await sink.flush()
    with pytest.raises(StoreWriteError, match="'sink-run'"):
        await sink.write(item_result("b", 1))
    with pytest.raises(StoreWriteError) as caught:
        await sink.finish("sink-run", "completed", RunSummary())
    assert "DuplicateResultError" in type(caught.value.__cause__).__name__
    assert store.runs.get("sink-run").status == "interrupted"  # resumable, not "completed"
    assert store.runs.completed_keys("sink-run") == {("a", 0)}


async def test_many_results_are_all_persisted(store: Store) -> None:
    """6,000 results through the bounded queue (several times its bound) all arrive, in one
    run row with its count. Its speed is measured by ``benchmarks/runner_overhead.py``
    (``run_stored`` row), not asserted here: a timed test fails on a busy machine."""
    n = 6000
    results = [
        item_result(f"i{k}", k, scores={"exact": ready_score("exact", 1.0)}) for k in range(n)
    ]
    sink = StoreSink(store)
    await sink.start(info(), resumed=False)
    for result in results:
        await sink.write(result)
    await sink.finish("sink-run", "completed", RunSummary())
    assert store.runs.get("sink-run").completed_results == n
    assert len(store.runs.completed_keys("sink-run")) == n


async def test_a_cancelled_flush_leaves_the_writer_alive(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A waiter cancelled while the writer commits (a run's Cancel during a flush) once
    killed the writer thread (``InvalidStateError`` on the cancelled future), so ``finish``
    waited for ever. The writer is held at a gate until the flush is cancelled."""
    gate = threading.Event()
    write = store.runs.write_results

    def gated(run_id: str, batch: Sequence[ItemResult]) -> None:
        assert gate.wait(10), "the test never opened the gate"
        write(run_id, batch)

    monkeypatch.setattr(store.runs, "write_results", gated)
    sink = StoreSink(store, batch_size=4, max_delay_s=0.01)
    await sink.start(info(), resumed=False)
    for n in range(3):
        await sink.write(item_result(f"i{n}", n))
    waiting = asyncio.create_task(sink.flush())
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    gate.set()
    await sink.write(item_result("i3", 3))
    await asyncio.wait_for(sink.finish("sink-run", "completed", RunSummary(results=4)), 10)
    assert len(store.runs.completed_keys("sink-run")) == 4


async def test_results_through_the_sink_are_stored_as_the_sqlalchemy_inserts_stored_them(
    store: Store,
) -> None:
    """The sink encodes each result on the event loop and queues its rows; what the
    database then holds is exactly what the column types stored before (every column
    shape, hostile text, judge calls), and reads back as the results written."""
    results = _varied_results()
    store.runs.create(run_info("orm"))
    item_rows, score_rows, call_rows = result_rows("orm", results)
    with store.engine.begin() as conn:
        conn.execute(item_results.insert(), item_rows)
        conn.execute(scores.insert(), score_rows)
        conn.execute(judge_calls.insert(), call_rows)
    sink = StoreSink(store, batch_size=2)
    await sink.start(info(), resumed=False)
    for result in results:
        await sink.write(result)
    await sink.finish("sink-run", "completed", RunSummary(results=len(results)))
    stored, orm = _raw(store, "sink-run"), _raw(store, "orm")
    for table in ("item_results", "scores", "judge_calls"):
        assert stored[table] == orm[table], table
    back = {(r.item_id, r.repeat): r for r in store.runs.results("sink-run")}
    assert back == {(r.item_id, r.repeat): r for r in store.runs.results("orm")}
    record = store.runs.get("sink-run")
    assert (record.completed_results, record.failed_results) == (5, 1)


class _Unwritable:
    """A target output the JSON encoder cannot write (its text form raises)."""

    def __str__(self) -> str:
        raise RuntimeError("no text form")


async def test_a_result_that_cannot_be_encoded_fails_its_batch_whole(store: Store) -> None:
    """Encoding moved from the writer to ``write``; a result it cannot encode still fails
    its whole batch as a refused commit does: nothing of the batch is stored, the error is
    sticky, and the run is left resumable. The batch before it stays stored."""
    sink = StoreSink(store, batch_size=3, max_delay_s=30)  # batches of exactly 3 here
    await sink.start(info(), resumed=False)
    for n in range(3):
        await sink.write(item_result(f"ok{n}", n, scores={"exact": ready_score("exact", 1.0)}))
    await sink.write(item_result("a", 3, scores={"exact": ready_score("exact", 1.0)}))
    await sink.write(item_result("b", 4))
    bad = item_result("bad", 5).model_copy(update={"output": _Unwritable()})
    await sink.write(bad)  # returns: encoding failures surface as the writer's would
    with pytest.raises(StoreWriteError, match="no text form"):
        await asyncio.wait_for(sink.flush(), 10)
    with pytest.raises(StoreWriteError, match="'sink-run'"):
        await sink.write(item_result("c", 6))
    with pytest.raises(StoreWriteError):
        await asyncio.wait_for(sink.finish("sink-run", "completed", RunSummary()), 10)
    record = store.runs.get("sink-run")
    assert (record.status, record.completed_results) == ("interrupted", 3)
    assert store.runs.completed_keys("sink-run") == {(f"ok{n}", 0) for n in range(3)}
    with store.engine.connect() as conn:  # no score or per-item mean of the failed batch
        for table, column in ((scores, scores.c.scorer_id), (item_scores, item_scores.c.item_id)):
            kept = conn.execute(sa.select(column).select_from(table)).scalars().all()
            assert len(kept) == 3 and "a" not in kept, table.name


async def test_a_stored_run_leaves_the_host_collector_as_it_was(store: Store) -> None:
    """A library must not change its host process's collector: writing results through
    the sink touches neither its thresholds, nor whether it runs, nor what is frozen."""
    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    sink = StoreSink(store, batch_size=8)
    await sink.start(info(), resumed=False)
    for n in range(50):
        await sink.write(item_result(f"i{n}", n, scores={"exact": ready_score("exact", 0.5)}))
        assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
    await sink.finish("sink-run", "completed", RunSummary(results=50))
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
    assert store.runs.get("sink-run").completed_results == 50
