"""The Ray worker's loop without Ray (any process that reaches the store can be a worker):
every claimed unit is stored once, including the results that finish while an earlier
flush is being stored."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from assay.operations.ray_worker import WorkerSettings, run_units, work
from assay.runner.api import plan_run
from assay.runner.options import RunOptions
from assay.store import open_store
from assay.types import Item, ItemResult


def _plan(n: int, delay_s: float, concurrency: int = 4):  # type: ignore[no-untyped-def]
    data = [Item(id=f"i{i}", input=f"q{i}", expected_output=f"Q{i}") for i in range(n)]

    def target(input: str) -> str:
        time.sleep(delay_s * (int(input[1:]) % 3))
        return input.upper()

    options = RunOptions(concurrency=concurrency)
    return plan_run(lambda: data, target, ["exact-match"], options, total_items=n), data


def test_results_finishing_during_a_slow_flush_are_all_handed_over() -> None:
    plan, data = _plan(12, 0.01)
    handed: list[ItemResult] = []

    async def slow_store(results: list[ItemResult]) -> None:
        await asyncio.sleep(0.2)  # the lanes finish meanwhile
        handed.extend(results)

    units = [(i, item, 0) for i, item in enumerate(data)]
    asyncio.run(run_units(plan, units, slow_store, flush_s=0.005))
    assert sorted(r.position for r in handed) == list(range(12))


def test_two_workers_without_ray_store_every_unit_once(tmp_path: Path) -> None:
    plan, data = _plan(50, 0.002)
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        store.runs.create(plan.info)
        store.work_units.seed(plan.info.id, ((i, item, 0) for i, item in enumerate(data)))
        settings = WorkerSettings(batch=8, flush_s=0.01)

        async def both() -> list[int]:
            reports = await asyncio.gather(
                work(store, plan, settings, "host:1:a"), work(store, plan, settings, "host:1:b")
            )
            return [r.stored for r in reports]

        stored = asyncio.run(both())
        assert sum(stored) == 50 and all(stored)
        keys = [(r.item_id, r.repeat) for r in store.runs.results(plan.info.id)]
        assert len(keys) == len(set(keys)) == 50
        assert store.work_units.remaining(plan.info.id) == 0
