"""The HTML pages: each route reads through ``assay.operations`` / the store repositories
and renders one Jinja2 template. Pages only read; every change (upload, run start,
annotation) goes through the JSON API from ``static/app.js``, so there is one write path
with one validation and the pages never need their own form handling.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections import OrderedDict
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response, StreamingResponse
from fastapi.templating import Jinja2Templates

from assay.calibration.judge_corrected import certificate_judge_corrected
from assay.calibration.view import calibration_view
from assay.live.status import LiveRunNotFoundError, live_status
from assay.operations.annotations import annotation_history
from assay.operations.run_items import RunItemFilter, run_item
from assay.operations.runs_overview import RUN_SORTS, score_trend, sort_runs, trend_choices
from assay.operations.score_bands import score_band, scorer_threshold
from assay.optimize.feed import current_state
from assay.server.api.deps import MAX_OFFSET
from assay.server.client_view import event_for_client, result_for_client
from assay.server.optimizations_view import (
    best_candidate,
    lineage,
    list_optimizations,
    optimization_detail,
    scorer_diagnostics,
)
from assay.server.review_queue import review_queue
from assay.server.transcripts import transcript_of
from assay.server.ui.assets import asset
from assay.server.ui.judge_optimization import judge_view
from assay.server.ui.paths import STATIC_DIR, TEMPLATES_DIR
from assay.server.ui.streaming import FLUSH, template_pieces
from assay.server.ui.svg_plots import (
    confusion_svg,
    judge_corrected_svg,
    reliability_svg,
    run_trend_svg,
    run_trend_title,
    scatter_svg,
    score_histogram_svg,
    score_trend_svg,
)
from assay.server.ui_queries import (
    ItemsView,
    SortOrder,
    UncountedItems,
    compare_view,
    run_item_groups_first,
)
from assay.store import Store, StoreError
from assay.store.run_queries import ChangeState
from assay.summary.progress import run_progress
from assay.types import ItemResult, RunRecord

PAGE_SIZE = 50
PAGE_SIZES = (25, 50, 100, 200)
"""What the run page's page-size selector offers (items per page)."""

templates = Jinja2Templates(directory=str(TEMPLATES_DIR))


def _as_text(value: Any) -> str:
    """A stored value as a person reads it: strings as they are, the rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


PREVIEW_CHARS = 1200
"""How much of a text a table cell holds: its ``pre.clip`` shows about five lines (6.5em),
at most some 900 characters on the widest layout; the rest would only be parsed and laid
out unseen (a run of long outputs: megabytes per page). The item page has it whole."""


def _preview(value: Any) -> str:
    """``_as_text`` cut to ``PREVIEW_CHARS``, an ellipsis saying it was."""
    text = _as_text(value)
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + " …"


def _when(stamp: float | None) -> str:
    if not stamp:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _score(value: Any) -> str:
    """Scores to three decimals; anything that is not a number as it is."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:.3f}"


templates.env.filters["text"] = _as_text
templates.env.filters["preview"] = _preview
# one path segment (or query value): "/", "?", "#", "%" all escaped, so item ids and
# dataset names with them still address their page (Jinja's urlencode keeps "/")
templates.env.filters["segment"] = lambda value: quote(str(value), safe="")
templates.env.filters["when"] = _when
templates.env.filters["score"] = _score
templates.env.filters["progress"] = run_progress
templates.env.globals["asset"] = asset


def store_of(request: Request) -> Store:
    """The app's store (``create_app`` puts it on ``app.state.store``)."""
    store = getattr(request.app.state, "store", None)
    if not isinstance(store, Store):
        raise RuntimeError("the app has no store: create_app must set app.state.store")
    return store


def _page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, template, context, status_code=status_code)


def _streamed_page(request: Request, template: str, **context: Any) -> StreamingResponse:
    """``_page`` sent in pieces (``streaming``): what the template renders before its
    ``{{ flush }}`` leaves before what it reads after (200 only: refuse before)."""
    pieces = template_pieces(
        templates.get_template(template), {"request": request, "flush": FLUSH, **context}
    )
    return StreamingResponse(pieces, media_type="text/html")


@dataclasses.dataclass(frozen=True)
class ItemsListing:
    """The run page's items and where the page is among all that match."""

    view: ItemsView
    page_number: int
    page_count: int


def _problem(request: Request, status_code: int, message: str) -> HTMLResponse:
    """An error page that says what was wrong (store errors are written for people)."""
    return _page(request, "error.html", status_code=status_code, message=message)


def _float(value: str | None, name: str) -> float | None:
    if value is None or value.strip() == "":
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name} must be a number (got {value!r})") from None


def _int(value: str | None, name: str, default: int, high: int = MAX_OFFSET) -> int:
    """A whole number from 0 to ``high`` (larger ones cannot address a stored row and
    overflow SQLite), else ``ValueError`` naming ``name``: a 422 page, never a 500."""
    if value is None or value.strip() == "":
        return default
    problem = f"{name} must be a whole number from 0 to {high} (got {value[:40]!r})"
    try:
        number = int(value) if len(value) <= 40 else high + 1
    except ValueError:
        raise ValueError(problem) from None
    if not 0 <= number <= high:
        raise ValueError(problem)
    return number


router = APIRouter(include_in_schema=False)


RUNS_LISTED = 200
"""The runs page lists (and sorts, and draws the trend over) the newest this many."""


@router.get("/", response_class=HTMLResponse)
def runs_page(
    request: Request,
    sort: str | None = None,
    order: str | None = None,
    data: str | None = None,
    scorer: str | None = None,
) -> HTMLResponse:
    """The newest runs, sortable by any column, with one scorer's trend across the runs of
    one dataset (default: the newest run's dataset and its first scorer)."""
    records = store_of(request).runs.list(limit=RUNS_LISTED)
    try:
        by = next((s for s in RUN_SORTS if s == (sort or "created")), None)
        if by is None:
            raise ValueError(f"sort must be one of {', '.join(RUN_SORTS)} (got {str(sort)[:40]!r})")
        if order not in (None, "", "asc", "desc"):
            raise ValueError(f"order must be 'asc' or 'desc' (got {str(order)[:40]!r})")
        descending = order == "desc" if order else by in ("created", "score", "items")
        rows = sort_runs(records, by, descending=descending)
        choices = trend_choices(records)
        trend = None
        if data and data not in choices:
            raise ValueError(f"data {data[:80]!r}: no listed run over it has a summary")
        chosen = data or next(iter(choices), None)
        if chosen is not None:
            scorers = choices[chosen]
            # a scorer of another dataset (the picker just switched datasets): its first
            picked = scorer if scorer in scorers else scorers[0]
            trend = score_trend(records, chosen, picked)
    except ValueError as error:
        return _problem(request, 422, str(error))
    return _page(
        request,
        "runs.html",
        rows=rows,
        sort=by,
        descending=descending,
        choices=choices,
        trend=trend,
        trend_plot=None if trend is None else run_trend_svg(trend),
        trend_title=None if trend is None else run_trend_title(trend),
        trend_query=urlencode([(k, v) for k, v in (("data", data), ("scorer", scorer)) if v]),
    )


@router.get("/live", response_class=HTMLResponse)
def live_page(request: Request) -> HTMLResponse:
    """The monitors with a stored live run, newest first."""
    records = [r for r in store_of(request).runs.list(limit=500) if r.info.data_source == "live"]
    names: dict[str, Any] = {}
    for record in records:
        names.setdefault(record.info.name or record.id, record)
    return _page(request, "live.html", monitors=names, status=None)


@router.get("/live/{name:path}", response_class=HTMLResponse)
def live_monitor_page(request: Request, name: str) -> HTMLResponse:
    """A monitor's counts, rates, budget used and latest scores (``assay live status``)."""
    try:
        status = live_status(store_of(request), name, recent=20)
    except LiveRunNotFoundError as exc:
        return _problem(request, 404, str(exc))
    return _page(request, "live.html", monitors=None, status=status)


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    """The icon browsers ask for on their own (an SVG: no binary file to ship)."""
    icon = (STATIC_DIR / "favicon.svg").read_bytes()
    return Response(icon, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


@router.get("/scorers", response_class=HTMLResponse)
def scorers_page(request: Request) -> HTMLResponse:
    """The scorer catalogue: every registered type (built-ins and plugins), what it
    measures, its direction, range and params."""
    from assay.scoring.registry import list_scorers

    return _page(request, "scorers.html", scorers=list_scorers())


@router.get("/datasets", response_class=HTMLResponse)
def datasets_page(request: Request) -> HTMLResponse:
    return _page(request, "datasets.html", datasets=store_of(request).datasets.list())


@router.get("/datasets/{name:path}", response_class=HTMLResponse)
def dataset_page(
    request: Request, name: str, offset: str | None = None, version: str | None = None
) -> HTMLResponse:
    """A dataset's items at ``version`` (default: the latest; a version it never had is a
    404, not the latest shown under the wrong number)."""
    store = store_of(request)
    try:
        start = _int(offset, "offset", 0)
        pinned = None if version is None or not version.strip() else _int(version, "version", 0)
        info = store.datasets.get(name)
        items = list(store.datasets.items(info.id, pinned, offset=start, limit=PAGE_SIZE))
        versions = store.datasets.versions(info.id)
        if pinned is not None:
            shown = next((v for v in versions if v.version == pinned), None)
            count = shown.item_count if shown is not None else len(items)
            info = info.model_copy(update={"version": pinned, "item_count": count})
    except StoreError as error:
        return _problem(request, 404, str(error))
    except ValueError as error:
        return _problem(request, 422, str(error))
    return _page(
        request,
        "dataset.html",
        dataset=info,
        items=items,
        versions=versions,
        offset=start,
        page_size=PAGE_SIZE,
        version=pinned,
    )


@router.get("/runs/new", response_class=HTMLResponse)
def launcher_page(request: Request, dataset: str | None = None) -> HTMLResponse:
    datasets = store_of(request).datasets.list()
    return _page(request, "launcher.html", datasets=datasets, selected=dataset)


SORTS: tuple[SortOrder, ...] = ("position", "score_asc", "score_desc")


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request,
    run_id: str,
    scorer: str | None = None,
    min_score: str | None = None,
    max_score: str | None = None,
    errors_only: str | None = None,
    q: str | None = None,
    sort: str | None = None,
    offset: str | None = None,
    page_size: str | None = None,
) -> Response:
    store = store_of(request)
    try:
        record = store.runs.get(run_id)
    except StoreError as error:
        return _problem(request, 404, str(error))
    try:
        size = _int(page_size, "page_size", PAGE_SIZE, high=max(PAGE_SIZES))
        if size not in PAGE_SIZES:
            sizes = ", ".join(map(str, PAGE_SIZES))
            raise ValueError(f"page_size must be one of {sizes} (got {size})")
        order = next((s for s in SORTS if s == (sort or "position")), None)
        if order is None:
            raise ValueError(f"sort must be one of {', '.join(SORTS)} (got {sort!r})")
        wanted = RunItemFilter(
            scorer=scorer or None,
            min_score=_float(min_score, "min_score"),
            max_score=_float(max_score, "max_score"),
            errors_only=bool(errors_only),
            q=q or None,
        )
        start = _int(offset, "offset", 0)
        scorer_ids = [spec.id for spec in record.info.scorers]
        if wanted.scorer is not None and wanted.scorer not in scorer_ids:
            known = ", ".join(scorer_ids) or "none"
            raise ValueError(f"scorer {wanted.scorer!r} is not in run {run_id} (scorers: {known})")
    except ValueError as error:
        return _problem(request, 422, str(error))

    def load_items() -> UncountedItems:
        """The page's rows (the store's slow part): called by the template once the
        page's head is sent; their count (``count_items``) once the rows are."""
        first = run_item_groups_first(
            record.info.id, wanted, sort=order, offset=start, limit=size, store=store
        )
        first.groups = [
            group.model_copy(update={"results": [result_for_client(r) for r in group.results]})
            for group in first.groups
        ]
        return first

    def count_items(first: UncountedItems) -> ItemsListing:
        view = first.counted()
        return ItemsListing(
            view=view,
            page_number=start // first.step + 1,
            page_count=max(math.ceil(view.total / first.step), 1),
        )

    thresholds = {s.id: scorer_threshold(s, record.info.threshold) for s in record.info.scorers}
    return _streamed_page(
        request,
        "run.html",
        run=record,
        summary=record.summary,
        load_items=load_items,
        count_items=count_items,
        wanted=wanted,
        sort=order,
        live=record.status in ("pending", "running"),
        page_size=size,
        page_sizes=PAGE_SIZES,
        bands={
            s.id: (lambda score, spec=s: score_band(score, spec, thresholds[spec.id]))
            for s in record.info.scorers
        },
        base_query=urlencode(
            [(k, v) for k, v in request.query_params.multi_items() if k != "offset"]
        ),
        filter_query=urlencode(
            [
                (k, v)
                for k, v in request.query_params.multi_items()
                if k not in ("offset", "page_size")
            ]
        ),
    )


HISTOGRAM_BINS = 10
_histogram_cache: OrderedDict[tuple[str, int, str], str] = OrderedDict()
"""Rendered histograms by (run, stored results, status): a finished run's never change,
so a reviewer paging through it pays the grouped count once, not per page."""
_histogram_lock = threading.Lock()


@router.get("/runs/{run_id}/histograms", response_class=HTMLResponse)
def run_histograms(request: Request, run_id: str) -> HTMLResponse:
    """Per scorer, how the run's scores are spread (the run page loads this after its
    items, so a large run's first page does not wait for the counting)."""
    store = store_of(request)
    try:
        record = store.runs.get(run_id)
    except StoreError as error:
        return _problem(request, 404, str(error))
    key = (record.info.id, record.completed_results, record.status)
    with _histogram_lock:
        html = _histogram_cache.get(key)
    if html is None:
        counted = store.score_histograms.histograms(
            record.info.id,
            {spec.id: spec.score_range for spec in record.info.scorers},
            bins=HISTOGRAM_BINS,
            single_repeat=record.info.repeats == 1,
        )
        plots = [
            score_histogram_svg(spec.label, counted[spec.id].edges, counted[spec.id].counts)
            for spec in record.info.scorers
        ]
        html = "".join(f'<div class="chart-box">{plot}</div>' for plot in plots)
        with _histogram_lock:
            _histogram_cache[key] = html
            while len(_histogram_cache) > 64:
                _histogram_cache.popitem(last=False)
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


def _judge_calls(results: list[ItemResult]) -> bool:
    return any(score.judge_calls for r in results for score in r.scores.values())


@router.get("/runs/{run_id}/items/{item_id:path}", response_class=HTMLResponse)
def item_page(
    request: Request, run_id: str, item_id: str, queue: str | None = None
) -> HTMLResponse:
    """One item of a run, its review form and its place in the review queue (``queue=
    unreviewed``: previous/next skip items that already have a review)."""
    store = store_of(request)
    if queue not in (None, "", "all", "unreviewed"):
        return _problem(request, 422, f"queue must be 'all' or 'unreviewed' (got {queue[:40]!r})")
    try:
        record = store.runs.get(run_id)
        results = [result_for_client(r) for r in run_item(record.info.id, item_id, store=store)]
        annotations = annotation_history(record.info.id, item_id, store=store)
        place = review_queue(
            record.info.id, item_id, unreviewed_only=queue == "unreviewed", store=store
        )
    except (StoreError, LookupError) as error:
        return _problem(request, 404, str(error))
    return _page(
        request,
        "item.html",
        run=record,
        item_id=item_id,
        results=results,
        first=results[0],
        has_judges=_judge_calls(results),
        scorers=record.info.scorers,
        annotations=annotations,
        queue=place,
        transcript=transcript_of(results[0].input, results[0].output),
    )


COMPARE_STATES: tuple[ChangeState, ...] = ("regressed", "improved", "same")


@router.get("/runs/{run_id}/compare", response_class=HTMLResponse)
def compare_runs_page(
    request: Request,
    run_id: str,
    baseline: str | None = None,
    runs: str | None = None,
    offset: str | None = None,
    scorer: str | None = None,
    state: str | None = None,
) -> HTMLResponse:
    store = store_of(request)
    try:
        record = store.runs.get(run_id)
    except StoreError as error:
        return _problem(request, 404, str(error))
    candidates = [r for r in store.runs.list(limit=200) if r.info.id != record.info.id]
    chosen_by_default = False
    if not baseline:
        default = _default_baseline(record, candidates)
        if default is None:
            return _page(request, "compare.html", run=record, candidates=candidates, view=None)
        baseline, chosen_by_default = default.info.id, True
    others = [record.info.id] + [r.strip() for r in (runs or "").split(",") if r.strip()]
    try:
        start = _int(offset, "offset", 0)
        if state and state not in COMPARE_STATES:
            raise ValueError(f"state must be one of {', '.join(COMPARE_STATES)}, not {state!r}")
        view = compare_view(
            baseline,
            others,
            offset=start,
            limit=PAGE_SIZE,
            scorer=scorer or None,
            state=state or None,
            store=store,
        )
        records = {r: store.runs.get(r) for r in [view.page.baseline, *view.page.runs]}
    except StoreError as error:
        return _problem(request, 404, str(error))
    except ValueError as error:
        return _problem(request, 422, str(error))
    return _page(
        request,
        "compare.html",
        run=record,
        baseline=records[view.page.baseline],
        compared=[records[r] for r in view.page.runs],
        candidates=candidates,
        view=view,
        offset=start,
        page_size=PAGE_SIZE,
        runs_param=runs or "",
        chosen_by_default=chosen_by_default,
        scorer_filter=scorer or "",
        state_filter=state or "",
    )


def _default_baseline(record: RunRecord, candidates: list[RunRecord]) -> RunRecord | None:
    """The latest other run on the same data (the same stored dataset, else the same data
    file), preferring runs created before this one: what "did this change make it worse"
    compares against. ``None`` when no run shares the data: the page asks."""
    info = record.info

    def same_data(other: RunRecord) -> bool:
        if info.dataset_name is not None:
            return other.info.dataset_name == info.dataset_name
        return info.data_source is not None and other.info.data_source == info.data_source

    same = [c for c in candidates if same_data(c)]  # newest first
    earlier = [c for c in same if c.info.created_at <= info.created_at]
    pool = earlier or same
    return pool[0] if pool else None


@router.get("/calibrations", response_class=HTMLResponse)
def calibrations_page(request: Request) -> HTMLResponse:
    certificates = store_of(request).certificates.list(limit=200)
    return _page(request, "calibrations.html", certificates=certificates)


@router.get("/calibrations/{certificate_id}", response_class=HTMLResponse)
def calibration_page(
    request: Request, certificate_id: str, ppi_run: str | None = None
) -> HTMLResponse:
    """One certificate with its plots, drawn as inline SVG from the certificate's run, and
    the judge-corrected mean of its scorer on ``ppi_run`` (default: the calibration run)."""
    try:
        view = calibration_view(certificate_id, store=store_of(request))
    except (StoreError, LookupError) as error:
        return _problem(request, 404, str(error))
    corrected: dict[str, Any] | None = None
    corrected_error: str | None = None
    if view.certificate.kind != "pairwise" and view.certificate.run_id is not None:
        try:
            corrected = certificate_judge_corrected(
                view.certificate.id, run_id=ppi_run or None, store=store_of(request)
            )
        except (StoreError, LookupError, ValueError) as error:
            corrected_error = str(error)
    low, high = view.score_range
    numeric = view.certificate.kind in ("numeric", "ordinal")
    return _page(
        request,
        "calibration.html",
        view=view,
        cert=view.certificate,
        confusion_plot=confusion_svg(view.confusion) if view.confusion else None,
        reliability_plot=reliability_svg(view.reliability, low, high) if view.points else None,
        scatter_plot=scatter_svg(view.points, low, high) if view.points and numeric else None,
        corrected=corrected,
        corrected_error=corrected_error,
        corrected_plot=judge_corrected_svg(corrected) if corrected else None,
        ppi_run=ppi_run or "",
    )


@router.get("/optimizations", response_class=HTMLResponse)
def optimizations_page(request: Request) -> HTMLResponse:
    optimizations = list_optimizations(store_of(request), limit=200)
    return _page(request, "optimizations.html", optimizations=optimizations)


@router.get("/optimizations/new", response_class=HTMLResponse)
def optimization_launcher_page(request: Request, dataset: str | None = None) -> HTMLResponse:
    """The form that starts an optimization (it posts to ``/api/optimize`` from app.js)."""
    datasets = store_of(request).datasets.list()
    return _page(request, "optimization_new.html", datasets=datasets, selected=dataset)


@router.get("/optimizations/{optimization_id}", response_class=HTMLResponse)
def optimization_page(request: Request, optimization_id: str) -> HTMLResponse:
    """One optimization: status against the budget, best prompt, score trend, lineage,
    scoreboard, scorer diagnostics. While it runs, app.js keeps it current from the
    optimization's event stream."""
    store = store_of(request)
    try:
        detail = optimization_detail(optimization_id, store)
        status, board = current_state(store, detail.id)
    except (StoreError, LookupError) as error:
        return _problem(request, 404, str(error))
    return _page(
        request,
        "optimization.html",
        opt=detail,
        status=status,
        board=None if board is None else event_for_client(board),
        live=detail.status == "running",
        roots=lineage(detail.candidates),
        best=best_candidate(detail.candidates),
        trend_plot=score_trend_svg(detail.candidates),
        diagnostics=scorer_diagnostics(detail, store),
        judge=judge_view(detail.result),
    )


@router.get("/optimizations/{optimization_id}/trend.svg")
def optimization_trend(request: Request, optimization_id: str) -> Response:
    """The score-trend plot alone (the live page reloads it as candidates arrive)."""
    try:
        detail = optimization_detail(optimization_id, store_of(request))
    except (StoreError, LookupError) as error:
        return _problem(request, 404, str(error))
    svg = score_trend_svg(detail.candidates) or (
        '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>'
    )
    return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})
