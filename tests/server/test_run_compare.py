"""``server.run_compare``: rows worst first, N runs, repeats averaged, statistics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from assay.analysis.compare import compare_run_arrays, compare_runs
from assay.operations.stored_runs import run_stored
from assay.server.run_compare import compare_page, compare_statistics
from assay.store import Store, open_store
from assay.types import (
    ItemResult,
    RunInfo,
    ScoreError,
    ScoreResult,
    ScorerSpec,
    TargetError,
    TargetSpec,
)

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


def _seeded_run(store: Store, run_id: str, seed: int, n_items: int = 60) -> None:
    """Repeats, two scorers (one lower-is-better), errors, not-scorable results, named
    values on some results, target failures and items missing from the run."""
    rng = np.random.default_rng(seed)
    specs = [ScorerSpec(id="acc", label="Acc"), ScorerSpec(id="lat", label="Lat")]
    specs[1] = specs[1].model_copy(update={"higher_is_better": False})
    store.runs.create(
        RunInfo(
            id=run_id,
            target=TargetSpec(kind="stored-output", label="stored"),
            scorers=specs,
            repeats=2,
        )
    )
    results = []
    for position in rng.permutation(n_items).tolist():
        if rng.random() < 0.1:
            continue  # not in this run
        for repeat in range(2):
            if rng.random() < 0.05:
                results.append(
                    ItemResult(
                        item_id=f"item-{position}",
                        position=position,
                        repeat=repeat,
                        input="q",
                        error=TargetError(message="boom"),
                    )
                )
                continue
            scores = {}
            for sid in ("acc", "lat"):
                roll = rng.random()
                if roll < 0.05:
                    scores[sid] = ScoreResult(
                        scorer_id=sid,
                        scorer_label=sid,
                        call_id="c",
                        status="error",
                        error=ScoreError(message="x"),
                    )
                elif roll < 0.1:
                    scores[sid] = ScoreResult(
                        scorer_id=sid, scorer_label=sid, call_id="c", status="not_scorable"
                    )
                else:
                    values = (
                        {"p": float(rng.random()), "r": float(rng.random())}
                        if sid == "acc" and rng.random() < 0.5
                        else {}
                    )
                    scores[sid] = ScoreResult(
                        scorer_id=sid,
                        scorer_label=sid,
                        call_id="c",
                        status="ready",
                        score=float(rng.integers(0, 4)) / 3,
                        values=values,
                    )
            results.append(
                ItemResult(
                    item_id=f"item-{position}",
                    position=position,
                    repeat=repeat,
                    input="q",
                    output="a",
                    scores=scores,
                )
            )
    store.runs.write_results(run_id, results)
    store.runs.finish(run_id, "completed", None)  # finished: its statistics are cached


@pytest.mark.parametrize("threshold", [0.0, 0.2])
def test_columnar_statistics_equal_the_row_by_row_ones(store: Store, threshold: float) -> None:
    _seeded_run(store, "seed-a", seed=1)
    _seeded_run(store, "seed-b", seed=2)
    base, other = store.runs.get("seed-a"), store.runs.get("seed-b")
    by_rows = compare_runs(
        base,
        store.runs.score_rows("seed-a"),
        other,
        store.runs.score_rows("seed-b"),
        threshold=threshold,
    )
    # the seeded runs exercise every path: values, regressions both ways, lone items
    acc = next(s for s in by_rows.scorers if s.scorer_id == "acc")
    assert acc.values and acc.regressed and acc.improved
    assert by_rows.only_in_a and by_rows.only_in_b
    by_columns = compare_run_arrays(
        base,
        store.run_queries.score_arrays("seed-a"),
        other,
        store.run_queries.score_arrays("seed-b"),
        threshold=threshold,
    )
    assert by_columns.model_dump_json() == by_rows.model_dump_json()
    # and what the API serves comes from the columnar path
    assert compare_statistics("seed-a", ["seed-b"], threshold=threshold, store=store) == [by_rows]
