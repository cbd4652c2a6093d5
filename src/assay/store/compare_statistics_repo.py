"""Compare statistics kept in the store: the paired statistics of a run against a baseline,
computed once by whoever first asks and read by every later request, server and worker
(issue 25).

Why stored and not only cached in memory: the bootstrap over two 100,000-item runs costs
seconds, and an in-memory cache starts empty after each restart and in each worker of a
multi-process server. The store holds the statistics as JSON text it never looks inside
(the server layer owns their model), under the (baseline, run, threshold) key with a
``fingerprint`` of what they were computed from: a read with another fingerprint finds
nothing, so a resumed or re-finished run is compared afresh, and the next write replaces
the stale row. Deleting either run deletes the row (``ON DELETE CASCADE``).
"""

from __future__ import annotations

import time
from typing import Literal

import sqlalchemy as sa

from assay.store.db import Database
from assay.store.tables import compare_statistics

StatisticsPart = Literal["summary", "full"]
"""``summary``: the statistics without their per-item lists (a compare page's, small);
``full``: with them (to page the regressed and improved items)."""


class CompareStatisticsRepository:
    """Read and write stored compare statistics (JSON text) by (baseline, run, threshold)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(
        self,
        baseline_id: str,
        run_id: str,
        threshold: float,
        fingerprint: str,
        part: StatisticsPart = "full",
    ) -> str | None:
        """The stored ``part`` for the key, ``None`` when there is none or it was computed
        from something else (another ``fingerprint``: stale)."""
        c = compare_statistics.c
        column = c.summary if part == "summary" else c.full
        query = sa.select(column).where(
            c.baseline_id == baseline_id,
            c.run_id == run_id,
            c.threshold == threshold,
            c.fingerprint == fingerprint,
        )
        with self._db.read() as conn:
            found: str | None = conn.execute(query).scalar_one_or_none()
        return found

    def put(
        self,
        baseline_id: str,
        run_id: str,
        threshold: float,
        fingerprint: str,
        *,
        summary: str,
        full: str,
    ) -> None:
        """Keep the statistics for the key, replacing whatever was stored for it (a stale
        fingerprint, or the same statistics computed at the same time by another worker).
        Nothing is stored when either run is gone (deleted while computing): the foreign
        keys refuse the row, and a vanished run has nothing to keep."""
        c = compare_statistics.c
        key = (
            c.baseline_id == baseline_id,
            c.run_id == run_id,
            c.threshold == threshold,
        )
        row = {
            "baseline_id": baseline_id,
            "run_id": run_id,
            "threshold": threshold,
            "fingerprint": fingerprint,
            "summary": summary,
            "full": full,
            "computed_at": time.time(),
        }
        try:
            with self._db.write() as conn:
                conn.execute(compare_statistics.delete().where(*key))
                conn.execute(compare_statistics.insert().values(**row))
        except sa.exc.IntegrityError:
            return  # a run deleted meanwhile: the transaction rolled back, nothing kept

    def count(self) -> int:
        """How many statistics are stored (any fingerprint)."""
        with self._db.read() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count()).select_from(compare_statistics)
                ).scalar_one()
            )
