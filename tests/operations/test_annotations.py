"""``operations.annotations``: review notes and the human labels they make."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from assay.operations.annotations import (
    AnnotationInput,
    annotate,
    annotation_history,
    human_labels,
    save_human_labels,
)
from assay.operations.stored_runs import run_stored
from assay.store import open_store


def test_latest_label_wins_and_history_stays(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'a.db'}") as store:
        items = [{"id": "x", "input": "q", "output": "o", "expected_output": "e"}]
        run_id = run_stored(items, None, ["exact-match"], store=store, progress=False).info.id
        annotate(run_id[:8], "x", AnnotationInput(author="ana", label="fail"), store=store)
        annotate(run_id, "x", AnnotationInput(author="bo", label="pass"), store=store)
        annotate(run_id, "x", AnnotationInput(author="cy", comment="agree"), store=store)
        assert [n.author for n in annotation_history(run_id, "x", store=store)] == [
            "ana",
            "bo",
            "cy",
        ]
        (item,) = human_labels(run_id, store=store)
        assert (item.metadata["human_label"], item.metadata["human_label_author"]) == ("pass", "bo")
        assert (item.input, item.output, item.expected_output) == ("q", "o", "e")
        assert save_human_labels(run_id, "labels", store=store).version == 1
        assert save_human_labels(run_id, "labels", store=store).version == 1  # unchanged


def test_an_annotation_must_say_something() -> None:
    with pytest.raises(ValidationError, match="label, a score or a comment"):
        AnnotationInput(author="ana")
    with pytest.raises(ValidationError):
        AnnotationInput(author="ana", score=float("nan"))
