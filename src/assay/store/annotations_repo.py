"""People's annotations of run results, append-only: a new annotation never replaces an
old one, so the history of who said what, and when, stays whole."""

from __future__ import annotations

import builtins
import math
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict
from sqlalchemy import Row

from assay.store.codec import now
from assay.store.db import Database
from assay.store.errors import RunNotFoundError
from assay.store.tables import item_annotations, item_results, runs


class Annotation(BaseModel):
    """One person's word on an item result: ``label`` (``pass``/``fail`` or any text),
    a ``score`` override, a ``comment``; optionally about one ``repeat`` or one scorer."""

    model_config = ConfigDict(frozen=True)

    id: int
    run_id: str
    item_id: str
    author: str
    label: str | None = None
    score: float | None = None
    comment: str | None = None
    scorer: str | None = None
    repeat: int | None = None
    created_at: float


class AnnotationError(ValueError):
    """An annotation that says nothing, has no author, or a score that is not a number."""


class ItemNotInRunError(LookupError):
    """The run has no result for that item."""

    def __init__(self, run_id: str, item_id: str) -> None:
        super().__init__(f"run {run_id!r} has no item {item_id!r}")


def _annotation(row: Row[Any]) -> Annotation:
    return Annotation(
        id=row.id,
        run_id=row.run_id,
        item_id=row.item_id,
        author=row.author,
        label=row.label,
        score=row.score,
        comment=row.comment,
        scorer=row.scorer_id,
        repeat=row.repeat,
        created_at=row.created_at,
    )


class AnnotationRepository:
    """Add and read annotations. Synchronous; every write is one transaction."""

    CHUNK = 1000

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(
        self,
        run_id: str,
        item_id: str,
        *,
        author: str,
        label: str | None = None,
        score: float | None = None,
        comment: str | None = None,
        scorer: str | None = None,
        repeat: int | None = None,
    ) -> Annotation:
        """Store a new annotation (the item must be in the run; a score must be finite;
        something must be said: a label, a score or a comment)."""
        if not author.strip():
            raise AnnotationError("an annotation needs an author")
        if label is None and score is None and not comment:
            raise AnnotationError("an annotation needs a label, a score or a comment")
        if score is not None and not math.isfinite(score):
            raise AnnotationError(f"annotation score must be a finite number, got {score!r}")
        t = item_results.c
        with self._db.write() as conn:
            if conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first() is None:
                raise RunNotFoundError(run_id)
            found = sa.select(t.id).where(t.run_id == run_id, t.item_id == item_id)
            if repeat is not None:
                found = found.where(t.repeat == repeat)
            if conn.execute(found.limit(1)).first() is None:
                where = item_id if repeat is None else f"{item_id} (repeat {repeat})"
                raise ItemNotInRunError(run_id, where)
            new_id = conn.execute(
                item_annotations.insert()
                .values(
                    run_id=run_id,
                    item_id=item_id,
                    repeat=repeat,
                    scorer_id=scorer,
                    author=author.strip(),
                    label=label,
                    score=score,
                    comment=comment,
                    created_at=now(),
                )
                .returning(item_annotations.c.id)
            ).scalar_one()
            row = conn.execute(
                sa.select(item_annotations).where(item_annotations.c.id == new_id)
            ).one()
        return _annotation(row)

    def for_item(self, run_id: str, item_id: str) -> builtins.list[Annotation]:
        """The item's annotations, oldest first (the history; the last one is current)."""
        c = item_annotations.c
        with self._db.read() as conn:
            if conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first() is None:
                raise RunNotFoundError(run_id)
            rows = conn.execute(
                sa.select(item_annotations)
                .where(c.run_id == run_id, c.item_id == item_id)
                .order_by(c.id)
            ).all()
        return [_annotation(row) for row in rows]

    def for_run(self, run_id: str) -> Iterator[Annotation]:
        """Every annotation of the run, oldest first, streamed."""
        with self._db.read() as conn:
            if conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first() is None:
                raise RunNotFoundError(run_id)
        return self._stream(run_id)

    def _stream(self, run_id: str) -> Iterator[Annotation]:
        c = item_annotations.c
        after = -1
        while True:
            with self._db.read() as conn:
                rows = conn.execute(
                    sa.select(item_annotations)
                    .where(c.run_id == run_id, c.id > after)
                    .order_by(c.id)
                    .limit(self.CHUNK)
                ).all()
            yield from (_annotation(row) for row in rows)
            if len(rows) < self.CHUNK:
                return
            after = rows[-1].id
