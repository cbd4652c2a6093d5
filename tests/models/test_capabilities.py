"""Model capabilities beyond one chat answer: typed settings (``n``, ``stop``), several
samples per response, and loglikelihoods over the completions endpoint (real HTTP against
the mock server), through the cache / retry / lazy wrappers, and on the scripted model.

The mock server's numbers (see ``assay.testing.openai_server``): tokens are whitespace runs
plus the word after them, a token's logprob is -0.25 per character, and the top token is the
token in lower case. So, with the context "The capital of France is":

- " Paris" is one token of 6 characters: logprob -1.5, not greedy (the top is " paris");
- " paris, france" is " paris," (7) + " france" (7): -1.75 - 1.75 = -3.5, greedy.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    LoglikelihoodModel,
    ModelError,
    ModelSettings,
    RollingLoglikelihoodModel,
    UnsupportedCapabilityError,
    split_context,
)
from assay.models.cache import CachedModel, MemoryModelCache
from assay.models.openai_compat import OpenAICompatibleModel
from assay.models.prices import PriceTable
from assay.models.resolve import LazyModel, resolve_model
from assay.testing.openai_server import MockOpenAIServer, MockReply
from assay.testing.scripted import ScriptedModel

CONTEXT = "The capital of France is"
HI = [ChatMessage(role="user", content="Say something")]


def _model(server: MockOpenAIServer, **kwargs: Any) -> OpenAICompatibleModel:
    return OpenAICompatibleModel("mock-lm", base_url=server.base_url, provider="mock", **kwargs)


# ---------------------------------------------------------------------- settings
def test_max_tokens_has_one_name() -> None:
    with pytest.raises(ValidationError, match="max_output_tokens"):
        ModelSettings.model_validate({"max_tokens": 5})
    settings = ModelSettings(max_output_tokens=5, n=3, stop=["\n"])
    assert settings.samples == 3 and ModelSettings().samples == 1
    with pytest.raises(ValidationError):
        ModelSettings(n=0)


def test_split_context_moves_trailing_whitespace_to_the_continuation() -> None:
    assert split_context("Answer: ", "Paris") == ("Answer:", " Paris")
    assert split_context("Answer:", " Paris") == ("Answer:", " Paris")


# ---------------------------------------------------------------------- n samples, stop
async def test_n_is_sent_and_every_choice_is_a_sample(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(samples=["one", "two words", "three more words"]))
    prices = PriceTable()
    prices.set("mock-lm", input=1.0, output=1.0)
    response = await _model(server, prices=prices).generate(
        HI, settings=ModelSettings(temperature=1.0, n=3, stop=["\n", "END"])
    )
    assert response.samples == ["one", "two words", "three more words"]
    assert response.text == "one"
    (request,) = server.chat_requests
    assert request.body is not None
    assert request.body["n"] == 3 and request.body["stop"] == ["\n", "END"]
    assert response.usage.output_tokens == 1 + 2 + 3  # usage covers every sample
    assert response.cost_usd == pytest.approx((2 + 6) / 1_000_000)


async def test_endpoint_ignoring_n_is_called_once_per_missing_sample() -> None:
    with MockOpenAIServer(n_support="ignore") as server:
        server.enqueue("first", "second", "third")
        response = await _model(server).generate(
            HI, settings=ModelSettings(temperature=1.0, n=3, seed=5)
        )
        requests = server.chat_requests
    assert response.text == "first" and sorted(response.samples[1:]) == ["second", "third"]
    assert len(requests) == 3
    bodies = [r.body or {} for r in requests]
    assert bodies[0]["n"] == 3 and all("n" not in b for b in bodies[1:])
    # a set seed is varied per extra sample, or every sample would be the same
    assert sorted(b["seed"] for b in bodies) == [5, 6, 7]
    assert response.usage.output_tokens == 3


async def test_endpoint_refusing_n_is_remembered() -> None:
    with MockOpenAIServer(n_support="reject") as server:
        model = _model(server)
        first = await model.generate(HI, settings=ModelSettings(temperature=1.0, n=2))
        refused = server.statuses[400]
        second = await model.generate(HI, settings=ModelSettings(temperature=1.0, n=2))
        requests = server.chat_requests
    assert first.samples == ["ok", "ok"] and second.samples == ["ok", "ok"]
    assert refused == 1 and server.statuses[400] == 1  # refused once, then never sent again
    assert len(requests) == 1 + 2 + 2
    assert all("n" not in (r.body or {}) for r in requests[1:])


async def test_samples_are_cached_with_n_in_the_key(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(samples=["a", "b"]), MockReply(samples=["c"]))
    cached = CachedModel(_model(server), cache=MemoryModelCache())
    two = ModelSettings(temperature=0.0, n=2)
    first = await cached.generate(HI, settings=two)
    again = await cached.generate(HI, settings=two)
    one = await cached.generate(HI, settings=ModelSettings(temperature=0.0))
    assert first.samples == ["a", "b"] and again.cached and again.samples == ["a", "b"]
    assert one.samples == ["c"] and not one.cached
    assert len(server.chat_requests) == 2


# ---------------------------------------------------------------------- loglikelihood
async def test_loglikelihood_over_http_sums_the_continuation_tokens(
    server: MockOpenAIServer,
) -> None:
    model = _model(server)
    assert isinstance(model, LoglikelihoodModel)
    assert isinstance(model, RollingLoglikelihoodModel)
    results = await model.loglikelihood(
        [(CONTEXT, " Paris"), (CONTEXT, " paris, france"), ("Answer: ", "Paris")]
    )
    assert results == [
        Loglikelihood(-1.5, False),
        Loglikelihood(-3.5, True),
        Loglikelihood(-1.5, False),  # the context's trailing space moved to "Paris"
    ]
    logprob, is_greedy = results[1]  # a typed result that unpacks like lm-eval's tuple
    assert (logprob, is_greedy) == (-3.5, True)
    (request,) = server.completion_requests  # one batched request
    assert request.path == "/v1/completions"
    body = request.body
    assert body is not None
    assert body["prompt"] == [CONTEXT + " Paris", CONTEXT + " paris, france", "Answer: Paris"]
    assert body["echo"] is True and body["logprobs"] == 1
    assert body["max_tokens"] == 0 and body["temperature"] == 0


async def test_loglikelihood_rolling_over_http(server: MockOpenAIServer) -> None:
    # "the" (first token: no logprob) + " cat" (-1.0) + " sat" (-1.0)
    assert await _model(server).loglikelihood_rolling("the cat sat") == -2.0


async def test_empty_context_is_refused(server: MockOpenAIServer) -> None:
    with pytest.raises(ValueError, match="empty context"):
        await _model(server).loglikelihood([("", "Paris")])
    assert server.completion_requests == []


async def test_refused_zero_max_tokens_asks_for_one_token_and_ignores_it(
    server: MockOpenAIServer,
) -> None:
    server.enqueue(MockReply(status=400, error="max_tokens must be at least 1"))
    [result] = await _model(server).loglikelihood([(CONTEXT, " Paris")])
    assert result == Loglikelihood(-1.5, False)  # the generated " ok" is not counted
    first, second = server.completion_requests
    assert (first.body or {})["max_tokens"] == 0 and (second.body or {})["max_tokens"] == 1


async def test_endpoint_without_completions_is_a_clear_error() -> None:
    with MockOpenAIServer(completions=False) as server:
        with pytest.raises(UnsupportedCapabilityError) as raised:
            await _model(server).loglikelihood([(CONTEXT, " Paris")])
        message = str(raised.value)
        assert f"{server.base_url}/completions" in message and "404" in message
        assert "echo" in message


async def test_endpoint_without_logprobs_is_a_clear_error() -> None:
    with MockOpenAIServer(completion_logprobs=False) as server:
        with pytest.raises(
            UnsupportedCapabilityError, match="answered without echoed prompt logprobs"
        ) as e:
            await _model(server).loglikelihood_rolling("the cat sat")
        assert f"{server.base_url}/completions" in str(e.value)


async def test_resolved_model_scores_through_retries_and_cache(server: MockOpenAIServer) -> None:
    model = resolve_model("openai-compatible/mock-lm", base_url=server.base_url)
    assert isinstance(model, LoglikelihoodModel)
    first = await model.loglikelihood([(CONTEXT, " Paris"), (CONTEXT, " paris, france")])
    # the second batch has one known pair: only the new one goes over HTTP
    second = await model.loglikelihood([(CONTEXT, " Paris"), (CONTEXT, " London")])
    assert first == [Loglikelihood(-1.5, False), Loglikelihood(-3.5, True)]
    assert second == [Loglikelihood(-1.5, False), Loglikelihood(-1.75, False)]
    assert [(r.body or {})["prompt"] for r in server.completion_requests] == [
        [CONTEXT + " Paris", CONTEXT + " paris, france"],
        [CONTEXT + " London"],
    ]
    assert await model.loglikelihood_rolling("the cat sat") == -2.0
    assert await model.loglikelihood_rolling("the cat sat") == -2.0
    assert len(server.completion_requests) == 3
    assert isinstance(model, CachedModel) and model.stats.hits == 2


async def test_unsupported_endpoint_is_not_retried() -> None:
    with MockOpenAIServer(completions=False) as server:
        model = resolve_model("openai-compatible/mock-lm", base_url=server.base_url)
        with pytest.raises(UnsupportedCapabilityError, match="404"):
            await model.loglikelihood([(CONTEXT, " Paris")])
        assert len(server.completion_requests) == 1


async def test_lazy_model_passes_loglikelihood_through(server: MockOpenAIServer) -> None:
    lazy = LazyModel("openai-compatible/mock-lm", base_url=server.base_url)
    assert await lazy.loglikelihood([(CONTEXT, " Paris")]) == [Loglikelihood(-1.5, False)]


async def test_a_chat_only_model_says_it_cannot_score() -> None:
    class ChatOnly:
        model_id = "chat-only"
        provider = "test"

        async def generate(self, messages: Any, **kwargs: Any) -> Any:
            raise AssertionError("not called")

    with pytest.raises(UnsupportedCapabilityError, match="test/chat-only does not support"):
        await CachedModel(ChatOnly(), policy="off").loglikelihood([("a", " b")])


# ---------------------------------------------------------------------- scripted model
async def test_scripted_model_samples_and_scores() -> None:
    model = ScriptedModel(
        ["a", "b", "c"],
        loglikelihoods={("Q:", " yes"): (-0.5, True), ("Q:", " no"): (-2.0, False)},
        rolling=lambda text: -float(len(text)),
    )
    response = await model.generate(HI, settings=ModelSettings(n=2))
    assert response.samples == ["a", "b"] and response.text == "a"
    assert (await model.generate(HI)).samples == ["c"]
    assert await model.loglikelihood([("Q:", " yes"), ("Q:", " no")]) == [
        Loglikelihood(-0.5, True),
        Loglikelihood(-2.0, False),
    ]
    assert await model.loglikelihood_rolling("abcd") == -4.0
    assert model.scored == [("Q:", " yes"), ("Q:", " no")] and model.rolled == ["abcd"]
    with pytest.raises(ModelError, match="no loglikelihood"):
        await model.loglikelihood([("Q:", " maybe")])
    with pytest.raises(UnsupportedCapabilityError, match="no loglikelihoods were scripted"):
        await ScriptedModel().loglikelihood([("Q:", " yes")])
