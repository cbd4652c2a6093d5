"""The ``custom`` filter: a task's own function, given as ``filter_fn: !function m.f``.

``filter_fn(resps, docs)`` receives every doc's entry at once and its result is used
unchanged (the pipeline still checks that it has one entry per doc).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import WithJsonSchema

from assay.tasks.filters.base import FilterParams
from assay.tasks.filters.registry import register_filter


@register_filter("custom")
class CustomFilter(FilterParams):
    """Apply ``filter_fn(resps, docs)`` to all responses at once."""

    filter_fn: Annotated[
        Callable[..., Any],
        WithJsonSchema({"type": "string", "description": "a !function reference"}),
    ]

    def apply(self, resps: list[Any], docs: Sequence[Mapping[str, Any]]) -> list[Any]:
        result: Any = self.filter_fn(resps, docs)
        return result  # type: ignore[no-any-return]
