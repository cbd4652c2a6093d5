"""``server.run_compare``: rows worst first, N runs, repeats averaged, statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from assay.analysis.compare import RunComparison, compare_run_arrays, compare_runs
from assay.operations.stored_runs import run_stored
from assay.server import run_compare
from assay.server.app import create_app
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
from tests.server.api.conftest import LOCAL

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


def _app_client(url: str) -> TestClient:
    return TestClient(create_app(store_url=url), raise_server_exceptions=False, base_url=LOCAL)


def test_statistics_are_computed_once_across_two_servers_and_again_when_a_run_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two app instances on one SQLite file stand for a restarted server or a second
    worker: each has its own store object, so only what the store keeps is shared."""
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    with open_store(url) as setup:
        _seeded_run(setup, "seed-a", seed=1)
        _seeded_run(setup, "seed-b", seed=2)
    computed: list[str] = []

    def counting(*args: Any, **kwargs: Any) -> RunComparison:
        computed.append(args[2].info.id)
        return compare_run_arrays(*args, **kwargs)

    monkeypatch.setattr(run_compare, "compare_run_arrays", counting)
    stats = "/api/runs/seed-b/compare/statistics?baseline=seed-a"
    page = "/api/runs/seed-b/compare?baseline=seed-a"
    with _app_client(url) as first:
        # the default page does not wait for them: pending, computed in the background
        assert first.get(page).json()["statistics_pending"] is True
        answer = first.get(stats)
        assert answer.status_code == 200
        assert computed == ["seed-b"]
        first_stats = answer.json()
        assert first.get(stats).json() == first_stats
    assert computed == ["seed-b"]
    with _app_client(url) as second:
        assert second.get(stats).json() == first_stats
        shown = second.get(page).json()  # at once, with the statistics, nothing pending
        assert shown["statistics_pending"] is False
        assert [s["n_regressed"] for s in shown["statistics"][0]["scorers"]] == [
            s["n_regressed"] for s in first_stats[0]["scorers"]
        ]
        assert shown["statistics"][0]["scorers"][0]["regressed"] == []  # lists paged apart
        items = second.get(
            "/api/runs/seed-b/compare/items?baseline=seed-a&scorer=acc&limit=500"
        ).json()
        acc = next(s for s in first_stats[0]["scorers"] if s["scorer_id"] == "acc")
        assert items["items"] == acc["regressed"] != []
        assert computed == ["seed-b"]  # a restart read them from the store

        # a run that changes (one more item, finished again) is compared afresh
        app_store: Store = second.app.state.store  # type: ignore[attr-defined]
        extra = ItemResult(
            item_id="item-new",
            position=10_000,
            input="q",
            output="a",
            scores={
                "acc": ScoreResult(
                    scorer_id="acc", scorer_label="acc", call_id="c", status="ready", score=1.0
                )
            },
        )
        app_store.runs.write_results("seed-b", [extra])
        app_store.runs.finish("seed-b", "completed", None)
        changed = second.get(stats).json()
        assert computed == ["seed-b", "seed-b"]
        assert "item-new" in changed[0]["only_in_b"]
        assert "item-new" not in first_stats[0]["only_in_b"]
        assert app_store.compare_statistics.count() == 1  # the stale row was replaced
    with _app_client(url) as third:
        assert third.get(stats).json() == changed
    assert computed == ["seed-b", "seed-b"]


def test_statistics_of_a_run_still_going_are_neither_cached_nor_stored(store: Store) -> None:
    base = _run(store, ["Paris", "Rome"])
    store.runs.create(
        RunInfo(
            id="going",
            target=TargetSpec(kind="stored-output", label="stored"),
            scorers=[ScorerSpec(id="exact-match", label="exact-match")],
        )
    )
    store.runs.write_results(
        "going",
        [
            ItemResult(
                item_id="a",
                position=0,
                input="q",
                output="Paris",
                scores={
                    "exact-match": ScoreResult(
                        scorer_id="exact-match",
                        scorer_label="exact-match",
                        call_id="c",
                        status="ready",
                        score=1.0,
                    )
                },
            )
        ],
    )
    assert store.runs.get("going").status in ("pending", "running")
    compare_statistics(base, ["going"], store=store)
    assert store.compare_statistics.count() == 0


def test_a_stored_row_that_does_not_read_as_statistics_is_computed_again(store: Store) -> None:
    """Hostile or outdated stored text (another version's shape, a cut write) is not a
    500: the statistics are computed again and the row replaced."""
    _seeded_run(store, "seed-a", seed=1)
    _seeded_run(store, "seed-b", seed=2)
    (fresh,) = compare_statistics("seed-a", ["seed-b"], store=store)
    base, other = store.runs.get("seed-a"), store.runs.get("seed-b")
    key = run_compare._key(base, other, 0.0)
    for garbage in ('{"a": 1', '{"scorers": "no"}', "null", ""):
        store.compare_statistics.put(*key, summary=garbage, full=garbage)
        restarted = open_store(store.engine.url)  # a new store object: an empty memory
        try:
            assert compare_statistics("seed-a", ["seed-b"], store=restarted) == [fresh]
            page = compare_page("seed-a", ["seed-b"], cached_only=True, store=restarted)
            assert page.statistics == [fresh]  # the replaced row, read back
        finally:
            restarted.close()
