"""Direction and range in summaries: per-scorer thresholds, the run-wide threshold as a level
on each scorer's normalized scale, and the weighted normalized score across scorers."""

from __future__ import annotations

from typing import Any

import pytest

from assay.runner.api import run_evals
from assay.scoring.scorer import Scorer
from assay.summary.columns import ScoreColumnsBuilder
from assay.summary.stats import effective_threshold
from assay.types import RunSummary, ScorerSpec

from .helpers import summarize_columns


def _summary(
    specs: list[ScorerSpec], values: dict[str, list[float | None]], threshold: float | None
) -> RunSummary:
    """One repeat per item; ``{scorer_id: [item0, item1, ...]}``, None = an error."""
    b = ScoreColumnsBuilder()
    for scorer_id, scores in values.items():
        for pos, v in enumerate(scores):
            b.add(scorer_id, pos, 0, "error" if v is None else "ready", v)
    return summarize_columns(specs, b, threshold=threshold)


def test_a_scorers_own_threshold_overrides_the_run_threshold() -> None:
    rating = ScorerSpec(id="rating", label="rating", score_range=(0, 10), threshold=7.0)
    plain = ScorerSpec(id="plain", label="plain")
    s = _summary([rating, plain], {"rating": [6.0, 7.0, 9.0, 2.0], "plain": [0.2, 0.6]}, 0.5)
    assert s.scorers["rating"].threshold == 7.0
    assert s.scorers["rating"].pass_rate == pytest.approx(2 / 4)  # 7 and 9; not 6 (>= 5)
    assert s.scorers["plain"].threshold == 0.5  # the run's level on a 0..1 scale
    assert s.scorers["plain"].pass_rate == pytest.approx(1 / 2)


def test_the_run_threshold_is_direction_aware_and_on_each_scale() -> None:
    # run threshold 0.7 = "70% of the way from the worst to the best end"
    toxicity = ScorerSpec(id="tox", label="tox", higher_is_better=False)
    errors = ScorerSpec(id="err", label="err", higher_is_better=False, score_range=(0, 10))
    rating = ScorerSpec(id="rating", label="rating", score_range=(0, 10))
    s = _summary(
        [toxicity, errors, rating],
        {
            "tox": [0.1, 0.3, 0.5, 0.9],  # passes at <= 0.3: 0.1, 0.3
            "err": [1.0, 2.0, 4.0, 6.0],  # passes at <= 3: 1, 2
            "rating": [5.0, 7.0, 8.0, 10.0],  # passes at >= 7: 7, 8, 10
        },
        0.7,
    )
    assert s.scorers["tox"].threshold == pytest.approx(0.3)
    assert s.scorers["tox"].pass_rate == pytest.approx(2 / 4)
    assert s.scorers["err"].threshold == pytest.approx(3.0)
    assert s.scorers["err"].pass_rate == pytest.approx(2 / 4)
    assert s.scorers["rating"].threshold == pytest.approx(7.0)
    assert s.scorers["rating"].pass_rate == pytest.approx(3 / 4)
    unbounded = ScorerSpec(id="ppl", label="ppl", score_range=(0, float("inf")))
    assert effective_threshold(unbounded, 0.7) is None


def test_weighted_score_with_weights_1_and_3() -> None:
    accuracy = ScorerSpec(id="acc", label="acc", weight=1.0)
    errors = ScorerSpec(
        id="err", label="err", weight=3.0, higher_is_better=False, score_range=(0, 10)
    )
    s = _summary(
        [accuracy, errors],
        # err: mean 6 over its ready items -> normalized 1 - 6/10 = 0.4; its error on item 1
        # is missing data, neither a 0 (which would be the best value here) nor a 10
        {"acc": [1.0, 0.6, 0.8], "err": [4.0, None, 8.0]},
        None,
    )
    assert s.scorers["acc"].normalized_mean == pytest.approx(0.8)
    assert s.scorers["err"].normalized_mean == pytest.approx(0.4)
    assert s.scorers["err"].errors == 1
    assert s.weighted_score == pytest.approx((1 * 0.8 + 3 * 0.4) / 4)  # 0.5
    assert s.weighted_scorers == ["acc", "err"]


def test_weighted_score_leaves_out_weight_0_and_is_undefined_without_a_scorer() -> None:
    specs = [
        ScorerSpec(id="acc", label="acc", weight=2.0),
        ScorerSpec(id="never", label="never", weight=5.0),  # only errors
        ScorerSpec(id="free", label="free", weight=0.0),
    ]
    s = _summary([specs[0], specs[2]], {"acc": [0.5], "free": [0.0]}, None)
    assert s.weighted_score == pytest.approx(0.5) and s.weighted_scorers == ["acc"]
    dead = _summary(specs, {"acc": [0.5], "never": [None], "free": [0.0]}, None)
    # a scorer that never scored is not silently dropped: the weighted score is undefined
    assert dead.weighted_score is None and dead.unscored_scorers == ["never"]
    assert _summary(specs[1:2], {"never": [None]}, None).weighted_score is None


def _constant(scorer_id: str, value: float, **options: Any) -> Scorer:
    return Scorer(scorer_id, **options).score(lambda ctx: value)


def test_run_evals_uses_scorer_thresholds_weights_and_direction() -> None:
    rows = [{"id": str(i), "output": "x"} for i in range(3)]
    run = run_evals(
        rows,
        None,
        [
            _constant("good", 0.9, weight=1.0),
            _constant("bad", 8.0, weight=3.0, higher_is_better=False, score_range=(0.0, 10.0)),
            _constant("own", 4.0, threshold=4.0, score_range=(0.0, 10.0)),
        ],
        threshold=0.5,
        progress=False,
    )
    scorers = run.summary.scorers
    assert scorers["good"].pass_rate == 1.0
    assert scorers["bad"].threshold == pytest.approx(5.0) and scorers["bad"].pass_rate == 0.0
    assert scorers["own"].threshold == 4.0 and scorers["own"].pass_rate == 1.0
    assert run.info.scorers[2].threshold == 4.0
    # normalized means: good 0.9 (w 1), bad 1 - 8/10 = 0.2 (w 3), own 0.4 (w 1)
    assert run.summary.weighted_score == pytest.approx((0.9 + 3 * 0.2 + 0.4) / 5)


def test_a_run_threshold_outside_0_to_1_is_refused() -> None:
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        run_evals([{"id": "1", "output": "x"}], None, [_constant("a", 1.0)], threshold=7)
