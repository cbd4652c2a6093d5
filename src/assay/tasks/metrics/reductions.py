"""Reducing a doc's repeats to one value per metric (lm-eval v0.5's ``reduction`` stage).

A task with ``repeats: n`` scores every repeat; before aggregation each metric's list of
per-repeat values is reduced to one per-doc value:

* a single value passes through unchanged;
* several values use the metric's reduction: ``first``, ``mean``, ``max``, ``majority``
  (the most common value, ties to the earliest) or ``pass@k`` (the unbiased estimator of
  Chen et al. 2021, from ``assay.summary.aggregations.pass_at_k``);
* a reduction that returns a mapping makes one key per entry, named ``sub(metric)``
  (``pass@1(exact_match)``);
* several values and no reduction raise ``ValueError`` (a silent "take the first" would
  hide that repeats were configured).

Reductions are a registry (``REDUCTIONS``, entry-point group ``assay.task_reductions``);
each is ``fn(reference, values, **kwargs)``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from assay.registry import Registry
from assay.summary.aggregations import pass_at_k as pass_at_k_estimate

ReductionFunction = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Reduction:
    """A named way to collapse a doc's per-repeat values."""

    name: str
    fn: ReductionFunction
    description: str = ""
    aliases: tuple[str, ...] = ()


def _is_reduction(value: object) -> TypeGuard[Reduction]:
    return isinstance(value, Reduction)


def _name(r: Reduction) -> str:
    return r.name


def _aliases(r: Reduction) -> tuple[str, ...]:
    return r.aliases


REDUCTIONS: Registry[Reduction] = Registry(
    "task reduction",
    accepts=_is_reduction,
    group="assay.task_reductions",
    name_of=_name,
    aliases_of=_aliases,
)


def first(reference: Any, values: Sequence[Any]) -> Any:
    """The first repeat's value."""
    return values[0]


def mean(reference: Any, values: Sequence[Any]) -> float:
    """The mean of the repeats' values."""
    return float(sum(values) / len(values))


def maximum(reference: Any, values: Sequence[Any]) -> Any:
    """The best repeat's value (the largest)."""
    return max(values)


def majority(reference: Any, values: Sequence[Any]) -> Any:
    """The most common value; ties go to the value seen first."""
    return Counter(values).most_common(1)[0][0]


def default_k_values(n: int) -> list[int]:
    """lm-eval v0.5's k values for ``n`` repeats: 1, 3, 5, 10, 20, 50, 100 and ``n``, plus
    about three log-spaced values per decade above 100, all ``<= n``."""
    if n <= 0:
        return []
    if n == 1:
        return [1]
    anchors = [1, 3, 5, 10, 20, 50, 100]
    if n > 100:
        low, high = math.log10(100), math.log10(n)
        points = max(2, int(high - low) * 3)
        anchors += [int(10 ** (low + i * (high - low) / points)) for i in range(1, points)]
    anchors.append(n)
    return sorted({k for k in anchors if 1 <= k <= n})


def pass_at_k(
    reference: Any, values: Sequence[Any], *, k: int | Sequence[int] | None = None
) -> dict[str, float]:
    """``{"pass@k": estimate}`` for each k (default ``default_k_values(n)``); a truthy
    value is a pass. A k larger than the number of repeats raises."""
    n = len(values)
    c = sum(1 for v in values if v)
    ks = [k] if isinstance(k, int) else default_k_values(n) if k is None else list(k)
    out: dict[str, float] = {}
    for ki in ks:
        if ki > n:
            raise ValueError(f"pass@{ki} needs at least {ki} repeats per doc (got {n})")
        out[f"pass@{ki}"] = pass_at_k_estimate(np.asarray([n]), np.asarray([c]), ki)
    return out


for _r in (
    Reduction("first", first, "the first repeat's value", ("take_first",)),
    Reduction("mean", mean, "the mean over repeats"),
    Reduction("max", maximum, "the largest value over repeats"),
    Reduction("majority", majority, "the most common value (ties: earliest)"),
    Reduction("pass@k", pass_at_k, "unbiased pass@k estimator (Chen et al. 2021)"),
):
    REDUCTIONS.register(_r)

ReductionSpec = str | ReductionFunction | None


def reduce_scores(
    scores: Mapping[str, Sequence[Any]],
    reductions: Mapping[str, ReductionSpec],
    *,
    reference: Any = None,
    kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Reduce ``{metric: [value per repeat]}`` to ``{key: value}`` for one doc.

    ``reductions`` maps a metric to a registered reduction's name or a callable
    ``fn(reference, values, **kwargs)``; ``kwargs`` holds per-metric reduction kwargs
    (``{"exact_match": {"k": [1, 8]}}``)."""
    out: dict[str, Any] = {}
    for metric, values in scores.items():
        values = list(values)
        if len(values) == 0:
            raise ValueError(f"metric {metric!r} has no value for this doc")
        if len(values) == 1:
            out[metric] = values[0]
            continue
        spec = reductions.get(metric)
        if spec is None:
            raise ValueError(
                f"metric {metric!r} has {len(values)} values for one doc (repeats > 1) but "
                "no reduction; set one (first, mean, max, majority, pass@k) or use repeats: 1"
            )
        fn = spec if callable(spec) else REDUCTIONS.get(spec).fn
        result = fn(reference, values, **dict((kwargs or {}).get(metric, {})))
        if isinstance(result, Mapping):
            for sub, value in result.items():
                out[f"{sub}({metric})"] = value
        else:
            out[metric] = result
    return out
