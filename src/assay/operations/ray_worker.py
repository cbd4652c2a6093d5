"""What one Ray worker of a scaled-out run does: claim a batch of units from the store,
score each with the runner's own ``run_unit`` (the code a local run uses, not a copy),
store the batch's results, repeat until the run has no unit left.

This module does not import Ray: it is the body of the Ray task that
``assay.operations.ray_backend`` starts, and is called directly by tests and by anyone who
wants to run a worker outside Ray (any process that can reach the store can be one).

Why the worker waits for units held by others instead of leaving: a worker that died
holding a batch leaves units whose lease lapses (or is freed at once when the dead worker
ran on this host); the remaining workers take them over, so the run completes as long as
one worker lives.

Why a unit claimed before is scored alone, and a cap on its claims: an item that kills the
process scoring it (``os._exit`` in the target, a crash in native code, memory) would
otherwise kill one worker after another forever. Every claim is counted and every
give-back uncounted, so a unit that comes back with a count above 1 is one whose worker
died holding it. After two such deaths it is scored alone (its batch-mates are given back),
so the next death counts against it only, and past ``WorkerSettings.max_claims`` it is
stored as an item error ("worker died 3 times on this item") and the run finishes. One
death (a killed worker) does not make its units slow: they go on in batches.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from assay.models.cache import SHARED_CACHE
from assay.models.reliability import RUN_CONCURRENCY, SHARED_LIMITS, EndpointLimiter
from assay.runner.engine import RunPlan, run_unit
from assay.scoring.scorer import Scorer
from assay.store import Store, open_store
from assay.store.runs_repo import new_lease_owner
from assay.store.work_units_repo import UNIT_LEASE_S, Unit, WorkUnitRepository
from assay.targets.base import Target
from assay.types import ItemResult, RunInfo, TargetError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker claims and stores.

    ``batch``: units per claim (``None``: 8 per item in flight, 32..512): small enough that
    two workers share a short run and a killed worker leaves little to redo, large enough
    that claims are a small part of a trivial item's cost. ``flush_s``: finished results
    are stored at least this often (progress shows, a killed worker loses less).
    ``lease_s``: a claimed unit's lease without heartbeat. ``idle_s``: pause when no unit
    is free but some are still held by other workers. ``alone_after``: a unit claimed more
    often than this (its workers died on it that often less one) is scored alone.
    ``max_claims``: a unit whose workers died this many times on it is stored as an item
    error instead of being tried again."""

    batch: int | None = None
    flush_s: float = 0.5
    lease_s: float = UNIT_LEASE_S
    idle_s: float = 0.2
    alone_after: int = 2
    max_claims: int = 3

    def batch_for(self, concurrency: int) -> int:
        return self.batch or min(512, max(32, 8 * concurrency))


@dataclass(frozen=True)
class WorkerReport:
    """What one worker did (returned to the driver; the run's numbers come from the store)."""

    owner: str
    claimed: int
    stored: int


async def run_units(
    plan: RunPlan,
    units: Sequence[Unit],
    store: Callable[[list[ItemResult]], Awaitable[None]],
    flush_s: float,
    more: Callable[[], Awaitable[list[Unit]]] | None = None,
) -> None:
    """Score ``units`` with up to ``plan.info.concurrency`` in flight, like the engine's
    worker pool (and under the same ``RUN_CONCURRENCY`` for judge limiters), handing the
    finished results to ``store`` every ``flush_s`` seconds and at the end.

    ``more``: where the next units come from once these run low (fewer left than lanes):
    fetched while the lanes still work, so no lane waits for a batch's slowest unit or for
    the claim round trip; an empty answer ends the stream."""
    finished: list[ItemResult] = []
    queue = deque(units)
    lanes_n = plan.info.concurrency
    fetching: asyncio.Task[list[Unit]] | None = None
    exhausted = more is None

    async def next_unit() -> Unit | None:
        nonlocal fetching, exhausted
        while True:
            if not exhausted and fetching is None and len(queue) <= lanes_n:
                assert more is not None
                fetching = asyncio.ensure_future(more())
            if queue:
                return queue.popleft()
            if exhausted or fetching is None:
                return None
            task = fetching
            got = await asyncio.shield(task)
            if fetching is task:  # the first lane back takes the answer in
                fetching = None
                queue.extend(got)
                exhausted = not got

    async def lane() -> None:
        while (unit := await next_unit()) is not None:
            position, item, repeat = unit
            finished.append(await run_unit(plan, position, item, repeat))

    token = RUN_CONCURRENCY.set(lanes_n)
    try:
        count = lanes_n if more is not None else min(lanes_n, len(units))
        lanes = [asyncio.create_task(lane()) for _ in range(count)]
    finally:
        RUN_CONCURRENCY.reset(token)
    everything = asyncio.gather(*lanes)
    try:
        while not everything.done():
            await asyncio.wait([everything], timeout=flush_s)
            if finished:
                batch, finished[:] = list(finished), []
                await store(batch)
        everything.result()
        if finished:  # the lanes' last results arrived while the previous flush was stored
            await store(list(finished))
    finally:
        everything.cancel()
        if fetching is not None:
            fetching.cancel()


async def work(
    store: Store,
    plan: RunPlan,
    settings: WorkerSettings,
    owner: str | None = None,
    *,
    limits: Callable[[str], EndpointLimiter] | None = None,
    shared_cache: bool = True,
) -> WorkerReport:
    """Claim and score units of ``plan``'s run until none is left; returns the counts.

    ``limits``: the run-wide limiter of each endpoint (``SHARED_LIMITS``; the Ray backend's
    actor), else this process's own. ``shared_cache``: model calls are cached in the
    store's ``model_cache`` (``SHARED_CACHE``), so a call another worker made is a hit."""
    limits_token = SHARED_LIMITS.set(limits)  # the lanes started below inherit both
    cache_token = SHARED_CACHE.set(store.model_cache() if shared_cache else None)
    try:
        return await _work(store, plan, settings, owner)
    finally:
        SHARED_CACHE.reset(cache_token)
        SHARED_LIMITS.reset(limits_token)


async def _work(
    store: Store, plan: RunPlan, settings: WorkerSettings, owner: str | None
) -> WorkerReport:
    owner = owner or new_lease_owner()
    run_id = plan.info.id
    units_repo = store.work_units
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(settings.lease_s / 4):
            try:
                units_repo.renew(run_id, owner, lease_s=settings.lease_s)
            except Exception as exc:  # transient: the next beat tries again
                log.warning("worker %s: could not renew its leases: %s", owner, exc)

    beat = threading.Thread(target=heartbeat, name=f"assay-unit-lease-{run_id[:8]}", daemon=True)
    beat.start()
    claimed = stored = 0
    batch = settings.batch_for(plan.info.concurrency)
    try:
        while True:
            counted = await asyncio.to_thread(
                units_repo.claim_counted, run_id, owner, batch, lease_s=settings.lease_s
            )
            if not counted:
                if await asyncio.to_thread(units_repo.remaining, run_id) == 0:
                    break
                await asyncio.to_thread(units_repo.release_gone, run_id)
                await asyncio.sleep(settings.idle_s)
                continue
            units, poisoned = await _triage(units_repo, run_id, owner, counted, settings)
            claimed += len(units) + len(poisoned)
            if poisoned:
                stored += await asyncio.to_thread(units_repo.complete, run_id, owner, poisoned)
            if not units:
                continue
            suspect = any(count > settings.alone_after for _, count in counted)

            async def store_results(results: list[ItemResult]) -> None:
                nonlocal stored
                stored += await asyncio.to_thread(units_repo.complete, run_id, owner, results)

            async def fresh() -> list[Unit]:
                """The next batch; units to score alone go back uncounted (the loop above
                takes them one at a time once no other unit is left)."""
                nonlocal claimed
                got = await asyncio.to_thread(
                    units_repo.claim_counted, run_id, owner, batch, lease_s=settings.lease_s
                )
                back = [(p, r) for (p, _, r), n in got if n > settings.alone_after]
                if back:
                    await asyncio.to_thread(units_repo.release, run_id, owner, back)
                taken = [unit for unit, n in got if n <= settings.alone_after]
                claimed += len(taken)
                return taken

            more = None if suspect else fresh
            await run_units(plan, units, store_results, settings.flush_s, more)
    except BaseException:
        stop.set()
        try:  # give back what this worker holds, so others need not wait for the lease
            await asyncio.to_thread(units_repo.release, run_id, owner)
        except Exception as exc:
            log.warning("worker %s: could not release its units: %s", owner, exc)
        raise
    finally:
        stop.set()
        beat.join()
    return WorkerReport(owner=owner, claimed=claimed, stored=stored)


async def _triage(
    units_repo: WorkUnitRepository,
    run_id: str,
    owner: str,
    counted: list[tuple[Unit, int]],
    settings: WorkerSettings,
) -> tuple[list[Unit], list[ItemResult]]:
    """What to score of a claimed batch: all of it when no unit was claimed more than
    ``alone_after`` times; else only its first such suspect, alone (the rest given back
    uncounted), so a death while scoring it counts against it and not its neighbours; and
    a suspect already claimed more than ``max_claims`` times is not scored but stored as
    an item error. Units a worker died holding once go on in batches: a killed worker's
    batch is not scored one unit at a time."""
    suspects = [(unit, count) for unit, count in counted if count > settings.alone_after]
    if not suspects:
        return [unit for unit, _ in counted], []
    unit, count = suspects[0]
    others = [
        (position, repeat)
        for (position, _, repeat), _ in counted
        if position != unit[0] or repeat != unit[2]
    ]
    if others:
        await asyncio.to_thread(units_repo.release, run_id, owner, others)
    if count > settings.max_claims:
        return [], [poisoned_result(unit, count - 1)]
    return [unit], []


def poisoned_result(unit: Unit, deaths: int) -> ItemResult:
    """The item error stored for a unit whose workers died ``deaths`` times on it."""
    position, item, repeat = unit
    stamp = time.time()
    return ItemResult(
        item_id=item.id,
        repeat=repeat,
        position=position,
        input=item.input,
        expected_output=item.expected_output,
        error=TargetError(
            message=(
                f"worker died {deaths} times on this item (its process ended while scoring "
                "it: os._exit, a crash in native code, out of memory); stored as an error "
                "so the run can finish"
            ),
            kind="WorkerDied",
        ),
        started_at=stamp,
        completed_at=stamp,
    )


def work_in_process(
    store_url: str,
    info_json: str,
    target: Target,
    scorers: Sequence[Scorer],
    settings: WorkerSettings,
    limits: Callable[[str], EndpointLimiter] | None = None,
) -> WorkerReport:
    """The Ray task's body: open the store, rebuild the plan, ``work`` to the end."""
    info = RunInfo.model_validate_json(info_json)
    plan = RunPlan(info=info, items=tuple, target=target, scorers=list(scorers))
    with open_store(store_url) as store:
        return asyncio.run(work(store, plan, settings, limits=limits))
