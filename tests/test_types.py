"""Renamed fields of the value types still read records written before the rename."""

from __future__ import annotations

from assay.types import ScoreResult, ScorerSpec, ScorerSummary


def test_scorer_spec_label_reads_the_old_name_key() -> None:
    assert ScorerSpec.model_validate({"id": "x", "name": "X"}).label == "X"
    spec = ScorerSpec(id="x", label="X")
    assert spec.model_dump()["label"] == "X" and "name" not in spec.model_dump()


def test_scorer_label_reads_the_old_scorer_name_key() -> None:
    old = {"scorer_id": "a", "scorer_name": "A"}
    assert ScorerSummary.model_validate(old).scorer_label == "A"
    result = ScoreResult.model_validate({**old, "call_id": "c", "status": "ready", "score": 1.0})
    assert result.scorer_label == "A" and result.model_dump()["scorer_label"] == "A"
