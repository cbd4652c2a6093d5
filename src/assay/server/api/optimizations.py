"""``/api/optimize`` and ``/api/optimizations``: start a prompt optimization in the
background, follow it live (Server-Sent Events), cancel or resume it, and read stored ones.

The routes hold no logic: the request is checked and stored by ``optimize.requests``
(through ``server.jobs.OptimizationJobs``, which applies the base-URL policy of
``server.base_urls``), and the event stream is ``optimize.feed.FeedReader`` polled over
the store, plus the optimizer's in-process events for optimizations executing here."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from assay.operations.run_items import MAX_PAGE
from assay.optimize.feed import FeedReader, event_line
from assay.optimize.requests import OptimizeRequest
from assay.server.api.deps import OptimizationJobsDep, StoreDep, responses
from assay.server.client_view import event_for_client
from assay.server.jobs import OptimizationJobs
from assay.server.optimizations_view import (
    OptimizationDetail,
    OptimizationSummary,
    list_optimizations,
    optimization_detail,
)
from assay.server.sse import sse_response
from assay.store import Store

router = APIRouter(tags=["optimizations"])

POLL_S = 0.25


class OptimizationStarted(BaseModel):
    optimization_id: str
    events_url: str
    """``GET`` it for the Server-Sent Events of the optimization."""
    page_url: str
    """The web UI's page of the optimization (it updates live)."""


class OptimizationCancelled(BaseModel):
    optimization_id: str
    cancelled: bool


def _started(optimization_id: str) -> OptimizationStarted:
    return OptimizationStarted(
        optimization_id=optimization_id,
        events_url=f"/api/optimizations/{optimization_id}/events",
        page_url=f"/optimizations/{optimization_id}",
    )


@router.post(
    "/optimize",
    response_model=OptimizationStarted,
    status_code=202,
    responses=responses(404),
)
async def start_optimization(
    body: OptimizeRequest, jobs: OptimizationJobsDep
) -> OptimizationStarted:
    """Start a prompt optimization (the config of ``assay optimize CONFIG.yaml``, with
    stored datasets or inline items as data) in the server's background. Answers once it is
    stored, with its id; follow it on ``events_url``. Nothing is stored for a bad request."""
    return _started(await jobs.start(body))


@router.get("/optimizations", response_model=list[OptimizationSummary])
def get_optimizations(
    store: StoreDep, limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50
) -> list[OptimizationSummary]:
    """Optimizations, newest first."""
    return list_optimizations(store, limit=limit)


@router.get(
    "/optimizations/{optimization_id}",
    response_model=OptimizationDetail,
    responses=responses(404),
)
def get_optimization(optimization_id: str, store: StoreDep) -> OptimizationDetail:
    """Config, candidates (parents, iteration, changed components, validation score),
    evaluations, cost, progress and result of one optimization (id or unique prefix)."""
    return optimization_detail(optimization_id, store)


@router.post(
    "/optimizations/{optimization_id}/cancel",
    response_model=OptimizationCancelled,
    responses=responses(404, 409),
)
async def cancel_optimization(
    optimization_id: str, store: StoreDep, jobs: OptimizationJobsDep
) -> OptimizationCancelled:
    """Stop an optimization this server is executing; it is stored as interrupted (resume
    it). 409 for one that is not executing here (finished, or run by another process)."""
    record = await run_in_threadpool(store.optimizations.get, optimization_id)
    if not await jobs.cancel(record.id):
        raise HTTPException(
            409, f"optimization {record.id!r} is not executing in this server ({record.status})"
        )
    return OptimizationCancelled(optimization_id=record.id, cancelled=True)


@router.post(
    "/optimizations/{optimization_id}/resume",
    response_model=OptimizationStarted,
    status_code=202,
    responses=responses(404, 409),
)
async def resume_optimization(
    optimization_id: str, store: StoreDep, jobs: OptimizationJobsDep
) -> OptimizationStarted:
    """Continue an interrupted or failed optimization in the background (409 when it is
    completed or still running)."""
    record = await run_in_threadpool(store.optimizations.get, optimization_id)
    if jobs.is_live(record.id):
        raise HTTPException(409, f"optimization {record.id!r} is already executing")
    return _started(await jobs.resume(record.id))


async def _events(
    store: Store, jobs: OptimizationJobs, optimization_id: str
) -> AsyncIterator[tuple[str, Any]]:
    reader = await run_in_threadpool(FeedReader, store, optimization_id)
    queue = jobs.listen(reader.id)
    try:
        while True:
            while not queue.empty():
                line = event_line(queue.get_nowait())
                if line is not None:
                    yield "log", event_for_client(line).model_dump(mode="json")
            events = await run_in_threadpool(reader.poll, live_here=jobs.is_live(reader.id))
            for name, event in events:
                yield name, event_for_client(event).model_dump(mode="json")
            if reader.done:
                return
            await asyncio.sleep(POLL_S)
    finally:
        jobs.unlisten(reader.id, queue)


@router.get(
    "/optimizations/{optimization_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **responses(404)},
)
async def optimization_events(
    optimization_id: str, store: StoreDep, jobs: OptimizationJobsDep
) -> StreamingResponse:
    """SSE, GEPAzilla's vocabulary: the current state first (``status``, every
    ``checkpoint``, recent ``log`` lines, the ``scoreboard``), then changes as they are
    stored: ``status`` (state, iteration, metric calls and cost against the budget, best
    validation score), ``log``, ``checkpoint`` (each kept candidate: parents, changed
    components, scores, texts), ``scoreboard`` (per-row, per-scorer values of the best
    candidate on train and validation); last ``result`` (best candidate, held-out
    comparison and its significance) or ``error``. Follows CLI optimizations too."""
    record = await run_in_threadpool(store.optimizations.get, optimization_id)
    return sse_response(_events(store, jobs, record.id))
