"""``optimize.requests``: an optimization asked for as data, checked and stored before it
runs (the HTTP side is in tests/server/api/test_optimizations.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from assay.optimize import requests
from assay.optimize.requests import OptimizeRequest, start_requested
from assay.store import Store

from .conftest import arithmetic_rows


def _request(**changes: Any) -> OptimizeRequest:
    body: dict[str, Any] = {
        "candidate": {"system": "You solve arithmetic."},
        "train": {"data": [{"input": f"What is {i} + 1?"} for i in range(4)]},
        "test": {"data": [{"input": "What is 9 + 1?", "expected_output": "10"}]},
        "scorers": ["exact-match"],
        "budget": {"max_metric_calls": 10},
        "task_model": "openai-compatible/task",
        "task_base_url": "http://127.0.0.1:9/v1",  # never called: nothing runs here
        "reflection_model": "openai-compatible/reflect",
        "reflection_base_url": "http://127.0.0.1:9/v1",
        **changes,
    }
    return OptimizeRequest.model_validate(body)


def test_inline_items_become_pinned_datasets_and_the_server_picks_run_dir(
    store: Store, tmp_path: Path
) -> None:
    store.datasets.create("val")
    store.datasets.add_items("val", arithmetic_rows(2, start=10))
    started = start_requested(_request(val={"dataset": "val"}), store, data_dir=tmp_path)
    record = store.optimizations.get(started.id)
    prefix = f"optimization-{started.id[:12]}"
    assert record.status == "running" and record.config["val"] == {"dataset": "val", "version": 1}
    assert record.config["train"] == {"dataset": f"{prefix}-train", "version": 1}
    assert record.config["test"] == {"dataset": f"{prefix}-test", "version": 1}
    assert record.run_dir == str(tmp_path / "optimizations" / started.id)
    # ids the items did not bring are numbered per split, so test never collides with train
    train = [item.id for item in store.datasets.items(f"{prefix}-train")]
    assert train == ["train-1", "train-2", "train-3", "train-4"]
    assert [i.id for i in store.datasets.items(f"{prefix}-test")] == ["test-1"]
    assert [e.split for e in started.prepared.splits.test] == ["test"]


def test_requests_name_no_files_and_no_run_dir() -> None:
    with pytest.raises(ValidationError, match="reads no file") as bad_data:
        _request(train={"data": "train.jsonl"})
    assert bad_data.value.errors()[0]["loc"] == ("train", "data")
    with pytest.raises(ValidationError, match="chosen by the server") as bad_dir:
        _request(run_dir="/srv/elsewhere")
    assert bad_dir.value.errors()[0]["loc"] == ("run_dir",)


def test_a_failure_after_storing_the_items_removes_them(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the store went away")

    monkeypatch.setattr(requests, "create_optimization", refuse)
    with pytest.raises(RuntimeError, match="went away"):
        start_requested(_request(), store, data_dir=tmp_path)
    assert store.datasets.list() == [] and store.optimizations.list() == []
