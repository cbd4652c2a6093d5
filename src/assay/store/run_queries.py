"""Read-side queries over a run's results for browsing: filtered pages and per-item
comparison rows. Every filter, sort and page runs in SQL, so the first page of a
100,000-item run costs one indexed page read, never a scan through Python.

``RunRepository`` streams whole runs (reports, statistics); this module answers the
"show me 50 items" questions of the API and the UI.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy import Row

from assay.store.codec import chunked, escape_nul
from assay.store.db import Database
from assay.store.errors import RunNotFoundError
from assay.store.result_export import FlatRow, export_rows, result_dicts
from assay.store.result_lines import DictView, result_lines
from assay.store.results_codec import build_results
from assay.store.tables import (
    TEXT_INDEX,
    item_results,
    item_scores,
    judge_calls,
    runs,
    scores,
)
from assay.types import ItemResult

_ORDER = (item_results.c.position, item_results.c.repeat, item_results.c.item_id)


@dataclass(frozen=True, slots=True, eq=False)
class ScoreArrays:
    """Every score of a run as columns, one entry per stored score in (position, repeat,
    item id, scorer) order: what ``analysis.compare`` needs, without a Python object per
    score (two 100,000-item runs are 200,000 of them). ``score`` is NaN where none was
    stored; ``values`` holds only the scores that stored named values, as (row, values)."""

    item_id: list[str]
    position: npt.NDArray[np.int64]
    repeat: npt.NDArray[np.int64]
    scorer_id: list[str]
    status: list[str]
    score: npt.NDArray[np.float64]
    values: list[tuple[int, dict[str, float]]]

    def __len__(self) -> int:
        return len(self.item_id)


ChangeState = Literal["regressed", "improved", "same"]
"""A comparison row's kind: worse in some run, else better in some run, else unchanged."""


@dataclass(frozen=True, slots=True)
class ResultFilter:
    """Which results of a run to show. Score conditions (``scorer``, ``min_score``,
    ``max_score``, ``status``) must hold for one score of the result (of ``scorer`` when
    given); ``errors_only`` keeps results whose target or any scorer failed; ``q`` is a
    case-insensitive substring of the input, output or expected output (as JSON text)."""

    scorer: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    status: str | None = None
    errors_only: bool = False
    q: str | None = None


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_text_copy = sa.table(
    TEXT_INDEX,
    *(
        sa.column(name, sa.Text)
        for name in ("id", "run_id", "item_id", "input", "output", "expected_output")
    ),
)


TextSearch = Literal["postgresql", "sqlite"] | None
"""How a store answers ``ResultFilter.q``: ``"postgresql"`` from migration 0010's
lower-cased copy of the texts, ``"sqlite"`` by SQLite's own ``LIKE`` over the stored JSON
text, ``None`` by the reference scan (``lower(CAST(...)) LIKE``, on either database)."""


def _text_condition(run_id: str, needle: str, search: TextSearch) -> sa.ColumnElement[bool]:
    """``needle`` (already lower-cased) is a substring of a result's input, output or
    expected output as lower-cased JSON text.

    PostgreSQL (``search == "postgresql"``): the result's row in the lower-cased copy
    matches (``_copy_matches``): an ``IN`` over stored text the planner can estimate, where
    casting and lower-casing each JSONB value per row was 0.6-0.9 s at 100,000 results and
    drew a bad plan when combined with a score range (issue 25).

    SQLite (``"sqlite"``): plain ``LIKE`` on the stored text. SQLite's ``LIKE`` folds
    exactly the case ``lower()`` folds (ASCII only, without ICU) and converts a number to
    text as ``CAST`` does, so ``column LIKE '%needle%'`` keeps the rows ``lower(CAST(column
    AS TEXT)) LIKE '%needle%'`` keeps (the needle is lower-cased already), without three
    new strings per row: the scan of 100,000 results went from 220-460 ms to 75-90 ms
    (load 3). No index on purpose: a trigram FTS5 index kept by triggers made every stored
    result 2.4x slower to write (``benchmarks/result_text_cost.py``) for a search that only
    100,000-item runs need.

    ``None``: that lower-cased cast, the reference the two are tested against."""
    t = item_results.c
    pattern = f"%{_escape_like(needle)}%"
    columns = (t.input, t.output, t.expected_output)
    if search == "postgresql":
        return t.id.in_(sa.select(_text_copy.c.id).where(*_copy_matches(run_id, needle)))
    if search == "sqlite":
        # ``type_coerce``: compared as the text it is stored as, with no CAST in the SQL
        return sa.or_(
            *(sa.type_coerce(column, sa.Text).like(pattern, escape="\\") for column in columns)
        )
    return sa.or_(
        *(sa.func.lower(sa.cast(column, sa.Text)).like(pattern, escape="\\") for column in columns)
    )


def _copy_matches(run_id: str, needle: str) -> list[sa.ColumnElement[bool]]:
    """Rows of PostgreSQL's lower-cased copy (migration 0010) of the run's results whose
    input, output or expected output holds ``needle`` (lower-cased, as stored)."""
    c = _text_copy.c
    pattern = f"%{_escape_like(needle)}%"
    return [
        c.run_id == run_id,
        sa.or_(
            *(
                column.like(pattern, escape="\\")
                for column in (c.input, c.output, c.expected_output)
            )
        ),
    ]


def _count_text_matches(
    conn: sa.Connection, run_id: str, needle: str, score_range: ResultFilter | None = None
) -> int:
    """How many results of the run match ``needle`` (lower-cased, as stored), counted on
    PostgreSQL's lower-cased copy of their texts (migration 0010: one row per result, kept
    by a trigger and cascading with it): the same ``LIKE`` as the scan, over stored text
    instead of casting and lower-casing every JSONB value, and without a join back (the
    copy has a row exactly where the run has a result).

    ``score_range`` (``_has_mean_range`` of its scorer, a run with one result per item):
    only the items whose stored mean is in it, by the item id the copy carries (migration
    0012): the copy's scan hash-joined to a range of the means' index, where mapping the
    range to result ids through ``item_results`` was a second join over the whole run."""
    where = _copy_matches(run_id, needle)
    if score_range is not None and score_range.scorer is not None:
        where.append(
            _text_copy.c.item_id.in_(_means_in_range(run_id, score_range.scorer, score_range))
        )
    query = sa.select(sa.func.count()).select_from(_text_copy).where(*where)
    return int(conn.execute(query).scalar_one())


def _conditions(
    run_id: str,
    wanted: ResultFilter,
    *,
    indexed_text: TextSearch = None,
    single_repeat: bool = False,
) -> list[sa.ColumnElement[bool]]:
    """``wanted`` as conditions on ``item_results``. ``single_repeat`` (every item of the
    run has one result): a score range of one scorer is the set of items whose stored
    mean is in it (a range of a covering index, hashed once) instead of a probe of every
    result's scores."""
    t = item_results.c
    s = scores.c
    where: list[sa.ColumnElement[bool]] = [t.run_id == run_id]
    if single_repeat and wanted.scorer is not None and _has_mean_range(wanted):
        where.append(t.item_id.in_(_means_in_range(run_id, wanted.scorer, wanted)))
        wanted = dataclasses.replace(
            wanted, scorer=None, min_score=None, max_score=None, status=None
        )
    score_where: list[sa.ColumnElement[bool]] = []
    if wanted.scorer is not None:
        score_where.append(s.scorer_id == wanted.scorer)
    if wanted.min_score is not None:
        score_where.append(s.score >= wanted.min_score)
    if wanted.max_score is not None:
        score_where.append(s.score <= wanted.max_score)
    if wanted.status is not None:
        score_where.append(s.status == wanted.status)
    if score_where:
        where.append(sa.exists().where(s.result_id == t.id, *score_where))
    if wanted.errors_only:
        # two id sets read from partial indexes (``ix_item_results_failed``,
        # ``ix_scores_failed``) instead of every result's ``error`` and a probe of its
        # scores; the literal (not a bound parameter) lets either database match the
        # partial index's predicate
        failed = item_results.alias("failed")
        failed_scores = scores.alias("failed_scores")
        where.append(
            sa.or_(
                t.id.in_(
                    sa.select(failed.c.id).where(
                        failed.c.run_id == run_id, failed.c.error.is_not(None)
                    )
                ),
                t.id.in_(
                    sa.select(failed_scores.c.result_id).where(
                        failed_scores.c.status == sa.literal_column("'error'")
                    )
                ),
            )
        )
    if wanted.q:
        # the needle escaped as stored text is (``codec.escape_nul``): a NUL finds stored
        # NULs on both databases (PostgreSQL refused the parameter; SQLite's LIKE cut the
        # pattern at it)
        where.append(_text_condition(run_id, escape_nul(wanted.q.lower()), indexed_text))
    return where


def _has_mean_range(wanted: ResultFilter) -> bool:
    """``wanted``'s score conditions keep exactly the results whose ``wanted.scorer``
    score is ready and within its bounds, if any (a score is a number exactly when it is
    ready): for a run with one result per item, a range of the items' stored means."""
    return wanted.status in (None, "ready") and (
        wanted.status == "ready" or wanted.min_score is not None or wanted.max_score is not None
    )


def _is_score_range(wanted: ResultFilter, scorer: str) -> bool:
    """``wanted`` is only a score range of ``scorer`` (``_has_mean_range``)."""
    return (
        wanted.scorer == scorer
        and not wanted.errors_only
        and not wanted.q
        and _has_mean_range(wanted)
    )


def _means_in_range(run_id: str, scorer: str, score_range: ResultFilter) -> sa.Select[Any]:
    """The ids of the run's items whose stored ``scorer`` mean is within
    ``score_range``'s bounds, from the partial index of the means."""
    a = item_scores.c
    where = [a.run_id == run_id, a.scorer_id == scorer, a.mean.is_not(None)]
    if score_range.min_score is not None:
        where.append(a.mean >= score_range.min_score)
    if score_range.max_score is not None:
        where.append(a.mean <= score_range.max_score)
    return sa.select(a.item_id).where(*where)


def _count_means_in_range(
    conn: sa.Connection, run_id: str, scorer: str, score_range: ResultFilter
) -> int:
    """How many of the run's items have a stored ``scorer`` mean within ``score_range``'s
    bounds: for a run with one result per item, the results passing a score range
    (``_is_score_range``), counted on the partial index of the means."""
    found = _means_in_range(run_id, scorer, score_range).subquery()
    return int(conn.execute(sa.select(sa.func.count()).select_from(found)).scalar_one())


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One (item, scorer) of a baseline with that item's mean score in each other run.
    ``deltas[i] = scores[i] - baseline`` (``None`` when run ``i`` has no number for it)."""

    item_id: str
    scorer_id: str
    position: int
    baseline: float
    scores: tuple[float | None, ...]
    deltas: tuple[float | None, ...]


class RunQueries:
    """Filtered pages of a run's results and comparison rows; read-only."""

    WALK_DEPTH = 1000
    """Pages of a filtered rank up to this offset walk the stored means, skipping the items
    the filter drops (cheap near the top); deeper ones group (the walk grows with the
    offset divided by the share of items that pass)."""

    WALK_SHARE = 8
    """A filtered rank walks the stored means only when at least ``WALK_SHARE`` times the
    page's end pass the filter (the walk then reads at most about 1/``WALK_SHARE`` of the
    run's items); otherwise one grouped pass ranks the few that do."""

    def __init__(self, db: Database, *, text_index: bool = True) -> None:
        """``text_index``: each database's fast text search (``TextSearch``); off, every
        search is the reference scan the fast ones are tested against."""
        self._db = db
        self._indexed_text: TextSearch = None
        if text_index and db.dialect in ("postgresql", "sqlite"):
            self._indexed_text = "postgresql" if db.dialect == "postgresql" else "sqlite"

    def _require(self, conn: sa.Connection, run_id: str) -> None:
        if conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first() is None:
            raise RunNotFoundError(run_id)

    def count(self, run_id: str, wanted: ResultFilter, *, single_repeat: bool = False) -> int:
        """How many results of the run pass ``wanted``.

        Unfiltered, the run's ``completed_results`` counter (kept in the results'
        transaction) answers without counting 100,000 rows; a score range of a run with one
        result per item (``single_repeat``, the caller's knowledge) is a range of the
        stored means' index instead of a probe of every result's scores; a text search
        alone on PostgreSQL counts the stored lower-cased texts (``_count_text_matches``)."""
        with self._db.read() as conn:
            if wanted == ResultFilter():
                stored = conn.execute(
                    sa.select(runs.c.completed_results).where(runs.c.id == run_id)
                ).scalar_one_or_none()
                if stored is None:
                    raise RunNotFoundError(run_id)
                return int(stored)
            self._require(conn, run_id)
            return self._count(conn, run_id, wanted, single_repeat)

    def _count(
        self, conn: sa.Connection, run_id: str, wanted: ResultFilter, single_repeat: bool
    ) -> int:
        if wanted.q and self._indexed_text == "postgresql":
            needle = escape_nul(wanted.q.lower())
            if wanted == ResultFilter(q=wanted.q):
                return _count_text_matches(conn, run_id, needle)
            if single_repeat and wanted.scorer is not None:
                ranged = dataclasses.replace(wanted, q=None)
                if _is_score_range(ranged, wanted.scorer):
                    return _count_text_matches(conn, run_id, needle, ranged)
        if single_repeat and wanted.scorer is not None and _is_score_range(wanted, wanted.scorer):
            return _count_means_in_range(conn, run_id, wanted.scorer, wanted)
        query = sa.select(sa.func.count()).select_from(item_results)
        where = _conditions(
            run_id, wanted, indexed_text=self._indexed_text, single_repeat=single_repeat
        )
        return int(conn.execute(query.where(*where)).scalar_one())

    def page(
        self,
        run_id: str,
        wanted: ResultFilter,
        *,
        offset: int,
        limit: int,
        single_repeat: bool = False,
    ) -> list[ItemResult]:
        """Results passing ``wanted``, in (position, repeat) order, ``limit`` from ``offset``,
        with their scores and judge calls (``single_repeat`` as ``count`` takes it)."""
        with self._db.read() as conn:
            self._require(conn, run_id)
            rows = conn.execute(
                sa.select(item_results)
                .where(
                    *_conditions(
                        run_id, wanted, indexed_text=self._indexed_text, single_repeat=single_repeat
                    )
                )
                .order_by(*_ORDER)
                .offset(offset)
                .limit(limit)
            ).all()
            return self._with_scores(conn, rows)

    def counted_page(
        self,
        run_id: str,
        wanted: ResultFilter,
        *,
        offset: int,
        limit: int,
        single_repeat: bool = False,
    ) -> tuple[int, list[ItemResult]]:
        """(``count``, ``page``) of the same arguments, the page read first: a page that
        ends the matches (shorter than ``limit``, and not past the end) says how many
        there are, so a search few results pass scans the run once, not twice (page,
        then count). Otherwise the count is read as ``count`` reads it."""
        items = self.page(run_id, wanted, offset=offset, limit=limit, single_repeat=single_repeat)
        if len(items) < limit and (items or offset == 0):
            return offset + len(items), items
        return self.count(run_id, wanted, single_repeat=single_repeat), items

    EXPORT_CHUNK = 2000

    def export_rows(self, run_id: str, scorer_ids: Sequence[str]) -> Iterator[FlatRow]:
        """Every result of the run as a ``FlatRow`` (its export cells, then the (status,
        score) of each of ``scorer_ids``), in (position, repeat) order, streamed
        ``EXPORT_CHUNK`` results at a time (``store.result_export``: no ``ItemResult`` per
        row, one read per chunk)."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return export_rows(self._db, run_id, scorer_ids, chunk=self.EXPORT_CHUNK)

    def export_dicts(self, run_id: str) -> Iterator[dict[str, Any]]:
        """Every result of the run as ``ItemResult.model_dump(mode="json")``'s dict
        (``store.result_export.result_dicts``), read ``EXPORT_CHUNK`` at a time."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return result_dicts(self._db, run_id, chunk=self.EXPORT_CHUNK)

    def export_lines(self, run_id: str, view: DictView | None = None) -> Iterator[list[str]]:
        """Every result of the run as its JSON line, a list per ``EXPORT_CHUNK`` results:
        the bytes of ``export_dicts``' dicts serialised, ``view`` applied to the results
        with an error anywhere (``store.result_lines``)."""
        with self._db.read() as conn:
            self._require(conn, run_id)
        return result_lines(self._db, run_id, view=view, chunk=self.EXPORT_CHUNK)

    def item(self, run_id: str, item_id: str) -> list[ItemResult]:
        """Every repeat of one item of the run, in repeat order (empty: not in the run)."""
        t = item_results.c
        with self._db.read() as conn:
            self._require(conn, run_id)
            rows = conn.execute(
                sa.select(item_results)
                .where(t.run_id == run_id, t.item_id == item_id)
                .order_by(t.repeat)
            ).all()
            return self._with_scores(conn, rows)

    def first_outputs(
        self, run_id: str, item_ids: Sequence[str]
    ) -> dict[str, tuple[Any, str | None, str | None]]:
        """Per item id of ``item_ids`` the run holds: its first repeat's (output, error
        kind, error message), in one read (the compare page shows 50 items of each run;
        a read per item and run was 100 round trips)."""
        t = item_results.c
        found: dict[str, tuple[Any, str | None, str | None]] = {}
        with self._db.read() as conn:
            self._require(conn, run_id)
            for ids in chunked(sorted(set(item_ids)), 500):
                rows = conn.execute(
                    sa.select(t.item_id, t.output, t.error)
                    .where(t.run_id == run_id, t.item_id.in_(ids))
                    .order_by(t.item_id, t.repeat)
                )
                for item_id, output, error in rows:
                    if item_id not in found:
                        if error is None:
                            found[item_id] = (output, None, None)
                        else:
                            kind = str(error.get("kind", "Exception"))
                            found[item_id] = (output, kind, str(error.get("message", "")))
        return found

    def ranked_items(
        self,
        run_id: str,
        wanted: ResultFilter,
        *,
        scorer: str | None,
        descending: bool,
        offset: int,
        limit: int,
        single_repeat: bool = False,
    ) -> tuple[int, list[tuple[str, list[ItemResult]]]]:
        """(items matching, page) of the run's items with a result passing ``wanted``, ranked
        by the mean ``scorer`` score (status ready) of those results: ascending or
        ``descending``, items without one last, ties by position. Each page entry is
        (item id, its matching results in repeat order, with scores and judge calls), all
        read in one batch rather than one round of queries per item.

        Without a filter (or filtered only to results with a ``scorer`` score) the rank is
        an index walk over the stored per-item means (``tables.item_scores``). Any other
        filter changes which results an item's mean is over, unless every item has one
        result (``single_repeat``, the caller's knowledge of the run): then the walk only
        skips the items the filter drops; otherwise the rank is one grouped SQL query over
        covering indexes (``ranked_ids_grouped``)."""
        t = item_results.c
        with self._db.read() as conn:
            self._require(conn, run_id)
            if scorer is not None and wanted in (ResultFilter(), ResultFilter(scorer=scorer)):
                total, ids = self._ranked_ids_stored(
                    conn,
                    run_id,
                    scorer,
                    wanted.scorer is not None,
                    descending,
                    offset,
                    limit,
                    single_repeat=single_repeat,
                )
            elif scorer is not None and single_repeat and _is_score_range(wanted, scorer):
                total, ids = self._ranked_ids_stored(
                    conn, run_id, scorer, True, descending, offset, limit, wanted
                )
            elif scorer is not None and single_repeat and offset < self.WALK_DEPTH:
                # the walk reads about (offset + limit) / share-of-items-passing means: for
                # a filter few items pass (a rare word), one grouped pass is cheaper than
                # a probe per item of the run, and nothing passing needs no page at all
                total = self._count(conn, run_id, wanted, single_repeat=True)
                if total == 0:
                    ids = []
                elif (offset + limit) * self.WALK_SHARE > total:
                    total, ids = self._ranked_ids_grouped(
                        conn, run_id, wanted, scorer, descending, offset, limit
                    )
                else:
                    ids = self._ranked_ids_filtered(
                        conn, run_id, wanted, scorer, descending, offset, limit, total
                    )
            else:
                total, ids = self._ranked_ids_grouped(
                    conn, run_id, wanted, scorer, descending, offset, limit
                )
            found: dict[str, list[ItemResult]] = {item_id: [] for item_id in ids}
            if ids:
                # an item's matching results; with one result per item, its one result
                # (it matched: the filter is not evaluated again)
                where = (
                    [t.run_id == run_id]
                    if single_repeat
                    else _conditions(run_id, wanted, indexed_text=self._indexed_text)
                )
                rows = conn.execute(
                    sa.select(item_results)
                    .where(*where, t.item_id.in_(ids))
                    .order_by(t.item_id, t.repeat)
                ).all()
                for result in self._with_scores(conn, rows):
                    found[result.item_id].append(result)
        return total, [(item_id, found[item_id]) for item_id in ids]

    def ranked_ids_grouped(
        self,
        run_id: str,
        wanted: ResultFilter,
        *,
        scorer: str | None,
        descending: bool,
        offset: int,
        limit: int,
    ) -> tuple[int, list[str]]:
        """(items matching, page of item ids) ranked as ``ranked_items`` does, always by
        grouping the results in SQL (never from the stored means): the reference the
        stored ranking is tested against."""
        with self._db.read() as conn:
            self._require(conn, run_id)
            return self._ranked_ids_grouped(conn, run_id, wanted, scorer, descending, offset, limit)

    @staticmethod
    def _ranked_ids_stored(
        conn: sa.Connection,
        run_id: str,
        scorer: str,
        with_score_only: bool,
        descending: bool,
        offset: int,
        limit: int,
        score_range: ResultFilter | None = None,
        *,
        single_repeat: bool = False,
    ) -> tuple[int, list[str]]:
        """The rank from ``item_scores``: items with a mean from the partial index in rank
        order, then the rest by position (those with a ``scorer`` score that is not a
        number, or, when ``with_score_only`` is false, also those without any).
        ``score_range`` (``_is_score_range``, one result per item) keeps only the means in
        its bounds: an index range with no rest, since a result passing it has a number."""
        a, t = item_scores.c, item_results.c
        of_scorer = (a.run_id == run_id, a.scorer_id == scorer)
        has_mean: list[sa.ColumnElement[bool]] = [a.mean.is_not(None)]
        if score_range is not None and score_range.min_score is not None:
            has_mean.append(a.mean >= score_range.min_score)
        if score_range is not None and score_range.max_score is not None:
            has_mean.append(a.mean <= score_range.max_score)
        # ``scored`` (items with a mean) is counted only when a page reaches past the
        # ranked part: a page inside it needs only the index walk and the total
        scored: int | None = None
        if score_range is not None:
            total = scored = _count_means_in_range(conn, run_id, scorer, score_range)
        elif with_score_only:
            total = conn.execute(
                sa.select(sa.func.count()).select_from(item_scores).where(*of_scorer)
            ).scalar_one()
        elif single_repeat:
            # one result per item: the run's result counter is its item count
            total = conn.execute(
                sa.select(runs.c.completed_results).where(runs.c.id == run_id)
            ).scalar_one()
        else:
            items = sa.select(t.position).where(t.run_id == run_id).group_by(t.position, t.item_id)
            total = conn.execute(
                sa.select(sa.func.count()).select_from(items.subquery())
            ).scalar_one()
        ids: list[str] = []
        if scored is None or offset < scored:
            mean = a.mean.desc() if descending else a.mean.asc()
            ids = list(
                conn.execute(
                    sa.select(a.item_id)
                    .where(*of_scorer, *has_mean)
                    .order_by(mean, a.position, a.item_id)
                    .offset(offset)
                    .limit(limit)
                ).scalars()
            )
        if len(ids) < limit and offset + len(ids) < total:
            if scored is None:
                scored = conn.execute(
                    sa.select(sa.func.count()).select_from(item_scores).where(*of_scorer, *has_mean)
                ).scalar_one()
            skip = max(0, offset - scored)
            if with_score_only:
                rest = (
                    sa.select(a.item_id)
                    .where(*of_scorer, a.mean.is_(None))
                    .order_by(a.position, a.item_id)
                )
            else:
                ranked = sa.exists().where(*of_scorer, a.item_id == t.item_id, a.mean.is_not(None))
                rest = (
                    sa.select(t.item_id)
                    .where(t.run_id == run_id, ~ranked)
                    .group_by(t.position, t.item_id)
                    .order_by(t.position, t.item_id)
                )
            ids += conn.execute(rest.offset(skip).limit(limit - len(ids))).scalars()
        return int(total), ids

    def _ranked_ids_filtered(
        self,
        conn: sa.Connection,
        run_id: str,
        wanted: ResultFilter,
        scorer: str,
        descending: bool,
        offset: int,
        limit: int,
        total: int,
    ) -> list[str]:
        """The rank from ``item_scores`` of a run with one result per item, filtered: an
        item's stored mean is then its one result's score, so walking the means in order
        and keeping the items whose result passes ``wanted`` is the rank. Items without
        a mean follow by position.

        A score range of the ranking scorer itself bounds the walk (an index range of
        the means it walks anyway) instead of probing a second copy of the means per
        item: from the top of a descending rank down to a range's upper end was 60,000
        probes on PostgreSQL at 100,000 items (1.5 s with a search)."""
        a, t = item_scores.c, item_results.c
        of_scorer = (a.run_id == run_id, a.scorer_id == scorer)
        bounds: list[sa.ColumnElement[bool]] = []
        ranged = wanted.scorer == scorer and _has_mean_range(wanted)
        if ranged:
            if wanted.min_score is not None:
                bounds.append(a.mean >= wanted.min_score)
            if wanted.max_score is not None:
                bounds.append(a.mean <= wanted.max_score)
            wanted = dataclasses.replace(
                wanted, scorer=None, min_score=None, max_score=None, status=None
            )
        where = _conditions(run_id, wanted, indexed_text=self._indexed_text, single_repeat=True)
        # the whole unique key (repeat 0 is the only one): without statistics SQLite
        # would otherwise walk the run's covering index once per ranked item
        joined = item_scores.join(
            item_results, sa.and_(t.run_id == a.run_id, t.item_id == a.item_id, t.repeat == 0)
        )
        mean = a.mean.desc() if descending else a.mean.asc()
        ids = list(
            conn.execute(
                sa.select(a.item_id)
                .select_from(joined)
                .where(*of_scorer, a.mean.is_not(None), *bounds, *where)
                .order_by(mean, a.position, a.item_id)
                .offset(offset)
                .limit(limit)
            ).scalars()
        )
        if ranged:
            # every item passing a range has a mean in it: nothing follows the walk
            return ids
        if len(ids) < limit and offset + len(ids) < total:
            # the ranked part ended on this page (or before it): how far it reached
            scored = (
                offset + len(ids)
                if ids
                else conn.execute(
                    sa.select(sa.func.count())
                    .select_from(joined)
                    .where(*of_scorer, a.mean.is_not(None), *where)
                ).scalar_one()
            )
            has_mean = sa.exists().where(*of_scorer, a.item_id == t.item_id, a.mean.is_not(None))
            ids += conn.execute(
                sa.select(t.item_id)
                .where(*where, ~has_mean)
                .order_by(t.position, t.item_id)
                .offset(max(0, offset - scored))
                .limit(limit - len(ids))
            ).scalars()
        return ids

    def _ranked_ids_grouped(
        self,
        conn: sa.Connection,
        run_id: str,
        wanted: ResultFilter,
        scorer: str | None,
        descending: bool,
        offset: int,
        limit: int,
    ) -> tuple[int, list[str]]:
        """The rank by one grouped query. Grouping by (position, item id) follows
        ``ix_item_results_items``, which also holds the result id: no sort for the grouping
        and, with ``ix_scores_ranking``, no read of either table."""
        t = item_results.c
        ranked = scores.alias("ranked")
        joined = item_results
        mean: sa.ColumnElement[Any] = sa.null()
        if scorer is not None:
            joined = item_results.outerjoin(  # type: ignore[assignment]
                ranked,
                sa.and_(
                    ranked.c.result_id == t.id,
                    ranked.c.scorer_id == scorer,
                    ranked.c.status == "ready",
                ),
            )
            mean = sa.func.avg(ranked.c.score)
        groups = (
            sa.select(
                t.item_id.label("item_id"),
                t.position.label("position"),
                mean.label("mean"),
            )
            .select_from(joined)
            .where(*_conditions(run_id, wanted, indexed_text=self._indexed_text))
            .group_by(t.position, t.item_id)
            .subquery("groups")
        )
        g = groups.c
        order = g.mean.desc() if descending else g.mean.asc()
        # the total rides on the page (a window over every group): one grouping pass,
        # not two; only a page past the end needs the count on its own
        page = conn.execute(
            sa.select(g.item_id, sa.func.count().over().label("total"))
            .order_by(g.mean.is_(None), order, g.position, g.item_id)
            .offset(offset)
            .limit(limit)
        ).all()
        total = (
            int(page[0].total)
            if page
            else int(conn.execute(sa.select(sa.func.count()).select_from(groups)).scalar_one())
        )
        return total, [row.item_id for row in page]

    @staticmethod
    def _with_scores(conn: sa.Connection, rows: Sequence[Row[Any]]) -> list[ItemResult]:
        if not rows:
            return []
        score_rows = conn.execute(
            sa.select(scores).where(scores.c.result_id.in_([row.id for row in rows]))
        ).all()
        call_rows = (
            conn.execute(
                sa.select(judge_calls).where(
                    judge_calls.c.score_id.in_([row.id for row in score_rows])
                )
            ).all()
            if score_rows
            else []
        )
        return list(build_results(rows, score_rows, call_rows))

    # ------------------------------------------------------------------ comparison
    @staticmethod
    def _stored_means_join(
        baseline: str, others: Sequence[str]
    ) -> tuple[sa.Subquery, sa.FromClause, list[Any]]:
        """The baseline's stored per-item means (``tables.item_scores``, kept with the
        results) joined to each other run's: on PostgreSQL two index-only scans of the
        covering ``ix_item_scores_ascending`` and a hash join per run, where the results'
        join was four scans and three hash joins (issue 25). Repeats or not: the mean of
        an item's ready scores, which the compare used to group the results for."""
        b = item_scores.alias("bm")
        base = (
            sa.select(
                b.c.item_id.label("item_id"),
                b.c.scorer_id.label("scorer_id"),
                b.c.mean.label("score"),
                b.c.position.label("position"),
            )
            .where(b.c.run_id == baseline, b.c.mean.is_not(None))
            .subquery("base")
        )
        joined: sa.FromClause = base
        other_q = []
        for i, run_id in enumerate(others):
            o = (
                sa.select(
                    item_scores.c.item_id,
                    item_scores.c.scorer_id,
                    item_scores.c.mean.label("score"),
                )
                .where(item_scores.c.run_id == run_id, item_scores.c.mean.is_not(None))
                .subquery(f"om{i}")
            )
            joined = joined.outerjoin(
                o, sa.and_(o.c.scorer_id == base.c.scorer_id, o.c.item_id == base.c.item_id)
            )
            other_q.append(o)
        return base, joined, other_q

    @staticmethod
    def _single_repeat_join(
        baseline: str, others: Sequence[str]
    ) -> tuple[sa.Subquery, sa.FromClause, list[Any]]:
        bt, bs = item_results.alias("bt"), scores.alias("bs")
        base = (
            sa.select(
                bt.c.item_id.label("item_id"),
                bs.c.scorer_id.label("scorer_id"),
                bs.c.score.label("score"),
                bt.c.position.label("position"),
            )
            .select_from(bt.join(bs, bs.c.result_id == bt.c.id))
            .where(bt.c.run_id == baseline, bs.c.status == "ready")
            .subquery("base")
        )
        joined: sa.FromClause = base
        other_q = []
        for i, run_id in enumerate(others):
            ot, os_ = item_results.alias(f"ot{i}"), scores.alias(f"os{i}")
            joined = joined.outerjoin(
                ot,
                sa.and_(ot.c.run_id == run_id, ot.c.item_id == base.c.item_id, ot.c.repeat == 0),
            ).outerjoin(
                os_,
                sa.and_(
                    os_.c.result_id == ot.c.id,
                    os_.c.scorer_id == base.c.scorer_id,
                    os_.c.status == "ready",
                ),
            )
            other_q.append(os_)
        return base, joined, other_q

    def compare_rows(
        self,
        baseline: str,
        others: Sequence[str],
        *,
        lower_is_better: Sequence[str] = (),
        scorer: str | None = None,
        offset: int = 0,
        limit: int = 50,
        single_repeat: bool = False,
        state: ChangeState | None = None,
        threshold: float = 0.0,
    ) -> tuple[int, list[CompareRow]]:
        """(total, page) of the baseline's (item, scorer) means against each other run's,
        worst change first: the key is the most negative direction-signed delta over the
        other runs (scorers in ``lower_is_better`` count a rise as worse), then position.

        The means are the stored per-item means (``tables.item_scores``); on SQLite,
        ``single_repeat`` (every run has one repeat per item) reads the results instead:
        the other runs' results are found by their unique (run, item, repeat) index, which
        is faster there than reading the means' table rows.

        ``state`` keeps the rows of one kind, over the whole comparison (not a page):
        ``regressed`` (some run's direction-signed delta below ``-threshold``), else
        ``improved`` (some run's above 0), else ``same``; a run without a number for the
        row counts as no change, as the rows' own ``regressed`` flag does."""
        if single_repeat and self._db.dialect == "sqlite":
            # SQLite: the unique (run, item, repeat) index and the scores' index answer
            # each row by lookups, faster than reading the stored means' table rows
            base, joined, other_q = self._single_repeat_join(baseline, others)
        else:
            # the stored per-item means: on PostgreSQL 2-2.5x faster than the results'
            # join at 100,000 items; with repeats, much faster than grouping them
            base, joined, other_q = self._stored_means_join(baseline, others)
        flip = base.c.scorer_id.in_(list(lower_is_better)) if lower_is_better else sa.false()
        signed = [
            sa.func.coalesce(
                sa.case((flip, base.c.score - sub.c.score), else_=sub.c.score - base.c.score), 0.0
            )
            for sub in other_q
        ]
        with self._db.read() as conn:
            for run_id in (baseline, *others):
                self._require(conn, run_id)
            best: sa.ColumnElement[Any]
            if len(signed) == 1:
                key: sa.ColumnElement[Any] = signed[0]
                best = signed[0]
            elif conn.dialect.name == "sqlite":
                key = sa.func.min(*signed)  # SQLite's multi-argument min() is scalar
                best = sa.func.max(*signed)
            else:
                key = sa.func.least(*signed)
                best = sa.func.greatest(*signed)
            where = [] if scorer is None else [base.c.scorer_id == scorer]
            if state is not None:
                regressed = key < -threshold
                where.append(
                    regressed
                    if state == "regressed"
                    else sa.and_(~regressed, best > 0 if state == "improved" else best <= 0)
                )
            columns = [
                base.c.item_id,
                base.c.scorer_id,
                base.c.position,
                base.c.score,
                *(sub.c.score.label(f"score{i}") for i, sub in enumerate(other_q)),
            ]
            if state is not None:
                # the count rides along as a window over the filtered join, which the sort
                # reads whole anyway: one pass over both runs instead of two
                columns.append(sa.func.count().over().label("total"))
            rows = conn.execute(
                sa.select(*columns)
                .select_from(joined)
                .where(*where)
                .order_by(key, base.c.position, base.c.scorer_id)
                .offset(offset)
                .limit(limit)
            ).all()
            if state is not None and rows:
                total = rows[0].total
            else:
                counted = joined if state is not None else base
                total = conn.execute(
                    sa.select(sa.func.count()).select_from(counted).where(*where)
                ).scalar_one()
        page = []
        for row in rows:
            values = tuple(row._mapping[f"score{i}"] for i in range(len(other_q)))
            page.append(
                CompareRow(
                    item_id=row.item_id,
                    scorer_id=row.scorer_id,
                    position=row.position,
                    baseline=float(row.score),
                    scores=tuple(None if v is None else float(v) for v in values),
                    deltas=tuple(
                        None if v is None else float(v) - float(row.score) for v in values
                    ),
                )
            )
        return int(total), page

    def score_arrays(self, run_id: str) -> ScoreArrays:
        """The run's scores as ``ScoreArrays``: the rows of ``runs.score_rows`` in one
        snapshot read, columnar. Named values (JSON) are read only where stored."""
        t = item_results.c
        order = (*_ORDER, scores.c.scorer_id)
        joined = item_results.join(scores, scores.c.result_id == t.id)
        with self._db.read() as conn:
            self._require(conn, run_id)
            rows = conn.execute(
                sa.select(
                    t.item_id,
                    t.position,
                    t.repeat,
                    scores.c.scorer_id,
                    scores.c.status,
                    scores.c.score,
                )
                .select_from(joined)
                .where(t.run_id == run_id)
                .order_by(*order)
            ).all()
            with_values = conn.execute(
                sa.select(*order, scores.c.values_)
                .select_from(joined)
                .where(t.run_id == run_id, scores.c.values_.is_not(None))
                .order_by(*order)
            ).all()
        item_id, position, repeat, scorer_id, status, score = (
            (list(column) for column in zip(*rows, strict=True)) if rows else ([] for _ in range(6))
        )
        values: list[tuple[int, dict[str, float]]] = []
        if with_values:
            # pair by key, not by scan order: a score stored between the two reads (a live
            # run on a database without snapshot reads) is simply not in this snapshot
            row_of = {
                key: k
                for k, key in enumerate(zip(position, repeat, item_id, scorer_id, strict=True))
            }
            for found in with_values:
                k = row_of.get((found[0], found[1], found[2], found[3]))
                if k is not None and found[4]:
                    values.append((k, found[4]))
        return ScoreArrays(
            item_id=item_id,
            position=np.asarray(position, dtype=np.int64),
            repeat=np.asarray(repeat, dtype=np.int64),
            scorer_id=scorer_id,
            status=status,
            score=np.asarray([math.nan if v is None else v for v in score], dtype=np.float64),
            values=values,
        )
