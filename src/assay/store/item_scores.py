"""The per-item score aggregates (``tables.item_scores``), kept with the results.

Ranking a run's items by a scorer's mean from the results themselves would group and sort
every result of the run per request (a large part of a second at 100,000 items). The
aggregate is written in the transaction
that stores the results, so a ranked page is an index walk; a sum and a count (not just
the mean) let a later batch with more repeats of an item add to it without reading the
stored scores back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Connection

from assay.store.codec import escape_nul
from assay.store.result_inserts import EncodedResult, result_scores
from assay.types import ItemResult

_UPSERT = (
    "INSERT INTO item_scores"
    " (run_id, scorer_id, item_id, position, score_sum, score_count, mean)"
    " VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
    " ON CONFLICT (run_id, scorer_id, item_id) DO UPDATE SET"
    " position = CASE WHEN excluded.position < item_scores.position"
    " THEN excluded.position ELSE item_scores.position END,"
    " score_sum = item_scores.score_sum + excluded.score_sum,"
    " score_count = item_scores.score_count + excluded.score_count,"
    " mean = CASE WHEN item_scores.score_count + excluded.score_count > 0"
    " THEN (item_scores.score_sum + excluded.score_sum)"
    " / (item_scores.score_count + excluded.score_count) END"
)
"""The upsert as driver SQL (the same text on SQLite and PostgreSQL but for the parameter
marker): through SQLAlchemy's compiled insert, building each row's parameters cost more
than the database's work (≈ 40 of the results' ≈ 130 µs per item)."""


_UPSERT_UNNEST = _UPSERT.replace(
    " VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})",
    " SELECT * FROM unnest(CAST(%s AS TEXT[]), CAST(%s AS TEXT[]), CAST(%s AS TEXT[]),"
    " CAST(%s AS INTEGER[]), CAST(%s AS DOUBLE PRECISION[]), CAST(%s AS INTEGER[]),"
    " CAST(%s AS DOUBLE PRECISION[]))",
)
"""PostgreSQL: the same upsert of a whole batch in one statement, its rows passed as one
array per column (an ``executemany`` of the upsert cost the server an execution per row:
≈ a third of a batch's time on PostgreSQL, 2026-11-27 storewrite). ``_per_item`` already
merged the batch's repeats of an item, so the statement never touches a row twice."""


def _scores(result: ItemResult | EncodedResult) -> Iterator[tuple[str, int, str, float | None]]:
    """(item id, position, scorer id, score if ready else ``None``) of each score."""
    if not isinstance(result, ItemResult):
        return result_scores(result)
    return (
        (result.item_id, result.position, scorer_id, s.score if s.status == "ready" else None)
        for scorer_id, s in result.scores.items()
    )


def _per_item(
    run_id: str, results: Sequence[ItemResult] | Sequence[EncodedResult]
) -> list[tuple[Any, ...]]:
    """One row per (item, scorer) of ``results``: repeats in the same batch summed here,
    since one PostgreSQL upsert may not touch a row twice. Item ids escaped as the
    ``NulSafeString`` column stores them (this bypasses the column types)."""
    found: dict[tuple[str, str], list[Any]] = {}
    for result in results:
        for item_id, position, scorer_id, score in _scores(result):
            entry = found.get((item_id, scorer_id))
            if entry is None:
                entry = found[(item_id, scorer_id)] = [position, 0.0, 0]
            else:
                entry[0] = min(entry[0], position)
            if score is not None:
                entry[1] += score
                entry[2] += 1
    return [
        (
            run_id,
            scorer_id,
            escape_nul(item_id),
            position,
            total,
            count,
            total / count if count else None,
        )
        for (item_id, scorer_id), (position, total, count) in found.items()
    ]


def add_item_scores(
    conn: Connection, run_id: str, results: Sequence[ItemResult] | Sequence[EncodedResult]
) -> None:
    """Add the scores of ``results`` (just inserted, in the caller's transaction) to the
    run's per-item aggregates: new items get a row, repeats of stored items add to it.
    ``results`` as ``ItemResult``s or encoded (``result_inserts.encode_result``)."""
    rows = _per_item(run_id, results)
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        # the batch's rows as seven arrays: one statement, not one execution per row
        conn.exec_driver_sql(
            _UPSERT_UNNEST, tuple(list(column) for column in zip(*rows, strict=True))
        )
        return
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    conn.exec_driver_sql(_UPSERT.format(p=marker), rows)
