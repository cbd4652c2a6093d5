"""Turn a model string such as ``"openai/gpt-4o-mini"`` into a ``Model``.

Providers register a factory under a prefix (the part before the first ``/``). The
network and local clients register themselves here; this module only does the lookup, so a
judge config can name its model as a string in YAML, the CLI or the API.

The built-in providers (``assay.models.providers``: openai, ollama, vllm, lmstudio,
openrouter, together, groq, anthropic, google/gemini, openai-compatible) are imported on the
first resolution, not at ``import assay``, and never replace a prefix registered before
them. A string resolves to ``CachedModel(ReliableModel(OpenAICompatibleModel))``; the
environment variables that shape it: ``ASSAY_CACHE`` (``read-write`` default, ``read-only``,
``off``), ``ASSAY_CACHE_PATH`` (default ``.assay/cache.db``), ``ASSAY_BASE_URL`` /
``ASSAY_API_KEY`` (for ``openai-compatible/...``) and each provider's key variable.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any

from assay.models.base import ChatMessage, Model, ModelResponse, ModelSettings

ModelFactory = Callable[..., Model]
"""Builds a model from the part of the model string after ``provider/``; factories that
accept a ``base_url`` keyword can be pointed at another endpoint."""

_PROVIDERS: dict[str, ModelFactory] = {}
_BUILTINS_LOADED = False


class UnknownModelError(ValueError):
    """A model string names a provider nobody registered."""


def register_model_provider(prefix: str, factory: ModelFactory, *, replace: bool = True) -> None:
    """Make ``prefix/<name>`` model strings resolve through ``factory``.

    ``replace=False`` keeps an existing registration (how built-ins register).
    """
    if not replace and prefix in _PROVIDERS:
        return
    _PROVIDERS[prefix] = factory


def _load_builtin_providers() -> None:
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        # "local/smollm2" (the embedded model; xllamacpp itself is imported on first use)
        import assay.models.local
        import assay.models.providers  # noqa: F401  (registers on import)


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
    _load_builtin_providers()
    factory = _PROVIDERS.get(prefix)
    if factory is None:
        known = sorted(_PROVIDERS)
        hint = difflib.get_close_matches(prefix, known, n=1)
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
    _load_builtin_providers()
    return sorted(_PROVIDERS)


class LazyModel:
    """A model string (plus base URL) resolved on the first call.

    Lets configuration carry ``provider/model`` + ``base_url`` without resolving (or failing
    on an unknown provider) before a judge step actually runs. Its ``provider``/``model_id``
    are the string's parts, so fingerprints match the plain string's.
    """

    def __init__(self, spec: str, *, base_url: str | None = None) -> None:
        prefix, _, name = spec.partition("/")
        self.spec = spec
        self.base_url = base_url
        self._prefix = prefix
        self._name = name or spec
        self._resolved: Model | None = None

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

    def __repr__(self) -> str:
        where = f" at {self.base_url}" if self.base_url else ""
        return f"LazyModel({self.spec}{where})"
