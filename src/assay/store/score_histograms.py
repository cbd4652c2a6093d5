"""How a run's scores are spread, counted in SQL: the run page's per-scorer histograms.

Counting in the database (one grouped query per scorer) keeps a 100,000-item run's
histograms from loading every score into Python; the bins are a portable ``CASE`` over
the edges, so SQLite and PostgreSQL put a score in the same bin (casting a float to an
integer truncates in one and rounds in the other).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import sqlalchemy as sa

from assay.store.db import Database
from assay.store.tables import item_results, item_scores, scores

MAX_BINS = 50


@dataclass(frozen=True, slots=True)
class ScoreHistogram:
    """``counts[k]`` ready scores lie in ``edges[k]..edges[k+1]`` (the last bin includes
    its upper edge; scores outside the edges go to the nearest end bin). Empty ``counts``:
    the scorer has no numeric score in the run."""

    scorer_id: str
    edges: list[float]
    counts: list[int]

    @property
    def total(self) -> int:
        return sum(self.counts)


class ScoreHistogramQueries:
    """Per-scorer score counts of one run."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def histogram(
        self, run_id: str, scorer_id: str, *, low: float, high: float, bins: int = 10
    ) -> ScoreHistogram:
        """``bins`` equal bins from ``low`` to ``high``; a non-finite or empty range is
        replaced by the stored scores' own min..max."""
        return self.histograms(run_id, {scorer_id: (low, high)}, bins=bins)[scorer_id]

    def histograms(
        self,
        run_id: str,
        ranges: Mapping[str, tuple[float, float]],
        *,
        bins: int = 10,
        single_repeat: bool = False,
    ) -> dict[str, ScoreHistogram]:
        """``histogram`` of each scorer of ``ranges`` (scorer id → (low, high)). Scorers
        that share a range are counted in one pass over the run's scores (most scorers
        score 0..1), so a run with four scorers costs one join, not four.

        ``single_repeat`` (the caller knows every item of the run has one result): the
        counts come from the stored per-item means (``tables.item_scores``), which are
        then exactly the ready scores, read from their covering partial index instead of
        joining every score to its result (0.8 s cold at 100,000 items)."""
        if not 2 <= bins <= MAX_BINS:
            raise ValueError(f"bins must be from 2 to {MAX_BINS} (got {bins})")
        joined: sa.FromClause
        value: sa.ColumnElement[float]
        scorer: sa.ColumnElement[str]
        if single_repeat:
            joined, value, scorer = item_scores, item_scores.c.mean, item_scores.c.scorer_id

            def ready(scorer_ids: list[str]) -> sa.ColumnElement[bool]:
                return sa.and_(
                    item_scores.c.run_id == run_id,
                    item_scores.c.scorer_id.in_(scorer_ids),
                    item_scores.c.mean.is_not(None),
                )
        else:
            joined = scores.join(item_results, scores.c.result_id == item_results.c.id)
            value, scorer = scores.c.score, scores.c.scorer_id

            def ready(scorer_ids: list[str]) -> sa.ColumnElement[bool]:
                return sa.and_(
                    item_results.c.run_id == run_id,
                    scores.c.scorer_id.in_(scorer_ids),
                    scores.c.status == "ready",
                    scores.c.score.is_not(None),
                )

        found = {key: ScoreHistogram(key, [], []) for key in ranges}
        with self._db.read() as conn:
            shared: dict[tuple[float, float], list[str]] = {}
            for key, (low, high) in ranges.items():
                if not (math.isfinite(low) and math.isfinite(high) and low < high):
                    bounds = conn.execute(
                        sa.select(sa.func.min(value), sa.func.max(value))
                        .select_from(joined)
                        .where(ready([key]))
                    ).one()
                    if bounds[0] is None:
                        continue
                    low, high = float(bounds[0]), float(bounds[1])
                    if low == high:
                        low, high = low - 0.5, high + 0.5
                shared.setdefault((low, high), []).append(key)
            for (low, high), keys in shared.items():
                # k / bins before the multiply: 0.3 is an edge, not 0.30000000000000004
                # (which would put a score of exactly 0.3 in the bin below)
                edges = [low + (high - low) * k / bins for k in range(bins)] + [high]
                bucket = sa.case(
                    *((value < edge, k) for k, edge in enumerate(edges[1:-1])),
                    else_=bins - 1,
                ).label("bucket")
                rows = conn.execute(
                    sa.select(scorer, bucket, sa.func.count())
                    .select_from(joined)
                    .where(ready(keys))
                    .group_by(scorer, bucket)
                ).all()
                counts = {key: [0] * bins for key in keys}
                for key, k, count in rows:
                    counts[key][int(k)] = int(count)
                for key in keys:
                    if any(counts[key]):
                        found[key] = ScoreHistogram(key, edges, counts[key])
        return found
