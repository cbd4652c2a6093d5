"""The runs list as a reviewer reads it: one row per run with its score, cost, latency,
size and tags, sortable by any of them, and the trend of one scorer across the runs of
one dataset (Braintrust's experiment view: "did the last changes help?").

The web UI's runs page renders these; they sit here, not in the server, so the Python API
can answer the same questions (which run was cheapest, how a scorer moved over time).
Sorting works on the already listed records (the page lists the newest ``limit`` runs):
a run without the sorted value (no summary yet, no priced model) goes last either way,
so "cheapest first" never starts with runs that simply have no cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from assay.summary.progress import RunProgress, run_progress
from assay.types import RunRecord

RunSort = Literal["created", "name", "dataset", "score", "cost", "latency", "items"]
RUN_SORTS: tuple[RunSort, ...] = (
    "created",
    "name",
    "dataset",
    "score",
    "cost",
    "latency",
    "items",
)


class RunRow(BaseModel):
    """One run on the list: the record and the figures the columns show."""

    record: RunRecord
    progress: RunProgress
    data: str
    """The stored dataset's name, else the data file, else ``"inline"``."""
    score: float | None
    """The weighted score (0..1, 1 = best) of a finished run."""
    cost_usd: float | None
    """Target plus judge cost, when either was priced."""
    latency_ms: float | None
    """Median target latency per item."""
    items: int
    """Results stored (items × repeats), finished or not."""


def data_of(record: RunRecord) -> str:
    """What a run was over, as the list and the trend group it."""
    info = record.info
    return info.dataset_name or info.data_source or "inline"


def run_row(record: RunRecord) -> RunRow:
    summary = record.summary
    costs = [] if summary is None else [summary.cost_usd, summary.target_cost_usd]
    priced = [c for c in costs if c is not None]
    return RunRow(
        record=record,
        progress=run_progress(record),
        data=data_of(record),
        score=None if summary is None else summary.weighted_score,
        cost_usd=sum(priced) if priced else None,
        latency_ms=None if summary is None else summary.latency_ms_p50,
        items=record.completed_results,
    )


def _key(row: RunRow, by: RunSort) -> float | str | None:
    if by == "created":
        return row.record.info.created_at
    if by == "name":
        return (row.record.info.name or "").casefold() or None
    if by == "dataset":
        return row.data.casefold()
    if by == "score":
        return row.score
    if by == "cost":
        return row.cost_usd
    if by == "latency":
        return row.latency_ms
    return float(row.items)


def sort_runs(
    records: Sequence[RunRecord], by: RunSort = "created", *, descending: bool = True
) -> list[RunRow]:
    """``records`` as rows ordered by ``by``; rows without that value last, in the order
    given (newest first), whichever the direction."""
    if by not in RUN_SORTS:
        raise ValueError(f"sort must be one of {', '.join(RUN_SORTS)} (got {by!r})")
    rows = [run_row(r) for r in records]
    known = [(k, r) for r in rows if (k := _key(r, by)) is not None]
    missing = [r for r in rows if _key(r, by) is None]
    known.sort(key=lambda pair: pair[0], reverse=descending)  # stable: ties keep list order
    return [r for _, r in known] + missing


class TrendPoint(BaseModel):
    """One run's mean for the scorer (``None``: the run has no mean for it)."""

    run_id: str
    name: str | None
    created_at: float
    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    partial: bool = False


class ScoreTrend(BaseModel):
    """A scorer's mean over the runs of one dataset, oldest first."""

    data: str
    scorer: str
    scorer_label: str
    higher_is_better: bool
    points: list[TrendPoint]


def trend_choices(records: Sequence[RunRecord]) -> dict[str, list[str]]:
    """Per dataset (``data_of``), the scorer ids its runs' summaries hold, in first-seen
    order (newest run first): what the trend picker offers. Runs over inline data (a
    Python list) are left out: nothing says two of them saw the same items."""
    choices: dict[str, list[str]] = {}
    for record in records:
        if not (record.info.dataset_name or record.info.data_source):
            continue
        scorers = choices.setdefault(data_of(record), [])
        if record.summary is not None:
            scorers += [s for s in record.summary.scorers if s not in scorers]
    return {data: scorers for data, scorers in choices.items() if scorers}


def score_trend(records: Sequence[RunRecord], data: str, scorer: str) -> ScoreTrend:
    """The mean of ``scorer`` in every run of ``records`` over ``data``, oldest first;
    ``ValueError`` naming the field when no run over ``data`` has that scorer."""
    same = [
        r for r in records if (r.info.dataset_name or r.info.data_source) and data_of(r) == data
    ]
    if not same:
        raise ValueError(f"dataset {data!r} has no run in the list")
    summaries = [
        r.summary.scorers[scorer]
        for r in same
        if r.summary is not None and scorer in r.summary.scorers
    ]
    if not summaries:
        raise ValueError(f"scorer {scorer!r} is in no run of dataset {data!r}")
    points = []
    for record in sorted(same, key=lambda r: (r.info.created_at, r.info.id)):
        s = None if record.summary is None else record.summary.scorers.get(scorer)
        points.append(
            TrendPoint(
                run_id=record.info.id,
                name=record.info.name,
                created_at=record.info.created_at,
                mean=None if s is None else s.mean,
                ci_low=None if s is None else s.ci_low,
                ci_high=None if s is None else s.ci_high,
                partial=run_progress(record).partial,
            )
        )
    latest = summaries[0]
    return ScoreTrend(
        data=data,
        scorer=scorer,
        scorer_label=latest.scorer_label,
        higher_is_better=latest.higher_is_better,
        points=points,
    )
