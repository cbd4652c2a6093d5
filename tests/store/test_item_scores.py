"""``store.item_scores`` and the ranked pages read from it (issue 25): the stored rank must
equal the grouped SQL rank on every page, whatever the filter, and the per-item means
must add up across batches; on SQLite and PostgreSQL."""

from __future__ import annotations

import random

import pytest
import sqlalchemy as sa

from assay.store import Store, open_store
from assay.store.run_queries import ResultFilter, RunQueries
from assay.store.tables import item_scores
from assay.types import (
    ItemResult,
    RunInfo,
    ScoreError,
    ScoreResult,
    ScorerSpec,
    TargetError,
    TargetSpec,
)

SCORERS = ("a", "b")
# exact binary fractions: a mean summed in another order is the same number, and many ties
VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _score(scorer: str, rng: random.Random) -> ScoreResult | None:
    kind = rng.random()
    if kind < 0.1:
        return None  # this scorer did not score the result
    if kind < 0.2:
        return ScoreResult(
            scorer_id=scorer,
            scorer_label=scorer,
            call_id="c",
            status="error",
            error=ScoreError(message="judge down"),
        )
    if kind < 0.25:
        return ScoreResult(
            scorer_id=scorer,
            scorer_label=scorer,
            call_id="c",
            status="not_scorable",
            not_scorable_step="preprocess",
        )
    return ScoreResult(
        scorer_id=scorer,
        scorer_label=scorer,
        call_id="c",
        status="ready",
        score=rng.choice(VALUES),
    )


def _result(item: int, repeat: int, rng: random.Random) -> ItemResult:
    if rng.random() < 0.08:
        return ItemResult(
            item_id=f"item/{item}" if item % 10 else f"item\x00{item}",
            repeat=repeat,
            position=item,
            input=f"q {item}",
            error=TargetError(message="boom"),
        )
    scores = {s: score for s in SCORERS if (score := _score(s, rng)) is not None}
    return ItemResult(
        item_id=f"item/{item}",
        repeat=repeat,
        position=item,
        input=f"question {item} {'gamma' if item % 3 else 'delta'}",
        output=f"answer {item}",
        scores=scores,
    )


def _store_run(store: Store, run_id: str, items: int, repeats: int, seed: int) -> None:
    rng = random.Random(seed)
    specs = [ScorerSpec(id=s, label=s) for s in SCORERS]
    store.runs.create(
        RunInfo(
            id=run_id,
            target=TargetSpec(kind="stored-output", label="stored"),
            scorers=specs,
            repeats=repeats,
            total_items=items,
        )
    )
    results = [_result(i, r, rng) for r in range(repeats) for i in range(items)]
    rng.shuffle(results)
    # uneven batches: repeats of one item land in different batches and in the same one
    start = 0
    while start < len(results):
        size = rng.randint(1, 17)
        store.runs.write_results(run_id, results[start : start + size])
        start += size


FILTERS = [
    ResultFilter(),
    ResultFilter(scorer="a"),
    ResultFilter(scorer="b"),
    ResultFilter(min_score=0.25, max_score=0.75),
    ResultFilter(scorer="a", min_score=0.5),
    ResultFilter(scorer="a", min_score=0.25, max_score=0.75),
    ResultFilter(scorer="b", max_score=0.5, status="ready"),
    ResultFilter(scorer="b", status="ready"),
    ResultFilter(scorer="a", status="error"),
    ResultFilter(scorer="a", status="error", min_score=0.5),
    ResultFilter(status="error"),
    ResultFilter(errors_only=True),
    ResultFilter(q="GAMMA"),
    ResultFilter(q="delta", scorer="b"),
]


def _every_page(
    store: Store, run_id: str, wanted: ResultFilter, scorer: str, descending: bool, single: bool
) -> None:
    q = store.run_queries
    total, _ = q.ranked_ids_grouped(
        run_id, wanted, scorer=scorer, descending=descending, offset=0, limit=1000
    )
    for limit in (7, 50):
        for offset in range(0, total + limit, limit):
            expected = q.ranked_ids_grouped(
                run_id, wanted, scorer=scorer, descending=descending, offset=offset, limit=limit
            )
            found_total, page = q.ranked_items(
                run_id,
                wanted,
                scorer=scorer,
                descending=descending,
                offset=offset,
                limit=limit,
                single_repeat=single,
            )
            assert (found_total, [item_id for item_id, _ in page]) == expected, (
                wanted,
                scorer,
                descending,
                offset,
                limit,
            )
            for item_id, results in page:
                assert results and all(r.item_id == item_id for r in results)


@pytest.mark.parametrize("repeats", [1, 3])
def test_stored_rank_equals_the_grouped_rank_on_every_page(
    store_url: str, repeats: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # filtered pages walk the means up to this offset and group past it: both are checked
    monkeypatch.setattr(RunQueries, "WALK_DEPTH", 14)
    with open_store(store_url) as store:
        _store_run(store, "run", items=61, repeats=repeats, seed=repeats)
        _store_run(store, "other", items=20, repeats=1, seed=9)  # must not leak in
        for wanted in FILTERS:
            for scorer in SCORERS:
                for descending in (False, True):
                    _every_page(store, "run", wanted, scorer, descending, single=repeats == 1)


def test_means_add_up_across_batches_and_match_the_scores(store_url: str) -> None:
    with open_store(store_url) as store:
        _store_run(store, "run", items=40, repeats=3, seed=5)
        with store.engine.connect() as conn:
            stored = {
                (row.scorer_id, row.item_id): (row.score_count, row.mean, row.position)
                for row in conn.execute(sa.select(item_scores))
            }
        expected: dict[tuple[str, str], tuple[int, float | None, int]] = {}
        collected: dict[tuple[str, str], list[float]] = {}
        positions: dict[tuple[str, str], int] = {}
        for result in store.runs.results("run"):
            for scorer_id, score in result.scores.items():
                key = (scorer_id, result.item_id)
                values = collected.setdefault(key, [])
                positions[key] = result.position
                if score.status == "ready" and score.score is not None:
                    values.append(score.score)
        for key, values in collected.items():
            mean = sum(values) / len(values) if values else None
            expected[key] = (len(values), mean, positions[key])
        assert stored == expected
        assert any(count == 0 for count, _, _ in stored.values())  # errors only: no mean


def test_deleting_a_run_deletes_its_means(store_url: str) -> None:
    with open_store(store_url) as store:
        _store_run(store, "run", items=10, repeats=1, seed=1)
        _store_run(store, "kept", items=10, repeats=1, seed=2)
        store.runs.delete("run")
        with store.engine.connect() as conn:
            left = set(conn.execute(sa.select(item_scores.c.run_id).distinct()).scalars())
        assert left == {"kept"}


def test_errors_only_finds_target_and_scorer_failures(store_url: str) -> None:
    with open_store(store_url) as store:
        _store_run(store, "run", items=50, repeats=2, seed=3)
        _store_run(store, "other", items=50, repeats=1, seed=4)  # its failures are not ours
        expected = [
            (r.item_id, r.repeat)
            for r in store.runs.results("run")
            if r.error is not None or any(s.status == "error" for s in r.scores.values())
        ]
        wanted = ResultFilter(errors_only=True)
        page = store.run_queries.page("run", wanted, offset=0, limit=1000)
        assert [(r.item_id, r.repeat) for r in page] == expected
        assert store.run_queries.count("run", wanted) == len(expected) > 0
