"""``run_stored`` keeps nothing per item in memory: items stream into the store and back."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.operations.stored_runs import run_stored
from assay.store import open_store
from assay.types import Item, ItemResult

N = 6000


def _live(kind: type) -> int:
    return sum(1 for obj in gc.get_objects() if type(obj) is kind)


def test_items_and_results_are_not_kept_per_item(tmp_path: Path) -> None:
    """Counted mid-run, at the last item: the run holds a bounded number of ``Item`` objects
    (the store's read chunk and the workers' items), not one per item (before, ``run_stored``
    listed every validated item for the whole run). Results are bounded by the store
    writer's queue (``StoreSink.max_pending``, see ``tests/store/test_sink.py``)."""
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"i{n}", "input": f"q{n}", "expected_output": f"q{n}"}) + "\n"
            for n in range(N)
        )
    )
    seen: dict[str, int] = {}

    def answer(question: str) -> str:
        if question == f"q{N - 1}":
            seen["items"] = _live(Item)
            seen["results"] = _live(ItemResult)
        return question

    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        run = run_stored(
            str(data), answer, ["exact-match"], store=store, concurrency=4, progress=False
        )
        assert run.summary.results == N and run.summary.scorers["exact-match"].mean == 1.0
        assert run.info.total_items == N
        assert sum(1 for _ in store.runs.score_rows(run.id)) == N
    assert seen["items"] < N / 2, seen
    # results waiting for the store writer: at most its queue bound (two 500-result batches)
    # plus the items in flight, however long the run (before: up to 5,000 in the queue)
    assert seen["results"] <= 1_000 + 4, seen


def _rows(count: int, bad_at: int | None = None) -> Iterator[dict[str, object]]:
    for n in range(count):
        yield {"id": f"i{n}"} if n == bad_at else {"id": f"i{n}", "input": f"q{n}"}


def test_a_bad_row_fails_before_the_run_and_stores_nothing(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        with pytest.raises(ValueError, match=r"needs 'input' or 'output'"):
            run_stored(_rows(3000, bad_at=2500), lambda q: q, store=store, progress=False)
        assert store.runs.list() == []


def test_duplicate_ids_fail_before_the_run_and_store_nothing(tmp_path: Path) -> None:
    rows = [{"id": "a", "input": "x"}, {"id": "b", "input": "y"}, {"id": "a", "input": "z"}]
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        with pytest.raises(ValueError, match="'a'"):
            run_stored(rows, lambda q: q, store=store, progress=False)
        assert store.runs.list() == []


def test_an_item_id_no_url_can_reach_fails_before_the_run_and_stores_nothing(
    tmp_path: Path,
) -> None:
    """``Item`` objects built in Python get the rule of file rows: ``..`` could never be
    linked to, so the run refuses it at its start, naming the item."""
    items = [Item(id="a", input="x"), Item(id="..", input="y")]
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        with pytest.raises(ValueError, match=r"^data\[1\]: field 'id': '\.\.' cannot be addressed"):
            run_stored(items, lambda q: q, store=store, progress=False)
        assert store.runs.list() == []


def test_no_items_is_an_error_and_stores_nothing(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        with pytest.raises(ValueError, match="no items in data"):
            run_stored([], lambda q: q, store=store, progress=False)
        assert store.runs.list() == []


def test_flipped_items_of_a_stored_run_are_named_from_its_stored_items(tmp_path: Path) -> None:
    """The runner keeps no item ids (they cost memory per item): the ids of items whose
    repeats flipped are read back from the run's items when the summary is made."""
    calls: dict[str, int] = {}

    def alternating(question: str) -> str:
        calls[question] = calls.get(question, 0) + 1
        if question in ("q1", "q4"):
            return question if calls[question] % 2 else "wrong"
        return question

    rows = [{"id": f"item-{n}", "input": f"q{n}", "expected_output": f"q{n}"} for n in range(6)]
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        run = run_stored(
            rows,
            alternating,
            ["exact-match"],
            store=store,
            repeats=2,
            threshold=0.5,
            concurrency=1,
            progress=False,
        )
        summary = run.summary.scorers["exact-match"]
        assert summary.flipped_items == ["item-1", "item-4"]
        assert store.runs.get(run.id).summary == run.summary
