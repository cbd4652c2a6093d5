"""The OpenAI-compatible client against a real HTTP server: request shape, structured-output
levels and fallback, usage, cost, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from assay.models.base import ChatMessage, MissingAPIKeyError, ModelError, ModelSettings
from assay.models.openai_compat import OpenAICompatibleModel
from assay.models.prices import PriceTable
from assay.testing.openai_server import MockOpenAIServer, MockReply


class Verdict(BaseModel):
    verdict: str
    reason: str = ""


class Verdicts(BaseModel):
    verdicts: list[Verdict]
    note: str | None = None


class FreeForm(BaseModel):
    scores: dict[str, float]


MESSAGES = [
    ChatMessage(role="system", content="You judge."),
    ChatMessage(role="user", content="Judge this answer please"),
]


def _model(server: MockOpenAIServer, **kwargs: Any) -> OpenAICompatibleModel:
    return OpenAICompatibleModel("mock-judge", base_url=server.base_url, provider="mock", **kwargs)


async def test_strict_structured_output_request_shape(server: MockOpenAIServer) -> None:
    schema = Verdicts.model_json_schema()
    response = await _model(server).generate(
        MESSAGES, schema=schema, settings=ModelSettings(temperature=0.0, seed=7, top_p=0.5)
    )
    (request,) = server.chat_requests
    body = request.body
    assert body is not None
    assert body["model"] == "mock-judge"
    assert body["messages"] == [m.model_dump() for m in MESSAGES]
    assert body["temperature"] == 0.0 and body["seed"] == 7 and body["top_p"] == 0.5
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Verdicts"
    assert fmt["json_schema"]["strict"] is True
    sent = fmt["json_schema"]["schema"]
    # strict mode: every object closed and every property required, also inside $defs
    assert sent["additionalProperties"] is False
    assert sent["required"] == ["verdicts", "note"]
    inner = sent["$defs"]["Verdict"]
    assert inner["additionalProperties"] is False and inner["required"] == ["verdict", "reason"]
    assert "default" not in json.dumps(sent)
    # the answer validates against the original model
    Verdicts.model_validate_json(response.text)
    assert request.headers["authorization"] == "Bearer assay-no-key"


async def test_schema_that_cannot_be_strict_is_sent_non_strict(server: MockOpenAIServer) -> None:
    schema = FreeForm.model_json_schema()
    await _model(server).generate(MESSAGES, schema=schema)
    fmt = server.chat_requests[0].body["response_format"]  # type: ignore[index]
    assert fmt["json_schema"]["strict"] is False
    assert fmt["json_schema"]["schema"] == schema


async def test_json_object_and_prompt_levels_put_the_schema_in_the_prompt(
    server: MockOpenAIServer,
) -> None:
    schema = Verdicts.model_json_schema()
    await _model(server, structured_output="json_object").generate(MESSAGES, schema=schema)
    await _model(server, structured_output="prompt").generate(MESSAGES, schema=schema)
    as_object, as_prompt = (r.body for r in server.chat_requests)
    assert as_object is not None and as_prompt is not None
    assert as_object["response_format"] == {"type": "json_object"}
    assert "response_format" not in as_prompt
    for body in (as_object, as_prompt):
        assert body["messages"][0] == MESSAGES[0].model_dump()  # system untouched
        last = body["messages"][-1]["content"]
        assert last.startswith("Judge this answer please")
        assert json.dumps(schema) in last


async def test_prompt_level_does_not_repeat_a_schema_already_in_the_message(
    server: MockOpenAIServer,
) -> None:
    schema = Verdicts.model_json_schema()
    repair = ChatMessage(role="user", content=f"Fix it. Schema: {json.dumps(schema)}")
    await _model(server, structured_output="prompt").generate([*MESSAGES, repair], schema=schema)
    last = server.chat_requests[0].body["messages"][-1]["content"]  # type: ignore[index]
    assert last.count(json.dumps(schema)) == 1


async def test_no_schema_no_response_format(server: MockOpenAIServer) -> None:
    response = await _model(server).generate(MESSAGES)
    assert response.text == "ok"
    assert "response_format" not in server.chat_requests[0].body  # type: ignore[operator]


async def test_refused_response_format_falls_back_to_prompt_and_is_remembered() -> None:
    with MockOpenAIServer(reject_response_format=True) as server:
        model = _model(server)
        schema = Verdicts.model_json_schema()
        first = await model.generate(MESSAGES, schema=schema)
        Verdicts.model_validate_json(first.text)
        bodies = [r.body for r in server.chat_requests]
        assert len(bodies) == 2
        assert bodies[0] is not None and "response_format" in bodies[0]
        assert bodies[1] is not None and "response_format" not in bodies[1]
        assert json.dumps(schema) in bodies[1]["messages"][-1]["content"]
        assert server.statuses[400] == 1
        assert model.structured_output_mode == "prompt"
        # remembered per endpoint: the next call (even from a new object) goes straight there
        await _model(server).generate(MESSAGES, schema=schema)
        assert len(server.chat_requests) == 3
        assert "response_format" not in server.chat_requests[2].body  # type: ignore[operator]


async def test_refused_strict_mode_falls_back_to_non_strict_schema() -> None:
    with MockOpenAIServer(reject_strict=True) as server:
        model = _model(server)
        await model.generate(MESSAGES, schema=Verdicts.model_json_schema())
        bodies = [r.body for r in server.chat_requests]
        assert [b["response_format"]["json_schema"]["strict"] for b in bodies if b] == [
            True,
            False,
        ]
        assert model.structured_output_mode == "json_schema"


async def test_other_400s_are_not_mistaken_for_a_refusal(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=400, error="context length exceeded"))
    with pytest.raises(ModelError) as info:
        await _model(server).generate(MESSAGES, schema=Verdicts.model_json_schema())
    assert info.value.status_code == 400 and not info.value.retryable
    assert "context length exceeded" in str(info.value)
    assert len(server.chat_requests) == 1


async def test_usage_finish_reason_duration_and_cost(server: MockOpenAIServer) -> None:
    server.enqueue(
        MockReply(
            content={"verdicts": [], "note": None},
            finish_reason="length",
            usage={"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
        )
    )
    prices = PriceTable()
    prices.set("mock-judge", input=2.0, output=10.0)
    response = await _model(server, prices=prices).generate(MESSAGES)
    assert response.usage.input_tokens == 1000
    assert response.usage.output_tokens == 500
    assert response.usage.total_tokens == 1500
    assert response.finish_reason == "length"
    assert response.duration_ms is not None and response.duration_ms > 0
    assert response.cost_usd == pytest.approx((1000 * 2.0 + 500 * 10.0) / 1_000_000)
    assert response.model_id == "mock-judge" and response.provider == "mock"
    assert response.cached is False


async def test_word_count_usage_from_the_server(server: MockOpenAIServer) -> None:
    server.enqueue("three word answer")
    response = await _model(server).generate(MESSAGES)
    prompt_words = " ".join(m.content for m in MESSAGES).split()
    assert response.usage.input_tokens == len(prompt_words)
    assert response.usage.output_tokens == 3
    assert response.cost_usd is None  # not in the price table: unknown, not zero


async def test_max_output_tokens_field_depends_on_provider(server: MockOpenAIServer) -> None:
    settings = ModelSettings(max_output_tokens=64)
    await _model(server).generate(MESSAGES, settings=settings)
    await OpenAICompatibleModel("m", base_url=server.base_url, provider="openai").generate(
        MESSAGES, settings=settings
    )
    first, second = (r.body for r in server.chat_requests)
    assert first is not None and second is not None
    assert first["max_tokens"] == 64 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 64 and "max_tokens" not in second


async def test_missing_required_key_names_the_variable_at_call_time(
    server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MOCK_PROVIDER_KEY", raising=False)
    model = _model(server, api_key_env="MOCK_PROVIDER_KEY", require_api_key=True)  # no error yet
    with pytest.raises(MissingAPIKeyError, match="MOCK_PROVIDER_KEY"):
        await model.generate(MESSAGES)
    assert server.chat_requests == []
    monkeypatch.setenv("MOCK_PROVIDER_KEY", "sk-test-123")
    await model.generate(MESSAGES)
    assert server.chat_requests[0].headers["authorization"] == "Bearer sk-test-123"


async def test_http_errors_become_classified_model_errors(server: MockOpenAIServer) -> None:
    server.enqueue(
        MockReply(status=429, headers={"Retry-After": "7"}),
        MockReply(status=503),
        MockReply(status=401, error="bad key"),
    )
    model = _model(server)
    errors: list[ModelError] = []
    for _ in range(3):
        with pytest.raises(ModelError) as info:
            await model.generate(MESSAGES)
        errors.append(info.value)
    limited, unavailable, unauthorized = errors
    assert limited.status_code == 429 and limited.throttled and limited.retryable
    assert limited.retry_after_s == 7.0
    assert unavailable.status_code == 503 and unavailable.throttled and unavailable.retryable
    assert unauthorized.status_code == 401 and not unauthorized.retryable
    assert "bad key" in str(unauthorized)
    assert len(server.chat_requests) == 3  # the SDK's own retries are off


async def test_unreachable_endpoint_is_a_retryable_model_error() -> None:
    with MockOpenAIServer() as server:
        url = server.base_url
    model = OpenAICompatibleModel("m", base_url=url, provider="mock", timeout_s=2.0)
    with pytest.raises(ModelError) as info:
        await model.generate(MESSAGES)
    assert info.value.retryable and info.value.status_code is None


def test_constructor_validates_its_arguments() -> None:
    with pytest.raises(ValueError, match="base_url"):
        OpenAICompatibleModel("m", provider="vllm")
    with pytest.raises(ValueError, match="structured_output"):
        OpenAICompatibleModel("m", base_url="http://x/v1", structured_output="yaml")  # type: ignore[arg-type]
    official = OpenAICompatibleModel("gpt-4o-mini")
    assert official.base_url.startswith("https://api.openai.com/v1") or official.base_url
    assert official.require_api_key and official.api_key_env == ("OPENAI_API_KEY",)


async def test_a_schema_changed_in_place_is_converted_again(server: MockOpenAIServer) -> None:
    """Strict conversions are remembered per schema object, but not past a change to it."""
    schema = Verdicts.model_json_schema()
    model = _model(server)
    await model.generate(MESSAGES, schema=schema)
    schema["properties"]["extra"] = {"type": "string"}
    await model.generate(MESSAGES, schema=schema)
    first, second = (
        r.body["response_format"]["json_schema"]["schema"] for r in server.chat_requests
    )  # type: ignore[index]
    assert "extra" not in first["properties"]
    assert second["required"] == ["verdicts", "note", "extra"]
