"""A run's review queue: where an item stands among the run's items, the previous and next
item to review, and how much of the run has been reviewed (Langfuse's annotation queues).

The queue is the run's items in data order; "unreviewed only" skips items that already
have an annotation (the item on screen stays reachable even once reviewed, so a reviewer
can look back). Reviews are the run's annotations, which already feed calibration
(``calibration.data``): the queue only decides what comes next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from assay.store import Store


class ReviewQueue(BaseModel):
    """One item's place in its run's review queue."""

    item_id: str
    unreviewed_only: bool
    position: int | None
    """1-based place of the item among the queue's items (``None``: a reviewed item shown
    while the queue skips reviewed ones)."""
    size: int
    """Items in the queue (all items, or the unreviewed ones)."""
    items: int
    reviewed: int
    """Items of the run with at least one annotation."""
    previous: str | None
    next: str | None


def review_queue(
    run_id: str, item_id: str, *, unreviewed_only: bool = False, store: Store
) -> ReviewQueue:
    """``item_id``'s place in run ``run_id``'s queue (the run id exact or a prefix)."""
    record = store.runs.get(run_id)
    order: dict[str, None] = {}
    for _, _, unit_item in store.runs.completed_units(record.info.id):
        order.setdefault(unit_item, None)
    reviewed = {a.item_id for a in store.annotations.for_run(record.info.id)} & order.keys()
    ids = list(order)

    def wanted(candidate: str) -> bool:
        return not unreviewed_only or candidate not in reviewed

    here = ids.index(item_id) if item_id in order else -1
    previous = next((i for i in reversed(ids[:here]) if wanted(i)), None) if here > 0 else None
    following = next((i for i in ids[here + 1 :] if wanted(i)), None)
    queue_size = len(ids) - (len(reviewed) if unreviewed_only else 0)
    position = None
    if here >= 0 and wanted(item_id):
        position = sum(1 for i in ids[: here + 1] if wanted(i))
    return ReviewQueue(
        item_id=item_id,
        unreviewed_only=unreviewed_only,
        position=position,
        size=queue_size,
        items=len(ids),
        reviewed=len(reviewed),
        previous=previous,
        next=following,
    )
