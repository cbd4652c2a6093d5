"""An optimization as its watchers see it: the web view's Server-Sent Events, read from the
store.

Why from the store: an optimization started by ``assay optimize`` in a terminal writes the
same rows as one started by the server (every evaluation, reflection and kept candidate,
and its progress after each step), so one reader follows both, and a watcher that connects
late starts from the current state rather than from whatever it missed. The events speak
the vocabulary of GEPAzilla's ``/api/run`` stream (docs/server.md):

* ``status``: state, iteration, metric calls and cost against the budget, best validation
  score (``StatusUpdate``), whenever it changes;
* ``log``: one line per stored evaluation or reflection (``LogLine``; the server adds the
  in-process events the store does not keep: a proposal's diff, a rejected child);
* ``checkpoint``: each kept candidate with its parents, changed components, scores and
  texts; the same ``CandidateKept`` event the optimizer emits, rebuilt from the stored row;
* ``scoreboard``: per-row, per-scorer values of the best candidate on train and validation,
  from its stored evaluation runs, row scores by ``row_scores`` exactly as GEPA saw them;
* ``result``: the stored ``OptimizeResult`` (best candidate, held-out comparison and its
  significance); ``error``: the optimization failed, was interrupted, or nobody works on it
  any more. Either one is the last event.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel

from assay.optimize.candidate_target import system_text
from assay.optimize.events import CandidateKept, CandidateRejected, OptimizeEvent, Proposed
from assay.optimize.results import OptimizeResult
from assay.optimize.row_scores import score_row, weighted_specs
from assay.store import Store
from assay.store.optimizations_repo import (
    CandidateRecord,
    EvaluationRecord,
    OptimizationRecord,
    OptimizationStatus,
    ReflectionRecord,
)
from assay.store.runs_repo import lease_is_live

REPLAYED_LOG_LINES = 200
"""A late watcher gets at most this many of the past log lines (the newest)."""
STALE_AFTER_S = 5.0
"""A ``running`` optimization without a live lease is given up on only when it has not been
written to for this long (a starting or resuming process takes the lease within
milliseconds of marking it running)."""

EventName = Literal["status", "log", "checkpoint", "scoreboard", "result", "error"]
LogChannel = Literal["lifecycle", "scoring", "prompt", "alerts"]


class StatusUpdate(BaseModel):
    """Where the optimization stands, against its budget (``None``: no such limit)."""

    optimization_id: str
    state: OptimizationStatus
    iteration: int
    max_iterations: int | None
    metric_calls: int
    max_metric_calls: int | None
    cost_usd: float
    max_cost_usd: float | None
    elapsed_s: float
    max_wall_time_s: float | None
    best_idx: int | None
    best_val_score: float | None
    seed_val_score: float | None
    candidates: int


class LogLine(BaseModel):
    """One line of the optimization's log; ``channel`` sorts it as GEPAzilla's dock does."""

    optimization_id: str
    channel: LogChannel
    iteration: int | None
    message: str


class ScoreCell(BaseModel):
    """One scorer's verdict on one row (``normalized``: 0..1, 1 = best; ``None`` when the
    scorer gave no ready score)."""

    status: str
    score: float | None
    normalized: float | None
    reason: str | None


class ScoreboardRow(BaseModel):
    split: Literal["train", "val"]
    item_id: str
    input: Any
    expected_output: Any
    output: Any
    score: float
    """The optimizer's row score: the weighted mean of the ready scorers' normalized
    scores (0 for a failed row), what GEPA summed and averaged."""
    error: str | None
    scorers: dict[str, ScoreCell]


class ScorerColumn(BaseModel):
    id: str
    label: str
    weight: float


class Scoreboard(BaseModel):
    """The best candidate's rows: every validation row, and the train rows it was
    evaluated on (GEPA scores candidates on train minibatches only)."""

    optimization_id: str
    candidate_idx: int
    scorers: list[ScorerColumn]
    rows: list[ScoreboardRow]


class ResultUpdate(BaseModel):
    optimization_id: str
    result: OptimizeResult
    best_prompt: str
    """The best candidate's system message, as the task model receives it."""


class ErrorUpdate(BaseModel):
    optimization_id: str
    state: OptimizationStatus
    message: str


FeedEvent = tuple[EventName, BaseModel]


# ---------------------------------------------------------------------------- pieces
def status_update(record: OptimizationRecord, candidates: int) -> StatusUpdate:
    """``record``'s progress against the budget of its config."""
    progress = record.progress
    budget = record.config.get("budget") or {}
    best_idx = progress.get("best_idx") if progress.get("best_val_score") is not None else None
    return StatusUpdate(
        optimization_id=record.id,
        state=record.status,
        iteration=int(progress.get("iterations") or 0),
        max_iterations=budget.get("max_iterations"),
        metric_calls=int(progress.get("metric_calls") or 0),
        max_metric_calls=budget.get("max_metric_calls"),
        cost_usd=float(progress.get("cost_usd") or 0.0),
        max_cost_usd=budget.get("max_cost_usd"),
        elapsed_s=round(float(progress.get("elapsed_s") or 0.0), 3),
        max_wall_time_s=budget.get("max_wall_time_s"),
        best_idx=best_idx,
        best_val_score=progress.get("best_val_score"),
        seed_val_score=progress.get("seed_val_score"),
        candidates=candidates,
    )


def checkpoints(optimization_id: str, candidates: list[CandidateRecord]) -> list[CandidateKept]:
    """The stored candidates as the ``CandidateKept`` events the optimizer emitted (the
    best score so far in discovery order; a tie does not make a new best, as in
    ``watch.Watcher``)."""
    events: list[CandidateKept] = []
    best: float | None = None
    for candidate in sorted(candidates, key=lambda c: c.idx):
        score = candidate.val_score
        is_best = score is not None and (best is None or score > best)
        if is_best:
            best = score
        events.append(
            CandidateKept(
                optimization_id=optimization_id,
                iteration=candidate.iteration,
                idx=candidate.idx,
                parents=candidate.parents,
                changed=candidate.changed,
                val_score=score if score is not None else 0.0,
                best_val_score=best if best is not None else 0.0,
                is_best=is_best,
                components=candidate.components,
            )
        )
    return events


def evaluation_line(
    optimization_id: str, evaluation: EvaluationRecord, idx_by_hash: dict[str, int]
) -> LogLine:
    idx = idx_by_hash.get(evaluation.candidate_hash)
    who = f"candidate {idx}" if idx is not None else f"proposal {evaluation.candidate_hash[:8]}"
    mean = "" if evaluation.mean_score is None else f": mean score {evaluation.mean_score:.3f}"
    return LogLine(
        optimization_id=optimization_id,
        channel="scoring",
        iteration=evaluation.iteration,
        message=f"{who} evaluated on {evaluation.split} ({evaluation.metric_calls} "
        f"rows){mean}" + (f" · run {evaluation.run_id[:12]}" if evaluation.run_id else ""),
    )


def reflection_line(optimization_id: str, reflection: ReflectionRecord) -> LogLine:
    if reflection.error:
        return LogLine(
            optimization_id=optimization_id,
            channel="alerts",
            iteration=reflection.iteration,
            message=f"reflection on {reflection.component!r} failed: {reflection.error}",
        )
    return LogLine(
        optimization_id=optimization_id,
        channel="prompt",
        iteration=reflection.iteration,
        message=f"the reflection model proposed a new {reflection.component!r}",
    )


def event_line(event: OptimizeEvent) -> LogLine | None:
    """A log line for the optimizer events the store does not keep (a proposal's diff
    against its parent, a child rejected on its minibatch); ``None`` for the rest, which
    the store-read lines already tell."""
    if isinstance(event, Proposed):
        return LogLine(
            optimization_id=event.optimization_id,
            channel="prompt",
            iteration=event.iteration,
            message=f"proposed a new {event.component!r}:\n{event.diff}",
        )
    if isinstance(event, CandidateRejected):
        return LogLine(
            optimization_id=event.optimization_id,
            channel="scoring",
            iteration=event.iteration,
            message=f"rejected: the child scored {event.child_score:.2f} on the minibatch, "
            f"not above its parent's {event.parent_score:.2f}",
        )
    return None


def scoreboard(
    store: Store,
    record: OptimizationRecord,
    candidates: list[CandidateRecord],
    evaluations: list[EvaluationRecord],
    best_idx: int,
) -> Scoreboard | None:
    """Candidate ``best_idx``'s rows on train and validation from its stored evaluation
    runs (the latest result of each row); ``None`` when it has no stored run yet."""
    best = next((c for c in candidates if c.idx == best_idx), None)
    if best is None or record.config.get("optimizes") is not None:
        return None  # a judge optimization's runs have no scorers; its page shows agreement
    runs = [
        e
        for e in evaluations
        if e.candidate_hash == best.candidate_hash and e.split in ("train", "val") and e.run_id
    ]
    rows: dict[tuple[str, str], ScoreboardRow] = {}
    columns: dict[str, ScorerColumn] = {}
    for evaluation in runs:
        assert evaluation.run_id is not None
        if not store.runs.exists(evaluation.run_id):
            continue
        specs = store.runs.get(evaluation.run_id).info.scorers
        for column in specs:
            columns.setdefault(
                column.id, ScorerColumn(id=column.id, label=column.label, weight=column.weight)
            )
        weighted = weighted_specs(specs)
        by_id = {spec.id: spec for spec in specs}
        split: Literal["train", "val"] = "train" if evaluation.split == "train" else "val"
        for result in store.runs.results(evaluation.run_id):
            row = score_row(result, weighted)
            cells: dict[str, ScoreCell] = {}
            for scorer_id, scored in result.scores.items():
                known = by_id.get(scorer_id)
                normalized = (
                    known.normalize(scored.score)
                    if known is not None and scored.status == "ready" and scored.score is not None
                    else None
                )
                reason = scored.reason or (scored.error.message if scored.error else None)
                cells[scorer_id] = ScoreCell(
                    status=scored.status, score=scored.score, normalized=normalized, reason=reason
                )
            rows[(split, result.item_id)] = ScoreboardRow(
                split=split,
                item_id=result.item_id,
                input=result.input,
                expected_output=result.expected_output,
                output=result.output,
                score=row.score,
                error=row.error,
                scorers=cells,
            )
    if not rows:
        return None
    ordered = sorted(rows.values(), key=lambda r: (r.split != "train", r.item_id))
    return Scoreboard(
        optimization_id=record.id,
        candidate_idx=best_idx,
        scorers=list(columns.values()),
        rows=ordered,
    )


def best_index(record: OptimizationRecord) -> int | None:
    """The best candidate: the stored result's when finished, else the progress's."""
    if record.result is not None and "best_idx" in record.result:
        return int(record.result["best_idx"])
    progress = record.progress
    if progress.get("best_val_score") is None:
        return None
    return int(progress.get("best_idx") or 0)


def result_update(record: OptimizationRecord) -> ResultUpdate:
    result = OptimizeResult.model_validate(record.result)
    return ResultUpdate(
        optimization_id=record.id, result=result, best_prompt=system_text(result.best_candidate)
    )


def stale_reason(record: OptimizationRecord, *, live_here: bool) -> str | None:
    """Why a ``running`` optimization will never finish (its process is gone), or ``None``."""
    if record.status != "running" or live_here:
        return None
    progress = record.progress
    if lease_is_live(progress.get("lease_owner"), progress.get("lease_expires_at")):
        return None
    if time.time() - record.updated_at < STALE_AFTER_S:
        return None
    return (
        f"optimization {record.id} is marked running but no live process works on it (it "
        f"was killed?); resume it with `assay optimize resume {record.id}`"
    )


# ---------------------------------------------------------------------------- reader
class FeedReader:
    """Reads one optimization's new events from the store, poll after poll.

    The first ``poll`` gives the current state (status, every checkpoint, the recent log,
    the scoreboard, and the result or error when it is over); later polls only what
    changed. ``done`` is true once a ``result`` or ``error`` was given: the feed is over.
    Each poll reads the optimization row; the rest only when that row changed (every step
    of the optimizer bumps it)."""

    def __init__(self, store: Store, optimization_id: str) -> None:
        self.store = store
        self.id = store.optimizations.get(optimization_id).id
        self.done = False
        self._stamp: float | None = None
        self._status: StatusUpdate | None = None
        self._candidates: dict[int, str] = {}
        self._evaluations: set[str] = set()
        self._reflections: set[str] = set()
        self._board_key: tuple[int, int] | None = None
        self._board: Scoreboard | None = None
        self._first = True

    def poll(self, *, live_here: bool = False) -> list[FeedEvent]:
        """New events since the last poll (in the order a reader needs them)."""
        if self.done:
            return []
        repo = self.store.optimizations
        record = repo.get(self.id)
        stale = stale_reason(record, live_here=live_here)
        over = record.status != "running" or stale is not None
        if record.updated_at == self._stamp and not over:
            return []
        self._stamp = record.updated_at
        candidates = repo.candidates(self.id)
        evaluations = repo.evaluations(self.id)
        reflections = repo.reflections(self.id)
        events: list[FeedEvent] = []

        status = status_update(record, len(candidates))
        if status != self._status:
            self._status = status
            events.append(("status", status))
        events += self._logs(candidates, evaluations, reflections)
        for kept in checkpoints(self.id, candidates):
            seen = f"{kept.val_score}:{sorted(kept.components.items())}"
            if self._candidates.get(kept.idx) != seen:
                self._candidates[kept.idx] = seen
                events.append(("checkpoint", kept))
        best = best_index(record)
        digest = next((c.candidate_hash for c in candidates if c.idx == best), None)
        if best is not None and digest is not None:
            runs = sum(1 for e in evaluations if e.candidate_hash == digest and e.split != "test")
            key = (best, runs)
            if key != self._board_key:
                self._board_key = key
                board = scoreboard(self.store, record, candidates, evaluations, best)
                if board is not None and board != self._board:
                    self._board = board
                    events.append(("scoreboard", board))
        if record.status == "completed" and record.result is not None:
            events.append(("result", result_update(record)))
            self.done = True
        elif over:
            message = stale or record.error or f"optimization {self.id} is {record.status}"
            state = record.status
            events.append(
                ("error", ErrorUpdate(optimization_id=self.id, state=state, message=message))
            )
            self.done = True
        self._first = False
        return events

    def _logs(
        self,
        candidates: list[CandidateRecord],
        evaluations: list[EvaluationRecord],
        reflections: list[ReflectionRecord],
    ) -> list[FeedEvent]:
        idx_by_hash = {c.candidate_hash: c.idx for c in candidates}
        fresh: list[tuple[float, LogLine]] = []
        for evaluation in evaluations:
            if evaluation.id not in self._evaluations:
                self._evaluations.add(evaluation.id)
                fresh.append(
                    (evaluation.created_at, evaluation_line(self.id, evaluation, idx_by_hash))
                )
        for reflection in reflections:
            if reflection.id not in self._reflections:
                self._reflections.add(reflection.id)
                fresh.append((reflection.created_at, reflection_line(self.id, reflection)))
        fresh.sort(key=lambda pair: pair[0])
        if self._first:
            fresh = fresh[-REPLAYED_LOG_LINES:]
        return [("log", line) for _, line in fresh]


def current_state(store: Store, optimization_id: str) -> tuple[StatusUpdate, Scoreboard | None]:
    """The status and the best candidate's scoreboard of optimization ``optimization_id``
    as they stand (the page of a finished optimization shows them without a stream)."""
    repo = store.optimizations
    record = repo.get(optimization_id)
    candidates = repo.candidates(record.id)
    best = best_index(record)
    board = None
    if best is not None:
        board = scoreboard(store, record, candidates, repo.evaluations(record.id), best)
    return status_update(record, len(candidates)), board
