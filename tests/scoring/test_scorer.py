"""The scorer pipeline contract: immutability, step order, errors as data, not-scorable."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from assay import Scorer, ScorerDefinitionError, StepContext, not_scorable


def _length_scorer() -> Scorer:
    return (
        Scorer("length", description="long answers score higher")
        .preprocess(lambda ctx: {"chars": len(ctx.output_text)})
        .score(lambda ctx: min(1.0, ctx.preprocess_result["chars"] / 10))
        .reason(lambda ctx: f"{ctx.preprocess_result['chars']} chars -> {ctx.score}")
    )


def test_builder_returns_new_scorers_and_keeps_the_original() -> None:
    base = Scorer("s")
    with_score = base.score(lambda ctx: 1.0)
    assert base.steps == ()
    assert with_score.step_names == ("score",)
    assert with_score is not base


def test_steps_run_in_canonical_order_whatever_the_order_added() -> None:
    seen: list[str] = []

    def step(name: str, value: Any) -> Any:
        def fn(ctx: StepContext) -> Any:
            seen.append(name)
            return value

        return fn

    scorer = (
        Scorer("order")
        .reason(step("reason", "why"))
        .score(step("score", 0.5))
        .preprocess(step("preprocess", {}))
    )
    result = scorer.run_sync(output="x")
    assert seen == ["preprocess", "score", "reason"]
    assert result.score == 0.5 and result.reason == "why"


def test_duplicate_step_is_rejected() -> None:
    with pytest.raises(ScorerDefinitionError, match="already has a score step"):
        Scorer("dup").score(lambda c: 1.0).score(lambda c: 0.0)


def test_missing_score_step_is_rejected_when_run() -> None:
    scorer = Scorer("no-score").preprocess(lambda c: 1)
    with pytest.raises(ScorerDefinitionError, match="no score step"):
        scorer.run_sync(output="x")


def test_empty_id_is_rejected() -> None:
    with pytest.raises(ScorerDefinitionError):
        Scorer("")


def test_result_carries_steps_and_reason() -> None:
    result = _length_scorer().run_sync(output="hello")
    assert result.status == "ready"
    assert result.score == 0.5
    assert result.reason == "5 chars -> 0.5"
    assert result.steps["preprocess"] == {"chars": 5}
    assert result.scorer_id == "length" and result.call_id


def test_async_steps_are_awaited() -> None:
    async def slow_score(ctx: StepContext) -> float:
        await asyncio.sleep(0)
        return 0.25

    assert Scorer("a").score(slow_score).run_sync(output="x").score == 0.25


def test_exception_in_a_step_is_an_error_result_naming_the_step() -> None:
    def boom(ctx: StepContext) -> Any:
        raise RuntimeError("Input and output messages cannot be null or empty")

    scorer = Scorer("err").preprocess(lambda c: 1).analyze(boom).score(lambda c: 1.0)
    result = scorer.run_sync(output="x")
    assert result.status == "error"
    assert result.score is None
    assert result.error is not None
    assert result.error.failed_step == "analyze"
    assert result.error.completed_steps == ["preprocess"]
    assert "Scorer Run Failed: Input and output messages cannot be null" in result.error.message
    assert result.steps == {"preprocess": 1}


def test_reason_failure_keeps_no_score_but_keeps_the_step_result() -> None:
    def bad_reason(ctx: StepContext) -> str:
        raise ValueError("nope")

    result = Scorer("r").score(lambda c: 0.7).reason(bad_reason).run_sync(output="x")
    assert result.status == "error" and result.score is None
    assert result.steps["score"] == 0.7  # the snapshot is kept for inspection


@pytest.mark.parametrize("bad", [math.nan, math.inf, "0.5", None, True])
def test_non_numeric_or_non_finite_score_is_an_error(bad: Any) -> None:
    result = Scorer("bad").score(lambda c: bad).run_sync(output="x")
    assert result.status == "error"
    assert result.score is None
    assert result.error is not None and result.error.failed_step == "score"


def test_not_scorable_stops_the_pipeline() -> None:
    later: list[str] = []
    scorer = (
        Scorer("ns")
        .preprocess(lambda c: not_scorable("no ground truth"))
        .score(lambda c: later.append("score") or 1.0)
    )
    result = scorer.run_sync(output="x")
    assert result.status == "not_scorable"
    assert result.score is None
    assert result.reason == "no ground truth"
    assert result.not_scorable_step == "preprocess"
    assert later == []


def test_one_instance_scores_concurrently_without_shared_state() -> None:
    scorer = _length_scorer()

    async def many() -> list[float | None]:
        outputs = ["a" * n for n in range(12)]
        results = await asyncio.gather(*(scorer.run(output=o) for o in outputs))
        return [r.score for r in results]

    scores = asyncio.run(many())
    assert scores == [min(1.0, n / 10) for n in range(12)]


def test_run_sync_inside_a_running_loop_does_not_nest() -> None:
    scorer = _length_scorer()

    async def inside() -> float | None:
        return scorer.run_sync(output="abc").score

    assert asyncio.run(inside()) == 0.3


def test_context_texts_understand_messages() -> None:
    scorer = Scorer("t").score(lambda c: float(len(c.input_text) + len(c.output_text)))
    result = scorer.run_sync(
        input=[{"role": "user", "content": "abc"}],
        output=[{"role": "assistant", "content": "de"}],
    )
    assert result.score == 5.0


def test_fingerprint_is_stable_and_changes_with_the_definition() -> None:
    a = _length_scorer()
    b = _length_scorer()
    assert a.fingerprint == b.fingerprint
    c = Scorer("length").score(lambda ctx: 0.0)
    assert c.fingerprint != a.fingerprint


def test_when_skips_runs_the_scorer_is_not_meant_for() -> None:
    calls: list[str] = []

    def score(ctx: StepContext) -> float:
        calls.append(ctx.output_text)
        return 1.0

    scorer = Scorer("gated").score(score).when(lambda run: bool(run.metadata.get("judge")))
    skipped = scorer.run_sync(output="a")
    assert skipped.status == "not_scorable" and skipped.reason == "not applicable"
    assert calls == []
    scored = scorer.run_sync(output="b", metadata={"judge": True})
    assert scored.status == "ready" and calls == ["b"]
