"""Read-side views the web UI pages need, on top of the API's own queries
(``run_items``, ``run_compare``): a run's results grouped per item (repeats together),
optionally sorted by score, and a comparison page with the text diff of the outputs.

They live here, not in the server, so the pages hold no logic the Python API lacks, and
they build on the same SQL-backed queries as ``/api/runs/...`` so the HTML and the JSON
never disagree about which results match a filter.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.operations.run_items import MAX_PAGE, RunItemFilter
from assay.server.run_compare import MAX_PAGE as MAX_COMPARE_PAGE
from assay.server.run_compare import ComparePage, compare_page
from assay.store import Store, using_store
from assay.store.run_queries import ChangeState, ResultFilter
from assay.types import ItemResult

SortOrder = Literal["position", "score_asc", "score_desc"]


class ItemGroup(BaseModel):
    """One dataset item with the results (repeats) of it that passed the filter."""

    item_id: str
    position: int
    results: list[ItemResult]
    mean_scores: dict[str, float | None] = Field(default_factory=dict)
    """Per scorer id: the mean score over these results that have one (``None``: none)."""
    has_error: bool = False
    """A result failed in the target or one of its scores is an error."""


class ItemsView(BaseModel):
    """A page of grouped results. ``unit`` says what ``total``, ``offset`` and the pager
    count: ``"results"`` in dataset order (one per item and repeat), ``"items"`` when sorted
    by score (a whole item ranks by its mean)."""

    groups: list[ItemGroup]
    total: int
    offset: int
    unit: Literal["results", "items"]
    next_offset: int | None = None
    prev_offset: int | None = None
    sort_scorer: str | None = None


def _as_text(value: Any) -> str:
    """A value as the text a person reads (and diffs)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


def _mean_scores(results: list[ItemResult]) -> dict[str, float | None]:
    collected: dict[str, list[float]] = {}
    for result in results:
        for scorer_id, score in result.scores.items():
            values = collected.setdefault(scorer_id, [])
            if score.status == "ready" and score.score is not None:
                values.append(score.score)
    return {key: (sum(v) / len(v) if v else None) for key, v in collected.items()}


def _make_group(results: list[ItemResult]) -> ItemGroup:
    return ItemGroup(
        item_id=results[0].item_id,
        position=results[0].position,
        results=results,
        mean_scores=_mean_scores(results),
        has_error=any(
            r.error is not None or any(s.status == "error" for s in r.scores.values())
            for r in results
        ),
    )


def group_results(results: Iterable[ItemResult]) -> Iterator[ItemGroup]:
    """Consecutive results of the same item as one group (results come in (position,
    repeat) order)."""
    current: list[ItemResult] = []
    for result in results:
        if current and result.item_id != current[0].item_id:
            yield _make_group(current)
            current = []
        current.append(result)
    if current:
        yield _make_group(current)


def run_item_groups(
    run_id: str,
    wanted: RunItemFilter | None = None,
    *,
    sort: SortOrder = "position",
    offset: int = 0,
    limit: int = 50,
    store: Store | None = None,
) -> ItemsView:
    """About ``limit`` items of the run whose results pass ``wanted``, repeats grouped.

    In dataset order this is one SQL page (``RunQueries.page``) of ``limit × repeats``
    results, then their count unless the page ends the matches. Sorted by score it ranks
    every item by the mean of its matching results' scores for ``wanted.scorer``
    (default: the run's first scorer; items without a score last). The ranking is one
    grouped SQL query (``RunQueries.ranked_items``): re-ranking 100,000 results in Python
    took seconds per request (issue 25).
    """
    with using_store(store) as db:
        return run_item_groups_first(
            run_id, wanted, sort=sort, offset=offset, limit=limit, store=db
        ).counted()


@dataclasses.dataclass
class UncountedItems:
    """A page of grouped results whose total may not be counted yet (``counted``): a
    page that shows its rows before its count (the run page, streamed) asks for the
    count, a full scan for a filter or a text search, only after the rows are out."""

    groups: list[ItemGroup]
    offset: int
    unit: Literal["results", "items"]
    step: int
    """The page's length in ``unit`` (what ``prev_offset`` goes back by)."""
    sort_scorer: str | None
    count: Callable[[], int]
    """The total of ``unit`` that pass the filter (reads the store unless the page
    already told it: ``counted`` calls it once)."""

    def counted(self) -> ItemsView:
        total = self.count()
        end = self.offset + (
            sum(len(g.results) for g in self.groups) if self.unit == "results" else len(self.groups)
        )
        return ItemsView(
            groups=self.groups,
            total=total,
            offset=self.offset,
            unit=self.unit,
            next_offset=end if end < total else None,
            prev_offset=max(0, self.offset - self.step) if self.offset > 0 else None,
            sort_scorer=self.sort_scorer,
        )


def run_item_groups_first(
    run_id: str,
    wanted: RunItemFilter | None = None,
    *,
    sort: SortOrder = "position",
    offset: int = 0,
    limit: int = 50,
    store: Store,
) -> UncountedItems:
    """``run_item_groups``'s page with its count left for later (``UncountedItems``);
    ``store`` must stay open until ``counted`` is called."""
    wanted = wanted or RunItemFilter()
    if offset < 0 or limit < 1:
        raise ValueError(f"offset must be >= 0 and limit >= 1 (got offset={offset}, limit={limit})")
    db = store
    record = db.runs.get(run_id)
    run = record.info.id
    scorer_ids = [spec.id for spec in record.info.scorers]
    if wanted.scorer is not None and wanted.scorer not in scorer_ids:
        known = ", ".join(scorer_ids) or "none"
        raise ValueError(f"scorer {wanted.scorer!r} is not in run {run} (scorers: {known})")
    single_repeat = record.info.repeats == 1
    if sort == "position":
        size = min(limit * max(record.info.repeats, 1), MAX_PAGE)
        query = ResultFilter(**wanted.model_dump())
        items = db.run_queries.page(
            run, query, offset=offset, limit=size, single_repeat=single_repeat
        )

        def count() -> int:
            # a page that ends the matches (short, not past the end) says how many
            # there are (``RunQueries.counted_page``'s rule)
            if len(items) < size and (items or offset == 0):
                return offset + len(items)
            return db.run_queries.count(run, query, single_repeat=single_repeat)

        return UncountedItems(
            groups=list(group_results(items)),
            offset=offset,
            unit="results",
            step=size,
            sort_scorer=None,
            count=count,
        )
    ranking_scorer = wanted.scorer or (scorer_ids[0] if scorer_ids else None)
    query = ResultFilter(**wanted.model_dump())
    has_score_condition = (wanted.min_score, wanted.max_score, wanted.status) != (None,) * 3
    if query.scorer is None and len(scorer_ids) == 1 and has_score_condition:
        # a score condition on "any scorer" of a one-scorer run is one on that scorer:
        # said so, the rank can read it as a range of the stored means
        query = dataclasses.replace(query, scorer=scorer_ids[0])
    total, ranked = db.run_queries.ranked_items(
        run,
        query,
        scorer=ranking_scorer,
        descending=sort == "score_desc",
        offset=offset,
        limit=limit,
        single_repeat=single_repeat,
    )
    return UncountedItems(
        groups=[_make_group(results) for _, results in ranked],
        offset=offset,
        unit="items",
        step=limit,
        sort_scorer=ranking_scorer,
        count=lambda: total,
    )


def output_diff(a: str, b: str) -> list[tuple[str, str]]:
    """Line diff of two texts as (tag, line), tag ``" "``, ``"-"`` (only in ``a``) or
    ``"+"`` (only in ``b``); every line is kept (outputs are short and read better whole)."""
    lines: list[tuple[str, str]] = []
    for line in difflib.ndiff(a.splitlines(), b.splitlines()):
        tag = line[:1]
        if tag in {" ", "-", "+"}:
            lines.append((tag, line[2:]))
    return lines


class CompareView(BaseModel):
    """``run_compare.compare_page`` plus, for each item on the page, every run's output
    (first repeat; the baseline's first) and each run's line diff against the baseline."""

    page: ComparePage
    outputs: dict[str, list[str]]
    diffs: dict[str, list[list[tuple[str, str]]]]
    directions: dict[str, float]
    """Per scorer id: 1.0 when higher is better, -1.0 when lower is (the baseline's)."""
    states: list[Literal["regressed", "improved", "same"]]
    """Per row of ``page.rows``: worse in some run, else better in some run, else same."""


def _first_output(first: tuple[Any, str | None, str | None] | None) -> str:
    """An item's first output as text (``RunQueries.first_outputs``), its error instead
    when it failed, ``""`` when the run lacks the item."""
    if first is None:
        return ""
    output, kind, message = first
    if kind is not None:
        return f"[{kind}: {message}]"
    return _as_text(output)


def compare_view(
    baseline: str,
    runs: list[str],
    *,
    offset: int = 0,
    limit: int = 50,
    scorer: str | None = None,
    state: ChangeState | None = None,
    store: Store | None = None,
) -> CompareView:
    """A page of ``runs`` against ``baseline`` (regressions first) with the output diffs
    of the page's items; the paired statistics only if cached (``page.statistics_pending``
    otherwise: the page loads them from the API rather than wait seconds for them), without
    their item lists (counted only). ``scorer`` and ``state`` keep one scorer's rows and
    one kind of change over the whole comparison, in SQL (not a filter of one page)."""
    limit = min(limit, MAX_COMPARE_PAGE)
    with using_store(store) as db:
        page = compare_page(
            baseline,
            runs,
            offset=offset,
            limit=limit,
            scorer=scorer,
            state=state,
            cached_only=True,
            item_lists=False,
            store=db,
        )
        directions = {
            spec.id: (1.0 if spec.higher_is_better else -1.0)
            for spec in db.runs.get(page.baseline).info.scorers
        }
        item_ids = list(dict.fromkeys(row.item_id for row in page.rows))
        firsts = [
            db.run_queries.first_outputs(run_id, item_ids) for run_id in [page.baseline, *page.runs]
        ]
        outputs = {item_id: [_first_output(f.get(item_id)) for f in firsts] for item_id in item_ids}
    diffs = {
        item_id: [output_diff(texts[0], other) for other in texts[1:]]
        for item_id, texts in outputs.items()
    }
    states: list[Literal["regressed", "improved", "same"]] = []
    for row in page.rows:
        sign = directions.get(row.scorer, 1.0)
        if row.regressed:
            states.append("regressed")
        elif any(d is not None and sign * d > 0 for d in row.deltas):
            states.append("improved")
        else:
            states.append("same")
    return CompareView(
        page=page, outputs=outputs, diffs=diffs, directions=directions, states=states
    )
