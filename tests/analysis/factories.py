"""Small builders of run data for the analysis tests (plain types, no store or runner)."""

from __future__ import annotations

from typing import Any

from assay.types import (
    ItemResult,
    JudgeCall,
    RunInfo,
    RunRecord,
    RunSummary,
    ScoreError,
    ScoreResult,
    ScoreRow,
    ScorerSpec,
    TargetError,
    TargetSpec,
    Usage,
)


def spec(scorer_id: str = "acc", *, higher_is_better: bool = True) -> ScorerSpec:
    return ScorerSpec(id=scorer_id, label=f"{scorer_id} scorer", higher_is_better=higher_is_better)


def record(
    run_id: str = "run-a",
    *,
    scorers: list[ScorerSpec] | None = None,
    dataset: str | None = "qa",
    version: int | None = 1,
    repeats: int = 1,
    threshold: float | None = None,
    summary: RunSummary | None = None,
    status: str = "completed",
) -> RunRecord:
    info = RunInfo(
        id=run_id,
        dataset_id=f"ds-{dataset}" if dataset else None,
        dataset_name=dataset,
        dataset_version=version,
        target=TargetSpec(kind="callable", label="app:answer", ref="app:answer"),
        scorers=scorers if scorers is not None else [spec()],
        repeats=repeats,
        threshold=threshold,
        total_items=3,
    )
    return RunRecord.model_validate(
        {
            "info": info,
            "status": status,
            "summary": summary,
            "started_at": 1.7e9,
            "completed_at": 1.7e9 + 12.5,
        }
    )


def score(
    value: float | None,
    *,
    scorer_id: str = "acc",
    status: str | None = None,
    reason: str | None = None,
    judge: list[JudgeCall] | None = None,
) -> ScoreResult:
    st = status or ("ready" if value is not None else "error")
    err = ScoreError(message="judge failed") if st == "error" else None
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id,
        call_id="r",
        status=st,  # type: ignore[arg-type]
        score=value,
        reason=reason,
        error=err,
        judge_calls=judge or [],
    )


def result(
    item_id: str,
    index: int,
    scores: dict[str, ScoreResult],
    *,
    repeat: int = 0,
    latency_ms: float | None = 10.0,
    output: Any = "out",
    error: str | None = None,
    input: Any = "question",
) -> ItemResult:
    return ItemResult(
        item_id=item_id,
        position=index,
        repeat=repeat,
        input=input,
        output=None if error else output,
        expected_output="answer",
        error=TargetError(message=error, kind="RuntimeError") if error else None,
        latency_ms=latency_ms,
        scores={} if error else scores,
    )


def judge_call(tokens_in: int, tokens_out: int, cost: float | None) -> JudgeCall:
    return JudgeCall(
        step="score",
        status="success",
        prompt="p",
        model_id="m",
        usage=Usage(input_tokens=tokens_in, output_tokens=tokens_out),
        cost_usd=cost,
    )


def rows(
    scores: dict[str, list[float | None]], *, scorer_id: str = "acc", order: list[str] | None = None
) -> list[ScoreRow]:
    """ScoreRows for one scorer: ``{item_id: [repeat0, repeat1, ...]}`` (None = error)."""
    out = []
    ids = order or list(scores)
    for position, item_id in enumerate(ids):
        for rep, value in enumerate(scores[item_id]):
            status = "ready" if value is not None else "error"
            out.append(ScoreRow(item_id, position, rep, scorer_id, status, value))  # type: ignore[arg-type]
    return out
