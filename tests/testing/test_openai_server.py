"""The mock OpenAI-compatible server itself: routes, schema examples, records, faults."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from assay.testing.openai_server import MockOpenAIServer, MockReply, example_from_schema


def _post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_example_from_schema_follows_refs_enums_and_arrays() -> None:
    schema = {
        "type": "object",
        "properties": {
            "verdicts": {"type": "array", "items": {"$ref": "#/$defs/V"}},
            "kind": {"enum": ["a", "b"]},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
        },
        "$defs": {"V": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
    }
    assert example_from_schema(schema) == {"verdicts": [{"ok": True}], "kind": "a", "maybe": 1}


def test_chat_completion_shape_and_records(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply({"score": 1}, headers={"X-Test": "yes"}))
    status, body = _post(
        f"{server.base_url}/chat/completions",
        {"model": "m", "messages": [{"role": "user", "content": "two words"}]},
        {"Content-Type": "application/json"},
    )
    assert status == 200
    assert body["choices"][0]["message"] == {"role": "assistant", "content": '{"score": 1}'}
    assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4}
    (recorded,) = server.chat_requests
    assert recorded.method == "POST" and recorded.body is not None
    assert recorded.body["model"] == "m"


def test_completions_route_echoes_deterministic_logprobs(server: MockOpenAIServer) -> None:
    status, body = _post(
        f"{server.base_url}/completions",
        {"model": "m", "prompt": ["The Cat", "a b"], "echo": True, "logprobs": 1, "max_tokens": 0},
    )
    assert status == 200 and body["object"] == "text_completion"
    first, second = body["choices"]
    assert first["index"] == 0 and first["text"] == "The Cat"
    assert first["logprobs"] == {
        "tokens": ["The", " Cat"],
        "token_logprobs": [None, -1.0],  # -0.25 per character
        "top_logprobs": [None, {" cat": -1.0}],  # the top token is the lower-case one
        "text_offset": [0, 3],
    }
    assert second["index"] == 1 and second["logprobs"]["token_logprobs"] == [None, -0.5]
    assert body["usage"] == {"prompt_tokens": 4, "completion_tokens": 0, "total_tokens": 4}
    # without echo: only the generated text (a queued reply, default " ok")
    status, body = _post(f"{server.base_url}/completions", {"prompt": "x", "max_tokens": 3})
    assert status == 200 and body["choices"][0]["text"] == " ok"
    assert body["choices"][0]["logprobs"] is None
    assert len(server.completion_requests) == 2 and server.chat_requests == []


def test_completions_route_can_be_missing_or_without_logprobs() -> None:
    with MockOpenAIServer(completions=False) as server:
        status, _ = _post(f"{server.base_url}/completions", {"prompt": "x"})
        assert status == 404
    with MockOpenAIServer(completion_logprobs=False) as server:
        status, body = _post(
            f"{server.base_url}/completions", {"prompt": "x y", "echo": True, "logprobs": 1}
        )
        assert status == 200 and body["choices"][0]["logprobs"] is None


def test_chat_n_gives_n_choices(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(samples=["a", "b c"]))
    status, body = _post(
        f"{server.base_url}/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}], "n": 2},
    )
    assert status == 200
    assert [c["message"]["content"] for c in body["choices"]] == ["a", "b c"]
    assert [c["index"] for c in body["choices"]] == [0, 1]
    assert body["usage"]["completion_tokens"] == 3


def test_errors_and_unknown_routes(server: MockOpenAIServer) -> None:
    status, body = _post(f"{server.base_url}/nope", {"x": 1})
    assert status == 404 and "no route" in body["error"]["message"]
    status, body = _post(f"{server.base_url}/chat/completions", b"not json")
    assert status == 400
    server.enqueue(MockReply(status=503, error="down"))
    status, body = _post(f"{server.base_url}/chat/completions", {"messages": []})
    assert status == 503 and body["error"]["message"] == "down"
    assert server.statuses[503] == 1


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_rate_limit_fraction(rate: float) -> None:
    with MockOpenAIServer(rate_limit_rate=rate, retry_after="2") as server:
        status, _ = _post(f"{server.base_url}/chat/completions", {"messages": []})
        assert status == (429 if rate else 200)


async def test_server_in_another_process_serves_and_counts() -> None:
    from assay.models.base import ChatMessage
    from assay.models.openai_compat import OpenAICompatibleModel
    from assay.testing.openai_server import MockServerProcess

    with MockServerProcess(latency_s=0.01, rate_limit_rate=0.0) as child:
        assert child.base_url.startswith("http://127.0.0.1:")
        model = OpenAICompatibleModel("m", base_url=child.base_url, provider="mock")
        response = await model.generate([ChatMessage(role="user", content="hi")])
        await model.aclose()
        assert response.text == "ok"
        stats = child.stats()
    assert stats["statuses"] == {"200": 1} and stats["requests"] == 1


def test_only_loopback_addresses() -> None:
    with pytest.raises(ValueError, match="loopback"):
        MockOpenAIServer(host="0.0.0.0")


def test_a_key_is_checked_as_bearer_or_azure_api_key_and_the_query_recorded() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with MockOpenAIServer(api_key="k-1") as server:
        root = server.base_url.removesuffix("/v1")
        azure = f"{root}/openai/deployments/dep/chat/completions?api-version=2024-10-21"
        assert _post(f"{server.base_url}/chat/completions", body)[0] == 401
        bad = {"Authorization": "Bearer k-2"}
        assert _post(f"{server.base_url}/chat/completions", body, bad)[0] == 401
        good = {"Authorization": "Bearer k-1"}
        assert _post(f"{server.base_url}/chat/completions", body, good)[0] == 200
        assert _post(azure, body, {"api-key": "k-1"})[0] == 200
        assert _post(azure, body, {"api-key": "k-2"})[0] == 401
        assert server.requests[3].path == "/openai/deployments/dep/chat/completions"
        assert server.requests[3].query == "api-version=2024-10-21"
        assert server.requests[0].query == ""
