"""``lm_eval.api.*`` for task code: the ``Filter`` base, ``FilterEnsemble``, ``Instance`` and
the registry decorators, with lm-eval 0.4.13's shapes and assay's registries behind them.

A task's ``utils.py`` subclasses ``Filter`` and decorates it with ``register_filter(name)``
so its YAML can name the filter; here the decorator puts the class into assay's ``FILTERS``
(and ``register_metric``/``register_aggregation`` into ``TASK_METRICS``/
``TASK_AGGREGATIONS``), so the YAML validates and runs through assay's pipeline. As in
lm-eval, a name already taken by a built-in cannot be registered again; a name a task module
registered before (the same ``utils.py`` reloaded, or a copy in a sibling folder) is
replaced.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from assay.tasks.filters.registry import FILTERS, FilterType
from assay.tasks.filters.registry import build_filter as _build_filter
from assay.tasks.metrics.registry import (
    OUTPUT_TYPES,
    TASK_AGGREGATIONS,
    TASK_METRICS,
    TaskAggregation,
    TaskMetric,
)

log = logging.getLogger("lm_eval")

OutputType = Literal["loglikelihood", "loglikelihood_rolling", "generate_until", "multiple_choice"]

T = TypeVar("T")

_FROM_TASK_CODE: dict[str, set[str]] = {"filter": set(), "metric": set(), "aggregation": set()}
"""Names registered through these decorators (task code may re-register them)."""


class Filter(ABC):
    """lm-eval's filter base: ``apply(resps, docs)`` gets one entry per doc and returns one
    entry per doc, in order (``__init__`` accepts and ignores keyword arguments)."""

    def __init__(self, **kwargs: Any) -> None:  # noqa: B027  (lm-eval's base has it too)
        """Subclasses keep their own state; the base keeps none."""

    @abstractmethod
    def apply(self, resps: Any, docs: list[dict[str, Any]]) -> Iterable[Any]:
        """The filtered entries, one per doc."""
        return resps  # type: ignore[no-any-return]


@dataclass
class Instance:
    """lm-eval's request record, with the same fields (``resps`` and ``filtered_resps`` are
    filled by the harness; ``metadata`` unpacks into task name, doc id and repeats)."""

    request_type: OutputType
    doc: dict[str, Any]
    arguments: tuple[Any, ...]
    idx: int
    metadata: tuple[str | None, int | None, int | None] = field(
        default_factory=lambda: (None, None, None)
    )
    resps: list[Any] = field(default_factory=list)
    filtered_resps: dict[str, Any] = field(default_factory=dict)
    task_name: str | None = None
    doc_id: int | None = None
    repeats: int | None = None

    def __post_init__(self) -> None:
        self.task_name, self.doc_id, self.repeats = self.metadata

    @property
    def args(self) -> tuple[Any, ...]:
        """The request's arguments as a tuple."""
        return self.arguments if isinstance(self.arguments, tuple) else (self.arguments,)


@dataclass
class FilterEnsemble:
    """A named pipeline: each step (a factory) is built fresh and applied in order, and the
    result lands in each instance's ``filtered_resps[name]``."""

    name: str
    filters: list[Callable[[], Any]]

    def apply(self, instances: list[Instance]) -> None:
        resps: Any = [inst.resps for inst in instances]
        docs = [inst.doc for inst in instances]
        for make in self.filters:
            resps = make().apply(resps, docs)
        for inst, resp in zip(instances, resps, strict=False):
            inst.filtered_resps[self.name] = resp


def _taken(kind: str, name: str, registry: Any) -> None:
    if name in registry and name not in _FROM_TASK_CODE[kind]:
        raise ValueError(f"{kind} '{name}' is already registered (a built-in of assay)")


def register_filter(name: str) -> Callable[[T], T]:
    """Register a filter class (or factory) under ``name`` in assay's ``FILTERS``."""

    def decorate(cls: T) -> T:
        _taken("filter", name, FILTERS)
        FILTERS.register(FilterType.of(name, cls), replace=True)  # type: ignore[arg-type]
        _FROM_TASK_CODE["filter"].add(name)
        return cls

    return decorate


def get_filter(filter_name: str | Callable[..., Any]) -> Callable[..., Any]:
    """A filter factory by name (a callable is returned as it is)."""
    if callable(filter_name):
        return filter_name
    filter_type = FILTERS.get(filter_name)
    return filter_type.factory


def build_filter(name: str, kwargs: dict[str, Any] | None = None) -> Any:
    """A built filter (assay's ``build_filter``), for task code that builds one itself."""
    return _build_filter(name, kwargs)


def register_metric(**args: Any) -> Callable[[T], T]:
    """Register a metric function: ``metric`` (its name), optionally ``higher_is_better``
    and ``aggregation`` (a registered aggregation name, ``mean`` when not given)."""

    def decorate(fn: T) -> T:
        if "metric" not in args:
            raise ValueError("register_metric needs metric=<name>")
        name = str(args["metric"])
        _taken("metric", name, TASK_METRICS)
        TASK_METRICS.register(
            TaskMetric(
                name=name,
                fn=fn,  # type: ignore[arg-type]
                aggregation=str(args.get("aggregation", "mean")),
                higher_is_better=bool(args.get("higher_is_better", True)),
                output_types=OUTPUT_TYPES,
                description=(getattr(fn, "__doc__", None) or "").strip().split("\n")[0],
            ),
            replace=True,
        )
        _FROM_TASK_CODE["metric"].add(name)
        return fn

    return decorate


def register_aggregation(name: str) -> Callable[[T], T]:
    """Register ``fn(items) -> float`` as the aggregation ``name``."""

    def decorate(fn: T) -> T:
        _taken("aggregation", name, TASK_AGGREGATIONS)
        TASK_AGGREGATIONS.register(
            TaskAggregation(name=name, fn=fn, bootstrap=True),  # type: ignore[arg-type]
            replace=True,
        )
        _FROM_TASK_CODE["aggregation"].add(name)
        return fn

    return decorate


def get_metric(name: str, hf_evaluate_metric: bool = False) -> Callable[..., Any] | None:
    """A registered metric function, ``None`` when unknown (HF evaluate is not searched)."""
    return TASK_METRICS.get(name).fn if name in TASK_METRICS else None


def get_aggregation(name: str) -> Callable[..., float] | None:
    """A registered aggregation function, ``None`` when unknown."""
    return TASK_AGGREGATIONS.get(name).fn if name in TASK_AGGREGATIONS else None


def get_metric_aggregation(name: str) -> Callable[..., float] | None:
    """The default aggregation function of a registered metric, ``None`` when unknown."""
    if name not in TASK_METRICS:
        return None
    return get_aggregation(TASK_METRICS.get(name).aggregation)


def is_higher_better(metric_name: str) -> bool | None:
    """Whether higher is better for a registered metric, ``None`` when unknown."""
    return TASK_METRICS.get(metric_name).higher_is_better if metric_name in TASK_METRICS else None


def task_code_names(kind: str) -> frozenset[str]:
    """The names task code registered of one kind (``filter``, ``metric``, ``aggregation``)."""
    return frozenset(_FROM_TASK_CODE[kind])
