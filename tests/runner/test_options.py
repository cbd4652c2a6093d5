"""``RunOptions``: one validated options object for every run entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import assay
from assay import RunOptions
from assay.operations.run_config import make_run_config
from assay.operations.stored_runs import run_stored
from assay.runner.sink import MemorySink
from assay.store import open_store
from assay.types import ItemResult

ROWS = [
    {"id": "a", "input": "paris", "expected_output": "PARIS"},
    {"id": "b", "input": "rome", "expected_output": "nope"},
]


def upper(text: str) -> str:
    return text.upper()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"repeats": 0}, "repeats must be at least 1"),
        ({"timeout_s": 0}, "timeout_s must be a positive number"),
        ({"threshold": 1.5}, "outside 0..1"),
    ],
)
def test_options_are_validated_on_construction(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RunOptions(**fields)


def test_options_are_frozen_and_copy_their_metadata() -> None:
    metadata = {"k": 1}
    options = RunOptions(metadata=metadata)
    metadata["k"] = 2
    assert options.metadata == {"k": 1}
    with pytest.raises(AttributeError):
        options.concurrency = 3  # type: ignore[misc]


def test_of_merges_keywords_over_an_object_and_names_typos() -> None:
    base = RunOptions(concurrency=2, name="base")
    merged = RunOptions.of(base, repeats=3)
    assert (merged.concurrency, merged.repeats, merged.name) == (2, 3, "base")
    assert RunOptions.of(base) is base and RunOptions.of() == RunOptions()
    with pytest.raises(
        TypeError, match="unknown run option 'concurency'; did you mean 'concurrency'"
    ):
        RunOptions.of(concurency=4)
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        RunOptions.of(base, repeats=0)


def test_on_item_complete_folds_into_hooks() -> None:
    seen: list[str] = []
    hooks = assay.RunHooks(on_run_start=lambda info: seen.append("start"))
    options = RunOptions(hooks=hooks, on_item_complete=lambda r: seen.append(r.item_id))
    assert options.run_hooks is not None
    assert options.run_hooks.on_run_start is hooks.on_run_start
    assert RunOptions().run_hooks is None and RunOptions(hooks=hooks).run_hooks is hooks


def test_run_evals_takes_an_options_object_and_keywords_win() -> None:
    done: list[ItemResult] = []
    options = RunOptions(repeats=2, name="nightly", on_item_complete=done.append, progress=False)
    run = assay.run_evals(ROWS, upper, ["exact-match"], options=options, concurrency=1)
    assert run.info.name == "nightly" and run.info.repeats == 2 and run.info.concurrency == 1
    assert len(run.results) == len(done) == 4


def test_the_options_sink_gets_the_results_of_a_stored_run_too(tmp_path: Path) -> None:
    sink = MemorySink()
    with open_store(f"sqlite:///{tmp_path / 'a.db'}") as store:
        run = run_stored(
            ROWS, upper, ["exact-match"], store=store, options=RunOptions(sink=sink), progress=False
        )
        assert {r.item_id for r in sink.results} == {"a", "b"}
        assert len(list(store.runs.results(run.id))) == 2


def test_a_run_config_maps_onto_options() -> None:
    config = make_run_config(
        {
            "data": "x.jsonl",
            "scorers": ["exact-match"],
            "concurrency": 3,
            "repeats": 2,
            "threshold": 0.5,
            "timeout": 9,
            "name": "n",
            "metadata": {"k": "v"},
        }
    )
    options = config.run_options(progress=False)
    assert options == RunOptions(
        concurrency=3,
        repeats=2,
        threshold=0.5,
        timeout_s=9,
        name="n",
        metadata={"k": "v"},
        progress=False,
    )
