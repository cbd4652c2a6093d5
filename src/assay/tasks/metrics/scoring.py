"""Scoring one doc the v0.5 way: every metric over every repeat, before reduction.

``score_generation`` calls each metric with the doc's reference and its list of (filtered)
predictions and returns ``{key: [value per repeat]}`` (a ``MetricValues`` recording which
metric emitted each key); ``score_loglikelihood`` does the
same for an ``LLResults`` (one value per doc). ``reductions.reduce_scores`` then collapses
the repeats, and the aggregations combine the docs. This is the path for repeats, pass@k
and the diversity metrics; ``process.py`` is the v0.4 path (one filtered response per doc).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.tasks.metrics.loglikelihood import LLResults
from assay.tasks.metrics.process import MetricEntry, MetricValues
from assay.tasks.metrics.reductions import ReductionSpec
from assay.tasks.metrics.registry import TASK_METRICS


def _function(name: str, functions: Mapping[str, Callable[..., Any]] | None) -> Callable[..., Any]:
    custom = (functions or {}).get(name)
    return custom if custom is not None else TASK_METRICS.get(name).fn


def _accepted(fn: Callable[..., Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """The context kwargs ``fn`` declares (v0.5 passes only those)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return dict(context)
    return {k: v for k, v in context.items() if k in params}


def _as_lists(name: str, value: Any) -> dict[str, list[Any]]:
    if isinstance(value, Mapping):
        return {key: _listed(v) for key, v in value.items()}
    return {name: _listed(value)}


def _listed(value: Any) -> list[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | tuple):
        return list(value)
    return [value]


def score_generation(
    reference: Any,
    predictions: Sequence[Any],
    metrics: Sequence[MetricEntry],
    *,
    multiple_targets: bool = False,
    functions: Mapping[str, Callable[..., Any]] | None = None,
) -> MetricValues:
    """``{key: [value per prediction]}`` for one doc's predictions (a doc-level metric such as
    a diversity metric gives a one-element list)."""
    preds = list(predictions)
    if not preds:
        raise ValueError("a doc needs at least one prediction to score")
    out = MetricValues()
    for name, kwargs in metrics:
        fn = _function(name, functions)
        context = _accepted(fn, {"multiple_targets": multiple_targets}) if multiple_targets else {}
        for key, values in _as_lists(name, fn(reference, preds, **context, **kwargs)).items():
            if len(values) not in (1, len(preds)):
                raise ValueError(
                    f"metric {name!r} returned {len(values)} values for {len(preds)} predictions"
                )
            out.emit(key, values, name)
    return out


def score_loglikelihood(
    reference: Any,
    results: LLResults,
    metrics: Sequence[MetricEntry],
    *,
    multiple_targets: bool = False,
    functions: Mapping[str, Callable[..., Any]] | None = None,
) -> dict[str, list[Any]]:
    """``{metric: [value]}`` for one doc's loglikelihoods."""
    out: dict[str, list[Any]] = {}
    for name, kwargs in metrics:
        fn = _function(name, functions)
        context = _accepted(fn, {"multiple_targets": multiple_targets}) if multiple_targets else {}
        out[name] = [fn(reference, results, **context, **kwargs)]
    return out


def default_reductions(
    keys: Sequence[str], sources: Mapping[str, str] | None = None
) -> dict[str, ReductionSpec]:
    """Each key's default reduction: that of the registered metric that emitted it
    (``sources``, as ``MetricValues.sources`` records it). Unregistered metrics get none,
    so several values for them raise in ``reduce_scores``."""
    out: dict[str, ReductionSpec] = {}
    for name in keys:
        entry = TASK_METRICS.find((sources or {}).get(name, name))
        if entry is not None:
            out[name] = entry.reduction
    return out
