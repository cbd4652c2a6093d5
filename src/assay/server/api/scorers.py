"""``/api/scorers``: the scorer catalogue and the scorer preview (nothing stored)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from assay.operations.scorer_preview import (
    PreviewRequest,
    ScorerCatalogueEntry,
    build_preview_scorers,
    scorer_catalogue,
)
from assay.server.api.deps import PreviewJobsDep, responses
from assay.server.sse import sse_response

router = APIRouter(tags=["scorers"])


class PreviewResponse(BaseModel):
    """``results[row][scorer]``: a ``ScoreResult`` or ``{"status": "pending"}`` (a judge
    scorer's result, which follows on ``/api/scorers/test/{test_id}/events``)."""

    test_id: str
    results: list[list[dict[str, Any]]]


@router.get("/scorers", response_model=list[ScorerCatalogueEntry])
def list_scorer_types() -> list[ScorerCatalogueEntry]:
    """Every scorer type with its params JSON Schema and defaults."""
    return scorer_catalogue()


@router.post("/scorers/test", response_model=PreviewResponse, responses=responses(404))
async def test_scorers(body: PreviewRequest, jobs: PreviewJobsDep) -> PreviewResponse:
    """Score ``rows`` with each scorer; code scorers answer now, judge scorers later. A
    scorer ``params.base_url`` must pass the server's base-URL policy (docs/server.md)."""
    jobs.check_base_urls(body)
    built = build_preview_scorers(body.scorers)
    test_id, grid = await jobs.start(built, body.rows)
    return PreviewResponse(test_id=test_id, results=grid)


@router.get(
    "/scorers/test/{test_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **responses(404)},
)
async def scorer_test_events(test_id: str, jobs: PreviewJobsDep) -> StreamingResponse:
    """SSE: ``event: result`` ``{"row", "scorer", "result"}`` per pending cell, then
    ``event: done``."""
    channel = jobs.events(test_id)
    if channel is None:
        raise HTTPException(404, f"no scorer test {test_id!r} (tests are kept for 10 minutes)")
    return sse_response(channel.subscribe())
