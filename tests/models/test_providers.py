"""Model strings → wrapped provider models: URLs, keys, env vars, memoisation, lazy import."""

from __future__ import annotations

import asyncio
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from assay.models.base import ChatMessage, MissingAPIKeyError, ModelError, ModelSettings
from assay.models.cache import CachedModel, SQLiteModelCache
from assay.models.openai_compat import OpenAICompatibleModel
from assay.models.providers import PROVIDERS
from assay.models.reliability import ReliableModel
from assay.models.resolve import (
    LazyModel,
    UnknownModelError,
    known_providers,
    resolve_model,
    shippable_model,
)
from assay.testing.openai_server import MockOpenAIServer

MESSAGES = [ChatMessage(role="user", content="hello")]


def _layers(model: object) -> tuple[CachedModel, ReliableModel, OpenAICompatibleModel]:
    assert isinstance(model, CachedModel)
    assert isinstance(model.inner, ReliableModel)
    assert isinstance(model.inner.inner, OpenAICompatibleModel)
    return model, model.inner, model.inner.inner


@pytest.mark.parametrize(
    ("spec", "url", "key_env", "required"),
    [
        ("openai/gpt-4o-mini", "https://api.openai.com/v1", ("OPENAI_API_KEY",), True),
        ("ollama/llama3.2", "http://localhost:11434/v1", ("OLLAMA_API_KEY",), False),
        ("vllm/qwen", "http://localhost:8000/v1", ("VLLM_API_KEY",), False),
        ("lmstudio/phi", "http://localhost:1234/v1", ("LMSTUDIO_API_KEY",), False),
        ("openrouter/openai/gpt-4o-mini", "https://openrouter.ai/api/v1", None, True),
        ("together/meta-llama/Llama-3-8b", "https://api.together.xyz/v1", None, True),
        ("groq/llama-3.1-8b-instant", "https://api.groq.com/openai/v1", None, True),
        ("anthropic/claude-3-5-haiku-latest", "https://api.anthropic.com/v1", None, True),
        (
            "gemini/gemini-2.0-flash",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            True,
        ),
    ],
)
def test_known_providers_resolve_to_the_wrapped_client(
    spec: str,
    url: str,
    key_env: tuple[str, ...] | None,
    required: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_BASE_URL", "OLLAMA_BASE_URL", "VLLM_BASE_URL", "LMSTUDIO_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    cached, reliable, client = _layers(resolve_model(spec))
    prefix, _, name = spec.partition("/")
    assert client.model_id == name and client.provider == prefix
    assert client.base_url == url
    assert client.require_api_key is required
    if key_env is not None:
        assert client.api_key_env == key_env
    assert cached.policy == "read-write" and isinstance(cached.cache, SQLiteModelCache)
    assert reliable.policy.max_attempts == 6 and reliable.policy.total_timeout_s == 120


def test_all_required_prefixes_are_registered() -> None:
    expected = {
        "openai",
        "ollama",
        "vllm",
        "lmstudio",
        "openrouter",
        "together",
        "groq",
        "anthropic",
        "google",
        "gemini",
        "openai-compatible",
        "azure",
    }
    assert expected <= set(known_providers())
    assert expected <= set(PROVIDERS)


def test_structured_output_levels_per_provider() -> None:
    anthropic = _layers(resolve_model("anthropic/claude-sonnet-4-0"))[2]
    google = _layers(resolve_model("google/gemini-2.5-flash"))[2]
    openai = _layers(resolve_model("openai/gpt-4o-mini"))[2]
    assert anthropic.structured_output_mode == "prompt"  # its compat layer ignores the format
    assert google.structured_output_mode == "json_schema"
    assert openai.structured_output_mode == "strict"
    assert openai.max_tokens_param == "max_completion_tokens"
    assert anthropic.max_tokens_param == "max_tokens"


def test_same_string_same_object_until_the_environment_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = resolve_model("vllm/qwen")
    assert resolve_model("vllm/qwen") is first
    monkeypatch.setenv("VLLM_BASE_URL", "http://gpu-box:9000/v1")
    moved = resolve_model("vllm/qwen")
    assert moved is not first and _layers(moved)[2].base_url == "http://gpu-box:9000/v1"
    explicit = resolve_model("vllm/qwen", base_url="http://other:1/v1/")
    assert _layers(explicit)[2].base_url == "http://other:1/v1"  # explicit beats the variable
    monkeypatch.setenv("ASSAY_CACHE", "off")
    uncached = resolve_model("vllm/qwen")
    assert isinstance(uncached, CachedModel) and uncached.policy == "off"


def test_openai_compatible_needs_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSAY_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="ASSAY_BASE_URL"):
        resolve_model("openai-compatible/my-model")
    monkeypatch.setenv("ASSAY_BASE_URL", "http://127.0.0.1:5/v1")
    assert _layers(resolve_model("openai-compatible/my-model"))[2].base_url == (
        "http://127.0.0.1:5/v1"
    )


async def test_openai_compatible_string_talks_to_the_server(
    server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_API_KEY", "local-secret")
    model = resolve_model("openai-compatible/judge-7b", base_url=server.base_url)
    first = await model.generate(MESSAGES, settings=ModelSettings(temperature=0))
    second = await model.generate(MESSAGES, settings=ModelSettings(temperature=0))
    assert (first.cached, second.cached) == (False, True)
    (request,) = server.chat_requests
    assert request.body is not None and request.body["model"] == "judge-7b"
    assert request.headers["authorization"] == "Bearer local-secret"


async def test_missing_key_is_reported_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    model = resolve_model("groq/llama-3.1-8b-instant")  # building needs no key
    with pytest.raises(MissingAPIKeyError, match="GROQ_API_KEY"):
        await model.generate(MESSAGES, settings=ModelSettings(temperature=0))
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        await resolve_model("google/gemini-2.0-flash").generate(MESSAGES)


def test_unknown_provider_still_suggests() -> None:
    with pytest.raises(UnknownModelError, match="did you mean 'openai'"):
        resolve_model("opnai/gpt-4o")


def test_lazy_model_resolves_on_first_use(server: MockOpenAIServer) -> None:
    lazy = LazyModel("openai-compatible/x", base_url=server.base_url)
    assert lazy.provider == "openai-compatible" and lazy.model_id == "x"
    assert _layers(lazy.resolve())[2].base_url == server.base_url
    broken = LazyModel("nope/x")  # no error until used
    with pytest.raises(UnknownModelError):
        broken.resolve()


def test_a_used_lazy_model_pickles_as_its_string_and_the_copy_calls_again(
    server: MockOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a Ray worker receives: the string and base URL, never this process's client,
    cache database or limiter (which cannot be pickled at all)."""
    monkeypatch.setenv("ASSAY_CACHE", "off")
    lazy = LazyModel("openai-compatible/x", base_url=server.base_url)
    messages = [ChatMessage(role="user", content="hi")]
    asyncio.run(lazy.generate(messages, settings=ModelSettings(temperature=0.0)))
    with pytest.raises(TypeError):
        pickle.dumps(lazy.resolve())
    copy = pickle.loads(pickle.dumps(lazy))
    assert copy == lazy and copy._resolved is None
    asyncio.run(copy.generate(messages, settings=ModelSettings(temperature=0.0)))
    assert len(server.chat_requests) == 2


def test_shippable_model_fails_now_and_ships_as_its_string(server: MockOpenAIServer) -> None:
    with pytest.raises(UnknownModelError):
        shippable_model("nope/x")
    shipped = shippable_model("openai-compatible/x", base_url=server.base_url)
    assert isinstance(shipped, LazyModel) and shipped._resolved is not None
    assert pickle.loads(pickle.dumps(shipped)) == shipped
    given = OpenAICompatibleModel("x", base_url=server.base_url)
    assert shippable_model(given) is given


def test_import_assay_does_not_import_the_sdk_or_providers() -> None:
    code = (
        "import sys, assay; print('openai' in sys.modules, 'assay.models.providers' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False", "False"]


def test_a_provider_prefix_is_registered_once(server: MockOpenAIServer) -> None:
    from assay.models.resolve import MODEL_PROVIDERS, register_model_provider
    from assay.registry import DuplicateNameError

    with pytest.raises(DuplicateNameError, match="'openai' is already registered by built-in"):
        register_model_provider("openai", lambda name: resolve_model("openai/" + name))

    def build(name: str) -> OpenAICompatibleModel:
        return OpenAICompatibleModel(name, base_url=server.base_url, provider="mine")

    register_model_provider("mine-test", build)
    try:
        model = resolve_model("mine-test/m1")
        assert isinstance(model, OpenAICompatibleModel) and model.model_id == "m1"
        assert "mine-test" in known_providers()
    finally:
        MODEL_PROVIDERS.unregister("mine-test")


def test_provider_plugins_come_from_the_assay_models_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from assay.models.resolve import MODEL_PROVIDERS

    (tmp_path / "assay_models_plugin.py").write_text(
        "from assay.testing.scripted import ScriptedModel\n"
        "def build(name):\n"
        "    return ScriptedModel(['hi'], name=name)\n"
    )
    dist = tmp_path / "assay_models_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: assay-models-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[assay.models]\nscripted-test = assay_models_plugin:build\n"
        "openai = assay_models_plugin:build\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    MODEL_PROVIDERS.reload_plugins()
    try:
        assert resolve_model("scripted-test/echo").model_id == "echo"
        # a plugin never takes a built-in prefix
        assert isinstance(resolve_model("openai/gpt-4o-mini"), CachedModel)
        assert "name 'openai' is taken by 'openai' (built-in)" in caplog.text
    finally:
        MODEL_PROVIDERS.unregister("scripted-test")


@pytest.fixture
def azure_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    return monkeypatch


async def test_azure_sends_the_key_as_api_key_to_the_deployment_with_an_api_version(
    azure_env: pytest.MonkeyPatch,
) -> None:
    with MockOpenAIServer(api_key="az-secret") as server:
        endpoint = server.base_url.removesuffix("/v1")
        azure_env.setenv("AZURE_OPENAI_ENDPOINT", endpoint + "/")
        azure_env.setenv("AZURE_OPENAI_API_KEY", "az-secret")
        model = resolve_model("azure/my-gpt4o")
        client = _layers(model)[2]
        assert client.base_url == f"{endpoint}/openai/deployments/my-gpt4o"
        answer = await model.generate(MESSAGES, settings=ModelSettings(temperature=0))
        assert answer.text == "ok"
        (request,) = server.chat_requests
        assert request.path == "/openai/deployments/my-gpt4o/chat/completions"
        assert request.query == "api-version=2024-10-21"
        assert request.headers["api-key"] == "az-secret"
        assert "authorization" not in request.headers  # the key goes in one header only
        assert server.statuses[200] == 1

        azure_env.setenv("AZURE_OPENAI_API_VERSION", "2025-01-01-preview")
        azure_env.setenv("AZURE_OPENAI_API_KEY", "wrong")
        newer = resolve_model("azure/my-gpt4o")
        assert newer is not model  # another API version, another model
        with pytest.raises(ModelError, match="HTTP 401") as info:
            await _layers(newer)[2].generate(MESSAGES)
        assert "wrong" not in str(info.value)
        assert server.requests[-1].query == "api-version=2025-01-01-preview"


def test_azure_needs_an_endpoint_and_takes_a_deployment_url_as_it_is(
    azure_env: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT"):
        resolve_model("azure/my-gpt4o")
    full = "https://res.openai.azure.com/openai/deployments/other"
    assert _layers(resolve_model("azure/my-gpt4o", base_url=full))[2].base_url == full
    with pytest.raises(ValueError, match="deployment name"):
        resolve_model("azure/a?b", base_url="https://res.openai.azure.com")


async def test_azure_needs_its_key_at_call_time(azure_env: pytest.MonkeyPatch) -> None:
    model = resolve_model("azure/my-gpt4o", base_url="https://res.openai.azure.com")
    with pytest.raises(MissingAPIKeyError, match="AZURE_OPENAI_API_KEY"):
        await model.generate(MESSAGES)
