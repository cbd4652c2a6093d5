from __future__ import annotations

import math

import pytest

import assay
from assay.targets.scorer import ScorerTarget, ScorerTargetError, scorer_output, valid_score
from assay.types import Item, ScoreError, ScoreResult


@pytest.mark.parametrize(
    ("value", "expected", "warned"),
    [
        (0.25, 0.25, False),
        (1, 1.0, False),
        (math.nan, None, True),
        (math.inf, None, True),
        ("0.5", None, True),
        (True, None, True),
        (None, None, False),
    ],
)
def test_valid_score(value: object, expected: float | None, warned: bool) -> None:
    score, warnings = valid_score(value)
    assert score == expected
    assert bool(warnings) is warned


def test_error_result_raises_and_not_scorable_keeps_status() -> None:
    error = ScoreResult(
        scorer_id="s",
        scorer_label="s",
        call_id="r",
        status="error",
        error=ScoreError(message="judge said nonsense"),
    )
    with pytest.raises(ScorerTargetError, match="judge said nonsense"):
        scorer_output(error)
    skipped = ScoreResult(scorer_id="s", scorer_label="s", call_id="r", status="not_scorable")
    assert scorer_output(skipped).output == {
        "score": None,
        "reason": None,
        "status": "not_scorable",
    }


async def test_scorer_target_passes_item_fields_as_scorer_arguments() -> None:
    seen = {}

    def score(ctx: assay.StepContext) -> float:
        seen.update(input=ctx.call.input, output=ctx.call.output, gt=ctx.call.ground_truth)
        return 0.75

    target = ScorerTarget(assay.Scorer("probe").score(score).reason(lambda ctx: "because"))
    out = await target.execute(Item(id="1", input="q", output="a", expected_output=1))
    assert out.output == {"score": 0.75, "reason": "because"}
    assert seen == {"input": "q", "output": "a", "gt": 1}
