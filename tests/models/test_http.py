"""The aiohttp transport against the real mock server: framing, keep-alive, pools per event
loop, errors, timeouts, proxies, TLS, and what importing it costs.

Tests of the removed hand-written client's internals (which client ``client_for`` picks,
``ASSAY_HTTP_CLIENT``, the ``httpx2`` fallback, the resend on a stale connection) went with
it; hostile servers are in ``test_http_hostile.py``."""

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

from assay.models.base import ChatMessage, ModelError, ModelSettings, ModelTimeoutError
from assay.models.http import (
    CONNECT_TIMEOUT_ENV,
    MAX_RESPONSE_BYTES_ENV,
    READ_TIMEOUT_ENV,
    AiohttpTransport,
    HTTPSettings,
    TransportError,
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


def _chat_body(text: str = "hello there") -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode()


async def _chat(transport: AiohttpTransport, text: str = "hello there") -> Any:
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
        transport = AiohttpTransport(server.base_url)
        headers = {**JSON_HEADERS, "Accept-Encoding": "gzip, deflate"}
        reply = await transport.post("/chat/completions", _chat_body(), headers)
        assert reply.status == 200 and header in reply.headers
        assert json.loads(reply.body)["choices"][0]["message"]["content"] == "ok"
        await transport.aclose()


async def test_connections_are_kept_alive_and_reused(server: MockOpenAIServer) -> None:
    transport = AiohttpTransport(server.base_url)
    for _ in range(5):
        await _chat(transport)
    await asyncio.gather(*(_chat(transport) for _ in range(4)))
    assert server.connections == 4  # the first connection served the five in a row
    assert len(server.chat_requests) == 9
    await transport.aclose()


async def test_connections_open_at_once_are_capped() -> None:
    with MockOpenAIServer(latency_s=0.05) as server:
        transport = AiohttpTransport(server.base_url, HTTPSettings(max_connections=2))
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
        transport = AiohttpTransport(server.base_url)
        for _ in range(3):
            await _chat(transport)
        assert server.connections == 3 and len(server.chat_requests) == 3


async def test_a_connection_the_server_closed_while_idle_is_not_reused(
    server: MockOpenAIServer,
) -> None:
    transport = AiohttpTransport(server.base_url)
    await _chat(transport)
    assert server.drop_connections() == 1  # as a server's idle timeout does
    await asyncio.sleep(0.1)  # the close reaches the client's loop
    await _chat(transport)
    assert len(server.chat_requests) == 2 and server.connections == 2
    await transport.aclose()


async def test_error_statuses_are_answers_not_transport_errors(server: MockOpenAIServer) -> None:
    server.enqueue(MockReply(status=503, headers={"Retry-After": "2"}, error="busy"))
    transport = AiohttpTransport(server.base_url)
    reply = await transport.post("/chat/completions", _chat_body(), JSON_HEADERS)
    assert reply.status == 503 and reply.headers["retry-after"] == "2"
    assert json.loads(reply.body)["error"]["message"] == "busy"


async def test_an_unreachable_endpoint_is_a_transport_error_naming_it() -> None:
    with MockOpenAIServer() as server:
        url = server.base_url
    transport = AiohttpTransport(url)
    with pytest.raises(TransportError, match=url):
        await transport.post("/chat/completions", _chat_body(), JSON_HEADERS)


async def test_a_timeout_closes_the_connection_it_interrupted() -> None:
    with MockOpenAIServer(latency_s=1.0) as server:
        transport = AiohttpTransport(server.base_url)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await _chat(transport)
        server.latency_s = 0.0
        await _chat(transport)  # a new connection: the interrupted one is not reused
        assert server.connections == 2


def test_base_urls_the_transport_does_not_serve_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="http"):
        AiohttpTransport("ftp://example.com/v1")
    with pytest.raises(ValueError, match="query"):
        AiohttpTransport("http://example.com/v1?api-version=1")
    with pytest.raises(ValueError, match="password") as info:
        AiohttpTransport("http://me:s3cret@example.com/v1")
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


async def test_a_proxy_from_the_environment_carries_the_request(
    server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real forward proxy on loopback (aiohttp's server, relaying with a plain client):
    with ``HTTP_PROXY`` set, the request reaches the endpoint through it; the endpoint's
    host name does not exist, so only the proxy can answer."""
    from aiohttp import ClientSession, web

    seen: list[str] = []

    async def relay(request: web.Request) -> web.Response:
        seen.append(str(request.url))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        target = str(request.url).replace(
            "http://assay-proxy-test.invalid", server.base_url.removesuffix("/v1")
        )
        async with (
            ClientSession() as upstream,
            upstream.post(
                target, data=await request.read(), headers=headers, allow_redirects=False
            ) as answer,
        ):
            body = await answer.read()
            passed = {k: v for k, v in answer.headers.items() if k.lower() == "location"}
            return web.Response(
                status=answer.status, body=body, headers=passed, content_type="application/json"
            )

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", relay)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        base_url = "http://assay-proxy-test.invalid/v1"
        model = OpenAICompatibleModel("m", base_url=base_url, provider="mock")
        response = await model.generate(MESSAGES, settings=ModelSettings(temperature=0))
        assert response.text == "ok"
        assert seen == [f"{base_url}/chat/completions"]
        assert len(server.chat_requests) == 1
        # the same redirect rule as a direct call: reported, not followed
        server.enqueue(MockReply(status=308, headers={"Location": "http://elsewhere/v1"}))
        with pytest.raises(ModelError, match="redirected to http://elsewhere/v1"):
            await model.generate(MESSAGES)
        assert len(seen) == 2
        await model.aclose()
        # NO_PROXY for the host: the proxy is not asked (and the host does not resolve)
        monkeypatch.setenv("NO_PROXY", "assay-proxy-test.invalid")
        direct = OpenAICompatibleModel("m", base_url=base_url, provider="mock")
        with pytest.raises(ModelError, match="cannot reach"):
            await direct.generate(MESSAGES)
        assert len(seen) == 2
        await direct.aclose()
    finally:
        await runner.cleanup()


_HOP = {"host", "connection", "proxy-connection", "keep-alive", "content-length"}


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert HTTPSettings.from_env() == HTTPSettings()
    monkeypatch.setenv(CONNECT_TIMEOUT_ENV, "2.5")
    monkeypatch.setenv(READ_TIMEOUT_ENV, "0")
    monkeypatch.setenv(MAX_RESPONSE_BYTES_ENV, "1000")
    assert HTTPSettings.from_env() == HTTPSettings(
        connect_timeout_s=2.5, read_timeout_s=None, max_response_bytes=1000
    )
    monkeypatch.setenv(MAX_RESPONSE_BYTES_ENV, "lots")
    with pytest.raises(ValueError, match=MAX_RESPONSE_BYTES_ENV):
        HTTPSettings.from_env()
    monkeypatch.setenv(MAX_RESPONSE_BYTES_ENV, "0")
    with pytest.raises(ValueError, match="max_response_bytes"):
        HTTPSettings.from_env()
    with pytest.raises(ValueError, match="connect_timeout_s"):
        HTTPSettings(connect_timeout_s=0)


async def test_a_phase_timeout_is_a_retryable_model_timeout_naming_it() -> None:
    with MockOpenAIServer(latency_s=2.0) as server:
        model = OpenAICompatibleModel(
            "m", base_url=server.base_url, provider="mock", http=HTTPSettings(read_timeout_s=0.2)
        )
        with pytest.raises(ModelTimeoutError, match="read timeout") as info:
            await model.generate(MESSAGES)
        assert info.value.retryable
        await model.aclose()


async def test_an_answer_over_the_cap_is_a_model_error_naming_the_cap(
    server: MockOpenAIServer,
) -> None:
    server.enqueue("x" * 5000)
    model = OpenAICompatibleModel(
        "m", base_url=server.base_url, provider="mock", http=HTTPSettings(max_response_bytes=1000)
    )
    with pytest.raises(ModelError, match="1000-byte cap"):
        await model.generate(MESSAGES)
    assert (await model.generate(MESSAGES)).text == "ok"  # the next call is answered
    await model.aclose()


def test_many_event_loops_leave_no_sockets_and_no_warnings(
    server: MockOpenAIServer, tmp_path: Path
) -> None:
    """``asyncio.run`` many times in one process (scripts, notebooks, the CLI): each loop's
    session is closed as the loop ends, with no "unclosed" warnings."""
    code = (
        "import asyncio, gc, sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "from assay.models.base import ChatMessage\n"
        "from assay.models.openai_compat import OpenAICompatibleModel\n"
        f"model = OpenAICompatibleModel('m', base_url={server.base_url!r}, provider='mock')\n"
        "async def calls():\n"
        "    await asyncio.gather(*(model.generate([ChatMessage(role='user', content='hi')])\n"
        "                           for _ in range(4)))\n"
        "for _ in range(20):\n"
        "    asyncio.run(calls())\n"
        "gc.collect()\n"
        "print('done')\n"
    )
    done = subprocess.run(
        [sys.executable, "-X", "dev", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    for word in ("Unclosed", "unclosed", "ResourceWarning", "Exception ignored"):
        assert word not in done.stderr, done.stderr
    assert server.connections >= 20  # a pool per loop
    deadline = time.monotonic() + 10
    while server.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.open_connections == 0  # every loop closed its own


def test_importing_assay_does_not_import_aiohttp_and_the_default_path_not_the_sdk(
    tmp_path: Path,
) -> None:
    code = (
        "import asyncio, sys\n"
        "import assay\n"
        "from assay.models.base import ChatMessage, ModelSettings\n"
        "from assay.models.resolve import resolve_model\n"
        "from assay.testing.openai_server import MockOpenAIServer\n"
        "before = 'aiohttp' in sys.modules\n"
        "with MockOpenAIServer() as server:\n"
        "    model = resolve_model('openai-compatible/judge', base_url=server.base_url)\n"
        "    answer = asyncio.run(model.generate([ChatMessage(role='user', content='hi')],\n"
        "                         settings=ModelSettings(temperature=0)))\n"
        "print(answer.text, before, 'aiohttp' in sys.modules, 'openai' in sys.modules,\n"
        "      'httpx2' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
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
    assert done.stdout.split() == ["ok", "False", "True", "False", "False"]


async def test_a_transport_belongs_to_the_loop_of_its_first_request(
    server: MockOpenAIServer,
) -> None:
    transport = AiohttpTransport(server.base_url)
    await _chat(transport)

    def elsewhere() -> None:
        with pytest.raises(RuntimeError, match="another event loop"):
            asyncio.run(_chat(transport))

    await asyncio.to_thread(elsewhere)
    await transport.aclose()
    await _chat(transport)  # after aclose it opens again
    await transport.aclose()


def test_a_transport_reopens_in_the_next_loop_after_its_loop_ended(
    server: MockOpenAIServer,
) -> None:
    transport = AiohttpTransport(server.base_url)
    for _ in range(3):
        asyncio.run(_chat(transport))  # each loop's session closes as the loop ends
    deadline = time.monotonic() + 10
    while server.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.connections == 3 and server.open_connections == 0
    assert len(server.chat_requests) == 3


def test_make_transport_uses_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(READ_TIMEOUT_ENV, "7")
    transport = make_transport("http://127.0.0.1:1/v1")
    assert isinstance(transport, AiohttpTransport)
    assert transport.settings.read_timeout_s == 7


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
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted: the answer comes
        model = OpenAICompatibleModel("m", base_url=server.base_url, provider="mock")
        assert (await model.generate(MESSAGES)).text == "ok"
        await model.aclose()
        monkeypatch.delenv("SSL_CERT_FILE")  # the system's store does not know it
        stranger = OpenAICompatibleModel("m", base_url=server.base_url, provider="mock")
        with pytest.raises(ModelError, match="CERTIFICATE_VERIFY_FAILED") as info:
            await stranger.generate(MESSAGES)
        assert info.value.retryable and len(server.chat_requests) == 1
