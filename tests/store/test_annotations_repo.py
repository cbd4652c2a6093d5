"""``store.annotations_repo``: append-only annotations, on SQLite and PostgreSQL."""

from __future__ import annotations

import math

import pytest

from assay.store import RunNotFoundError, open_store
from assay.store.annotations_repo import AnnotationError, ItemNotInRunError
from assay.types import ItemResult, RunInfo, TargetSpec


def _run(store_url: str) -> None:
    with open_store(store_url) as store:
        store.runs.create(RunInfo(id="r", target=TargetSpec(kind="stored-output", label="s")))
        store.runs.write_results(
            "r",
            [ItemResult(item_id="a", output="x"), ItemResult(item_id="a", repeat=1, output="y")],
        )


def test_history_is_kept_in_order(store_url: str) -> None:
    _run(store_url)
    with open_store(store_url) as store:
        repo = store.annotations
        first = repo.add("r", "a", author="ana", label="fail", comment="no")
        second = repo.add("r", "a", author="bo", score=0.5, scorer="s", repeat=1)
        history = repo.for_item("r", "a")
        assert [n.id for n in history] == [first.id, second.id]
        assert (history[0].label, history[0].comment) == ("fail", "no")
        assert (history[1].score, history[1].scorer, history[1].repeat) == (0.5, "s", 1)
        assert [n.id for n in repo.for_run("r")] == [first.id, second.id]
        assert repo.for_item("r", "other") == []


def test_refused_annotations_store_nothing(store_url: str) -> None:
    _run(store_url)
    with open_store(store_url) as store:
        repo = store.annotations
        with pytest.raises(RunNotFoundError):
            repo.add("nope", "a", author="ana", label="x")
        with pytest.raises(ItemNotInRunError, match="'b'"):
            repo.add("r", "b", author="ana", label="x")
        with pytest.raises(ItemNotInRunError, match="repeat 5"):
            repo.add("r", "a", author="ana", label="x", repeat=5)
        with pytest.raises(AnnotationError, match="author"):
            repo.add("r", "a", author="  ", label="x")
        with pytest.raises(AnnotationError, match="finite"):
            repo.add("r", "a", author="ana", score=math.nan)
        with pytest.raises(AnnotationError, match="label, a score or a comment"):
            repo.add("r", "a", author="ana")
        assert repo.for_item("r", "a") == []


def test_deleting_the_run_deletes_its_annotations(store_url: str) -> None:
    _run(store_url)
    with open_store(store_url) as store:
        store.annotations.add("r", "a", author="ana", label="pass")
        store.runs.delete("r")
        with pytest.raises(RunNotFoundError):
            store.annotations.for_item("r", "a")
        from assay.store.tables import item_annotations

        with store.engine.connect() as conn:
            assert conn.execute(item_annotations.select()).all() == []
