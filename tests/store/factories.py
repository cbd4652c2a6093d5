"""Results with every kind of score (ready, judged, error, not scorable) for the store tests."""

from __future__ import annotations

from assay.types import (
    ItemResult,
    JudgeCall,
    ScoreError,
    ScoreResult,
    TargetError,
    Usage,
)


def judge_call(step: str = "score", **overrides: object) -> JudgeCall:
    values: dict[str, object] = {
        "step": step,
        "status": "success",
        "prompt": f"Rate the answer ({step})",
        "model_id": "gpt-test",
        "provider": "openai",
        "attempts": 2,
        "duration_ms": 12.5,
        "output": {"score": 0.75, "verdicts": ["yes", "no"]},
        "raw_output": '{"score": 0.75}',
        "usage": Usage(input_tokens=120, output_tokens=8, reasoning_tokens=3),
        "cached": False,
        "cost_usd": 0.00042,
    }
    values.update(overrides)
    return JudgeCall.model_validate(values)


def ready_score(scorer_id: str, score: float, *, calls: int = 0) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id.title(),
        call_id=f"scorer-run-{scorer_id}-{score}",
        status="ready",
        score=score,
        reason=f"because {score}",
        steps={"analyze": {"matches": [1, 2]}, "score": score},
        prompts={"score": "Rate it"} if calls else {},
        judge_calls=[judge_call("score" if i == 0 else "reason") for i in range(calls)],
        duration_ms=3.25,
    )


def error_score(scorer_id: str) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id.title(),
        call_id="scorer-run-error",
        status="error",
        error=ScoreError(
            message="judge answer did not validate",
            failed_step="score",
            completed_steps=["analyze"],
        ),
        judge_calls=[judge_call(status="failed", error="bad json", output=None)],
    )


def not_scorable(scorer_id: str) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id.title(),
        call_id="scorer-run-ns",
        status="not_scorable",
        reason="no context",
        not_scorable_step="preprocess",
    )


def item_result(
    item_id: str,
    position: int,
    repeat: int = 0,
    *,
    scores: dict[str, ScoreResult] | None = None,
    error: TargetError | None = None,
) -> ItemResult:
    return ItemResult(
        item_id=item_id,
        repeat=repeat,
        position=position,
        input={"question": f"q{position}", "nested": [1, {"a": None}]},
        output=None if error else f"answer {position}/{repeat}",
        expected_output=f"answer {position}",
        error=error,
        latency_ms=None if error else 10.0 + position,
        scores=scores if scores is not None else {},
        warnings=["slow"] if position % 7 == 3 else [],
        started_at=1_700_000_000.0 + position,
        completed_at=1_700_000_000.5 + position,
    )
