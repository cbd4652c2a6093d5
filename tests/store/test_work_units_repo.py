"""Work units of scaled-out runs on SQLite and PostgreSQL: seeding is idempotent, claims
are disjoint under concurrent claimers, only a unit's owner stores its result, expired
and dead owners' units are claimed again."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter

from assay.store import Store
from assay.types import Item, ItemResult, RunInfo, TargetSpec


def _run(store: Store, n: int) -> str:
    store.runs.create(RunInfo(id="run-1", target=TargetSpec(kind="callable", label="t")))
    store.work_units.seed("run-1", ((i, Item(id=f"i{i}", input=f"q{i}"), 0) for i in range(n)))
    return "run-1"


def _results(units: list[tuple[int, Item, int]]) -> list[ItemResult]:
    now = time.time()
    return [
        ItemResult(
            item_id=item.id,
            repeat=r,
            position=p,
            input=item.input,
            output="x",
            started_at=now,
            completed_at=now,
        )
        for p, item, r in units
    ]


def test_seeding_twice_adds_nothing(store: Store) -> None:
    run_id = _run(store, 5)
    again = store.work_units.seed(run_id, ((i, Item(id=f"i{i}", input="q"), 0) for i in range(7)))
    assert again == 7 == store.work_units.remaining(run_id)


def test_concurrent_claimers_take_disjoint_batches_and_store_each_unit_once(store: Store) -> None:
    run_id = _run(store, 600)
    claimed: Counter[tuple[int, int]] = Counter()
    lock = threading.Lock()

    def claimer(owner: str) -> None:
        while units := store.work_units.claim(run_id, owner, 16):
            with lock:
                claimed.update((p, r) for p, _, r in units)
            store.work_units.complete(run_id, owner, _results(units))

    threads = [threading.Thread(target=claimer, args=(f"w{k}",)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(claimed) == 600 and set(claimed.values()) == {1}
    assert store.runs.completed_count(run_id) == 600
    assert store.work_units.remaining(run_id) == 0


def test_only_the_owner_stores_and_a_lapsed_lease_is_claimed_again(store: Store) -> None:
    run_id = _run(store, 3)
    first = store.work_units.claim(run_id, "slow", 3, lease_s=0.05)
    assert len(first) == 3 and store.work_units.claim(run_id, "other", 3) == []
    time.sleep(0.1)  # the slow worker's lease lapses
    second = store.work_units.claim(run_id, "fast", 3)
    assert [u[0] for u in second] == [0, 1, 2]
    assert store.work_units.complete(run_id, "slow", _results(first)) == 0  # not its own
    assert store.work_units.complete(run_id, "fast", _results(second)) == 3
    assert store.work_units.complete(run_id, "fast", _results(second)) == 0  # stored once
    assert store.runs.completed_count(run_id) == 3


def test_a_unit_seeded_again_after_it_was_stored_is_not_stored_twice(store: Store) -> None:
    """The race that failed a killed-driver resume on PostgreSQL: the resuming driver seeds
    the units it saw unfinished while the dead driver's worker stores some of them; the
    second worker to finish such a unit stores nothing (no IntegrityError, no second row,
    counters unchanged) and still frees the unit, and the rest of its batch is stored."""
    run_id = _run(store, 3)
    first = store.work_units.claim(run_id, "old-driver-worker", 2)
    store.work_units.seed(run_id, ((i, Item(id=f"i{i}", input=f"q{i}"), 0) for i in range(3)))
    assert store.work_units.complete(run_id, "old-driver-worker", _results(first)) == 2
    # the resume saw units 0 and 1 unfinished before that commit, and seeds them again
    store.work_units.seed(run_id, ((i, Item(id=f"i{i}", input=f"q{i}"), 0) for i in range(2)))
    again = store.work_units.claim(run_id, "new-worker", 3)
    assert sorted(u[0] for u in again) == [0, 1, 2]
    assert store.work_units.complete(run_id, "new-worker", _results(again)) == 1  # only unit 2
    assert store.runs.completed_count(run_id) == 3
    assert store.work_units.remaining(run_id) == 0
    assert list(store.runs.completed_units(run_id)) == [(0, 0, "i0"), (1, 0, "i1"), (2, 0, "i2")]
    assert store.runs.get(run_id).completed_results == 3  # the counter too


def test_a_dead_owner_on_this_host_is_freed_at_once(store: Store) -> None:
    import socket
    import subprocess

    run_id = _run(store, 2)
    child = subprocess.Popen(["true"])
    child.wait()  # a pid that no longer exists
    dead = f"{socket.gethostname()}:{child.pid}:abcd"
    live = f"{socket.gethostname()}:{os.getpid()}:abcd"
    store.work_units.claim(run_id, dead, 1)
    store.work_units.claim(run_id, live, 1)
    assert store.work_units.release_gone(run_id) == 1
    assert store.work_units.holders(run_id) == {live: 1}
    assert [u[0] for u in store.work_units.claim(run_id, "next", 5)] == [0]


def test_claims_are_counted_and_give_backs_uncounted(store: Store) -> None:
    """The count the worker loop reads to find units their workers died on: every claim
    adds one, a give-back (all, or some units by key) takes it back, a lapsed lease does
    not (its holder died)."""
    run_id = _run(store, 4)
    repo = store.work_units
    first = repo.claim_counted(run_id, "a", 4)
    assert [(unit[0], count) for unit, count in first] == [(0, 1), (1, 1), (2, 1), (3, 1)]
    repo.release(run_id, "a", [(1, 0), (3, 0)])
    assert [(u[0], n) for u, n in repo.claim_counted(run_id, "b", 4)] == [(1, 1), (3, 1)]
    repo.release(run_id, "a")
    repo.release(run_id, "b")
    assert [(u[0], n) for u, n in repo.claim_counted(run_id, "c", 4, lease_s=0.01)] == [
        (0, 1),
        (1, 1),
        (2, 1),
        (3, 1),
    ]
    time.sleep(0.05)  # c's leases lapse without a give-back: c died
    assert {n for _, n in repo.claim_counted(run_id, "d", 4)} == {2}
    assert repo.claim(run_id, "e", 4) == []  # d holds them all
