"""What a model wrapper passes through from the model it wraps.

``CachedModel`` and ``ReliableModel`` each wrap an ``inner`` model and must look like it
(``model_id``, ``provider``, ``base_url``, ``cache_identity``): the cache key, the
endpoint's limiter and the judge-call records are made from these. One definition here
instead of a copy in each wrapper keeps them from drifting apart.
"""

from __future__ import annotations

from typing import Any

from assay.models.base import Model


class PassThrough:
    """Mixin for a wrapper with an ``inner`` model: its identity is the inner model's."""

    inner: Model

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def provider(self) -> str | None:
        return self.inner.provider

    @property
    def base_url(self) -> str | None:
        value = getattr(self.inner, "base_url", None)
        return value if isinstance(value, str) else None

    @property
    def cache_identity(self) -> dict[str, Any]:
        value = getattr(self.inner, "cache_identity", None)
        return dict(value) if isinstance(value, dict) else {}
