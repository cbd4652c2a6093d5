"""Judge steps: structured answers, tolerant extraction, one repair, records, failures."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from assay import JudgeConfig, Scorer, ScriptedModel, judge_step
from assay.models.base import ModelError
from assay.scoring.judge import extract_json


class Claims(BaseModel):
    claims: list[str]


def _claims_scorer(model: ScriptedModel) -> Scorer:
    return (
        Scorer("claims", judge=JudgeConfig(model=model, instructions="You extract claims."))
        .preprocess(judge_step(lambda ctx: f"Extract claims from: {ctx.output_text}", Claims))
        .score(lambda ctx: float(len(ctx.preprocess_result.claims)))
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"claims": ["a"]}',
        '```json\n{"claims": ["a"]}\n```',
        'Sure! Here it is: {"claims": ["a"]} hope that helps',
        '  \n{"claims": ["a"]}\n',
    ],
)
def test_extract_json_is_tolerant(text: str) -> None:
    assert extract_json(text) == {"claims": ["a"]}


def test_extract_json_raises_without_json() -> None:
    with pytest.raises(ValueError):
        extract_json("I cannot answer that")


def test_valid_answer_is_used_and_recorded() -> None:
    model = ScriptedModel(script=[{"claims": ["sky is blue", "grass is green"]}])
    result = _claims_scorer(model).run_sync(output="The sky is blue and grass is green.")
    assert result.status == "ready" and result.score == 2.0
    (call,) = result.judge_calls
    assert call.status == "success" and call.attempts == 1 and call.step == "preprocess"
    assert call.output == {"claims": ["sky is blue", "grass is green"]}
    assert call.usage.input_tokens > 0 and call.usage.total_tokens > 0
    assert result.prompts["preprocess"].startswith("Extract claims from: The sky")
    # the judge saw the instructions as system and the prompt as user, with the schema
    sent = model.calls[0]
    assert [m.role for m in sent.messages] == ["system", "user"]
    assert sent.schema is not None and "claims" in sent.schema["properties"]


def test_invalid_answer_is_repaired_once() -> None:
    model = ScriptedModel(script=['{"claim": "wrong key"}', {"claims": ["ok"]}])
    result = _claims_scorer(model).run_sync(output="x")
    assert result.status == "ready" and result.score == 1.0
    assert result.judge_calls[0].attempts == 2
    repair = model.calls[1].messages
    assert [m.role for m in repair] == ["system", "user", "assistant", "user"]
    assert "claims" in repair[-1].content and "Field required" in repair[-1].content


def test_answer_still_invalid_after_repair_is_an_error_with_raw_text() -> None:
    model = ScriptedModel(script=["no json here", "still not json"])
    result = _claims_scorer(model).run_sync(output="x")
    assert result.status == "error" and result.score is None
    assert result.error is not None and result.error.failed_step == "preprocess"
    (call,) = result.judge_calls
    assert call.status == "failed" and call.attempts == 2
    assert call.raw_output == "still not json"
    assert "after one repair attempt" in (call.error or "")


def test_model_exception_is_an_error_not_a_score() -> None:
    model = ScriptedModel(script=[ModelError("HTTP 429 Too Many Requests")])
    result = _claims_scorer(model).run_sync(output="x")
    assert result.status == "error" and result.score is None
    assert "429" in (result.error.message if result.error else "")
    assert result.judge_calls[0].status == "failed"


def test_timeout_is_an_error() -> None:
    model = ScriptedModel(script=[TimeoutError("judge timed out")])
    result = _claims_scorer(model).run_sync(output="x")
    assert result.status == "error"
    assert "TimeoutError" in (result.error.message if result.error else "")


def test_judge_score_and_reason_steps() -> None:
    model = ScriptedModel(script=['{"score": 0.75}', "  Mostly right.  "])
    scorer = (
        Scorer("j", judge=JudgeConfig(model=model, instructions="Judge."))
        .score(judge_step(lambda ctx: "score this"))
        .reason(judge_step(lambda ctx: f"explain {ctx.score}"))
    )
    result = scorer.run_sync(output="x")
    assert result.score == 0.75
    assert result.reason == "Mostly right."
    assert result.prompts == {"score": "score this", "reason": "explain 0.75"}
    assert [c.step for c in result.judge_calls] == ["score", "reason"]


def test_judge_score_out_of_schema_is_an_error() -> None:
    model = ScriptedModel(script=['{"score": "high"}', '{"score": "very high"}'])
    scorer = Scorer("j", judge=JudgeConfig(model=model, instructions="Judge.")).score(
        judge_step(lambda ctx: "score")
    )
    result = scorer.run_sync(output="x")
    assert result.status == "error" and result.score is None


def test_step_level_judge_overrides_the_scorer_judge() -> None:
    default = ScriptedModel(name="default", script=[])
    special = ScriptedModel(name="special", script=['{"score": 1}'])
    scorer = Scorer("o", judge=JudgeConfig(model=default, instructions="Judge.")).score(
        judge_step(lambda ctx: "s", judge=JudgeConfig(model=special))
    )
    result = scorer.run_sync(output="x")
    assert result.score == 1.0
    assert result.judge_calls[0].model_id == "special"
    assert default.calls == []


def test_missing_model_or_instructions_is_an_error() -> None:
    scorer = Scorer("m").score(judge_step(lambda ctx: "s"))
    result = scorer.run_sync(output="x")
    assert result.status == "error"
    assert 'Step "score" requires a model and instructions' in (
        result.error.message if result.error else ""
    )


def test_unknown_model_provider_is_an_error_with_a_hint() -> None:
    scorer = Scorer("m", judge=JudgeConfig(model="nosuch/model", instructions="x")).score(
        judge_step(lambda ctx: "s")
    )
    result = scorer.run_sync(output="x")
    assert result.status == "error"
    assert "unknown provider 'nosuch'" in (result.error.message if result.error else "")


def test_fingerprint_changes_with_judge_model_and_prompt_version() -> None:
    def make(model: str, version: str) -> Scorer:
        return Scorer("f", judge=JudgeConfig(model=model, instructions="x")).score(
            judge_step(lambda ctx: "s", version=version)
        )

    assert make("a/b", "1").fingerprint == make("a/b", "1").fingerprint
    assert make("a/b", "1").fingerprint != make("a/c", "1").fingerprint
    assert make("a/b", "1").fingerprint != make("a/b", "2").fingerprint


def test_cost_and_usage_are_summed_over_the_repair_attempt() -> None:
    from typing import Any

    from assay.models.base import ChatMessage, ModelResponse, ModelSettings
    from assay.types import Usage

    class PricedModel:
        model_id = "priced"
        provider = "test"

        def __init__(self) -> None:
            self.replies = ["not json", '{"claims": ["a"]}']

        async def generate(
            self,
            messages: list[ChatMessage],
            *,
            schema: dict[str, Any] | None = None,
            settings: ModelSettings | None = None,
        ) -> ModelResponse:
            return ModelResponse(
                text=self.replies.pop(0),
                usage=Usage(input_tokens=100, output_tokens=10),
                model_id="priced",
                cost_usd=0.25,
            )

    scorer = (
        Scorer("priced", judge=JudgeConfig(model=PricedModel(), instructions="x"))
        .preprocess(judge_step(lambda ctx: "p", Claims))
        .score(lambda ctx: 1.0)
    )
    (call,) = scorer.run_sync(output="x").judge_calls
    assert call.attempts == 2
    assert call.cost_usd == 0.5
    assert call.usage.input_tokens == 200 and call.usage.total_tokens == 220
