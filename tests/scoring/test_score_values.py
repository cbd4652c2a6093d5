"""Scores that carry more than one number, and direction/range made usable (normalize,
per-scorer thresholds, declared aggregations)."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

import assay
from assay.scoring.registry import (
    ScorerConfig,
    create_scorer,
    get_scorer_type,
    register_scorer,
    unregister,
)
from assay.scoring.score_value import Score
from assay.scoring.scorer import Scorer, ScorerDefinitionError
from assay.types import ScoreError, ScoreResult, ScorerSpec, normalize_score, threshold_on_scale


def _rouge() -> Scorer:
    return Scorer("rouge").score(
        lambda ctx: Score(
            0.5,
            values={"rouge1": 0.75, "rouge2": 0.25, "rougeL": 0.5},
            corpus={"tp": 3, "fp": 1, "fn": 2},
        )
    )


def test_a_score_step_returns_values_and_a_corpus_payload() -> None:
    result = _rouge().run_sync(output="the cat")
    assert result.status == "ready" and result.score == 0.5
    assert result.values == {"rouge1": 0.75, "rouge2": 0.25, "rougeL": 0.5}
    assert result.corpus == {"tp": 3, "fp": 1, "fn": 2}
    assert result.steps["score"] == 0.5  # the step result stays the headline number


def test_a_plain_number_is_unchanged() -> None:
    result = Scorer("n").score(lambda ctx: 1).run_sync(output="x")
    assert result.score == 1.0 and result.values == {} and result.corpus is None


@pytest.mark.parametrize(
    "returned",
    [
        Score(0.5, values={"f1": math.nan}),
        Score(0.5, values={"f1": True}),  # a bool is not a number
        Score(0.5, values={"": 0.2}),
        Score(math.inf),
        Score(0.5, corpus={"pair": object()}),  # not JSON
        Score(0.5, corpus=[math.nan]),
    ],
)
def test_bad_values_make_an_error_result_not_a_number(returned: Score) -> None:
    result = Scorer("bad").score(lambda ctx: returned).run_sync(output="x")
    assert result.status == "error" and result.score is None
    assert result.values == {} and result.corpus is None
    assert result.error is not None and result.error.failed_step == "score"


def test_non_ready_results_carry_no_numbers() -> None:
    error = ScoreError(message="boom")
    with pytest.raises(ValidationError, match="cannot carry values"):
        ScoreResult(
            scorer_id="s", scorer_label="s", call_id="c", status="error", error=error,
            values={"f1": 0.5},
        )  # fmt: skip
    with pytest.raises(ValidationError, match="cannot carry values"):
        ScoreResult(scorer_id="s", scorer_label="s", call_id="c", status="not_scorable", corpus=[1])
    with pytest.raises(ValidationError, match="finite"):
        ScoreResult(
            scorer_id="s", scorer_label="s", call_id="c", status="ready", score=1.0,
            values={"f1": math.inf},
        )  # fmt: skip


def test_normalize_lower_is_better_on_0_to_10() -> None:
    scorer = Scorer("errors", higher_is_better=False, score_range=(0.0, 10.0)).score(lambda c: 0)
    assert scorer.normalize(0.0) == 1.0  # the best end
    assert scorer.normalize(10.0) == 0.0
    assert scorer.normalize(2.0) == pytest.approx(0.8)
    assert scorer.normalize(7.5) == pytest.approx(0.25)
    assert scorer.normalize(12.0) == 0.0 and scorer.normalize(-1.0) == 1.0  # clipped
    spec = ScorerSpec(id="errors", label="errors", higher_is_better=False, score_range=(0, 10))
    assert spec.normalize(2.0) == pytest.approx(0.8)
    assert normalize_score(7.0, (0.0, 10.0)) == pytest.approx(0.7)
    # a run-wide level maps back onto each scale, flipped when lower is better
    assert threshold_on_scale(0.7, (0.0, 10.0), higher_is_better=False) == pytest.approx(3.0)
    assert threshold_on_scale(0.7, (0.0, 10.0)) == pytest.approx(7.0)
    with pytest.raises(ValueError, match="not bounded"):
        normalize_score(1.0, (0.0, math.inf))


def test_scorer_type_declares_aggregations_and_config_carries_threshold() -> None:
    @register_scorer(
        "test-many-numbers",
        label="Many numbers",
        description="values and a corpus",
        higher_is_better=False,
        score_range=(0.0, 10.0),
        aggregations=("mean", "median", "pass@2"),
    )
    def build(params: object) -> Scorer:
        return Scorer("many").score(lambda ctx: Score(1.0, values={"a": 2.0}))

    try:
        scorer_type = get_scorer_type("test-many-numbers")
        assert scorer_type.normalize(2.5) == pytest.approx(0.75)
        assert scorer_type.info().aggregations == ["mean", "median", "pass@2"]
        scorer = create_scorer({"type": "test-many-numbers", "threshold": 3, "weight": 2})
        assert scorer.aggregations == ("mean", "median", "pass@2")
        assert scorer.threshold == 3.0 and scorer.weight == 2.0
        assert scorer.normalize(2.5) == pytest.approx(0.75)
        # the run records all of it, and a resume re-creates it
        from assay.runner.scorer_set import scorer_spec, scorers_from_specs

        spec = scorer_spec(scorer)
        assert spec.threshold == 3.0 and spec.aggregations == ("mean", "median", "pass@2")
        (again,) = scorers_from_specs([spec])
        assert again.threshold == 3.0 and again.aggregations == scorer.aggregations
    finally:
        unregister("test-many-numbers")


def test_registered_types_default_to_the_mean() -> None:
    assert create_scorer("exact-match").aggregations == ("mean",)
    assert ScorerConfig(type="exact-match").threshold is None
    with pytest.raises(ValidationError):
        ScorerConfig(type="exact-match", threshold=math.nan)


def test_scorer_definition_checks_aggregations_and_threshold() -> None:
    with pytest.raises(ScorerDefinitionError, match="aggregations"):
        Scorer("x", aggregations="mean")  # type: ignore[arg-type]
    with pytest.raises(ScorerDefinitionError, match="threshold"):
        Scorer("x", threshold=math.inf)
    assert Scorer("x", aggregations=["mean", "median"]).aggregations == ("mean", "median")  # type: ignore[arg-type]


def test_public_names() -> None:
    assert assay.Score is Score
    assert assay.normalize_score is normalize_score
