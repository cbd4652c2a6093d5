"""Human review of run results: annotate an item (label, score, comment), read an item's
annotation history, and turn a run's annotations into human labels for ``assay calibrate``.

Calibration reads labels from items, so ``human_labels(run_id)`` gives one ``Item`` per
annotated item: the run's input, output and expected output, with
``metadata.human_label`` set to the latest annotation's label (its score when it has no
label). ``save_human_labels(run_id, dataset)`` stores them as a dataset version, which a
calibration config then names::

    dataset: review-labels
    label: metadata.human_label
    label_map: {pass: 1, fail: 0}
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.store import DatasetInfo, Store, using_store
from assay.store.annotations_repo import Annotation
from assay.types import Item


class AnnotationInput(BaseModel):
    """What a reviewer says about an item result (at least one of label, score, comment)."""

    model_config = ConfigDict(extra="forbid")

    author: str = Field(min_length=1, max_length=255, pattern=r"\S")
    label: str | None = Field(default=None, min_length=1, max_length=255)
    score: float | None = Field(default=None, allow_inf_nan=False)
    comment: str | None = Field(default=None, max_length=20_000)
    scorer: str | None = Field(default=None, max_length=255)
    repeat: int | None = Field(default=None, ge=0, le=2**31 - 1)

    @model_validator(mode="after")
    def _says_something(self) -> AnnotationInput:
        if self.label is None and self.score is None and not self.comment:
            raise ValueError("an annotation needs a label, a score or a comment")
        return self


def annotate(
    run_id: str, item_id: str, note: AnnotationInput, *, store: Store | None = None
) -> Annotation:
    """Store ``note`` on the item of the run (a new row; earlier annotations stay)."""
    with using_store(store) as db:
        run = db.runs.get(run_id).info.id
        return db.annotations.add(run, item_id, **note.model_dump())


def annotation_history(
    run_id: str, item_id: str, *, store: Store | None = None
) -> list[Annotation]:
    """The item's annotations, oldest first (the last one is the current word)."""
    with using_store(store) as db:
        run = db.runs.get(run_id).info.id
        return db.annotations.for_item(run, item_id)


def _label_of(note: Annotation) -> Any:
    return note.label if note.label is not None else note.score


def human_labels(run_id: str, *, store: Store | None = None) -> list[Item]:
    """One item per annotated item of the run whose latest label-or-score annotation
    gives ``metadata.human_label`` (comments alone are not labels), in run order."""
    with using_store(store) as db:
        run = db.runs.get(run_id).info.id
        latest: dict[str, Annotation] = {}
        for note in db.annotations.for_run(run):
            if _label_of(note) is not None:
                latest[note.item_id] = note
        items = []
        for item_id, note in latest.items():
            results = db.run_queries.item(run, item_id)
            chosen = next((r for r in results if r.repeat == (note.repeat or 0)), results[0])
            items.append(
                (
                    chosen.position,
                    Item(
                        id=item_id,
                        input=chosen.input,
                        output=chosen.output,
                        expected_output=chosen.expected_output,
                        metadata={
                            "human_label": _label_of(note),
                            "human_label_author": note.author,
                            "human_label_at": note.created_at,
                            "human_label_scorer": note.scorer,
                            "annotated_run": run,
                        },
                    ),
                )
            )
    items.sort(key=lambda pair: pair[0])
    return [item for _, item in items]


def save_human_labels(run_id: str, dataset: str, *, store: Store | None = None) -> DatasetInfo:
    """Store ``human_labels(run_id)`` as a new version of ``dataset`` (created when
    missing; items already there become new versions of themselves)."""
    from assay.store import DatasetNotFoundError

    with using_store(store) as db:
        items = human_labels(run_id, store=db)
        if not items:
            raise ValueError(f"run {run_id!r} has no annotation with a label or a score")
        try:
            db.datasets.get(dataset)
        except DatasetNotFoundError:
            db.datasets.create(dataset)
        db.datasets.add_items(
            dataset, items, note=f"human labels of run {run_id}", on_existing="upsert"
        )
        return db.datasets.get(dataset)
