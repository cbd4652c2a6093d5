"""``/api/runs``: start, list, detail, rename/tag, delete, items, compare, export, cancel,
resume, progress."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError, to_json
from starlette.concurrency import run_in_threadpool

from assay.analysis.compare import RunComparison
from assay.operations.run_items import (
    MAX_PAGE,
    ExportFormat,
    RunItemFilter,
    RunItemsPage,
    ScoreStatusFilter,
    export_lines,
    run_item,
    run_items_page,
)
from assay.operations.run_requests import RunRequest
from assay.server.api.deps import (
    MAX_OFFSET,
    RunJobsDep,
    StatisticsJobsDep,
    StoreDep,
    responses,
)
from assay.server.client_view import result_dict_for_client, result_for_client, safe_text
from assay.server.run_compare import (
    CompareItemsPage,
    ComparePage,
    ItemList,
    ScorerNotComparedError,
    compare_items,
    compare_page,
    compare_statistics,
)
from assay.server.sse import sse_response
from assay.store import Store
from assay.store.codec import to_json_text
from assay.store.run_queries import ChangeState
from assay.types import ItemResult, RunRecord, check_tags

router = APIRouter(tags=["runs"])

POLL_S = 0.25
MAX_COMPARED = 10


class RunStarted(BaseModel):
    run_id: str


class RunChange(BaseModel):
    """A change to a stored run: a new name (``""`` clears it), tags added and removed."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=255)
    add_tags: list[str] = Field(default_factory=list, max_length=100)
    remove_tags: list[str] = Field(default_factory=list, max_length=100)


class Cancelled(BaseModel):
    run_id: str
    cancelled: bool


def _progress(record: RunRecord) -> dict[str, Any]:
    repeats = record.info.repeats
    total = None if record.info.total_items is None else record.info.total_items * repeats
    return {
        "done": record.completed_results,
        "total": total,
        "errors": record.failed_results,
        "status": record.status,
    }


@router.post("/runs", response_model=RunStarted, status_code=201, responses=responses(404))
async def start_run(body: RunRequest, jobs: RunJobsDep) -> RunStarted:
    """Start a run in the background of the server (stored as it goes); answers once the
    run is stored with its id. Follow it on ``/api/runs/{id}/events``. A ``target.base_url``
    or scorer ``params.base_url`` must pass the server's base-URL policy (docs/server.md)."""
    return RunStarted(run_id=await jobs.start(body))


@router.get("/runs", response_model=list[RunRecord])
def list_runs(
    store: StoreDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    dataset: Annotated[str | None, Query(max_length=255)] = None,
) -> list[RunRecord]:
    """Runs, newest first."""
    return store.runs.list(limit=limit, offset=offset, dataset=dataset)


@router.get("/runs/{run_id}", response_model=RunRecord, responses=responses(404))
def get_run(run_id: str, store: StoreDep) -> RunRecord:
    """The run's settings, status, counters and (when finished) summary."""
    return store.runs.get(run_id)


@router.get("/runs/{run_id}/items", response_model=RunItemsPage, responses=responses(404))
def list_run_items(
    run_id: str,
    store: StoreDep,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    min_score: Annotated[float | None, Query(allow_inf_nan=False)] = None,
    max_score: Annotated[float | None, Query(allow_inf_nan=False)] = None,
    scorer: Annotated[str | None, Query(max_length=255)] = None,
    status: ScoreStatusFilter | None = None,
    errors_only: bool = False,
    q: Annotated[str | None, Query(max_length=500)] = None,
) -> Response:
    """A page of item results; scores on each scorer's own scale."""
    wanted = RunItemFilter(
        scorer=scorer,
        min_score=min_score,
        max_score=max_score,
        status=status,
        errors_only=errors_only,
        q=q or None,
    )
    page = run_items_page(run_id, wanted, offset=offset, limit=limit, store=store)
    return _json(page.model_copy(update={"items": [result_for_client(r) for r in page.items]}))


@router.get(
    "/runs/{run_id}/items/{item_id:path}", response_model=list[ItemResult], responses=responses(404)
)
def get_run_item(run_id: str, item_id: str, store: StoreDep) -> Response:
    """Every repeat of one item, with scores, reasons, judge prompts and raw answers
    (errors capped, no tracebacks: ``server.client_view``)."""
    return _json([result_for_client(r) for r in run_item(run_id, item_id, store=store)])


def _json(value: RunItemsPage | list[ItemResult]) -> Response:
    """``value``'s JSON, the bytes FastAPI writes for the response model (pydantic-core's
    ``to_json``); a lone surrogate in a stored text, which that refuses (the page failed
    with a 500), written as its escape ``\\udXXX`` as the exports write it
    (``store.codec.to_json_text``)."""
    try:
        body = to_json(value)
    except PydanticSerializationError:
        plain = (
            value.model_dump() if isinstance(value, BaseModel) else [r.model_dump() for r in value]
        )
        body = to_json_text(plain).encode()
    return Response(body, media_type="application/json")


@router.get("/runs/{run_id}/compare", response_model=ComparePage, responses=responses(404))
def compare(
    run_id: str,
    store: StoreDep,
    jobs: StatisticsJobsDep,
    baseline: Annotated[str, Query(min_length=1, max_length=255)],
    runs: Annotated[
        str | None, Query(max_length=2000, description="more run ids, comma-separated")
    ] = None,
    scorer: Annotated[str | None, Query(max_length=255)] = None,
    threshold: Annotated[float, Query(ge=0, allow_inf_nan=False)] = 0.0,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    statistics: Annotated[
        bool,
        Query(description="include the statistics if cached; false: never compute them"),
    ] = True,
    state: Annotated[
        ChangeState | None,
        Query(description="only rows that regressed, improved or stayed the same (whole run)"),
    ] = None,
    item_lists: Annotated[
        bool,
        Query(
            description="include each scorer's lists of regressed and improved items in the "
            "statistics (megabytes at 100,000 items; compare/items pages them)"
        ),
    ] = False,
) -> ComparePage:
    """``run_id`` (and ``runs``) against ``baseline``: per-item rows, regressions first.
    The paired statistics of each run against the baseline come along only when already
    computed; otherwise ``statistics_pending`` is true, they are computed in the
    background, and ``compare/statistics`` returns them (the page never waits seconds
    for a bootstrap over 100,000 items). They come with the first page (``offset`` 0)
    only (``statistics_omitted`` says so on the others), and without their lists of
    regressed and improved items unless ``item_lists`` (``item_lists_omitted``; the
    counts stay, ``compare/items`` pages the lists)."""
    others = [run_id, *(part.strip() for part in (runs or "").split(",") if part.strip())]
    if len(others) > MAX_COMPARED:
        raise HTTPException(422, f"compare at most {MAX_COMPARED} runs at once")
    first = offset == 0
    page = compare_page(
        baseline,
        others,
        scorer=scorer,
        threshold=threshold,
        offset=offset,
        limit=limit,
        with_statistics=statistics and first,
        cached_only=True,
        state=state,
        item_lists=item_lists,
        store=store,
    )
    if page.statistics_pending:
        jobs.start(page.baseline, page.runs, threshold)
    if statistics and not first:
        page = page.model_copy(update={"statistics_omitted": True})
    return page


@router.get(
    "/runs/{run_id}/compare/statistics",
    response_model=list[RunComparison],
    responses=responses(404),
)
def compare_stats(
    run_id: str,
    store: StoreDep,
    baseline: Annotated[str, Query(min_length=1, max_length=255)],
    runs: Annotated[
        str | None, Query(max_length=2000, description="more run ids, comma-separated")
    ] = None,
    threshold: Annotated[float, Query(ge=0, allow_inf_nan=False)] = 0.0,
    item_lists: Annotated[
        bool,
        Query(description="false: leave out the lists of regressed and improved items"),
    ] = True,
) -> list[RunComparison]:
    """The paired statistics of each run against the baseline, computed now unless cached
    (or being computed for ``compare``, which this then waits for)."""
    others = [run_id, *(part.strip() for part in (runs or "").split(",") if part.strip())]
    if len(others) > MAX_COMPARED:
        raise HTTPException(422, f"compare at most {MAX_COMPARED} runs at once")
    return compare_statistics(
        baseline, others, threshold=threshold, item_lists=item_lists, store=store
    )


@router.get(
    "/runs/{run_id}/compare/items",
    response_model=CompareItemsPage,
    responses=responses(404),
)
def compare_items_page(
    run_id: str,
    store: StoreDep,
    baseline: Annotated[str, Query(min_length=1, max_length=255)],
    scorer: Annotated[str, Query(min_length=1, max_length=255)],
    which: ItemList = "regressed",
    threshold: Annotated[float, Query(ge=0, allow_inf_nan=False)] = 0.0,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
) -> CompareItemsPage:
    """A page of ``scorer``'s regressed (worst first) or improved (best first) items of
    ``run_id`` against ``baseline``: the lists the compare page's statistics leave out,
    from the same cached statistics (computed now if not cached)."""
    try:
        return compare_items(
            baseline,
            run_id,
            scorer,
            which,
            threshold=threshold,
            offset=offset,
            limit=limit,
            store=store,
        )
    except ScorerNotComparedError as exc:
        raise HTTPException(404, str(exc)) from exc


EXPORT_BATCH = 256 * 1024
"""Characters per body chunk of an export, at least: a sync iterator costs one thread hop
per chunk, so one line per chunk held a 100,000-row export to a few thousand rows/s
(issue 25). ``export_lines`` gives pieces of whole lines (up to a few thousand each)."""


def _batched(pieces: Iterator[str]) -> Iterator[str]:
    """``pieces`` joined until ``EXPORT_BATCH`` characters; lazily, so memory stays one
    batch (and one piece)."""
    batch: list[str] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece)
        if size >= EXPORT_BATCH:
            yield "".join(batch)
            batch, size = [], 0
    if batch:
        yield "".join(batch)


@router.get(
    "/runs/{run_id}/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}, "text/csv": {}}}, **responses(404)},
)
def export(run_id: str, store: StoreDep, format: ExportFormat = "jsonl") -> StreamingResponse:
    """Every result of the run, streamed as JSON lines or CSV (errors capped, no
    tracebacks; CSV cells that a spreadsheet would run as formulas are neutralised)."""
    found, lines = export_lines(
        run_id,
        format,
        store=store,
        view=result_for_client,
        error_text=safe_text,
        json_view=result_dict_for_client,
    )
    media = "application/x-ndjson" if format == "jsonl" else "text/csv"
    return StreamingResponse(
        _batched(lines),
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="run-{found}.{format}"'},
    )


@router.patch("/runs/{run_id}", response_model=RunRecord, responses=responses(404))
def change_run(run_id: str, body: RunChange, store: StoreDep) -> RunRecord:
    """Rename a run and/or add and remove its tags; answers the run as it is now."""
    record = store.runs.get(run_id)
    try:
        add, remove = check_tags(body.add_tags), check_tags(body.remove_tags)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc
    if body.name is not None:
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in body.name):
            raise HTTPException(422, "name: control characters are not allowed")
        store.runs.rename(record.info.id, body.name.strip() or None)
    if add:
        store.runs.add_tags(record.info.id, add)
    if remove:
        store.runs.remove_tags(record.info.id, remove)
    return store.runs.get(record.info.id)


@router.delete("/runs/{run_id}", status_code=204, responses=responses(404, 409))
async def delete_run(run_id: str, store: StoreDep, jobs: RunJobsDep) -> None:
    """Delete a run with its results, scores and judge calls (not while it executes)."""
    record = await run_in_threadpool(store.runs.get, run_id)
    if jobs.is_live(record.info.id):
        raise HTTPException(409, f"run {record.info.id!r} is executing: cancel it first")
    await run_in_threadpool(store.runs.delete, record.info.id)


@router.post("/runs/{run_id}/cancel", response_model=Cancelled, responses=responses(404, 409))
async def cancel_run(run_id: str, store: StoreDep, jobs: RunJobsDep) -> Cancelled:
    """Stop a run this server is executing; it is stored as interrupted (resume it)."""
    record = await run_in_threadpool(store.runs.get, run_id)
    if not await jobs.cancel(record.info.id):
        raise HTTPException(
            409, f"run {record.info.id!r} is not executing in this server ({record.status})"
        )
    return Cancelled(run_id=record.info.id, cancelled=True)


@router.post("/runs/{run_id}/resume", response_model=RunStarted, responses=responses(404, 409))
async def resume(run_id: str, store: StoreDep, jobs: RunJobsDep) -> RunStarted:
    """Finish an interrupted or failed run in the background (only the missing results)."""
    record = await run_in_threadpool(store.runs.get, run_id)
    if jobs.is_live(record.info.id):
        raise HTTPException(409, f"run {record.info.id!r} is already executing")
    return RunStarted(run_id=await jobs.resume(record.info.id))


async def _run_events(store: Store, jobs: Any, run_id: str) -> AsyncIterator[tuple[str, Any]]:
    queue = jobs.listen(run_id)
    try:
        last: dict[str, Any] | None = None
        while True:
            record = await run_in_threadpool(store.runs.get, run_id)
            while not queue.empty():
                result: ItemResult = queue.get_nowait()
                shown = result_for_client(result)
                yield "item", shown.model_dump(mode="json", include=_ITEM_EVENT_FIELDS)
            progress = _progress(record)
            if progress != last:
                last = progress
                yield "progress", progress
            if record.status not in ("pending", "running") and not jobs.is_live(run_id):
                summary = None if record.summary is None else record.summary.model_dump(mode="json")
                yield "finished", {"status": record.status, **progress, "summary": summary}
                return
            await asyncio.sleep(POLL_S)
    finally:
        jobs.unlisten(run_id, queue)


_ITEM_EVENT_FIELDS = {"item_id", "repeat", "position", "error", "latency_ms", "scores"}


@router.get(
    "/runs/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **responses(404)},
)
async def run_events(run_id: str, store: StoreDep, jobs: RunJobsDep) -> StreamingResponse:
    """SSE: ``progress`` ``{done, total, errors, status}`` when it changes, ``item`` for each
    result finished while you listen, and a final ``finished`` with the summary."""
    record = await run_in_threadpool(store.runs.get, run_id)
    return sse_response(_run_events(store, jobs, record.info.id))
