"""Stored prompt optimizations: the optimization row, its candidates, evaluations and
reflections (tables of migration 0005).

Why a repository of its own: an optimization is a long-lived object that is written from
many places while GEPA runs (every evaluation, every reflection, every kept candidate) and
read back to resume it after a kill and to show it. Each write is one small transaction, so
a kill loses at most the write in flight, never half a row. Candidates are upserted by
(optimization, GEPA index): after a resume GEPA may re-propose the candidate whose
iteration was cut short, and the new one replaces the lost one.
"""

from __future__ import annotations

import builtins
import uuid
from typing import Any, Literal, TypeVar

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Row

from assay.store.codec import now
from assay.store.db import Database
from assay.store.errors import StoreError
from assay.store.runs_repo import lease_is_live
from assay.store.tables import (
    optimization_candidates,
    optimization_evaluations,
    optimization_reflections,
    optimizations,
)

ChildT = TypeVar("ChildT", bound=BaseModel)
"""The record of a row of an optimization's child tables (candidates, evaluations,
reflections)."""

OptimizationStatus = Literal["running", "completed", "failed", "interrupted"]


class OptimizationNotFoundError(StoreError, LookupError):
    def __init__(self, ref: str, detail: str = "") -> None:
        self.ref = ref
        super().__init__(f"optimization {ref!r} not found{detail}")


class OptimizationRecord(BaseModel):
    """An optimization as stored."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str | None = None
    status: OptimizationStatus
    config: dict[str, Any]
    run_dir: str
    progress: dict[str, Any] = Field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str | None = None
    created_at: float
    updated_at: float


class CandidateRecord(BaseModel):
    """One candidate GEPA kept (``idx`` is GEPA's program index; 0 is the seed)."""

    model_config = ConfigDict(frozen=True)

    idx: int
    candidate_hash: str
    components: dict[str, str]
    parents: list[int]
    changed: list[str]
    iteration: int
    val_score: float | None = None
    created_at: float


class EvaluationRecord(BaseModel):
    """One evaluation of a candidate on (part of) a split: a stored run."""

    model_config = ConfigDict(frozen=True)

    id: str
    run_id: str | None
    candidate_hash: str
    split: str
    iteration: int
    metric_calls: int
    mean_score: float | None = None
    cost_usd: float | None = None
    created_at: float


class ReflectionRecord(BaseModel):
    """One call of the reflection model: the prompt sent, the answer (or the error)."""

    model_config = ConfigDict(frozen=True)

    id: str
    iteration: int
    component: str
    prompt: str
    answer: str | None = None
    error: str | None = None
    cost_usd: float | None = None
    created_at: float


class OptimizationRepository:
    """Reads and writes optimizations; every method is one transaction."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def create(
        self, optimization_id: str, *, name: str | None, config: dict[str, Any], run_dir: str
    ) -> OptimizationRecord:
        stamp = now()
        with self._db.write() as conn:
            conn.execute(
                optimizations.insert().values(
                    id=optimization_id,
                    name=name,
                    status="running",
                    config=config,
                    run_dir=run_dir,
                    progress={},
                    result=None,
                    error=None,
                    created_at=stamp,
                    updated_at=stamp,
                )
            )
        return self.get(optimization_id)

    def get(self, ref: str) -> OptimizationRecord:
        """The optimization with this id or unique id prefix."""
        with self._db.read() as conn:
            row = conn.execute(sa.select(optimizations).where(optimizations.c.id == ref)).first()
            if row is None:
                rows = conn.execute(
                    sa.select(optimizations).where(
                        optimizations.c.id.startswith(ref, autoescape=True)
                    )
                ).all()
                if len(rows) > 1:
                    raise OptimizationNotFoundError(
                        ref, f": the prefix matches {len(rows)} optimizations; give more characters"
                    )
                row = rows[0] if rows else None
        if row is None:
            raise OptimizationNotFoundError(ref)
        return _optimization(row)

    def list(self, *, limit: int = 50) -> builtins.list[OptimizationRecord]:
        with self._db.read() as conn:
            rows = conn.execute(
                sa.select(optimizations).order_by(optimizations.c.created_at.desc()).limit(limit)
            ).all()
        return [_optimization(row) for row in rows]

    def update(
        self,
        optimization_id: str,
        *,
        status: OptimizationStatus | None = None,
        progress: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        values: dict[str, Any] = {"updated_at": now()}
        if status is not None:
            values["status"] = status
            values["error"] = error
        if progress is not None:
            values["progress"] = progress
        if result is not None:
            values["result"] = result
        with self._db.write() as conn:
            done = conn.execute(
                optimizations.update().where(optimizations.c.id == optimization_id).values(**values)
            )
            if done.rowcount == 0:
                raise OptimizationNotFoundError(optimization_id)

    # ------------------------------------------------------------------ candidates
    def put_candidate(self, optimization_id: str, candidate: CandidateRecord) -> None:
        """Insert or replace candidate ``candidate.idx`` (see the module docstring)."""
        with self._db.write() as conn:
            conn.execute(
                optimization_candidates.delete().where(
                    (optimization_candidates.c.optimization_id == optimization_id)
                    & (optimization_candidates.c.idx == candidate.idx)
                )
            )
            _insert_child(conn, optimization_candidates, optimization_id, candidate)

    def candidates(self, optimization_id: str) -> builtins.list[CandidateRecord]:
        return self._children(optimization_candidates, CandidateRecord, optimization_id, "idx")

    # ------------------------------------------------------------------ evaluations
    def add_evaluation(
        self,
        optimization_id: str,
        *,
        run_id: str | None,
        candidate_hash: str,
        split: str,
        iteration: int,
        metric_calls: int,
        mean_score: float | None,
        cost_usd: float | None,
    ) -> EvaluationRecord:
        record = EvaluationRecord(
            id=uuid.uuid4().hex,
            run_id=run_id,
            candidate_hash=candidate_hash,
            split=split,
            iteration=iteration,
            metric_calls=metric_calls,
            mean_score=mean_score,
            cost_usd=cost_usd,
            created_at=now(),
        )
        with self._db.write() as conn:
            _insert_child(conn, optimization_evaluations, optimization_id, record)
        return record

    def evaluations(self, optimization_id: str) -> builtins.list[EvaluationRecord]:
        return self._children(optimization_evaluations, EvaluationRecord, optimization_id)

    # ------------------------------------------------------------------ reflections
    def add_reflection(
        self,
        optimization_id: str,
        *,
        iteration: int,
        component: str,
        prompt: str,
        answer: str | None,
        error: str | None,
        cost_usd: float | None,
    ) -> None:
        with self._db.write() as conn:
            conn.execute(
                optimization_reflections.insert().values(
                    id=uuid.uuid4().hex,
                    optimization_id=optimization_id,
                    iteration=iteration,
                    component=component,
                    prompt=prompt,
                    answer=answer,
                    error=error,
                    cost_usd=cost_usd,
                    created_at=now(),
                )
            )

    def reflections(self, optimization_id: str) -> builtins.list[ReflectionRecord]:
        return self._children(optimization_reflections, ReflectionRecord, optimization_id)

    def _children(
        self,
        table: sa.Table,
        record_type: type[ChildT],
        optimization_id: str,
        order_by: str = "created_at",
    ) -> builtins.list[ChildT]:
        """The rows of one of the optimization's child tables, in ``order_by`` order."""
        with self._db.read() as conn:
            rows = conn.execute(
                sa.select(table)
                .where(table.c.optimization_id == optimization_id)
                .order_by(table.c[order_by])
            ).all()
        return [record_type.model_validate(_without_owner(row)) for row in rows]


ABANDONED_AFTER_S = 5.0
"""A ``running`` optimization whose lease is not live and that was not written to for this
long reads as ``interrupted`` (its process was killed); a starting or resuming process takes
the lease within milliseconds of marking it running."""


def _optimization(row: Row[Any]) -> OptimizationRecord:
    """The stored row; a killed optimization (``running``, no live lease, not written to for
    ``ABANDONED_AFTER_S``) reads as ``interrupted``, as a killed run does, so listings and the
    web UI offer Resume instead of showing it running for ever."""
    values = dict(row._mapping)
    progress = values.get("progress") or {}
    if (
        values.get("status") == "running"
        and not lease_is_live(progress.get("lease_owner"), progress.get("lease_expires_at"))
        and now() - float(values.get("updated_at") or 0.0) >= ABANDONED_AFTER_S
    ):
        values["status"] = "interrupted"
    return OptimizationRecord.model_validate(values)


def _without_owner(row: Row[Any]) -> dict[str, Any]:
    return {k: v for k, v in row._mapping.items() if k != "optimization_id"}


def _insert_child(
    conn: sa.Connection, table: sa.Table, optimization_id: str, record: BaseModel
) -> None:
    """Store ``record`` as a row of one of the optimization's child tables: the record's
    fields are the table's columns, less the owning optimization's id."""
    conn.execute(table.insert().values(optimization_id=optimization_id, **record.model_dump()))
