"""Stored optimizations shaped for reading over HTTP: the list and one optimization's
detail (config, candidate lineage with scores, cost, progress, result).

A view model of the web UI and the JSON API, so it lives with them in ``server``; built
from the store alone (no ``optimize`` import: reading a stored optimization needs no GEPA),
so the routes stay free of logic. Cost is summed over the stored evaluations and
reflections; records whose cost is unknown are counted in ``unpriced_records`` rather than
silently read as zero."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel

from assay.store import Store
from assay.store.optimizations_repo import OptimizationRecord, OptimizationStatus
from assay.types import range_is_bounded


class OptimizationSummary(BaseModel):
    """One row of the optimizations list."""

    id: str
    name: str | None
    status: OptimizationStatus
    created_at: float
    updated_at: float
    progress: dict[str, Any]
    error: str | None


class CandidateView(BaseModel):
    """One candidate: where it came from (parents, iteration, what changed) and its score."""

    idx: int
    parents: list[int]
    iteration: int
    changed: list[str]
    val_score: float | None
    components: dict[str, str]


class EvaluationView(BaseModel):
    """One stored evaluation of a candidate on a split (``run_id`` is a stored run)."""

    run_id: str | None
    candidate_idx: int | None
    split: str
    iteration: int
    metric_calls: int
    mean_score: float | None
    cost_usd: float | None


class OptimizationCost(BaseModel):
    """Known spend; ``unpriced_records`` counts stored evaluations and reflections whose
    cost is unknown, so a partial sum is never mistaken for the whole."""

    cost_usd: float
    unpriced_records: int


class OptimizationDetail(BaseModel):
    """Everything the API shows about one optimization."""

    id: str
    name: str | None
    status: OptimizationStatus
    config: dict[str, Any]
    progress: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    created_at: float
    updated_at: float
    candidates: list[CandidateView]
    evaluations: list[EvaluationView]
    cost: OptimizationCost


def _summary(record: OptimizationRecord) -> OptimizationSummary:
    return OptimizationSummary(
        id=record.id,
        name=record.name,
        status=record.status,
        created_at=record.created_at,
        updated_at=record.updated_at,
        progress=record.progress,
        error=record.error,
    )


def list_optimizations(store: Store, *, limit: int = 50) -> list[OptimizationSummary]:
    """Optimizations, newest first."""
    return [_summary(record) for record in store.optimizations.list(limit=limit)]


def optimization_detail(ref: str, store: Store) -> OptimizationDetail:
    """Optimization ``ref`` (id or unique prefix); raises ``OptimizationNotFoundError``."""
    repo = store.optimizations
    record = repo.get(ref)
    candidates = repo.candidates(record.id)
    evaluations = repo.evaluations(record.id)
    reflections = repo.reflections(record.id)
    idx_by_hash = {c.candidate_hash: c.idx for c in candidates}
    costs = [e.cost_usd for e in evaluations] + [r.cost_usd for r in reflections]
    return OptimizationDetail(
        **_summary(record).model_dump(),
        config=record.config,
        result=record.result,
        candidates=[
            CandidateView(
                idx=c.idx,
                parents=c.parents,
                iteration=c.iteration,
                changed=c.changed,
                val_score=c.val_score,
                components=c.components,
            )
            for c in candidates
        ],
        evaluations=[
            EvaluationView(
                run_id=e.run_id,
                candidate_idx=idx_by_hash.get(e.candidate_hash),
                split=e.split,
                iteration=e.iteration,
                metric_calls=e.metric_calls,
                mean_score=e.mean_score,
                cost_usd=e.cost_usd,
            )
            for e in evaluations
        ],
        cost=OptimizationCost(
            cost_usd=sum(c for c in costs if c is not None),
            unpriced_records=sum(1 for c in costs if c is None),
        ),
    )


class LineageNode(BaseModel):
    """A candidate in the parent → child tree. A merge has several parents; it is placed
    under its first and lists the others in ``also_from`` so no edge is lost."""

    idx: int
    iteration: int
    changed: list[str]
    val_score: float | None
    also_from: list[int]
    children: list[LineageNode]


def lineage(candidates: list[CandidateView]) -> list[LineageNode]:
    """The candidates as a forest: roots are candidates without a known parent."""
    known = {c.idx for c in candidates}
    nodes = {
        c.idx: LineageNode(
            idx=c.idx,
            iteration=c.iteration,
            changed=c.changed,
            val_score=c.val_score,
            also_from=[p for p in c.parents[1:] if p in known],
            children=[],
        )
        for c in candidates
    }
    roots: list[LineageNode] = []
    for c in candidates:
        parent = c.parents[0] if c.parents and c.parents[0] in known else None
        (nodes[parent].children if parent is not None else roots).append(nodes[c.idx])
    return roots


def best_candidate(candidates: list[CandidateView]) -> CandidateView | None:
    """The candidate with the highest validation score (the earliest on ties); ``None``
    when no candidate has been scored on validation yet."""
    scored = [c for c in candidates if c.val_score is not None]
    if not scored:
        return None
    return max(scored, key=lambda c: (c.val_score, -c.idx))


DEFAULT_FEEDBACK_THRESHOLD = 0.9  # ``OptimizeConfig.feedback_threshold``'s default
TOP_REASONS = 3


class ScorerDiagnostics(BaseModel):
    """How one scorer judged the candidates over every stored evaluation run.

    A result fails when it is not ``ready`` or, on a bounded range, its normalized score is
    below the optimization's ``feedback_threshold`` (the same line that decides which rows
    the reflection model sees). On an unbounded range only non-ready results can fail, and
    ``threshold_applied`` is false so the page can say so."""

    scorer_id: str
    label: str
    results: int
    failures: int
    failure_rate: float | None
    threshold_applied: bool
    top_reasons: list[tuple[str, int]]


def scorer_diagnostics(detail: OptimizationDetail, store: Store) -> list[ScorerDiagnostics]:
    """Per-scorer failure rate and most common failure reasons, from the stored runs of
    ``detail``'s evaluations (evaluations without a stored run are skipped)."""
    threshold = float(detail.config.get("feedback_threshold", DEFAULT_FEEDBACK_THRESHOLD))
    counts: dict[str, list[int]] = {}
    reasons: dict[str, Counter[str]] = {}
    labels: dict[str, str] = {}
    bounded: dict[str, bool] = {}
    for run_id in dict.fromkeys(e.run_id for e in detail.evaluations if e.run_id):
        specs = {spec.id: spec for spec in store.runs.get(run_id).info.scorers}
        for result in store.runs.results(run_id):
            for scorer_id, score in result.scores.items():
                spec = specs.get(scorer_id)
                labels.setdefault(scorer_id, score.scorer_label)
                is_bounded = spec is not None and range_is_bounded(spec.score_range)
                bounded[scorer_id] = bounded.get(scorer_id, True) and is_bounded
                if score.status != "ready" or score.score is None:
                    failed = True
                elif spec is not None and is_bounded:
                    failed = spec.normalize(score.score) < threshold
                else:
                    failed = False
                tally = counts.setdefault(scorer_id, [0, 0])
                tally[0] += 1
                if failed:
                    tally[1] += 1
                    fallback = (
                        "(below the feedback threshold, no reason given)"
                        if score.status == "ready"
                        else f"({score.status}, no reason given)"
                    )
                    reason = (score.reason or fallback).strip()
                    reasons.setdefault(scorer_id, Counter())[reason[:300]] += 1
    return [
        ScorerDiagnostics(
            scorer_id=scorer_id,
            label=labels[scorer_id],
            results=total,
            failures=failed,
            failure_rate=failed / total if total else None,
            threshold_applied=bounded[scorer_id],
            top_reasons=reasons.get(scorer_id, Counter()).most_common(TOP_REASONS),
        )
        for scorer_id, (total, failed) in sorted(counts.items())
    ]
