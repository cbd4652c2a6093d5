"""Turn a model string such as ``"openai/gpt-4o-mini"`` into a ``Model``.

Providers register a factory under a prefix (the part before the first ``/``). The
network and local clients register themselves here; this module only does the lookup, so a
judge config can name its model as a string in YAML, the CLI or the API.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from assay.models.base import Model

ModelFactory = Callable[[str], Model]
"""Builds a model from the part of the model string after ``provider/``."""

_PROVIDERS: dict[str, ModelFactory] = {}


class UnknownModelError(ValueError):
    """A model string names a provider nobody registered."""


def register_model_provider(prefix: str, factory: ModelFactory) -> None:
    """Make ``prefix/<name>`` model strings resolve through ``factory``."""
    _PROVIDERS[prefix] = factory


def resolve_model(spec: str | Model) -> Model:
    """Return ``spec`` if it is already a model, else build it from its provider prefix."""
    if not isinstance(spec, str):
        return spec
    prefix, sep, name = spec.partition("/")
    if not sep or not name:
        raise UnknownModelError(
            f"model {spec!r}: expected 'provider/model' (for example 'openai/gpt-4o-mini')"
        )
    factory = _PROVIDERS.get(prefix)
    if factory is None:
        known = sorted(_PROVIDERS)
        hint = difflib.get_close_matches(prefix, known, n=1)
        did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
        listing = ", ".join(known) if known else "none registered"
        raise UnknownModelError(
            f"model {spec!r}: unknown provider {prefix!r}{did_you_mean} (known: {listing})"
        )
    return factory(name)


def known_providers() -> list[str]:
    return sorted(_PROVIDERS)
