"""``server.ui_queries.run_item_groups`` sorted by score: the SQL ranking equals a
plain-Python ranking of the same results, for every filter, page and direction."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.operations.run_items import RunItemFilter
from assay.server.ui_queries import SortOrder, run_item_groups
from assay.store import Store, open_store
from assay.types import ItemResult
from tests.server.test_run_compare import _seeded_run


@pytest.fixture
def store(tmp_path: Path) -> Store:
    db = open_store(f"sqlite:///{tmp_path / 'u.db'}")
    _seeded_run(db, "run", seed=7, n_items=300)
    return db


def _matches(result: ItemResult, wanted: RunItemFilter) -> bool:
    """``ResultFilter`` in Python: every score condition on one score, errors, text."""
    conditions = [wanted.scorer, wanted.min_score, wanted.max_score, wanted.status]
    if any(c is not None for c in conditions) and not any(
        (wanted.scorer is None or score.scorer_id == wanted.scorer)
        and (wanted.status is None or score.status == wanted.status)
        and (
            wanted.min_score is None
            or (score.score is not None and score.score >= wanted.min_score)
        )
        and (
            wanted.max_score is None
            or (score.score is not None and score.score <= wanted.max_score)
        )
        for score in result.scores.values()
    ):
        return False
    if wanted.errors_only and not (
        result.error is not None or any(s.status == "error" for s in result.scores.values())
    ):
        return False
    if wanted.q:
        texts = [str(v).lower() for v in (result.input, result.output, result.expected_output)]
        if not any(wanted.q.lower() in text for text in texts if text != "none"):
            return False
    return True


def _reference(
    store: Store, wanted: RunItemFilter, scorer: str, descending: bool
) -> list[tuple[str, list[int]]]:
    """Every matching result read into Python, items ranked by their mean ready score."""
    matched: dict[str, list[ItemResult]] = {}
    for result in store.runs.results("run"):
        if _matches(result, wanted):
            matched.setdefault(result.item_id, []).append(result)

    def rank(item_id: str) -> tuple[int, float, int]:
        values = [
            s.score
            for r in matched[item_id]
            for s in r.scores.values()
            if s.scorer_id == scorer and s.status == "ready" and s.score is not None
        ]
        position = matched[item_id][0].position
        if not values:
            return (1, 0.0, position)
        mean = sum(values) / len(values)
        return (0, -mean if descending else mean, position)

    return [
        (item_id, sorted(r.repeat for r in matched[item_id]))
        for item_id in sorted(matched, key=rank)
    ]


FILTERS = [
    RunItemFilter(),
    RunItemFilter(scorer="lat"),
    RunItemFilter(scorer="acc", min_score=0.3),
    RunItemFilter(status="error"),
    RunItemFilter(errors_only=True),
    RunItemFilter(q="Q"),
    RunItemFilter(q="nothing like it"),
]


@pytest.mark.parametrize("wanted", FILTERS, ids=lambda f: repr(f.model_dump(exclude_defaults=True)))
@pytest.mark.parametrize("sort", ["score_asc", "score_desc"])
def test_sorted_pages_equal_a_python_ranking(
    store: Store, wanted: RunItemFilter, sort: SortOrder
) -> None:
    scorer = wanted.scorer or "acc"
    expected = _reference(store, wanted, scorer, descending=sort == "score_desc")
    seen: list[tuple[str, list[int]]] = []
    offset: int | None = 0
    while offset is not None:
        view = run_item_groups("run", wanted, sort=sort, offset=offset, limit=37, store=store)
        assert view.total == len(expected)
        assert view.unit == "items"
        assert view.sort_scorer == scorer
        seen += [(g.item_id, [r.repeat for r in g.results]) for g in view.groups]
        offset = view.next_offset
    assert seen == expected
    past = run_item_groups("run", wanted, sort=sort, offset=10_000, store=store)
    assert (past.total, past.groups, past.next_offset) == (len(expected), [], None)


def test_sort_by_an_unknown_scorer_names_it(store: Store) -> None:
    with pytest.raises(ValueError, match="'nope'"):
        run_item_groups("run", RunItemFilter(scorer="nope"), sort="score_desc", store=store)
