"""Hugging Face ``evaluate`` metrics that task YAMLs ask for with ``hf_evaluate: true``.

lm-eval loads these with ``evaluate.load(name)``, which downloads the metric's script from
the Hub at run time: impossible offline, and a moving target. The common ones are plain
scikit-learn calls, so assay computes them locally with the same signature and result
(``compute(references=..., predictions=..., **kwargs) -> {name: value}``; lm-eval calls
them with one doc's reference and prediction, then aggregates the per-doc values).

Any other name needs Hugging Face ``evaluate`` itself, the optional extra
``assay[hf-evaluate]``: the metric is then ``evaluate.load(name)`` (loaded once per name, on
first use), so its numbers are evaluate's own. ``evaluate`` fetches Hub metrics into its
cache; offline (``HF_HUB_OFFLINE=1``) only cached metrics and local metric scripts (a path)
load. Without the extra such a name is an error that says so and lists what is local,
never a silent fallback.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sklearn import metrics as sk  # type: ignore[import-untyped]


def _accuracy(
    references: Sequence[Any],
    predictions: Sequence[Any],
    normalize: bool = True,
    sample_weight: Sequence[float] | None = None,
) -> dict[str, float]:
    value = sk.accuracy_score(
        references, predictions, normalize=normalize, sample_weight=sample_weight
    )
    return {"accuracy": float(value)}


def _averaged(name: str, fn: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    def compute(
        references: Sequence[Any],
        predictions: Sequence[Any],
        labels: Sequence[Any] | None = None,
        pos_label: Any = 1,
        average: str | None = "binary",
        sample_weight: Sequence[float] | None = None,
        zero_division: Any = "warn",
    ) -> dict[str, Any]:
        value = fn(
            references,
            predictions,
            labels=labels,
            pos_label=pos_label,
            average=average,
            sample_weight=sample_weight,
            zero_division=zero_division,
        )
        return {name: float(value) if getattr(value, "size", 1) == 1 else value.tolist()}

    compute.__name__ = name
    return compute


def _matthews(
    references: Sequence[Any],
    predictions: Sequence[Any],
    sample_weight: Sequence[float] | None = None,
) -> dict[str, float]:
    value = sk.matthews_corrcoef(references, predictions, sample_weight=sample_weight)
    return {"matthews_correlation": float(value)}


HF_EVALUATE_METRICS: dict[str, Callable[..., dict[str, Any]]] = {
    "accuracy": _accuracy,
    "f1": _averaged("f1", sk.f1_score),
    "precision": _averaged("precision", sk.precision_score),
    "recall": _averaged("recall", sk.recall_score),
    "matthews_correlation": _matthews,
}


def hf_evaluate_metric(name: str) -> Callable[..., dict[str, Any]]:
    """The ``evaluate`` metric ``name``: the local implementation, else ``evaluate.load``
    (with the ``hf-evaluate`` extra installed)."""
    local = HF_EVALUATE_METRICS.get(name)
    if local is not None:
        return local
    if importlib.util.find_spec("evaluate") is None:
        known = ", ".join(sorted(HF_EVALUATE_METRICS))
        raise ValueError(
            f"metric {name!r} has hf_evaluate: true: it needs Hugging Face evaluate "
            f"(pip install 'assay[hf-evaluate]'); computed without it: {known}"
        )
    return _EvaluateMetric(name)


_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()


class _EvaluateMetric:
    """``evaluate.load(name).compute``, loaded once per process and name on first call."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = name.rstrip("/").rpartition("/")[2]

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        with _LOCK:
            metric = _LOADED.get(self.name)
            if metric is None:
                import evaluate

                metric = _LOADED[self.name] = evaluate.load(self.name)
        result: dict[str, Any] = metric.compute(*args, **kwargs)
        return result
