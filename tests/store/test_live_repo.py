"""``store.live``: a live run's rows are stored at most once per observation id and its
counters are added, on SQLite and PostgreSQL (``ASSAY_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import threading

from assay.store import Store
from assay.store.live_repo import merge_counts
from assay.types import RunInfo, TargetSpec
from tests.store.factories import item_result, ready_score


def _run(store: Store, run_id: str = "live-1") -> str:
    store.runs.create(
        RunInfo(
            id=run_id, name="mon", data_source="live", target=TargetSpec(kind="callable", label="f")
        )
    )
    return run_id


def test_a_retried_batch_stores_nothing_twice(store: Store) -> None:
    run_id = _run(store)
    batch = [item_result(f"o{i}", i, scores={"s": ready_score("s", 1.0)}) for i in range(5)]
    first = store.live.write(run_id, batch, fates=[("scored", None)] * 5, counts={"not_sampled": 3})
    again = store.live.write(
        run_id,
        [*batch, item_result("o9", 9)],
        fates=[("scored", None)] * 5 + [("dropped", "budget")],
    )
    assert first == {"scored": 5} and again == {"duplicate": 5, "dropped": {"budget": 1}}
    assert store.runs.completed_count(run_id) == 6 and store.runs.get(run_id).completed_results == 6
    assert len(list(store.runs.score_rows(run_id))) == 5  # one score row per stored result
    counts = store.live.state(run_id)["counts"]
    assert counts == {"not_sampled": 3, "scored": 5, "duplicate": 5, "dropped": {"budget": 1}}
    assert store.live.run_ids("mon") == [run_id] and store.live.next_position(run_id) == 10


def test_duplicate_ids_inside_one_batch(store: Store) -> None:
    run_id = _run(store)
    counted = store.live.write(run_id, [item_result("same", 0), item_result("same", 1)])
    assert counted == {"scored": 1, "duplicate": 1} and store.runs.completed_count(run_id) == 1


def test_concurrent_writers_of_the_same_ids(store: Store) -> None:
    run_id = _run(store)
    errors: list[BaseException] = []

    def write(offset: int) -> None:
        try:
            for start in range(0, 40, 10):
                rows = [item_result(f"o{i}", i + offset) for i in range(start, start + 10)]
                store.live.write(run_id, rows, counts={"not_sampled": 1})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(k * 100,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.runs.completed_count(run_id) == 40
    counts = store.live.state(run_id)["counts"]
    assert counts["scored"] == 40 and counts["duplicate"] == 80 and counts["not_sampled"] == 12


def test_merge_counts_adds_nested_numbers() -> None:
    merged = merge_counts({"a": 1, "d": {"x": 2}}, {"a": 2, "d": {"x": 1, "y": 1}, "b": 4})
    assert merged == {"a": 3, "d": {"x": 3, "y": 1}, "b": 4}
