"""Item results to rows and back.

Kept apart from the repository because it is the hot path of ``write_results``: rows are
built from attributes directly (no ``model_dump`` of whole results), and ids are generated
here so the three inserts of a batch need no round trip between them.

The target's usage, cost and samples of an item result live in the ``warnings`` JSON column
(no schema change): a result without them stores its warnings list as before; a result with
them stores ``{"warnings": [...], "usage": {...}, "cost_usd": x, "samples": [...]}``. Both
shapes are read back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Row

from assay.store.codec import IdSource
from assay.types import (
    ItemResult,
    JudgeCall,
    ScoreError,
    ScoreResult,
    TargetError,
    Usage,
)

Rows = list[dict[str, Any]]


def result_rows(run_id: str, results: Sequence[ItemResult]) -> tuple[Rows, Rows, Rows]:
    """The ``item_results``, ``scores`` and ``judge_calls`` rows of ``results``."""
    items: Rows = []
    scores: Rows = []
    calls: Rows = []
    new_id = IdSource(2 * len(results))
    for result in results:
        result_id = new_id()
        error = result.error
        items.append(
            {
                "id": result_id,
                "run_id": run_id,
                "item_id": result.item_id,
                "repeat": result.repeat,
                "position": result.position,
                "input": result.input,
                "output": result.output,
                "expected_output": result.expected_output,
                "error": None if error is None else error.model_dump(mode="json"),
                "latency_ms": result.latency_ms,
                "warnings": warnings_cell(result),
                "started_at": result.started_at,
                "completed_at": result.completed_at,
                "meta": result.meta,
            }
        )
        for scorer_id, score in result.scores.items():
            score_id = new_id()
            scores.append(_score_row(score_id, result_id, scorer_id, score))
            for seq, call in enumerate(score.judge_calls):
                calls.append(_call_row(score_id, seq, call))
    return items, scores, calls


def warnings_cell(result: ItemResult) -> Any:
    """The ``warnings`` column: the list, or an object when the target reported usage."""
    usage, cost, samples = result.usage, result.cost_usd, result.samples
    if usage is None and cost is None and samples is None:
        return list(result.warnings) or None
    cell: dict[str, Any] = {"warnings": list(result.warnings)}
    if usage is not None:
        cell["usage"] = usage.model_dump(mode="json", exclude_none=True)
    if cost is not None:
        cell["cost_usd"] = cost
    if samples is not None:
        cell["samples"] = samples
    return cell


def target_usage_of(cell: Any) -> tuple[Usage | None, float | None]:
    """The target's usage and cost in a ``warnings`` cell (``None`` where it has none)."""
    fields = _from_warnings_cell(cell)
    return fields.get("usage"), fields.get("cost_usd")


def _from_warnings_cell(cell: Any) -> dict[str, Any]:
    """``ItemResult`` fields of a ``warnings`` cell (either shape)."""
    if not isinstance(cell, dict):
        return {"warnings": cell or []}
    usage = cell.get("usage")
    return {
        "warnings": cell.get("warnings") or [],
        "usage": None if usage is None else Usage.model_validate(usage),
        "cost_usd": cell.get("cost_usd"),
        "samples": cell.get("samples"),
    }


def _score_row(score_id: str, result_id: str, scorer_id: str, score: ScoreResult) -> dict[str, Any]:
    return {
        "id": score_id,
        "result_id": result_id,
        "scorer_id": scorer_id,
        "scorer_name": score.scorer_label,  # column keeps its name
        "call_id": score.call_id,
        "status": score.status,
        "score": score.score,
        "values_": score.values or None,
        "corpus": score.corpus,
        "reason": score.reason,
        "steps": score.steps or None,
        "prompts": score.prompts or None,
        "error": None if score.error is None else score.error.model_dump(mode="json"),
        "not_scorable_step": score.not_scorable_step,
        "duration_ms": score.duration_ms,
    }


def _call_row(score_id: str, seq: int, call: JudgeCall) -> dict[str, Any]:
    usage = call.usage
    return {
        "score_id": score_id,
        "seq": seq,
        "step": call.step,
        "status": call.status,
        "model_id": call.model_id,
        "provider": call.provider,
        "attempts": call.attempts,
        "duration_ms": call.duration_ms,
        "prompt": call.prompt,
        "output": call.output,
        "raw_output": call.raw_output,
        "error": call.error,
        "cached": call.cached,
        "cost_usd": call.cost_usd,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
    }


def build_results(
    item_rows: Sequence[Row[Any]],
    score_rows: Iterable[Row[Any]],
    call_rows: Iterable[Row[Any]],
    *,
    trusted: bool = False,
) -> list[ItemResult]:
    """``ItemResult`` values (in ``item_rows`` order) with their scores and judge calls.

    ``trusted``: build results and scores without validating them again
    (``model_construct``; their errors and usage still validated). Every stored row was a
    validated result when written, and validation was most of the cost of streaming a
    100,000-item run out (an export: ~80 µs of ~150 µs per result)."""
    calls: dict[str, list[JudgeCall]] = defaultdict(list)
    for row in sorted(call_rows, key=lambda r: (r.score_id, r.seq)):
        calls[row.score_id].append(_judge_call(row))
    make_score = ScoreResult.model_construct if trusted else ScoreResult
    make_result = ItemResult.model_construct if trusted else ItemResult
    scores: dict[str, dict[str, ScoreResult]] = defaultdict(dict)
    for row in score_rows:
        scores[row.result_id][row.scorer_id] = make_score(
            scorer_id=row.scorer_id,
            scorer_label=row.scorer_name,
            call_id=row.call_id,
            status=row.status,
            score=row.score,
            values=row.values_ or {},
            corpus=row.corpus,
            reason=row.reason,
            steps=row.steps or {},
            prompts=row.prompts or {},
            judge_calls=calls.get(row.id, []),
            error=None if row.error is None else ScoreError.model_validate(row.error),
            not_scorable_step=row.not_scorable_step,
            duration_ms=row.duration_ms,
        )
    return [
        make_result(
            item_id=row.item_id,
            repeat=row.repeat,
            position=row.position,
            input=row.input,
            output=row.output,
            expected_output=row.expected_output,
            error=None if row.error is None else TargetError.model_validate(row.error),
            latency_ms=row.latency_ms,
            scores=scores.get(row.id, {}),
            started_at=row.started_at,
            completed_at=row.completed_at,
            meta=row.meta,
            **_from_warnings_cell(row.warnings),
        )
        for row in item_rows
    ]


def _judge_call(row: Row[Any]) -> JudgeCall:
    return JudgeCall(
        step=row.step,
        status=row.status,
        prompt=row.prompt,
        model_id=row.model_id,
        provider=row.provider,
        attempts=row.attempts,
        duration_ms=row.duration_ms,
        output=row.output,
        raw_output=row.raw_output,
        usage=Usage(
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            total_tokens=row.total_tokens,
            reasoning_tokens=row.reasoning_tokens,
            cached_input_tokens=row.cached_input_tokens,
        ),
        error=row.error,
        cached=row.cached,
        cost_usd=row.cost_usd,
    )
