"""Judge scorers end to end through a real HTTP server: SDK, structured output, retries,
cache, and the records on the ScoreResult."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from assay import JudgeConfig, ModelSettings, Scorer, judge_step
from assay.models.base import Model
from assay.models.cache import CachedModel, SQLiteModelCache
from assay.models.openai_compat import OpenAICompatibleModel
from assay.models.reliability import ReliableModel, RetryPolicy
from assay.models.resolve import LazyModel
from assay.scorers._lib.judge_common import JudgeScorerParams, judge_config
from assay.testing.openai_server import MockOpenAIServer, MockReply


class Claims(BaseModel):
    claims: list[str]


def _claims_scorer(model: str | Model, settings: ModelSettings | None = None) -> Scorer:
    judge = JudgeConfig(
        model=model,
        instructions="You extract factual claims and rate them.",
        settings=settings or ModelSettings(temperature=0.0),
    )
    return (
        Scorer("claims-judge", judge=judge)
        .preprocess(judge_step(lambda ctx: f"Extract the claims of: {ctx.output_text}", Claims))
        .score(judge_step(lambda ctx: f"Rate these claims: {ctx.preprocess_result.claims}"))
    )


def _stack(server: MockOpenAIServer, db: Path) -> CachedModel:
    client = OpenAICompatibleModel("judge-model", base_url=server.base_url, provider="mock")
    reliable = ReliableModel(client, policy=RetryPolicy(base_delay_s=0.01, max_delay_s=0.05))
    return CachedModel(reliable, cache=SQLiteModelCache(db))


async def test_judge_scorer_records_usage_and_is_cached_on_the_second_run(
    server: MockOpenAIServer, tmp_path: Path
) -> None:
    server.responder = lambda body: (
        {"claims": ["The sky is blue.", "Grass is green."]}
        if "Extract" in body["messages"][-1]["content"]
        else {"score": 0.5}
    )
    scorer = _claims_scorer(_stack(server, tmp_path / "judge.db"))
    first = await scorer.run(output="The sky is blue and grass is green.")
    assert first.status == "ready" and first.score == 0.5
    assert [c.step for c in first.judge_calls] == ["preprocess", "score"]
    for call in first.judge_calls:
        assert call.status == "success" and call.cached is False
        assert call.usage.input_tokens > 0 and call.usage.output_tokens > 0
        assert call.provider == "mock" and call.model_id == "judge-model"
    assert first.steps["preprocess"].claims == ["The sky is blue.", "Grass is green."]
    assert len(server.chat_requests) == 2
    # structured output went over the wire as a strict JSON schema
    fmt = server.chat_requests[0].body["response_format"]  # type: ignore[index]
    assert fmt["json_schema"]["strict"] is True and fmt["json_schema"]["name"] == "Claims"

    # a new scorer object and a new cache object on the same file: nothing goes over HTTP
    again = await _claims_scorer(_stack(server, tmp_path / "judge.db")).run(
        output="The sky is blue and grass is green."
    )
    assert again.status == "ready" and again.score == 0.5
    assert all(call.cached for call in again.judge_calls)
    assert all(call.usage.input_tokens > 0 for call in again.judge_calls)
    assert len(server.chat_requests) == 2


async def test_throttles_and_refused_formats_do_not_reach_the_scorer(tmp_path: Path) -> None:
    with MockOpenAIServer(reject_response_format=True, retry_after="0") as server:
        server.enqueue(MockReply(status=429))  # the first request is throttled
        result = await _claims_scorer(_stack(server, tmp_path / "j.db")).run(output="x")
        assert result.status == "ready"
        statuses = [call.status for call in result.judge_calls]
        assert statuses == ["success", "success"]
        # 429 → retried; then 400 for response_format → prompt; later calls go straight there
        assert server.statuses[429] == 1 and server.statuses[400] == 1
        assert server.statuses[200] == 2


async def test_a_dead_endpoint_is_an_error_result_not_a_score(tmp_path: Path) -> None:
    with MockOpenAIServer() as server:
        server.responder = lambda body: MockReply(status=503)
        client = OpenAICompatibleModel("judge-model", base_url=server.base_url, provider="mock")
        policy = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02)
        model = CachedModel(
            ReliableModel(client, policy=policy), cache=SQLiteModelCache(tmp_path / "d.db")
        )
        result = await _claims_scorer(model).run(output="x")
    assert result.status == "error" and result.score is None
    assert result.error is not None and result.error.failed_step == "preprocess"
    assert "gave up after 2 attempt" in result.error.message


async def test_judge_params_base_url_and_env_reach_the_endpoint(
    server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = JudgeScorerParams(model="openai-compatible/served-judge", base_url=server.base_url)
    config = judge_config(params, "You judge.")
    assert isinstance(config.model, LazyModel) and config.model_label == (
        "openai-compatible/served-judge"
    )
    result = await _claims_scorer(config.model).run(output="x")  # type: ignore[arg-type]
    assert result.status == "ready"
    assert server.chat_requests[0].body["model"] == "served-judge"  # type: ignore[index]

    # ASSAY_JUDGE_BASE_URL goes with ASSAY_JUDGE_MODEL ...
    monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai-compatible/env-judge")
    monkeypatch.setenv("ASSAY_JUDGE_BASE_URL", server.base_url)
    from_env = judge_config(JudgeScorerParams(), "You judge.").model
    assert isinstance(from_env, LazyModel) and from_env.base_url == server.base_url
    # ... but does not move a model named explicitly
    explicit = judge_config(JudgeScorerParams(model="openai/gpt-4o-mini"), "You judge.").model
    assert explicit == LazyModel("openai/gpt-4o-mini")  # a Model, resolved when a step runs
    monkeypatch.delenv("ASSAY_JUDGE_BASE_URL")
    from_env_only = judge_config(JudgeScorerParams(), "You judge.").model
    assert from_env_only == LazyModel("openai-compatible/env-judge")
