"""Built-in providers: model strings ``provider/model`` for OpenAI-compatible endpoints.

Importing this module registers every prefix below with ``register_model_provider``
(``resolve_model`` imports it on first use, so ``import assay`` does not pay for it).
A resolved model is ``CachedModel(ReliableModel(OpenAICompatibleModel(...)))`` with the
defaults of ``assay.models.cache`` and ``assay.models.reliability``; the same string in the
same environment resolves to the same object, so its HTTP connections, its endpoint's
adaptive limit and its counters are shared by every scorer that names it.

=================  =========================================  ==================================
prefix             default base URL (override variable)       API key variable
=================  =========================================  ==================================
openai             https://api.openai.com/v1                  OPENAI_API_KEY (required)
                   (OPENAI_BASE_URL)
ollama             http://localhost:11434/v1                  OLLAMA_API_KEY (optional)
                   (OLLAMA_BASE_URL)
vllm               http://localhost:8000/v1 (VLLM_BASE_URL)   VLLM_API_KEY (optional)
lmstudio           http://localhost:1234/v1                   LMSTUDIO_API_KEY (optional)
                   (LMSTUDIO_BASE_URL)
openrouter         https://openrouter.ai/api/v1               OPENROUTER_API_KEY
together           https://api.together.xyz/v1                TOGETHER_API_KEY
groq               https://api.groq.com/openai/v1             GROQ_API_KEY
anthropic          https://api.anthropic.com/v1/              ANTHROPIC_API_KEY
google, gemini     https://generativelanguage.googleapis.com  GEMINI_API_KEY or GOOGLE_API_KEY
                   /v1beta/openai/
openai-compatible  none: ``base_url=`` or ASSAY_BASE_URL      ASSAY_API_KEY (optional)
azure              AZURE_OPENAI_ENDPOINT (``base_url=``)      AZURE_OPENAI_API_KEY (required)
                   + /openai/deployments/DEPLOYMENT
=================  =========================================  ==================================

Azure OpenAI (``azure/DEPLOYMENT``): the model name is the *deployment* name; requests go to
``{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...`` with the key
in an ``api-key`` header (not ``Authorization: Bearer``). The endpoint is the resource's
URL (``https://NAME.openai.azure.com``) from ``base_url=`` or ``AZURE_OPENAI_ENDPOINT``; a
URL that already holds ``/openai/deployments/`` is used as it is. The API version comes from
``AZURE_OPENAI_API_VERSION`` (or ``OPENAI_API_VERSION``, the SDK's variable), else
``AZURE_DEFAULT_API_VERSION``. Structured output is ``strict`` and the token limit is sent
as ``max_completion_tokens``, as for OpenAI.

Anything else that speaks the OpenAI chat-completions protocol (llama.cpp / xllamacpp
servers, TGI, LiteLLM proxies, an internal gateway) is reached in one of two ways:

- ``openai-compatible/MODEL`` with the URL from ``resolve_model(spec, base_url=...)`` (for
  judge scorers: the ``base_url`` param) or else the ``ASSAY_BASE_URL`` variable, and the
  key, if the server wants one, from ``ASSAY_API_KEY``;
- any known prefix with ``base_url=`` to move it (``vllm/qwen2`` on another host): the
  explicit URL beats the provider's variable, which beats its default.

For judge scorers, ``ASSAY_JUDGE_BASE_URL`` goes with ``ASSAY_JUDGE_MODEL``: when the judge
model comes from that variable, the judge's base URL comes from this one (see
``assay.scorers._lib.judge_common``).

Structured output per provider: ``strict`` JSON-schema ``response_format`` everywhere
except Anthropic (its compatibility layer ignores ``response_format``: the schema goes in the
prompt) and Google (non-strict ``json_schema``); refusals fall back as described in
``assay.models.openai_compat``. OpenAI gets ``max_completion_tokens``, the others
``max_tokens``.

Missing required keys fail at call time with ``MissingAPIKeyError`` naming the variable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial

from assay.models.base import Model
from assay.models.cache import CachedModel, cache_policy_from_env, default_cache, default_cache_path
from assay.models.env_keys import env_keys_allowed
from assay.models.openai_compat import (
    AuthHeader,
    MaxTokensParam,
    OpenAICompatibleModel,
    StructuredOutputMode,
    normalize_base_url,
)
from assay.models.reliability import ReliableModel
from assay.models.resolve import register_model_provider

BASE_URL_ENV = "ASSAY_BASE_URL"
API_KEY_ENV = "ASSAY_API_KEY"
AZURE_API_VERSION_ENV = ("AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION")
AZURE_DEFAULT_API_VERSION = "2024-10-21"
"""The latest generally available Azure OpenAI data-plane API version when this was
written; set ``AZURE_OPENAI_API_VERSION`` for a newer (or preview) one."""


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """How to reach one provider's OpenAI-compatible endpoint."""

    name: str
    base_url: str | None
    base_url_env: tuple[str, ...] = ()
    api_key_env: tuple[str, ...] = ()
    key_required: bool = True
    structured_output: StructuredOutputMode = "strict"
    max_tokens_param: MaxTokensParam = "max_tokens"
    auth: AuthHeader = "bearer"
    deployments: bool = False
    """Azure-style: the model name is a deployment in the URL, and ``api-version`` goes in
    the query."""


_GOOGLE = ProviderSpec(
    "google",
    "https://generativelanguage.googleapis.com/v1beta/openai/",
    api_key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    structured_output="json_schema",
)

PROVIDERS: dict[str, ProviderSpec] = {
    "openai": ProviderSpec(
        "openai",
        "https://api.openai.com/v1",
        ("OPENAI_BASE_URL",),
        ("OPENAI_API_KEY",),
        max_tokens_param="max_completion_tokens",
    ),
    "ollama": ProviderSpec(
        "ollama", "http://localhost:11434/v1", ("OLLAMA_BASE_URL",), ("OLLAMA_API_KEY",), False
    ),
    "vllm": ProviderSpec(
        "vllm", "http://localhost:8000/v1", ("VLLM_BASE_URL",), ("VLLM_API_KEY",), False
    ),
    "lmstudio": ProviderSpec(
        "lmstudio",
        "http://localhost:1234/v1",
        ("LMSTUDIO_BASE_URL",),
        ("LMSTUDIO_API_KEY",),
        False,
    ),
    "openrouter": ProviderSpec(
        "openrouter", "https://openrouter.ai/api/v1", api_key_env=("OPENROUTER_API_KEY",)
    ),
    "together": ProviderSpec(
        "together", "https://api.together.xyz/v1", api_key_env=("TOGETHER_API_KEY",)
    ),
    "groq": ProviderSpec("groq", "https://api.groq.com/openai/v1", api_key_env=("GROQ_API_KEY",)),
    "anthropic": ProviderSpec(
        "anthropic",
        "https://api.anthropic.com/v1/",
        api_key_env=("ANTHROPIC_API_KEY",),
        structured_output="prompt",
    ),
    "google": _GOOGLE,
    "gemini": _GOOGLE,
    "openai-compatible": ProviderSpec(
        "openai-compatible", None, (BASE_URL_ENV,), (API_KEY_ENV,), False
    ),
    "azure": ProviderSpec(
        "azure",
        None,
        ("AZURE_OPENAI_ENDPOINT",),
        ("AZURE_OPENAI_API_KEY",),
        max_tokens_param="max_completion_tokens",
        auth="api-key",
        deployments=True,
    ),
}


def provider_base_url(prefix: str, base_url: str | None = None) -> str:
    """The base URL a model string of ``prefix`` talks to (explicit > env > default)."""
    spec = PROVIDERS[prefix]
    url = base_url or next((os.environ[v] for v in spec.base_url_env if os.environ.get(v)), None)
    url = url or spec.base_url
    if not url:
        envs = " or ".join(spec.base_url_env)
        raise ValueError(
            f"{prefix}/... models need a base URL: pass base_url= (judge scorers: the "
            f"'base_url' param or ASSAY_JUDGE_BASE_URL) or set {envs}"
        )
    return normalize_base_url(url)


def deployment_url(endpoint: str, deployment: str) -> str:
    """Azure's base URL of one deployment: ``{endpoint}/openai/deployments/{deployment}``
    (an endpoint that already names a deployment is kept)."""
    if "/openai/deployments/" in endpoint:
        return endpoint
    if not deployment or any(c in deployment for c in "/?#% "):
        raise ValueError(f"azure/{deployment}: a deployment name cannot hold '/', '?', '#', '%'")
    return f"{endpoint}/openai/deployments/{deployment}"


def azure_api_version() -> str:
    """``AZURE_OPENAI_API_VERSION``, else ``OPENAI_API_VERSION``, else the default."""
    found = (os.environ.get(v, "").strip() for v in AZURE_API_VERSION_ENV)
    return next((v for v in found if v), AZURE_DEFAULT_API_VERSION)


def wrap_default(inner: Model) -> CachedModel:
    """``CachedModel(ReliableModel(inner))`` with the environment's cache policy."""
    policy = cache_policy_from_env()
    reliable = ReliableModel(inner)
    if policy == "off":
        return CachedModel(reliable, policy="off")
    return CachedModel(reliable, cache=default_cache(), policy=policy)


_MEMO: dict[tuple[str, ...], CachedModel] = {}


def build_model(prefix: str, name: str, *, base_url: str | None = None) -> Model:
    """The default-wrapped model for ``prefix/name`` (memoised per environment). An
    explicit ``base_url`` gets the provider's key variables only when the active guard
    allows it (``assay.models.env_keys``; no guard: always)."""
    spec = PROVIDERS[prefix]
    url = provider_base_url(prefix, base_url)
    env_keys = base_url is None or env_keys_allowed(url)
    query: dict[str, str] = {}
    if spec.deployments:
        url = deployment_url(url, name)
        query["api-version"] = azure_api_version()
    policy = cache_policy_from_env()
    cache_path = "" if policy == "off" else str(default_cache_path())
    memo_key = (prefix, name, url, *query.values(), policy, cache_path, str(env_keys))
    model = _MEMO.get(memo_key)
    if model is None:
        inner = OpenAICompatibleModel(
            name,
            base_url=url,
            provider=prefix,
            structured_output=spec.structured_output,
            api_key_env=spec.api_key_env if env_keys else (),
            require_api_key=spec.key_required and env_keys,
            max_tokens_param=spec.max_tokens_param,
            auth=spec.auth,
            query=query,
        )
        model = _MEMO[memo_key] = wrap_default(inner)
    return model


def reset_resolved_models() -> None:
    """Forget memoised models (tests)."""
    _MEMO.clear()


for _prefix in PROVIDERS:
    register_model_provider(_prefix, partial(build_model, _prefix), replace=False)
