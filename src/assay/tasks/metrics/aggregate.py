"""From per-doc values to a task's result keys, and from tasks to groups (lm-eval 0.4.13).

``aggregate_metrics`` is lm-eval's ``_compute_task_aggregations``: every (metric, filter)
series is aggregated into ``"<metric>,<filter>"`` with its stderr under
``"<metric>_stderr,<filter>"`` (``None`` where lm-eval writes ``"N/A"``). A metric without a
known aggregation falls back to ``mean`` with a warning, as in lm-eval.

``aggregate_group`` is a group's ``aggregate_metric_list`` entry over its *leaf* tasks: a
size-weighted (micro) or plain (macro) mean of the subtask values, with the pooled-variance
stderr for the weighted mean and ``unweighted_mean_stderr`` for the plain one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.tasks.metrics.registry import TASK_AGGREGATIONS, TASK_METRICS
from assay.tasks.metrics.stderr import (
    pooled_sample_stderr,
    stderr_for,
    unweighted_mean_stderr,
)

log = logging.getLogger(__name__)

AggregationSpec = str | Callable[[list[Any]], Any]
"""An aggregation by registered name, or a plain callable (a YAML ``!function``)."""


def resolve_aggregation(
    metric: str, spec: AggregationSpec | None
) -> tuple[str, Callable[..., Any]]:
    """The (name, function) that aggregates ``metric``: ``spec`` when given, else the
    registered metric's default, else ``mean`` (logged, as lm-eval does)."""
    if callable(spec):
        return getattr(spec, "__name__", "custom"), spec
    name = spec
    if name is None:
        registered = TASK_METRICS.find(metric)
        if registered is None:
            log.warning("no aggregation defined for metric %r; using mean", metric)
            name = "mean"
        else:
            name = registered.aggregation
    entry = TASK_AGGREGATIONS.get(name)
    return entry.name, entry.fn


def aggregate_metrics(
    raw_metrics: Mapping[tuple[str, str], Sequence[Any]],
    aggregations: Mapping[str, AggregationSpec] | None = None,
    *,
    bootstrap_iters: int | None = 100_000,
) -> dict[str, Any]:
    """Aggregate ``{(metric, filter): per-doc values}`` into lm-eval's result keys, plus
    ``sample_len`` (the number of docs of the longest series).

    ``aggregations`` maps metric names to an aggregation name or callable; metrics not in
    it use their registered default (unknown metrics: mean). A custom callable has no
    stderr (lm-eval: ``"N/A"``)."""
    out: dict[str, Any] = {}
    sample_len = 0
    for (metric, filter_key), values in raw_metrics.items():
        items = list(values)
        name, fn = resolve_aggregation(metric, (aggregations or {}).get(metric))
        out[f"{metric},{filter_key}"] = fn(items)
        sample_len = max(sample_len, len(items))
        custom = callable((aggregations or {}).get(metric))
        out[f"{metric}_stderr,{filter_key}"] = (
            None
            if custom
            else stderr_for(name, items, bootstrap_iters=bootstrap_iters, metric=metric)
        )
    out["sample_len"] = sample_len
    return out


def aggregate_subtasks(
    values: Sequence[float], sizes: Sequence[int], *, weight_by_size: bool = True
) -> float:
    """The group value: the size-weighted mean of subtask values (micro), or their plain
    mean (macro) when ``weight_by_size`` is false."""
    if len(values) != len(sizes):
        raise ValueError(f"{len(values)} subtask values but {len(sizes)} sizes")
    if not values:
        raise ValueError("a group needs at least one subtask value")
    weights = list(sizes) if weight_by_size else [1] * len(sizes)
    total = sum(weights)
    if total == 0:
        raise ValueError("the subtasks' sizes sum to 0; a size-weighted mean is undefined")
    return float(sum([v * w for v, w in zip(values, weights, strict=True)]) / total)


@dataclass(frozen=True, slots=True)
class GroupAggregate:
    """One ``"<metric>,<filter>"`` of a group: the value, its stderr (``None`` when a leaf
    has none), the total docs, and which leaves had the metric."""

    value: float
    stderr: float | None
    sample_len: int
    tasks: tuple[str, ...]


def aggregate_group(
    leaf_results: Mapping[str, Mapping[str, Any]],
    metric_key: str,
    *,
    weight_by_size: bool = True,
) -> GroupAggregate | None:
    """Aggregate ``metric_key`` (``"acc,none"``) over a group's leaf tasks.

    ``leaf_results`` maps each leaf task to its result keys (as ``aggregate_metrics``
    returns them, with ``sample_len``). Leaves without the metric are skipped with a
    warning; ``None`` when no leaf has it."""
    metric, _, filter_key = metric_key.partition(",")
    stderr_key = f"{metric}_stderr,{filter_key}"
    values: list[float] = []
    sizes: list[int] = []
    stderrs: list[float | None] = []
    tasks: list[str] = []
    for task, result in leaf_results.items():
        if metric_key not in result:
            continue
        values.append(result[metric_key])
        sizes.append(int(result.get("sample_len", 0)))
        leaf_stderr = result.get(stderr_key)
        stderrs.append(None if leaf_stderr == "N/A" else leaf_stderr)
        tasks.append(task)
    missing = [t for t in leaf_results if t not in tasks]
    if not values:
        log.warning("no leaf task has %r", metric_key)
        return None
    if missing:
        log.warning("%r is missing in %d leaf tasks: %s", metric_key, len(missing), missing[:5])
    stderr: float | None = None
    if all(s is not None for s in stderrs):
        known = [float(s) for s in stderrs if s is not None]
        stderr = (
            pooled_sample_stderr(known, sizes) if weight_by_size else unweighted_mean_stderr(known)
        )
    return GroupAggregate(
        value=aggregate_subtasks(values, sizes, weight_by_size=weight_by_size),
        stderr=stderr,
        sample_len=sum(sizes),
        tasks=tuple(tasks),
    )
