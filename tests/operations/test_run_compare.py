"""``operations.run_compare``: rows worst first, N runs, repeats averaged, statistics."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.run_compare import compare_page, compare_statistics
from assay.operations.stored_runs import run_stored
from assay.store import Store, open_store

ITEMS = [
    {"id": "a", "output": "Paris", "expected_output": "Paris"},
    {"id": "b", "output": "Rome", "expected_output": "Madrid"},
]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return open_store(f"sqlite:///{tmp_path / 'c.db'}")


def _run(store: Store, outputs: list[str], repeats: int = 1) -> str:
    items = [{**item, "output": out} for item, out in zip(ITEMS, outputs, strict=True)]
    return run_stored(
        items, None, ["exact-match"], store=store, repeats=repeats, progress=False
    ).info.id


def test_rows_and_statistics_against_the_baseline(store: Store) -> None:
    base = _run(store, ["Paris", "Rome"])
    worse = _run(store, ["Lyon", "Rome"])
    better = _run(store, ["Paris", "Madrid"])
    page = compare_page(base, [better, worse], store=store)
    assert [(r.item_id, r.deltas, r.regressed) for r in page.rows] == [
        ("a", [0.0, -1.0], True),
        ("b", [1.0, 0.0], False),
    ]
    assert [s.b.id for s in page.statistics] == [better, worse]
    assert compare_statistics(base, [better, worse], store=store) == page.statistics
    with pytest.raises(ValueError, match="at least one run"):
        compare_page(base, [], store=store)


def test_repeats_are_averaged_per_item(store: Store) -> None:
    base = _run(store, ["Paris", "Rome"], repeats=2)
    other = _run(store, ["Lyon", "Madrid"], repeats=2)
    page = compare_page(base, [other], store=store)
    assert [(r.item_id, r.baseline, r.scores) for r in page.rows] == [
        ("a", 1.0, [0.0]),
        ("b", 0.0, [1.0]),
    ]
    assert page.total == 2
