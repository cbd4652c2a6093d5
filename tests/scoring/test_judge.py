"""Judge steps: structured answers, tolerant extraction, one repair, records, failures."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from assay import JudgeConfig, Scorer, ScriptedModel, StepContext, judge_step
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


# ─── answer checks: an answer that validates but does not fit what came before ───


class Verdicts(BaseModel):
    verdicts: list[str]


def _one_verdict_per_claim(ctx: StepContext, answer: BaseModel) -> None:
    assert isinstance(answer, Verdicts)
    claims = ctx.preprocess_result.claims  # the check sees the earlier steps' results
    if len(answer.verdicts) != len(claims):
        raise ValueError(
            f"expected {len(claims)} verdicts, one per claim, got {len(answer.verdicts)}"
        )


def _checked_scorer(model: ScriptedModel) -> Scorer:
    return (
        Scorer("checked", judge=JudgeConfig(model=model, instructions="You judge claims."))
        .preprocess(judge_step(lambda ctx: "claims?", Claims))
        .analyze(judge_step(lambda ctx: "verdicts?", Verdicts, check=_one_verdict_per_claim))
        .score(lambda ctx: ctx.analyze_result.verdicts.count("yes") / 3)
    )


def test_check_failure_gets_one_repair_turn_naming_the_mismatch() -> None:
    model = ScriptedModel(
        script=[{"claims": ["a", "b", "c"]}, {"verdicts": ["yes"]}, {"verdicts": ["yes"] * 3}]
    )
    result = _checked_scorer(model).run_sync(output="x")
    assert result.status == "ready" and result.score == 1.0
    call = result.judge_calls[1]
    assert call.step == "analyze" and call.status == "success" and call.attempts == 2
    assert call.output == {"verdicts": ["yes", "yes", "yes"]}
    repair = model.calls[2].messages
    assert [m.role for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2].content == '{"verdicts": ["yes"]}'
    assert "expected 3 verdicts, one per claim, got 1" in repair[-1].content
    assert '"verdicts"' in repair[-1].content  # the schema is shown again


def test_check_failure_after_the_repair_fails_the_step_without_a_score() -> None:
    model = ScriptedModel(
        script=[{"claims": ["a", "b", "c"]}, {"verdicts": ["yes"]}, {"verdicts": ["yes", "no"]}]
    )
    result = _checked_scorer(model).run_sync(output="x")
    assert result.status == "error" and result.score is None
    assert result.error is not None and result.error.failed_step == "analyze"
    assert result.error.completed_steps == ["preprocess"]
    call = result.judge_calls[-1]
    assert call.status == "failed" and call.attempts == 2
    assert call.raw_output == '{"verdicts": ["yes", "no"]}'
    expected = "after one repair attempt: expected 3 verdicts, one per claim, got 2"
    assert expected in (call.error or "") and expected in result.error.message


def test_check_runs_only_on_answers_that_match_the_schema() -> None:
    seen: list[list[str]] = []

    def check(ctx: StepContext, answer: BaseModel) -> None:
        assert isinstance(answer, Verdicts)
        seen.append(answer.verdicts)
        _one_verdict_per_claim(ctx, answer)

    model = ScriptedModel(
        script=[{"claims": ["a"]}, '{"verdict": "yes"}', {"verdicts": ["yes", "no"]}]
    )
    scorer = (
        Scorer("checked", judge=JudgeConfig(model=model, instructions="x"))
        .preprocess(judge_step(lambda ctx: "claims?", Claims))
        .analyze(judge_step(lambda ctx: "verdicts?", Verdicts, check=check))
        .score(lambda ctx: 1.0)
    )
    result = scorer.run_sync(output="x")
    assert seen == [["yes", "no"]]  # the schema error was repaired first, the check ran once
    assert "Field required" in model.calls[2].messages[-1].content
    assert result.status == "error" and result.error is not None
    assert "expected 1 verdicts, one per claim, got 2" in result.error.message


def test_check_on_the_default_score_answer() -> None:
    def at_most_one(ctx: StepContext, answer: BaseModel) -> None:
        if answer.score > 1:
            raise ValueError("the score must be at most 1")

    model = ScriptedModel(script=['{"score": 7}', '{"score": 0.7}'])
    scorer = Scorer("s", judge=JudgeConfig(model=model, instructions="x")).score(
        judge_step(lambda ctx: "score?", check=at_most_one)
    )
    result = scorer.run_sync(output="x")
    assert result.status == "ready" and result.score == 0.7
    assert "the score must be at most 1" in model.calls[1].messages[-1].content


def test_a_check_on_a_plain_text_step_is_an_error() -> None:
    model = ScriptedModel(script=['{"score": 1}', "Because."])
    scorer = (
        Scorer("r", judge=JudgeConfig(model=model, instructions="x"))
        .score(judge_step(lambda ctx: "score?"))
        .reason(judge_step(lambda ctx: "why?", check=lambda ctx, answer: None))
    )
    result = scorer.run_sync(output="x")
    assert result.status == "error" and result.error is not None
    assert result.error.failed_step == "reason"
    assert "an answer check needs an output model" in result.error.message
    assert len(model.calls) == 1  # failed before the reason call


def test_a_broken_check_fails_the_step_without_a_repair_turn() -> None:
    def broken(ctx: StepContext, answer: BaseModel) -> None:
        raise KeyError("oops")

    model = ScriptedModel(script=[{"claims": ["a"]}])
    scorer = (
        Scorer("b", judge=JudgeConfig(model=model, instructions="x"))
        .preprocess(judge_step(lambda ctx: "claims?", Claims, check=broken))
        .score(lambda ctx: 1.0)
    )
    result = scorer.run_sync(output="x")
    assert result.status == "error" and result.score is None
    assert "the answer check failed: KeyError" in (result.error.message if result.error else "")
    (call,) = result.judge_calls
    assert call.status == "failed" and call.attempts == 1
    assert call.raw_output == '{"claims": ["a"]}'


def test_a_model_string_becomes_a_model_where_the_config_is_built() -> None:
    from assay.models.resolve import LazyModel

    config = JudgeConfig(model="openai/gpt-4o-mini", instructions="x")
    assert isinstance(config.model, LazyModel)  # resolved lazily: no key needed yet
    assert config.model_label == "openai/gpt-4o-mini"  # the fingerprint's name is unchanged
    assert JudgeConfig(model="bare").model_label == "bare"
    assert config == JudgeConfig(model="openai/gpt-4o-mini", instructions="x")
    scripted = ScriptedModel(["{}"], name="m")
    judged = Scorer("s", judge=config).with_judge_model(scripted)
    assert judged.judge is not None and judged.judge.model is scripted
    assert Scorer("s").with_judge_model("openai/x").judge == JudgeConfig(model="openai/x")


def test_without_a_resolver_a_model_string_is_a_clear_error() -> None:
    from assay.scoring.steps import set_model_resolver

    previous = set_model_resolver(None)
    try:
        with pytest.raises(TypeError, match="no model resolver is installed"):
            JudgeConfig(model="openai/x")
        assert JudgeConfig(model=None).model is None
    finally:
        set_model_resolver(previous)
