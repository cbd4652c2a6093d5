"""Concurrent writers: real processes writing different runs into one database at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import sqlalchemy as sa

from assay.store import open_store
from assay.store.tables import item_results, judge_calls, scores

WRITER = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from assay.store import StoreSink, open_store
    from assay.types import RunInfo, RunSummary, TargetSpec
    from tests.store.factories import item_result, ready_score

    url, run_id, go, count, mode = sys.argv[1:6]
    count = int(count)
    results = [
        item_result(f"i{n}", n, scores={"judge": ready_score("judge", 0.5, calls=1)})
        for n in range(count)
    ]
    info = RunInfo(id=run_id, target=TargetSpec(kind="callable", label="t"))

    async def through_sink(store):
        sink = StoreSink(store, batch_size=25)
        await sink.start(info, resumed=False)
        for result in results:
            await sink.write(result)
        await sink.finish(run_id, "completed", RunSummary(results=count))

    with open_store(url) as store:
        while not Path(go).exists():
            time.sleep(0.005)
        if mode == "sink":
            asyncio.run(through_sink(store))
        else:  # many small transactions, to interleave with the other writers
            store.runs.create(info)
            for start in range(0, count, 5):
                store.runs.write_results(run_id, results[start : start + 5])
            store.datasets.create(f"ds-{run_id}")
            store.datasets.add_items(
                f"ds-{run_id}", [{"id": f"x{n}", "input": n} for n in range(100)]
            )
    """
)


def test_concurrent_writers_lose_nothing_and_corrupt_nothing(
    store_url: str, tmp_path: Path
) -> None:
    open_store(store_url).close()  # fresh schema; the writers race on the data, not migrations
    go = tmp_path / "go"
    plan = [("run-a", "sink"), ("run-b", "sink"), ("run-c", "direct"), ("run-d", "direct")]
    count = 400
    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, store_url, run_id, str(go), str(count), mode],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run_id, mode in plan
    ]
    time.sleep(1.0)  # let every process import and connect, then release them together
    go.touch()
    outcomes = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert [code for code, _ in outcomes] == [0] * len(plan), [err for _, err in outcomes]

    with open_store(store_url) as store:
        for run_id, mode in plan:
            record = store.runs.get(run_id)
            assert record.completed_results == count
            assert len(store.runs.completed_keys(run_id)) == count
            if mode == "sink":
                assert record.status == "completed"
            else:
                assert store.datasets.count_items(f"ds-{run_id}") == 100
        with store.engine.connect() as conn:
            totals = [
                conn.execute(sa.select(sa.func.count()).select_from(table)).scalar()
                for table in (item_results, scores, judge_calls)
            ]
            assert totals == [count * len(plan)] * 3
            if store.dialect == "sqlite":
                assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
                assert conn.exec_driver_sql("PRAGMA foreign_key_check").all() == []
