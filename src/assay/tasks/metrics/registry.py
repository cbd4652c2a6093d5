"""The task-metric and task-aggregation registries (lm-evaluation-harness's metric registry).

A benchmark task's ``metric_list`` names metrics; each metric carries the aggregation that
turns its per-doc values into the task's number, its direction, and the output types it
applies to. Built-ins register when ``assay.tasks.metrics.builtin`` is imported (lazily, on
the first lookup); third-party packages add metrics through the entry-point group
``assay.task_metrics`` and aggregations through ``assay.task_aggregations``. Both are
``assay.registry.Registry`` instances, so names, aliases, duplicates and plugins follow
the same rules as every other registry in assay.

The per-doc function of a metric uses one calling convention, lm-eval v0.5's:
``fn(references, predictions, **kwargs)``.

* generation metrics get the doc's gold (a string, or a list of strings with multiple
  targets) and the list of predictions (one per repeat); they return one value per
  prediction, or a mapping ``{name: [one value per prediction]}``;
* loglikelihood metrics get the gold index (or list of indices) and an ``LLResults``; they
  return one value for the doc.

An aggregation is ``fn(items) -> float`` over the per-doc values in doc order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard, TypeVar

from assay.registry import Registry

OutputType = Literal["loglikelihood", "loglikelihood_rolling", "multiple_choice", "generate_until"]
OUTPUT_TYPES: tuple[OutputType, ...] = (
    "loglikelihood",
    "loglikelihood_rolling",
    "multiple_choice",
    "generate_until",
)

MetricFunction = Callable[..., Any]
AggregationFunction = Callable[[list[Any]], float]
F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E")


@dataclass(frozen=True, slots=True)
class TaskMetric:
    """A registered task metric.

    ``aggregation`` names the default entry of ``TASK_AGGREGATIONS``; ``reduction`` the
    default way to collapse a doc's repeats (``REDUCTIONS``), ``None`` meaning that a doc
    with several values is an error.
    """

    name: str
    fn: MetricFunction
    aggregation: str
    higher_is_better: bool
    output_types: tuple[OutputType, ...]
    description: str = ""
    reduction: str | None = "first"
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskAggregation:
    """A registered aggregation: ``fn(items) -> float`` over per-doc values.

    ``bootstrap`` says whether its stderr is estimated by lm-eval's bootstrap (lm-eval caps
    the iterations at 100 for the *metrics* bleu, chrf, chrf++ and ter; see
    ``stderr.stderr_for``).
    """

    name: str
    fn: AggregationFunction
    description: str = ""
    bootstrap: bool = False
    aliases: tuple[str, ...] = ()


def _is_metric(value: object) -> TypeGuard[TaskMetric]:
    return isinstance(value, TaskMetric)


def _is_aggregation(value: object) -> TypeGuard[TaskAggregation]:
    return isinstance(value, TaskAggregation)


def _metric_name(metric: TaskMetric) -> str:
    return metric.name


def _metric_aliases(metric: TaskMetric) -> tuple[str, ...]:
    return metric.aliases


def _aggregation_name(aggregation: TaskAggregation) -> str:
    return aggregation.name


def _aggregation_aliases(aggregation: TaskAggregation) -> tuple[str, ...]:
    return aggregation.aliases


BUILTIN_MODULE = "assay.tasks.metrics.builtin"

TASK_METRICS: Registry[TaskMetric] = Registry(
    "task metric",
    accepts=_is_metric,
    group="assay.task_metrics",
    builtins=(BUILTIN_MODULE,),
    name_of=_metric_name,
    aliases_of=_metric_aliases,
)

TASK_AGGREGATIONS: Registry[TaskAggregation] = Registry(
    "task aggregation",
    accepts=_is_aggregation,
    group="assay.task_aggregations",
    builtins=(BUILTIN_MODULE,),
    name_of=_aggregation_name,
    aliases_of=_aggregation_aliases,
)


def _registering(
    registry: Registry[E], entry_of: Callable[[F], E], replace: bool
) -> Callable[[F], F]:
    """A decorator that registers ``entry_of(fn)`` in ``registry`` and returns ``fn``
    unchanged (both registration decorators below)."""

    def decorate(fn: F) -> F:
        registry.register(entry_of(fn), replace=replace)
        return fn

    return decorate


def _first_doc_line(fn: Callable[..., Any]) -> str:
    """A registered function's description when none is given: its docstring's first line."""
    return (fn.__doc__ or "").strip().split("\n")[0]


def register_task_metric(
    name: str,
    *,
    aggregation: str,
    higher_is_better: bool,
    output_types: Sequence[OutputType],
    description: str = "",
    reduction: str | None = "first",
    aliases: Sequence[str] = (),
    replace: bool = False,
) -> Callable[[MetricFunction], MetricFunction]:
    """Decorator registering ``fn`` as the task metric ``name``."""

    return _registering(
        TASK_METRICS,
        lambda fn: TaskMetric(
            name=name,
            fn=fn,
            aggregation=aggregation,
            higher_is_better=higher_is_better,
            output_types=tuple(output_types),
            description=description or _first_doc_line(fn),
            reduction=reduction,
            aliases=tuple(aliases),
        ),
        replace,
    )


def register_task_aggregation(
    name: str,
    *,
    description: str = "",
    bootstrap: bool = False,
    replace: bool = False,
) -> Callable[[AggregationFunction], AggregationFunction]:
    """Decorator registering ``fn(items) -> float`` as the task aggregation ``name``."""

    return _registering(
        TASK_AGGREGATIONS,
        lambda fn: TaskAggregation(
            name=name,
            fn=fn,
            description=description or _first_doc_line(fn),
            bootstrap=bootstrap,
        ),
        replace,
    )


_DEFAULT_METRICS: dict[str, tuple[str, ...]] = {
    "loglikelihood": ("perplexity", "acc"),
    "loglikelihood_rolling": ("word_perplexity", "byte_perplexity", "bits_per_byte"),
    "multiple_choice": ("acc", "acc_norm"),
    "generate_until": ("exact_match",),
}


def default_metrics(output_type: str) -> list[str]:
    """The metrics a task of ``output_type`` reports when it has no ``metric_list``
    (lm-eval's defaults)."""
    try:
        return list(_DEFAULT_METRICS[output_type])
    except KeyError:
        known = ", ".join(OUTPUT_TYPES)
        raise ValueError(f"unknown output_type {output_type!r} (known: {known})") from None
