"""Compare runs against a baseline item by item: paged rows, worst change first, and the
paired statistics of ``analysis.compare`` for each run against the baseline.

The rows come from SQL (``store.run_queries.compare_rows``) so the first page of two
100,000-item runs does not wait for Python to walk every item; the statistics are computed
once per (baseline, run, result counts) and kept in a small cache, because the bootstrap
over every paired item is the expensive part and stored results never change. A caller
that must answer at once asks ``compare_page(..., cached_only=True)``: it gets the
statistics only if they are cached, else ``statistics_pending`` and computes them later
(``compare_statistics``); one computation per key runs at a time, so a background job and
a client asking for the same statistics do not compute them twice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Literal

from pydantic import BaseModel

from assay.analysis.compare import ItemDelta, RunComparison, compare_run_arrays
from assay.store import Store, using_store
from assay.store.run_queries import ChangeState
from assay.types import RunRecord

ItemList = Literal["regressed", "improved"]

MAX_PAGE = 500
_CACHE_SIZE = 16
_cache: OrderedDict[tuple[str, int, str, int, float], RunComparison] = OrderedDict()
_cache_lock = threading.Lock()
_key_locks: dict[tuple[str, int, str, int, float], threading.Lock] = {}


class CompareRowOut(BaseModel):
    """One (item, scorer): the baseline's mean, each run's mean and delta (``None`` where
    that run has no number), and whether any run regressed on it."""

    item_id: str
    scorer: str
    position: int
    baseline: float
    scores: list[float | None]
    deltas: list[float | None]
    regressed: bool


class ComparePage(BaseModel):
    baseline: str
    runs: list[str]
    total: int
    offset: int
    limit: int
    rows: list[CompareRowOut]
    statistics: list[RunComparison]
    """One paired comparison per run in ``runs`` (run B) against the baseline (run A);
    empty when not asked for, or when ``statistics_pending``. Without their lists of
    regressed and improved items when ``item_lists_omitted`` (the counts stay:
    ``n_regressed``/``n_improved``; ``compare_items`` pages the lists)."""
    state: ChangeState | None = None
    """The kind of rows asked for (``regressed``/``improved``/``same``; ``None``: all):
    ``total`` and the pages count only those, over the whole comparison."""
    statistics_omitted: bool = False
    """The statistics (with their lists of regressed and improved items, which grow with
    the run) go with the first page only: a later page leaves them out rather than send
    the same lists again (``compare_statistics`` returns them any time)."""
    statistics_pending: bool = False
    """The statistics were not cached yet and are being computed: fetch them from
    ``compare_statistics`` (``GET .../compare/statistics``)."""
    item_lists_omitted: bool = False
    """Each scorer's ``regressed``/``improved`` lists were left out of ``statistics``
    (at 100,000 items they made the first page megabytes); ``GET .../compare/items``
    pages them."""


class CompareItemsPage(BaseModel):
    """A page of one scorer's regressed (worst first) or improved (best first) items of a
    run against the baseline, from the paired statistics."""

    baseline: str
    run: str
    scorer: str
    which: ItemList
    threshold: float
    total: int
    offset: int
    limit: int
    items: list[ItemDelta]


def _key(base: RunRecord, other: RunRecord, threshold: float) -> tuple[str, int, str, int, float]:
    return (base.info.id, base.completed_results, other.info.id, other.completed_results, threshold)


def _is_live(base: RunRecord, other: RunRecord) -> bool:
    """A run still going has moving counts: its statistics are never cached."""
    return base.status in ("pending", "running") or other.status in ("pending", "running")


def _cached(base: RunRecord, other: RunRecord, threshold: float) -> RunComparison | None:
    if _is_live(base, other):
        return None
    with _cache_lock:
        return _cache.get(_key(base, other, threshold))


def _statistics(db: Store, base: RunRecord, other: RunRecord, threshold: float) -> RunComparison:
    key = _key(base, other, threshold)
    live = _is_live(base, other)
    with _cache_lock:
        key_lock = _key_locks.setdefault(key, threading.Lock())
    # One computation per key at a time: a second caller waits, then finds it cached.
    with key_lock:
        try:
            cached = _cached(base, other, threshold)
            if cached is not None:
                return cached
            result = compare_run_arrays(
                base,
                db.run_queries.score_arrays(base.info.id),
                other,
                db.run_queries.score_arrays(other.info.id),
                threshold=threshold,
            )
            if not live:
                with _cache_lock:
                    _cache[key] = result
                    while len(_cache) > _CACHE_SIZE:
                        _cache.popitem(last=False)
            return result
        finally:
            with _cache_lock:
                _key_locks.pop(key, None)


def compare_page(
    baseline: str,
    runs: list[str],
    *,
    scorer: str | None = None,
    threshold: float = 0.0,
    offset: int = 0,
    limit: int = 50,
    with_statistics: bool = True,
    cached_only: bool = False,
    state: ChangeState | None = None,
    item_lists: bool = True,
    store: Store | None = None,
) -> ComparePage:
    """Runs ``runs`` (ids or unique prefixes) against ``baseline``: a page of per-item
    rows, regressions first, and (``with_statistics``) the paired statistics. With
    ``cached_only`` the statistics come only if all are cached; otherwise the page says
    ``statistics_pending`` and the caller computes them with ``compare_statistics``.
    Without ``item_lists`` the statistics leave out their lists of regressed and improved
    items (counted still; ``compare_items`` pages them)."""
    if not runs:
        raise ValueError("compare needs at least one run besides the baseline")
    if offset < 0 or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"offset must be >= 0 and limit 1..{MAX_PAGE}")
    with using_store(store) as db:
        base = db.runs.get(baseline)
        others = [db.runs.get(run) for run in runs]
        lower = [spec.id for spec in base.info.scorers if not spec.higher_is_better]
        total, rows = db.run_queries.compare_rows(
            base.info.id,
            [run.info.id for run in others],
            lower_is_better=lower,
            scorer=scorer,
            offset=offset,
            limit=limit,
            single_repeat=all(run.info.repeats == 1 for run in (base, *others)),
            state=state,
            threshold=threshold,
        )
        stats: list[RunComparison] = []
        pending = False
        if with_statistics and cached_only:
            found = [_cached(base, run, threshold) for run in others]
            stats = [c for c in found if c is not None]
            if len(stats) < len(found):
                stats, pending = [], True
        elif with_statistics:
            stats = [_statistics(db, base, run, threshold) for run in others]
    out = []
    for row in rows:
        sign = -1.0 if row.scorer_id in lower else 1.0
        out.append(
            CompareRowOut(
                item_id=row.item_id,
                scorer=row.scorer_id,
                position=row.position,
                baseline=row.baseline,
                scores=list(row.scores),
                deltas=list(row.deltas),
                regressed=any(d is not None and sign * d < -threshold for d in row.deltas),
            )
        )
    return ComparePage(
        baseline=base.info.id,
        runs=[run.info.id for run in others],
        total=total,
        offset=offset,
        limit=limit,
        rows=out,
        statistics=stats if item_lists else [c.without_item_lists() for c in stats],
        statistics_pending=pending,
        state=state,
        item_lists_omitted=bool(stats) and not item_lists,
    )


def compare_statistics(
    baseline: str,
    runs: list[str],
    *,
    threshold: float = 0.0,
    item_lists: bool = True,
    store: Store | None = None,
) -> list[RunComparison]:
    """Only the paired statistics of each run against ``baseline`` (cached like
    ``compare_page``'s): for a client that shows the rows first and the statistics when
    they are ready (the bootstrap over 100,000 items takes seconds). Without
    ``item_lists``: no lists of regressed and improved items (their counts only)."""
    if not runs:
        raise ValueError("compare needs at least one run besides the baseline")
    with using_store(store) as db:
        base = db.runs.get(baseline)
        found = [_statistics(db, base, db.runs.get(run), threshold) for run in runs]
    return found if item_lists else [c.without_item_lists() for c in found]


def compare_items(
    baseline: str,
    run: str,
    scorer: str,
    which: ItemList,
    *,
    threshold: float = 0.0,
    offset: int = 0,
    limit: int = 50,
    store: Store | None = None,
) -> CompareItemsPage:
    """A page of ``scorer``'s regressed or improved items of ``run`` against ``baseline``
    (the lists ``compare_page`` leaves out of its statistics), from the cached statistics,
    computed now if not cached. ``LookupError`` for a scorer the comparison lacks."""
    if offset < 0 or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"offset must be >= 0 and limit 1..{MAX_PAGE}")
    with using_store(store) as db:
        base = db.runs.get(baseline)
        other = db.runs.get(run)
        comparison = _statistics(db, base, other, threshold)
    for s in comparison.scorers:
        if s.scorer_id == scorer:
            items = s.regressed if which == "regressed" else s.improved
            return CompareItemsPage(
                baseline=base.info.id,
                run=other.info.id,
                scorer=scorer,
                which=which,
                threshold=threshold,
                total=len(items),
                offset=offset,
                limit=limit,
                items=items[offset : offset + limit],
            )
    raise ScorerNotComparedError(scorer, [s.scorer_id for s in comparison.scorers])


class ScorerNotComparedError(LookupError):
    """The comparison has no such scorer (both runs need it)."""

    def __init__(self, scorer: str, scorers: list[str]) -> None:
        shown = ", ".join(scorers) or "none"
        super().__init__(f"scorer {scorer!r} is not in both runs (compared: {shown})")
