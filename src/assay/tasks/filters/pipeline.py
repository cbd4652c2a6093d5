"""Running one named filter pipeline (a ``filter_list`` entry) over a task's responses.

lm-eval builds every step's filter afresh for each pipeline run and feeds each step the
previous step's output. Here the steps are all built first, so a bad kwarg in step 3 is
reported before step 1 touches any response; then they run in order. After every step the
pipeline checks the filter contract (one entry per doc, in order) and turns lazy results
(lm-eval filters may return ``map`` objects or generators) into lists, so a filter that
drops or adds docs fails loudly instead of silently shifting every later doc's score.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from assay.tasks.filters.base import Filter, FilterError, describe
from assay.tasks.filters.registry import build_filter

FilterStep = tuple[str | Callable[..., Any], Mapping[str, Any] | None]
"""A ``filter_list`` step: the filter's name (or a resolved ``!function``) and its kwargs."""

DEFAULT_FILTER_STEPS: tuple[FilterStep, ...] = (("take_first", {}),)
"""lm-eval's pipeline ``"none"``, used when a task has no ``filter_list``."""


def apply_filter_pipeline(
    steps: Sequence[FilterStep],
    resps: Sequence[Any],
    docs: Sequence[Mapping[str, Any]],
) -> list[Any]:
    """The filtered responses, one entry per doc: every step built fresh, then chained.

    Raises ``FilterConfigError`` for a step that cannot be built and ``FilterError`` (naming
    the step) when a step fails or breaks the one-entry-per-doc contract.
    """
    current = list(resps)
    doc_list = list(docs)
    if len(current) != len(doc_list):
        raise FilterError(
            f"filter pipeline got {len(current)} response entries for {len(doc_list)} docs; "
            "it needs one entry (the list of repeats) per doc"
        )
    built = [
        (_step_label(index, function), build_filter(function, kwargs))
        for index, (function, kwargs) in enumerate(steps)
    ]
    for label, step in built:
        current = _run_step(label, step, current, doc_list)
    return current


def _run_step(
    label: str, step: Filter, resps: list[Any], docs: list[Mapping[str, Any]]
) -> list[Any]:
    try:
        result: object = step.apply(resps, docs)
    except FilterError as exc:
        raise FilterError(f"{label}: {exc}") from exc
    except Exception as exc:  # a third-party filter's own error, with the step named
        raise FilterError(f"{label} failed: {type(exc).__name__}: {exc}") from exc
    if isinstance(result, str | bytes | Mapping) or not isinstance(result, Iterable):
        raise FilterError(
            f"{label} returned {describe(result)}; a filter must return one entry per doc"
        )
    out: list[Any] = list(result)
    if len(out) != len(docs):
        raise FilterError(
            f"{label} returned {len(out)} entries for {len(docs)} docs; "
            "a filter must return one entry per doc, in order"
        )
    return out


def _step_label(index: int, function: object) -> str:
    name = function if isinstance(function, str) else getattr(function, "__qualname__", "?")
    return f"filter step {index + 1} ({name})"
