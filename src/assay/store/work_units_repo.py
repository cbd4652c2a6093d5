"""Work units of scaled-out runs: seeded by the driver, claimed under a lease by workers,
deleted by their owner in the transaction that stores their results.

Why this shape (the rules that make "nothing lost, nothing stored twice" hold):

* a unit is one row keyed (run, position, repeat), unique: seeding twice (a resumed
  driver) adds nothing;
* a claim writes the worker's lease (owner, expiry) on up to ``limit`` rows that have no
  lease or an expired one, in one statement. On PostgreSQL the rows are picked with
  ``FOR UPDATE SKIP LOCKED``, so concurrent claimers take disjoint batches without waiting
  on each other; on SQLite the write lock (``BEGIN IMMEDIATE``) serializes claims, which
  is only used when every worker runs on this machine;
* a result is stored only by the unit's current owner: the transaction deletes the unit
  rows still leased to that owner and inserts the results of exactly those. A worker that
  lost its lease (it stalled past the expiry and another worker claimed the unit) stores
  nothing for that unit; one that died stores nothing at all and its units' leases lapse,
  so another worker claims them again. The unique key on ``item_results`` backs this up;
* heartbeats extend the expiry of every unit a live worker holds, so a slow batch is not
  taken away from a worker that is still working on it;
* every claim counts (``attempts``) and a give-back uncounts, so a unit claimed again with
  a count above 1 is one whose worker died holding it: the worker loop runs such a unit
  alone and stores it as an item error once the count passes the cap (a poison item that
  kills every process scoring it must not loop forever, see ``ray_worker``).

Lease expiry uses the clock of whoever claims: hosts of one cluster must agree on the time
to within a small part of the lease (NTP does; the default lease is a minute).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from assay.store.codec import chunked, now
from assay.store.datasets_repo import item_columns, item_from_row
from assay.store.db import Database
from assay.store.runs_repo import _owner_is_gone, insert_results
from assay.store.tables import work_units
from assay.types import Item, ItemResult

Unit = tuple[int, Item, int]
"""(position, item, repeat): what a worker scores."""

UNIT_LEASE_S = 60.0
"""How long a claimed unit stays with its worker without a heartbeat."""

_SEED_CHUNK = 1000


class WorkUnitRepository:
    """The ``work_units`` table of one store."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def seed(self, run_id: str, units: Iterable[Unit]) -> int:
        """Add the units not yet present (chunks of 1,000 per transaction; a unit already
        there, from an earlier driver of the same run, is left as it is). Returns how many
        units the run has to do now."""
        insert = self._insert()
        for chunk in chunked(units, _SEED_CHUNK):
            rows = [
                {"run_id": run_id, "position": position, "repeat": repeat, **item_columns(item)}
                for position, item, repeat in chunk
            ]
            statement = insert(work_units).on_conflict_do_nothing(
                index_elements=["run_id", "position", "repeat"]
            )
            with self._db.write() as conn:
                conn.execute(statement, rows)
        return self.remaining(run_id)

    def claim(
        self, run_id: str, owner: str, limit: int, *, lease_s: float = UNIT_LEASE_S
    ) -> list[Unit]:
        """Lease up to ``limit`` free (never leased, or lease expired) units of the run to
        ``owner``, in (position, repeat) order; empty when none is free right now."""
        return [unit for unit, _ in self.claim_counted(run_id, owner, limit, lease_s=lease_s)]

    def claim_counted(
        self, run_id: str, owner: str, limit: int, *, lease_s: float = UNIT_LEASE_S
    ) -> list[tuple[Unit, int]]:
        """``claim``, each unit with its claim count including this claim: above 1, an
        earlier claimer neither stored it nor gave it back (its process died)."""
        t = work_units.c
        stamp = now()
        free = (
            sa.select(t.id)
            .where(t.run_id == run_id)
            .where(sa.or_(t.lease_expires_at.is_(None), t.lease_expires_at < stamp))
            .order_by(t.id)
            .limit(limit)
        )
        if self._db.dialect == "postgresql":
            free = free.with_for_update(skip_locked=True)
        statement = (
            work_units.update()
            .where(t.id.in_(free.scalar_subquery()))
            .values(lease_owner=owner, lease_expires_at=stamp + lease_s, attempts=t.attempts + 1)
            .returning(
                t.position,
                t.repeat,
                t.attempts,
                t.item_id,
                t.input,
                t.output,
                t.expected_output,
                t.context,
                t.meta,
            )
        )
        with self._db.write() as conn:
            rows = conn.execute(statement).all()
        units = [((row.position, item_from_row(row), row.repeat), row.attempts) for row in rows]
        units.sort(key=lambda counted: (counted[0][0], counted[0][2]))
        return units

    def renew(self, run_id: str, owner: str, *, lease_s: float = UNIT_LEASE_S) -> int:
        """Extend the lease of every unit ``owner`` holds in the run (the heartbeat);
        returns how many it still holds."""
        t = work_units.c
        with self._db.write() as conn:
            result = conn.execute(
                work_units.update()
                .where(t.run_id == run_id, t.lease_owner == owner)
                .values(lease_expires_at=now() + lease_s)
            )
            return int(result.rowcount)

    def complete(self, run_id: str, owner: str, results: Sequence[ItemResult]) -> int:
        """Store the results of the units ``owner`` still holds and delete those units, in
        one transaction; a result whose unit is no longer the owner's (lease lost), or whose
        (item, repeat) the run already holds (the unit was seeded again by a resuming driver
        while a dead driver's worker stored it), is dropped. Returns how many were stored."""
        if not results:
            return 0
        t = work_units.c
        keys = [(result.position, result.repeat) for result in results]
        with self._db.write() as conn:
            owned: set[tuple[int, int]] = set()
            for chunk in chunked(keys, 500):
                deleted = conn.execute(
                    work_units.delete()
                    .where(t.run_id == run_id, t.lease_owner == owner)
                    .where(sa.tuple_(t.position, t.repeat).in_(chunk))
                    .returning(t.position, t.repeat)
                )
                owned.update((position, repeat) for position, repeat in deleted)
            mine = [r for r in results if (r.position, r.repeat) in owned]
            return insert_results(conn, run_id, mine, skip_stored=True)

    def release(
        self, run_id: str, owner: str, keys: Sequence[tuple[int, int]] | None = None
    ) -> None:
        """Give back the units ``owner`` holds (all, or those of ``keys``: (position,
        repeat)): free at once, and their claim not counted, since a worker that gives a
        unit back did not die on it."""
        t = work_units.c
        update = work_units.update().where(t.run_id == run_id, t.lease_owner == owner)
        values = {
            "lease_owner": None,
            "lease_expires_at": None,
            "attempts": sa.case((t.attempts > 0, t.attempts - 1), else_=0),
        }
        with self._db.write() as conn:
            if keys is None:
                conn.execute(update.values(values))
                return
            for chunk in chunked(keys, 500):
                conn.execute(
                    update.where(sa.tuple_(t.position, t.repeat).in_(chunk)).values(values)
                )

    def release_gone(self, run_id: str) -> int:
        """Free at once the units held by workers of this host whose process is gone (a
        killed worker: no need to wait for its lease to lapse); returns how many. Owners
        on other hosts cannot be checked from here: their leases lapse."""
        gone = [owner for owner in self.holders(run_id) if _owner_is_gone(owner)]
        if not gone:
            return 0
        t = work_units.c
        with self._db.write() as conn:
            result = conn.execute(
                work_units.update()
                .where(t.run_id == run_id, t.lease_owner.in_(gone))
                .values(lease_owner=None, lease_expires_at=None)
            )
            return int(result.rowcount)

    def remaining(self, run_id: str) -> int:
        """Units of the run not stored yet (free or leased)."""
        query = sa.select(sa.func.count()).where(work_units.c.run_id == run_id)
        with self._db.read() as conn:
            return int(conn.execute(query).scalar_one())

    def holders(self, run_id: str) -> dict[str, int]:
        """Lease owners holding live leases in the run, with how many units each holds."""
        t = work_units.c
        query = (
            sa.select(t.lease_owner, sa.func.count())
            .where(t.run_id == run_id, t.lease_owner.is_not(None), t.lease_expires_at >= now())
            .group_by(t.lease_owner)
        )
        with self._db.read() as conn:
            return {str(owner): int(count) for owner, count in conn.execute(query)}

    def clear(self, run_id: str) -> None:
        """Delete every unit of the run (it finished, or is resumed by the local backend)."""
        with self._db.write() as conn:
            conn.execute(work_units.delete().where(work_units.c.run_id == run_id))

    def _insert(self) -> Any:
        from sqlalchemy.dialects import postgresql, sqlite

        return postgresql.insert if self._db.dialect == "postgresql" else sqlite.insert
