"""Row scores: weighted, normalized, direction-aware; failures are low scores with reasons."""

from __future__ import annotations

import pytest

from assay.optimize.row_scores import score_row, weighted_specs
from assay.types import ItemResult, ScoreError, ScoreResult, ScorerSpec, TargetError

SPECS = [
    ScorerSpec(id="acc", label="Accuracy", weight=3.0),
    ScorerSpec(
        id="len", label="Length", weight=1.0, higher_is_better=False, score_range=(0.0, 100.0)
    ),
]


def _ready(scorer_id: str, score: float, reason: str | None = None) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id,
        call_id="c",
        status="ready",
        score=score,
        reason=reason,
    )


def _error(scorer_id: str, message: str) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id,
        call_id="c",
        status="error",
        error=ScoreError(message=message),
    )


def test_weighted_mean_of_normalized_scores_flips_lower_is_better() -> None:
    result = ItemResult(
        item_id="a", output="x", scores={"acc": _ready("acc", 1.0), "len": _ready("len", 75.0)}
    )
    row = score_row(result, SPECS)
    # acc 1.0 (weight 3); len 75 on 0..100 lower-is-better -> 0.25 (weight 1)
    assert row.score == pytest.approx((3 * 1.0 + 1 * 0.25) / 4)
    assert row.objectives == {"acc": 1.0, "len": pytest.approx(0.25)}
    assert row.error is None


def test_an_erroring_scorer_is_left_out_of_the_mean_and_explained() -> None:
    result = ItemResult(
        item_id="a",
        output="x",
        scores={"acc": _ready("acc", 0.0, "wrong answer"), "len": _error("len", "boom")},
    )
    row = score_row(result, SPECS)
    assert row.score == 0.0  # only acc counted, not averaged with a made-up value for len
    assert row.objectives == {"acc": 0.0, "len": 0.0}
    feedback = row.feedback("42")
    assert "Expected output: 42" in feedback
    assert "Scorer diagnostics → Accuracy: 0.00 (wrong answer); Length: error (boom)" in feedback

    only_len_ok = ItemResult(
        item_id="b", output="x", scores={"acc": _error("acc", "x"), "len": _ready("len", 0.0)}
    )
    assert score_row(only_len_ok, SPECS).score == 1.0


def test_no_ready_scorer_and_a_failed_target_score_zero_with_the_reason() -> None:
    nothing = ItemResult(item_id="a", output="x", scores={"acc": _error("acc", "e")})
    row = score_row(nothing, SPECS)
    assert (row.score, row.error) == (0.0, "no scorer could score this row")

    failed = ItemResult(item_id="b", error=TargetError(message="timeout", kind="ModelTimeoutError"))
    row = score_row(failed, SPECS)
    assert row.score == 0.0
    assert row.error == "target failed: ModelTimeoutError: timeout"
    assert row.trajectory("in", "out")["error"] == row.error
    assert row.objectives == {"acc": 0.0, "len": 0.0}


def test_weighted_specs_refuse_unbounded_ranges_and_all_zero_weights() -> None:
    unbounded = ScorerSpec(id="ppl", label="Perplexity", score_range=(0.0, float("inf")))
    with pytest.raises(ValueError, match="'ppl' has the unbounded range"):
        weighted_specs([unbounded])
    assert weighted_specs([unbounded.model_copy(update={"weight": 0.0}), SPECS[0]]) == [SPECS[0]]
    with pytest.raises(ValueError, match="every scorer has weight 0"):
        weighted_specs([SPECS[0].model_copy(update={"weight": 0.0})])
