"""``runner.gc_policy``: kept results frozen out of the cyclic collector, and given back."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.operations.stored_runs import run_stored
from assay.runner import gc_policy
from assay.runner.api import run_evals, run_evals_async
from assay.runner.gc_policy import KeptResults
from assay.store import open_store
from assay.types import ItemResult

ROWS = [{"id": f"i{i}", "input": f"q{i}", "expected_output": f"q{i}"} for i in range(60)]


@pytest.fixture(autouse=True)
def _clean_gc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts and ends with nothing frozen and the collector on."""
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    monkeypatch.setattr(gc_policy, "CHECKPOINT", 10)
    yield
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    gc.enable()
    assert frozen == 0, "a test left objects frozen"


def echo(text: str) -> str:
    return text


class _Cycle:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def _frozen_while_running(**options: Any) -> list[int]:
    seen: list[int] = []

    def watch(result: ItemResult) -> None:
        seen.append(gc.get_freeze_count())

    run = run_evals(ROWS, echo, ["exact-match"], on_item_complete=watch, **options)
    assert run.summary.scorers["exact-match"].mean == 1.0 and len(run.results) == 60
    return seen


def test_an_in_memory_run_freezes_what_it_keeps_and_unfreezes_at_the_end() -> None:
    seen = _frozen_while_running(concurrency=4, gc_freeze=True)
    assert seen[0] == 0  # nothing frozen before the first checkpoint
    assert seen[-1] > 0  # later the kept results (and the rest of the heap) are frozen
    assert gc.get_freeze_count() == 0  # all given back when the run returned


def test_gc_freeze_false_leaves_the_collector_alone() -> None:
    assert set(_frozen_while_running(gc_freeze=False)) == {0}


def test_a_default_run_leaves_the_host_processs_collector_unchanged() -> None:
    """Opt-in: without ``gc_freeze=True`` a run never freezes, not even past a checkpoint
    (10 here, 60 results), and whatever the host froze itself stays exactly as it was."""
    assert set(_frozen_while_running()) == {0}
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    mine = [_Cycle()]
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        seen = _frozen_while_running(concurrency=4)
        # never more frozen (no freeze of ours), never 0 (no unfreeze of the host's objects);
        # fewer only as the host's frozen objects die (reference counting frees them)
        assert all(0 < count <= frozen for count in seen), (frozen, set(seen))
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
        del mine


def test_a_stored_run_keeps_nothing_and_freezes_nothing(tmp_path: Path) -> None:
    seen: list[int] = []
    with open_store(f"sqlite:///{tmp_path}/runs.db") as store:
        run = run_stored(
            ROWS,
            echo,
            ["exact-match"],
            store=store,
            on_item_complete=lambda result: seen.append(gc.get_freeze_count()),
            gc_freeze=True,  # even opted in: a stored run keeps nothing to freeze
        )
    assert run.summary.results == 60 and set(seen) == {0}


def test_a_failed_run_still_unfreezes() -> None:
    def stop_late(result: ItemResult) -> None:
        if result.position == 40:
            raise RuntimeError("hook failed")

    with pytest.raises(Exception, match="hook failed"):
        run_evals(
            ROWS,
            echo,
            ["exact-match"],
            on_item_complete=stop_late,
            concurrency=1,
            gc_freeze=True,
        )
    assert gc.get_freeze_count() == 0


def test_concurrent_runs_share_the_freeze_and_the_last_one_leaves_nothing_frozen() -> None:
    seen: list[int] = []
    other = [{**row, "id": f"{row['id']}-{k}"} for k, row in enumerate(ROWS * 3)]

    async def both() -> list[int]:
        runs = await asyncio.gather(
            run_evals_async(ROWS, _async_echo, ["exact-match"], concurrency=2, gc_freeze=True),
            run_evals_async(
                other,
                _async_echo,
                ["exact-match"],
                concurrency=2,
                gc_freeze=True,
                on_item_complete=lambda result: seen.append(gc.get_freeze_count()),
            ),
        )
        return [len(run.results) for run in runs]

    assert asyncio.run(both()) == [60, 180]
    assert max(seen) > 0 and seen[-1] > 0  # still frozen after the first run ended
    assert gc.get_freeze_count() == 0


async def _async_echo(text: str) -> str:
    await asyncio.sleep(0)
    return text


def test_the_collection_before_a_freeze_frees_garbage_instead_of_freezing_it() -> None:
    cycle = _Cycle()
    alive = weakref.ref(cycle)
    gc.collect()  # the cycle, still referenced, is now in the oldest generation
    del cycle  # garbage now, but only a full collection can see it
    policy = KeptResults(checkpoint=2)
    policy.kept()
    assert alive() is not None
    policy.kept()  # checkpoint: collect, then freeze
    try:
        assert policy.freezes == 1 and gc.get_freeze_count() > 0
        assert alive() is None  # freed, not frozen
    finally:
        policy.release()
    assert gc.get_freeze_count() == 0


def test_one_run_ending_unfreezes_and_the_other_freezes_again_at_its_checkpoint() -> None:
    a, b = KeptResults(checkpoint=1), KeptResults(checkpoint=1)
    a.kept()
    b.kept()
    a.release()
    assert gc.get_freeze_count() == 0  # nothing stays frozen past the run that froze it
    b.kept()
    assert gc.get_freeze_count() > 0 and b.freezes == 2
    b.release()
    b.release()  # idempotent
    a.release()
    assert gc.get_freeze_count() == 0


def test_objects_the_process_froze_itself_are_left_frozen() -> None:
    mine = [_Cycle()]
    gc.freeze()
    frozen = gc.get_freeze_count()
    policy = KeptResults(checkpoint=1)
    policy.kept()
    policy.release()
    assert not policy.enabled and policy.freezes == 0
    assert gc.get_freeze_count() == frozen
    gc.unfreeze()
    del mine


def test_a_disabled_collector_stays_disabled_and_nothing_is_frozen() -> None:
    gc.disable()
    try:
        policy = KeptResults(checkpoint=1)
        policy.kept()
        policy.release()
        assert policy.freezes == 0 and gc.get_freeze_count() == 0 and not gc.isenabled()
    finally:
        gc.enable()


def test_a_run_released_by_a_finalizer_during_a_checkpoint_does_not_deadlock() -> None:
    """``gc.collect()`` runs finalizers; a run coroutine finalized there releases its policy
    on the thread that is inside the checkpoint."""
    import threading

    a, b = KeptResults(checkpoint=1), KeptResults(checkpoint=1)
    b.kept()  # b holds frozen objects

    class ReleasesB:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            b.release()

    def checkpoint_with_a_finalizer() -> None:
        ReleasesB()  # cyclic garbage: freed by the checkpoint's collection
        a.kept()

    thread = threading.Thread(target=checkpoint_with_a_finalizer, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the checkpoint deadlocked"  # (then nothing can release)
    try:
        assert a.freezes == 1 and gc.get_freeze_count() > 0
    finally:
        a.release()
        b.release()
    assert gc.get_freeze_count() == 0
