"""``/api/runs/{id}/items/{item_id}/annotations``: human review (append-only)."""

from __future__ import annotations

from fastapi import APIRouter

from assay.operations.annotations import AnnotationInput, annotate, annotation_history
from assay.server.api.deps import StoreDep, responses
from assay.store.annotations_repo import Annotation

router = APIRouter(tags=["annotations"])


@router.post(
    "/runs/{run_id}/items/{item_id:path}/annotations",
    response_model=Annotation,
    status_code=201,
    responses=responses(404),
)
def add_annotation(run_id: str, item_id: str, body: AnnotationInput, store: StoreDep) -> Annotation:
    """Store a reviewer's label / score / comment; earlier annotations are kept."""
    return annotate(run_id, item_id, body, store=store)


@router.get(
    "/runs/{run_id}/items/{item_id:path}/annotations",
    response_model=list[Annotation],
    responses=responses(404),
)
def list_annotations(run_id: str, item_id: str, store: StoreDep) -> list[Annotation]:
    """The item's annotations, oldest first (newest last)."""
    return annotation_history(run_id, item_id, store=store)
