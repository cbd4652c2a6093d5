"""The per-item score aggregates (``tables.item_scores``), kept with the results.

Ranking a run's items by a scorer's mean used to group and sort every result of the run
per request (0.35–0.55 s at 100,000 items). The aggregate is written in the transaction
that stores the results, so a ranked page is an index walk; a sum and a count (not just
the mean) let a later batch with more repeats of an item add to it without reading the
stored scores back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite

from assay.store.tables import item_scores
from assay.types import ItemResult


def _per_item(run_id: str, results: Sequence[ItemResult]) -> list[dict[str, Any]]:
    """One row per (item, scorer) of ``results``: repeats in the same batch summed here,
    since one PostgreSQL upsert may not touch a row twice."""
    found: dict[tuple[str, str], list[Any]] = {}
    for result in results:
        for scorer_id, score in result.scores.items():
            entry = found.get((result.item_id, scorer_id))
            if entry is None:
                entry = found[(result.item_id, scorer_id)] = [result.position, 0.0, 0]
            else:
                entry[0] = min(entry[0], result.position)
            if score.status == "ready" and score.score is not None:
                entry[1] += score.score
                entry[2] += 1
    return [
        {
            "run_id": run_id,
            "scorer_id": scorer_id,
            "item_id": item_id,
            "position": position,
            "score_sum": total,
            "score_count": count,
            "mean": total / count if count else None,
        }
        for (item_id, scorer_id), (position, total, count) in found.items()
    ]


def add_item_scores(conn: Connection, run_id: str, results: Sequence[ItemResult]) -> None:
    """Add the scores of ``results`` (just inserted, in the caller's transaction) to the
    run's per-item aggregates: new items get a row, repeats of stored items add to it."""
    rows = _per_item(run_id, results)
    if not rows:
        return
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    stmt = insert(item_scores)
    old, new = item_scores.c, stmt.excluded
    total = old.score_sum + new.score_sum
    count = old.score_count + new.score_count
    stmt = stmt.on_conflict_do_update(
        index_elements=[old.run_id, old.scorer_id, old.item_id],
        set_={
            "position": sa.case((new.position < old.position, new.position), else_=old.position),
            "score_sum": total,
            "score_count": count,
            "mean": sa.case((count > 0, total / count), else_=sa.null()),
        },
    )
    conn.execute(stmt, rows)
