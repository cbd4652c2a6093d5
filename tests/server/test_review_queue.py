"""The review queue: previous/next in data order, "unreviewed only", progress."""

from __future__ import annotations

from pathlib import Path

from assay.operations.annotations import AnnotationInput, annotate
from assay.operations.stored_runs import run_stored
from assay.server.review_queue import review_queue
from assay.store import open_store


def test_queue_walks_the_items_and_skips_reviewed_ones(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "q.db")) as store:
        rows = [
            {"id": f"i{k}/x", "input": k, "output": "a", "expected_output": "a"} for k in range(5)
        ]
        run_id = run_stored(rows, None, ["exact-match"], store=store, repeats=2).id
        first = review_queue(run_id, "i0/x", store=store)
        assert (first.previous, first.next, first.position, first.size) == (None, "i1/x", 1, 5)
        assert (first.items, first.reviewed) == (5, 0)
        for item in ("i1/x", "i2/x"):
            annotate(run_id, item, AnnotationInput(author="r", label="pass"), store=store)
        middle = review_queue(run_id, "i2/x", store=store)
        assert (middle.previous, middle.next, middle.position, middle.reviewed) == (
            "i1/x",
            "i3/x",
            3,
            2,
        )
        skipping = review_queue(run_id, "i0/x", unreviewed_only=True, store=store)
        assert (skipping.next, skipping.position, skipping.size) == ("i3/x", 1, 3)
        on_reviewed = review_queue(run_id, "i2/x", unreviewed_only=True, store=store)
        assert (on_reviewed.previous, on_reviewed.next, on_reviewed.position) == (
            "i0/x",
            "i3/x",
            None,
        )
        last = review_queue(run_id, "i4/x", unreviewed_only=True, store=store)
        assert (last.previous, last.next, last.position) == ("i3/x", None, 3)
