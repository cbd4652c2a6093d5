"""The Ray worker's loop without Ray (any process that reaches the store can be a worker):
every claimed unit is stored once, including the results that finish while an earlier
flush is being stored."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from assay.operations.ray_worker import WorkerSettings, run_units, work
from assay.runner.api import plan_run
from assay.runner.options import RunOptions
from assay.store import open_store
from assay.testing.openai_server import MockOpenAIServer
from assay.types import Item, ItemResult
from tests.operations import ray_targets


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


_WORKER_SCRIPT = """
import sys
from assay.operations.ray_worker import WorkerSettings, work_in_process
from assay.runner.api import plan_run
from assay.runner.options import RunOptions
from assay.store import open_store
from tests.operations import ray_targets

url, run_id, base_url = sys.argv[1:4]
judge = {"type": "toxicity", "params": {"model": "openai-compatible/judge", "base_url": base_url}}
plan = plan_run(lambda: [], ray_targets.upper, [judge], RunOptions(concurrency=1), total_items=0)
with open_store(url) as store:
    info = store.runs.get(run_id).info
report = work_in_process(url, info.model_dump_json(), plan.target, plan.scorers, WorkerSettings())
print(report.stored)
"""


def test_a_call_one_worker_made_is_a_cache_hit_on_another(tmp_path: Path) -> None:
    """Two worker processes (each in its own folder, so their default cache files differ)
    score two items with the same judge prompt one after the other: only the first call
    reaches the mock; the second is answered from the store's model cache."""
    repo = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(repo / "src"), str(repo)]),
    }
    env.pop("ASSAY_CACHE", None)
    env.pop("ASSAY_CACHE_PATH", None)
    url = f"sqlite:///{tmp_path / 's.db'}"
    data = [Item(id=f"i{i}", input="same") for i in range(2)]
    with MockOpenAIServer() as server, open_store(url) as store:
        judge = {
            "type": "toxicity",
            "params": {"model": "openai-compatible/judge", "base_url": server.base_url},
        }
        options = RunOptions(concurrency=1)
        plan = plan_run(lambda: data, ray_targets.upper, [judge], options, total_items=2)
        store.runs.create(plan.info)
        calls = []
        for position, item in enumerate(data):
            store.work_units.seed(plan.info.id, [(position, item, 0)])
            folder = tmp_path / f"worker{position}"
            folder.mkdir()
            done = subprocess.run(
                [sys.executable, "-c", _WORKER_SCRIPT, url, plan.info.id, server.base_url],
                env=env,
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
            calls.append(server.request_count)
        results = list(store.runs.results(plan.info.id))
        assert store.model_cache().count() >= 1
    assert calls[0] >= 1 and calls[1] == calls[0]
    assert [r.scores["toxicity"].score for r in results] == [
        results[0].scores["toxicity"].score
    ] * 2


def test_a_unit_its_workers_died_on_too_often_is_stored_as_an_item_error(tmp_path: Path) -> None:
    """Workers died three times holding unit 2 (their pids do not exist; the first held
    the whole batch, the next two unit 2 alone, its batch-mates given back uncounted): the
    worker stores unit 2 as an error naming why instead of scoring it again, and scores
    the others in one batch (claimed twice: not suspects yet)."""
    plan, data = _plan(6, 0.0)
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        store.runs.create(plan.info)
        repo = store.work_units
        run_id = plan.info.id
        repo.seed(run_id, ((i, item, 0) for i, item in enumerate(data)))
        for death in range(3):
            dead = f"{socket.gethostname()}:{2**22 + death}:x"  # above Linux's pid_max
            taken = repo.claim_counted(run_id, dead, 6)
            if death:
                repo.release(run_id, dead, [(p, r) for (p, _, r), _ in taken if p != 2])
            assert repo.release_gone(run_id) == (6 if death == 0 else 1)
        peek = {p: n for (p, _, _), n in repo.claim_counted(run_id, "peek", 6)}
        repo.release(run_id, "peek")
        assert peek == {0: 2, 1: 2, 2: 4, 3: 2, 4: 2, 5: 2}
        report = asyncio.run(work(store, plan, WorkerSettings(batch=6, max_claims=3), "h:1:a"))
        results = {r.position: r for r in store.runs.results(run_id)}
    assert report.stored == 6 and sorted(results) == list(range(6))
    poisoned = results[2].error
    assert poisoned is not None and poisoned.kind == "WorkerDied"
    assert "worker died 3 times on this item" in poisoned.message
    assert all(results[i].error is None and results[i].scores for i in (0, 1, 3, 4, 5))
