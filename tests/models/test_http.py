"""The lean HTTP client against a real server: framing, keep-alive, stale connections,
errors, the ``httpx2`` fallback behind a proxy, and no ``openai`` SDK on the default path."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assay.models.base import ChatMessage, ModelError, ModelSettings
from assay.models.http import (
    HTTP_CLIENT_ENV,
    HttpxTransport,
    StdlibTransport,
    TransportError,
    client_for,
    make_transport,
)
from assay.models.openai_compat import OpenAICompatibleModel
from assay.testing.openai_server import MockOpenAIServer, MockReply

MESSAGES = [ChatMessage(role="user", content="Say ok")]
JSON_HEADERS = {"Content-Type": "application/json"}
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def _no_proxy_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv(HTTP_CLIENT_ENV, raising=False)


def _chat_body(text: str = "hello there") -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()


async def _chat(transport: StdlibTransport, text: str = "hello there") -> Any:
    reply = await transport.post("/chat/completions", _chat_body(text), JSON_HEADERS)
    assert reply.status == 200, reply.body
    return json.loads(reply.body)


@pytest.mark.parametrize(
    ("options", "header"),
    [
        ({}, "content-length"),
        ({"chunked": True}, "transfer-encoding"),
        ({"gzip": True}, "content-encoding"),
        ({"chunked": True, "gzip": True}, "content-encoding"),
    ],
)
async def test_answers_are_read_whatever_their_framing(
    options: dict[str, bool], header: str
) -> None:
    with MockOpenAIServer(**options) as server:
        transport = StdlibTransport(server.base_url)
        headers = {**JSON_HEADERS, "Accept-Encoding": "gzip, deflate"}
        reply = await transport.post("/chat/completions", _chat_body(), headers)
        assert reply.status == 200 and header in reply.headers
        assert json.loads(reply.body)["choices"][0]["message"]["content"] == "ok"
        await transport.aclose()


async def test_connections_are_kept_alive_and_reused(server: MockOpenAIServer) -> None:
    transport = StdlibTransport(server.base_url)
    for _ in range(5):
        await _chat(transport)
    await asyncio.gather(*(_chat(transport) for _ in range(4)))
    assert server.connections == 4  # the first connection served the five in a row
    assert len(server.chat_requests) == 9
    await transport.aclose()


async def test_connections_open_at_once_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(StdlibTransport, "MAX_CONNECTIONS", 2)
    with MockOpenAIServer(latency_s=0.05) as server:
        transport = StdlibTransport(server.base_url)
        await asyncio.gather(*(_chat(transport) for _ in range(6)))
        assert server.max_in_flight == 2 and server.connections == 2
        await transport.aclose()


def test_connections_of_an_ended_event_loop_are_not_kept(server: MockOpenAIServer) -> None:
    """Each ``asyncio.run`` has its own pool; the pools of ended loops are dropped (and their
    sockets closed), not kept for the model's lifetime."""
    model = OpenAICompatibleModel("m", base_url=server.base_url, provider="mock")

    async def calls() -> None:
        await asyncio.gather(*(model.generate(MESSAGES) for _ in range(8)))

    for _ in range(4):
        asyncio.run(calls())
    gc.collect()
    assert server.connections == 32
    deadline = time.monotonic() + 10
    while server.open_connections > 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.open_connections <= 8  # only the last loop's pool may still be open


async def test_connection_close_answers_open_a_new_connection_each_time() -> None:
    with MockOpenAIServer(keep_alive=False) as server:
        transport = StdlibTransport(server.base_url)
        for _ in range(3):
            await _chat(transport)
        assert server.connections == 3 and len(server.chat_requests) == 3


async def test_a_connection_the_server_closed_while_idle_is_replaced_once(
    server: MockOpenAIServer,
) -> None:
    transport = StdlibTransport(server.base_url)
    await _chat(transport)
    # closed by the server while the client's loop is not looking: the pooled connection
    # still seems usable, the request fails before any answer, and goes once more
    assert server.drop_connections() == 1
    await _chat(transport)
    assert len(server.chat_requests) == 2 and server.connections == 2
    await transport.aclose()


async def test_error_statuses_are_answers_not_transport_errors(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=503, headers={"Retry-After": "2"}, error="busy"))
    transport = StdlibTransport(server.base_url)
    reply = await transport.post("/chat/completions", _chat_body(), JSON_HEADERS)
    assert reply.status == 503 and reply.headers["retry-after"] == "2"
    assert json.loads(reply.body)["error"]["message"] == "busy"


async def test_an_unreachable_endpoint_is_a_transport_error_naming_it() -> None:
    with MockOpenAIServer() as server:
        url = server.base_url
    transport = StdlibTransport(url)
    with pytest.raises(TransportError, match=url):
        await transport.post("/chat/completions", _chat_body(), JSON_HEADERS)


async def test_a_timeout_closes_the_connection_it_interrupted() -> None:
    with MockOpenAIServer(latency_s=1.0) as server:
        transport = StdlibTransport(server.base_url)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await _chat(transport)
        server.latency_s = 0.0
        await _chat(transport)  # a new connection: the interrupted one is not reused
        assert server.connections == 2


def test_base_urls_the_stdlib_client_does_not_serve_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="http"):
        StdlibTransport("ftp://example.com/v1")
    with pytest.raises(ValueError, match="query"):
        StdlibTransport("http://example.com/v1?api-version=1")
    with pytest.raises(ValueError, match="password") as info:
        StdlibTransport("http://me:s3cret@example.com/v1")
    assert "s3cret" not in str(info.value)


async def test_a_redirect_is_reported_with_where_it_points(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=308, headers={"Location": "http://elsewhere/v1"}))
    model = OpenAICompatibleModel("m", base_url=server.base_url, provider="mock")
    with pytest.raises(ModelError, match="redirected to http://elsewhere/v1") as info:
        await model.generate(MESSAGES)
    assert info.value.status_code == 308 and not info.value.retryable


def test_header_values_that_would_break_the_request_are_refused(server: MockOpenAIServer) -> None:
    with pytest.raises(ValueError, match="HTTP-Referer"):
        OpenAICompatibleModel(
            "m",
            base_url=server.base_url,
            provider="mock",
            default_headers={"HTTP-Referer": "x\r\nInjected: 1"},
        )


async def test_an_api_key_with_a_line_break_is_a_model_error_not_sent(
    server: MockOpenAIServer,
) -> None:
    model = OpenAICompatibleModel("m", base_url=server.base_url, api_key="sk-1\n", provider="p")
    with pytest.raises(ModelError, match="API key") as info:
        await model.generate(MESSAGES)
    assert not info.value.retryable and "sk-1" not in str(info.value)
    assert server.requests == []


async def test_request_headers(server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    await OpenAICompatibleModel(
        "m",
        base_url=server.base_url,
        api_key="sk-x",
        default_headers={"HTTP-Referer": "https://example.org", "User-Agent": "mine/1"},
    ).generate(MESSAGES)
    await OpenAICompatibleModel("m", base_url=server.base_url, provider="vllm").generate(MESSAGES)
    official, local = (r.headers for r in server.chat_requests)
    assert official["authorization"] == "Bearer sk-x"
    assert official["content-type"] == "application/json"
    assert official["http-referer"] == "https://example.org"
    assert official["user-agent"] == "mine/1"  # the provider's own headers win
    assert official["openai-organization"] == "org-1"
    assert "openai-organization" not in local  # only sent to the openai provider
    assert local["user-agent"].startswith("assay/")


def test_which_client(monkeypatch: pytest.MonkeyPatch) -> None:
    assert client_for("http://127.0.0.1:8000/v1") == "stdlib"
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert client_for("http://127.0.0.1:8000/v1") == "stdlib"  # not for this scheme
    assert client_for("https://api.openai.com/v1") == "httpx"
    monkeypatch.setenv("no_proxy", "*")
    assert client_for("https://api.openai.com/v1") == "stdlib"
    monkeypatch.setenv(HTTP_CLIENT_ENV, "httpx")
    assert client_for("http://127.0.0.1:8000/v1") == "httpx"
    monkeypatch.setenv(HTTP_CLIENT_ENV, "curl")
    with pytest.raises(ValueError, match=HTTP_CLIENT_ENV):
        client_for("http://127.0.0.1:8000/v1")


async def test_a_proxy_from_the_environment_is_honoured_through_httpx(
    server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the mock answers absolute-form requests, so it can stand in for an HTTP proxy: the
    # endpoint's host does not exist, and only the proxy can answer
    monkeypatch.setenv("HTTP_PROXY", server.base_url.removesuffix("/v1"))
    base_url = "http://assay-proxy-test.invalid/v1"
    assert isinstance(make_transport(base_url), HttpxTransport)
    model = OpenAICompatibleModel("m", base_url=base_url, provider="mock")
    response = await model.generate(MESSAGES, settings=ModelSettings(temperature=0))
    assert response.text == "ok"
    (request,) = server.chat_requests
    assert request.path == f"{base_url}/chat/completions"
    await model.aclose()


@pytest.mark.parametrize("client", ["stdlib", "httpx"])
async def test_both_clients_give_the_same_answers_and_errors(
    client: str, server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HTTP_CLIENT_ENV, client)
    server.enqueue("fine", MockReply(status=429, headers={"Retry-After": "3"}))
    model = OpenAICompatibleModel("m", base_url=server.base_url, provider="mock")
    assert (await model.generate(MESSAGES)).text == "fine"
    with pytest.raises(ModelError) as info:
        await model.generate(MESSAGES)
    error = info.value
    assert (error.status_code, error.throttled, error.retry_after_s) == (429, True, 3.0)
    assert f"HTTP 429 from {server.base_url}/chat/completions" in str(error)
    await model.aclose()


def test_the_default_path_never_imports_the_openai_sdk_or_httpx(tmp_path: Path) -> None:
    code = (
        "import asyncio, sys\n"
        "from assay.models.base import ChatMessage, ModelSettings\n"
        "from assay.models.resolve import resolve_model\n"
        "from assay.testing.openai_server import MockOpenAIServer\n"
        "with MockOpenAIServer() as server:\n"
        "    model = resolve_model('openai-compatible/judge', base_url=server.base_url)\n"
        "    answer = asyncio.run(model.generate([ChatMessage(role='user', content='hi')],\n"
        "                         settings=ModelSettings(temperature=0)))\n"
        "print(answer.text, 'openai' in sys.modules, 'httpx2' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.pop(HTTP_CLIENT_ENV, None)
    env["ASSAY_CACHE_PATH"] = str(tmp_path / "cache.db")
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "False", "False"]


def _self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by the ``openssl`` command."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key


async def test_https_verifies_the_server_against_the_trust_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = _self_signed_certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with MockOpenAIServer(ssl_context=context) as server:
        assert server.base_url.startswith("https://")
        monkeypatch.setattr("assay.models.http._SSL_CONTEXT", None)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted: the answer comes
        model = OpenAICompatibleModel("m", base_url=server.base_url, provider="mock")
        assert (await model.generate(MESSAGES)).text == "ok"
        await model.aclose()
        monkeypatch.setattr("assay.models.http._SSL_CONTEXT", None)
        monkeypatch.delenv("SSL_CERT_FILE")  # the system's store does not know it
        stranger = OpenAICompatibleModel("m", base_url=server.base_url, provider="mock")
        with pytest.raises(ModelError, match="CERTIFICATE_VERIFY_FAILED") as info:
            await stranger.generate(MESSAGES)
        assert info.value.retryable and len(server.chat_requests) == 1
