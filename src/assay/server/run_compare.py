"""Compare runs against a baseline item by item: paged rows, worst change first, and the
paired statistics of ``analysis.compare`` for each run against the baseline.

The rows come from SQL (``store.run_queries.compare_rows``) so the first page of two
100,000-item runs does not wait for Python to walk every item; the statistics are computed
once per (baseline, run, threshold, fingerprint of both runs) and **stored**
(``store.compare_statistics``), because the bootstrap over every paired item is the
expensive part and a finished run's results do not change: a server restart or another
worker reads them rather than computing them again (issue 25). A small cache per store
object sits in front of the store's row. The fingerprint (each run's status, counts and
completion time) changes when a run is resumed or finished again, so stale statistics are
never read; a run still going is never cached nor stored. A caller that must answer at
once asks ``compare_page(..., cached_only=True)``: it gets the statistics only if they are
cached or stored, else ``statistics_pending`` and computes them later
(``compare_statistics``); one computation per key runs at a time in a process, so a
background job and a client asking for the same statistics do not compute them twice.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Literal

from pydantic import BaseModel, ValidationError

from assay.analysis.compare import ItemDelta, RunComparison, compare_run_arrays
from assay.store import Store, using_store
from assay.store.run_queries import ChangeState
from assay.types import RunRecord

ItemList = Literal["regressed", "improved"]

MAX_PAGE = 500
_CACHE_SIZE = 16
STATISTICS_VERSION = 1
"""Part of every fingerprint: raised when the statistics' computation or model changes,
so rows stored by an older version are computed again rather than read."""

_Key = tuple[str, str, float, str]
"""(baseline id, run id, threshold, fingerprint)."""


class _Memory:
    """The statistics a store object has computed or read lately (``_CACHE_SIZE`` of them,
    with their item lists), and one lock per key being computed."""

    def __init__(self) -> None:
        self.cache: OrderedDict[_Key, RunComparison] = OrderedDict()
        self.lock = threading.Lock()
        self.key_locks: dict[_Key, threading.Lock] = {}


_memories: weakref.WeakKeyDictionary[Store, _Memory] = weakref.WeakKeyDictionary()
_memories_lock = threading.Lock()


def _memory(db: Store) -> _Memory:
    with _memories_lock:
        return _memories.setdefault(db, _Memory())


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


def fingerprint(run: RunRecord) -> str:
    """What a run's statistics depend on: its status, result counts and completion time
    (a resumed run changes them). Stable across processes (no memory addresses)."""
    return f"{run.status}:{run.completed_results}:{run.failed_results}:{run.completed_at!r}"


def _key(base: RunRecord, other: RunRecord, threshold: float) -> _Key:
    pair = f"v{STATISTICS_VERSION}|{fingerprint(base)}|{fingerprint(other)}"
    return (base.info.id, other.info.id, threshold, pair)


def _is_live(base: RunRecord, other: RunRecord) -> bool:
    """A run still going has moving counts: its statistics are never cached."""
    return base.status in ("pending", "running") or other.status in ("pending", "running")


def _cached(
    db: Store, base: RunRecord, other: RunRecord, threshold: float, *, item_lists: bool = True
) -> RunComparison | None:
    """The statistics from this store object's cache, else from the store (``None``: not
    computed yet). Without ``item_lists`` the store's small part is read (a compare
    page's), which the cache does not keep."""
    if _is_live(base, other):
        return None
    memory = _memory(db)
    key = _key(base, other, threshold)
    with memory.lock:
        found = memory.cache.get(key)
    if found is not None:
        return found
    text = db.compare_statistics.get(*key, part="full" if item_lists else "summary")
    if text is None:
        return None
    try:
        stored = RunComparison.model_validate_json(text)
    except ValidationError:
        return None  # not readable as today's statistics: computed again, and replaced
    if item_lists:
        _remember(memory, key, stored)
    return stored


def _remember(memory: _Memory, key: _Key, comparison: RunComparison) -> None:
    with memory.lock:
        memory.cache[key] = comparison
        memory.cache.move_to_end(key)
        while len(memory.cache) > _CACHE_SIZE:
            memory.cache.popitem(last=False)


def _statistics(db: Store, base: RunRecord, other: RunRecord, threshold: float) -> RunComparison:
    key = _key(base, other, threshold)
    live = _is_live(base, other)
    memory = _memory(db)
    with memory.lock:
        key_lock = memory.key_locks.setdefault(key, threading.Lock())
    # One computation per key at a time: a second caller waits, then finds it cached.
    with key_lock:
        try:
            cached = _cached(db, base, other, threshold)
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
                db.compare_statistics.put(
                    *key,
                    summary=result.without_item_lists().model_dump_json(),
                    full=result.model_dump_json(),
                )
                _remember(memory, key, result)
            return result
        finally:
            with memory.lock:
                memory.key_locks.pop(key, None)


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
            found = [_cached(db, base, run, threshold, item_lists=item_lists) for run in others]
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
