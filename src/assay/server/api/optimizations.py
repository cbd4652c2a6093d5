"""``/api/optimizations``: read stored prompt optimizations (list and detail).

Starting optimizations over HTTP and following them live are not served yet; use
``assay optimize`` and read the stored result here."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from assay.operations.optimizations_view import (
    OptimizationDetail,
    OptimizationSummary,
    list_optimizations,
    optimization_detail,
)
from assay.operations.run_items import MAX_PAGE
from assay.server.api.deps import StoreDep, responses

router = APIRouter(tags=["optimizations"])


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
