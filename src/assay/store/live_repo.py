"""Live runs: results that arrive one observation at a time, stored at most once each.

Why insert-if-absent instead of the runner's insert-or-refuse: a live monitor retries a
failed batch, restarts after a crash and re-sends observations whose ids it already used; a
second row for one observation is the duplicate-score bug users of other tools report. The
``(run_id, item_id, repeat)`` unique constraint of ``item_results`` already makes a second
row impossible; this repository skips the keys a batch shares with the store inside the
same write transaction, so a retry stores nothing twice and raises nothing. Two processes
racing on the same key: the loser's transaction hits the constraint, rolls back whole and
is retried once (it then skips the winner's row).

Why counters live in the run's metadata (``meta["live"]["counts"]``) and are added, not
overwritten: several processes (or restarts) feed one live run; each sends the deltas it
counted since its last write, in the same transaction as its rows, so what is stored and
what is counted never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from assay.store.codec import chunked, now
from assay.store.db import Database
from assay.store.errors import RunNotFoundError
from assay.store.item_scores import add_item_scores
from assay.store.results_codec import result_rows
from assay.store.tables import item_results, judge_calls, runs, scores
from assay.types import ItemResult

LIVE_KEY = "live"
"""The key of a live run's state inside the run's metadata."""


def merge_counts(stored: Mapping[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """``stored + delta`` for nested dicts of numbers (a missing key counts as 0)."""
    merged: dict[str, Any] = dict(stored)
    for key, value in delta.items():
        if isinstance(value, Mapping):
            merged[key] = merge_counts(merged.get(key) or {}, value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            merged[key] = (merged.get(key) or 0) + value
        else:
            merged[key] = value
    return merged


class LiveRunRepository:
    """Idempotent result writes and additive counters for live runs."""

    CHUNK = 500

    def __init__(self, db: Database) -> None:
        self._db = db

    def next_position(self, run_id: str) -> int:
        """One past the highest stored position (where a restarted monitor continues)."""
        with self._db.read() as conn:
            query = sa.select(sa.func.max(item_results.c.position)).where(
                item_results.c.run_id == run_id
            )
            top = conn.execute(query).scalar()
        return 0 if top is None else int(top) + 1

    def write(
        self,
        run_id: str,
        results: Sequence[ItemResult],
        *,
        fates: Sequence[tuple[str, str | None]] = (),
        counts: Mapping[str, Any] | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store the results whose (item, repeat) the run does not have yet, count the fate
        of each (``fates[i]`` is ``results[i]``'s; one already stored counts as
        ``duplicate``), add ``counts`` and set the keys of ``state``, in one transaction.
        Returns the fate counts added for ``results``."""
        try:
            return self._write(run_id, results, fates, counts or {}, state or {})
        except IntegrityError:
            # another writer stored one of these keys between our check and our insert
            return self._write(run_id, results, fates, counts or {}, state or {})

    def _write(
        self,
        run_id: str,
        results: Sequence[ItemResult],
        fates: Sequence[tuple[str, str | None]],
        counts: Mapping[str, Any],
        state: Mapping[str, Any],
    ) -> dict[str, Any]:
        t = item_results.c
        with self._db.write() as conn:
            row = conn.execute(
                sa.select(runs.c.meta).where(runs.c.id == run_id).with_for_update()
            ).first()
            if row is None:
                raise RunNotFoundError(run_id)
            fresh: list[ItemResult] = []
            fate_counts: dict[str, Any] = {}
            seen: set[tuple[str, int]] = set()
            index = 0
            for chunk in chunked(results, self.CHUNK):
                ids = [result.item_id for result in chunk]
                stored = {
                    (item_id, repeat)
                    for item_id, repeat in conn.execute(
                        sa.select(t.item_id, t.repeat).where(t.run_id == run_id, t.item_id.in_(ids))
                    )
                }
                for result in chunk:
                    fate, reason = fates[index] if index < len(fates) else ("scored", None)
                    index += 1
                    key = (result.item_id, result.repeat)
                    if key in stored or key in seen:
                        fate, reason = "duplicate", None
                    else:
                        seen.add(key)
                        fresh.append(result)
                    if reason is None:
                        fate_counts[fate] = fate_counts.get(fate, 0) + 1
                    else:
                        sub = fate_counts.setdefault(fate, {})
                        sub[reason] = sub.get(reason, 0) + 1
            if fresh:
                item_rows, score_rows, call_rows = result_rows(run_id, fresh)
                conn.execute(item_results.insert(), item_rows)
                if score_rows:
                    conn.execute(scores.insert(), score_rows)
                if call_rows:
                    conn.execute(judge_calls.insert(), call_rows)
                add_item_scores(conn, run_id, fresh)
            meta = dict(row.meta or {})
            live = dict(meta.get(LIVE_KEY) or {})
            added = merge_counts(counts, fate_counts)
            if added:
                live["counts"] = merge_counts(live.get("counts") or {}, added)
            live.update(state)
            meta[LIVE_KEY] = live
            failed = sum(1 for result in fresh if result.error is not None)
            conn.execute(
                runs.update()
                .where(runs.c.id == run_id)
                .values(
                    meta=meta,
                    completed_results=runs.c.completed_results + len(fresh),
                    failed_results=runs.c.failed_results + failed,
                    updated_at=now(),
                )
            )
        return fate_counts

    def state(self, run_id: str) -> dict[str, Any]:
        """The live part of the run's metadata (counts, rate, budget)."""
        with self._db.read() as conn:
            row = conn.execute(sa.select(runs.c.meta).where(runs.c.id == run_id)).first()
        if row is None:
            raise RunNotFoundError(run_id)
        return dict((row.meta or {}).get(LIVE_KEY) or {})

    def run_ids(self, name: str) -> list[str]:
        """The live runs of the monitor ``name``, newest first."""
        query = (
            sa.select(runs.c.id)
            .where(runs.c.name == name, runs.c.data_source == LIVE_KEY)
            .order_by(runs.c.created_at.desc(), runs.c.id.desc())
        )
        with self._db.read() as conn:
            return [str(run_id) for run_id in conn.execute(query).scalars()]
