"""Turn a model string such as ``"openai/gpt-4o-mini"`` into a ``Model``.

Providers register a factory under a prefix (the part before the first ``/``) in the
``MODEL_PROVIDERS`` registry (an ``assay.registry.Registry``: entry-point group
``assay.models``, "did you mean" for unknown prefixes, a taken prefix raises unless
``replace=True``). The network and local clients register themselves here; this module only
does the lookup, so a judge config can name its model as a string in YAML, the CLI or the API.

The built-in providers (``assay.models.providers``: openai, ollama, vllm, lmstudio,
openrouter, together, groq, anthropic, google/gemini, openai-compatible; and ``local``) are
imported on the first resolution or registration, not at ``import assay``. A string
resolves to ``CachedModel(ReliableModel(OpenAICompatibleModel))``; the environment variables
that shape it: ``ASSAY_CACHE`` (``read-write`` default, ``read-only``, ``off``),
``ASSAY_CACHE_PATH`` (default ``.assay/cache.db``), ``ASSAY_BASE_URL`` /
``ASSAY_API_KEY`` (for ``openai-compatible/...``) and each provider's key variable.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from assay.extras import require_extra
from assay.models.base import (
    ChatMessage,
    Loglikelihood,
    LoglikelihoodModel,
    Model,
    ModelResponse,
    ModelSettings,
    RollingLoglikelihoodModel,
    unsupported,
)
from assay.registry import Registry, UnknownNameError

LOCAL_PREFIX = "local"
"""The embedded model's provider prefix (``local/smollm2``; needs the ``local`` extra)."""

ModelFactory = Callable[..., Model]
"""Builds a model from the part of the model string after ``provider/``; factories that
accept a ``base_url`` keyword can be pointed at another endpoint."""


class UnknownModelError(UnknownNameError):
    """A model string is malformed or names a provider nobody registered."""


def _is_factory(obj: object) -> TypeGuard[ModelFactory]:
    return callable(obj)


MODEL_PROVIDERS: Registry[ModelFactory] = Registry(
    "model provider",
    accepts=_is_factory,
    group="assay.models",
    builtins=("assay.models.local", "assay.models.providers"),
    unknown_error=UnknownModelError,
)
"""Model providers by prefix (rules: ``assay.registry``). Built-ins: ``local`` (the embedded
model; xllamacpp itself is imported on first use) and the OpenAI-compatible providers of
``assay.models.providers``. A plugin's entry point in the group ``assay.models`` names a
factory, registered under the entry point's name (``myco = myco_assay:build_model`` makes
``myco/NAME`` resolve through ``build_model("NAME")``), or a module that calls
``register_model_provider`` when imported; it never replaces a built-in prefix."""


def register_model_provider(prefix: str, factory: ModelFactory, *, replace: bool = False) -> None:
    """Make ``prefix/<name>`` model strings resolve through ``factory``.

    A prefix that is taken (a built-in, or one registered before) raises
    ``DuplicateNameError`` unless ``replace=True``.
    """
    MODEL_PROVIDERS.register(factory, name=prefix, aliases=(), replace=replace)


def _accepts_base_url(factory: ModelFactory) -> bool:
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "base_url" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def resolve_model(spec: str | Model, *, base_url: str | None = None) -> Model:
    """Return ``spec`` if it is already a model, else build it from its provider prefix.

    ``base_url`` points the provider at another endpoint (see ``assay.models.providers``).
    """
    if not isinstance(spec, str):
        return spec
    prefix, sep, name = spec.partition("/")
    if not sep or not name:
        raise UnknownModelError(
            f"model {spec!r}: expected 'provider/model' (for example 'openai/gpt-4o-mini')"
        )
    factory = MODEL_PROVIDERS.find(prefix)
    if factory is None:
        known = MODEL_PROVIDERS.names()
        hint = MODEL_PROVIDERS.suggest(prefix, n=1)
        did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
        listing = ", ".join(known) if known else "none registered"
        raise UnknownModelError(
            f"model {spec!r}: unknown provider {prefix!r}{did_you_mean} (known: {listing})"
        )
    if base_url is None:
        return factory(name)
    if not _accepts_base_url(factory):
        raise UnknownModelError(f"model {spec!r}: provider {prefix!r} does not take a base_url")
    return factory(name, base_url=base_url)


def known_providers() -> list[str]:
    return MODEL_PROVIDERS.names()


class LazyModel:
    """A model string (plus base URL) resolved on the first call.

    Lets configuration carry ``provider/model`` + ``base_url`` without resolving (or failing
    on an unknown provider) before a judge step actually runs; it is what a model string in a
    ``JudgeConfig`` becomes. Its ``provider``/``model_id`` are the string's parts, so
    ``provider/model_id`` is the string itself and fingerprints match the plain string's. Two
    lazy models of the same string and base URL are equal.
    """

    def __init__(self, spec: str, *, base_url: str | None = None) -> None:
        prefix, sep, name = spec.partition("/")
        self.spec = spec
        self.base_url = base_url
        self._prefix = prefix if sep else ""
        self._name = name if sep else spec
        self._resolved: Model | None = None
        if self._prefix == LOCAL_PREFIX:
            # the embedded model's extra is checked where the string is configured (a judge
            # scorer being built), so a missing one is one line before a run, not an error
            # in every judge step's result
            require_extra("local", f"the embedded model {spec!r}")
        elif self._prefix:
            # every other built-in provider is an HTTP endpoint: its client's import starts
            # now, in a thread, and overlaps the rest of the run's start-up (a plugin's
            # provider that does not use it only costs that background import)
            from assay.models.http import warm_transport_imports

            warm_transport_imports()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LazyModel):
            return NotImplemented
        return (self.spec, self.base_url) == (other.spec, other.base_url)

    def __hash__(self) -> int:
        return hash((LazyModel, self.spec, self.base_url))

    @property
    def model_id(self) -> str:
        return self._name

    @property
    def provider(self) -> str | None:
        return self._prefix or None

    def resolve(self) -> Model:
        if self._resolved is None:
            self._resolved = resolve_model(self.spec, base_url=self.base_url)
        return self._resolved

    async def generate(
        self,
        messages: list[ChatMessage],
        *,
        schema: dict[str, Any] | None = None,
        settings: ModelSettings | None = None,
    ) -> ModelResponse:
        return await self.resolve().generate(messages, schema=schema, settings=settings)

    async def loglikelihood(
        self,
        requests: Sequence[tuple[str, str]],
        *,
        settings: ModelSettings | None = None,
    ) -> list[Loglikelihood]:
        model = self.resolve()
        if not isinstance(model, LoglikelihoodModel):
            raise unsupported(model, "loglikelihood")
        return await model.loglikelihood(requests, settings=settings)

    async def loglikelihood_rolling(
        self, text: str, *, settings: ModelSettings | None = None
    ) -> float:
        model = self.resolve()
        if not isinstance(model, RollingLoglikelihoodModel):
            raise unsupported(model, "loglikelihood_rolling")
        return await model.loglikelihood_rolling(text, settings=settings)

    def __repr__(self) -> str:
        where = f" at {self.base_url}" if self.base_url else ""
        return f"LazyModel({self.spec}{where})"

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its string: the resolved model (HTTP clients, the cache's database,
        the endpoint's limiter) belongs to this process; another (a Ray worker) resolves
        the string again on its first call."""
        return {**self.__dict__, "_resolved": None}


def shippable_model(spec: str | Model, *, base_url: str | None = None) -> Model:
    """``resolve_model``, checked now (an unknown provider or a bad base URL fails here),
    but for a model string a ``LazyModel`` that pickles as its string: what a target
    holds, so a Ray worker can be sent the target and build its own client."""
    if not isinstance(spec, str):
        return spec
    model = LazyModel(spec, base_url=base_url)
    model.resolve()
    return model
