"""What routers take from the app: the store and the background job managers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from assay.server.jobs import OptimizationJobs, PreviewJobs, RunJobs, StatisticsJobs
from assay.store import Store


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def _previews(request: Request) -> PreviewJobs:
    jobs: PreviewJobs = request.app.state.preview_jobs
    return jobs


def _runs(request: Request) -> RunJobs:
    jobs: RunJobs = request.app.state.run_jobs
    return jobs


def _optimizations(request: Request) -> OptimizationJobs:
    jobs: OptimizationJobs = request.app.state.optimization_jobs
    return jobs


def _statistics(request: Request) -> StatisticsJobs:
    jobs: StatisticsJobs = request.app.state.statistics_jobs
    return jobs


StoreDep = Annotated[Store, Depends(_store)]
PreviewJobsDep = Annotated[PreviewJobs, Depends(_previews)]
RunJobsDep = Annotated[RunJobs, Depends(_runs)]
StatisticsJobsDep = Annotated[StatisticsJobs, Depends(_statistics)]
OptimizationJobsDep = Annotated[OptimizationJobs, Depends(_optimizations)]

MAX_OFFSET = 2**31 - 1
"""Offsets beyond a 32-bit integer cannot address a stored row (and overflow SQLite)."""

Responses = dict[int | str, dict[str, Any]]

_MEANING = {
    404: "Not found; the message suggests close names.",
    409: "Conflict with what is stored (exists already, or not in a state that allows it).",
}


def responses(*codes: int) -> Responses:
    """OpenAPI ``responses`` entries for these error codes (``{"detail": message}``)."""
    return {code: {"description": _MEANING[code]} for code in codes}
