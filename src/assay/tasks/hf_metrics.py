"""Hugging Face ``evaluate`` metrics that task YAMLs ask for with ``hf_evaluate: true``.

lm-eval loads these with ``evaluate.load(name)``, which downloads the metric's script from
the Hub at run time: impossible offline, and a moving target. The common ones are plain
scikit-learn calls, so assay computes them locally with the same signature and result
(``compute(references=..., predictions=..., **kwargs) -> {name: value}``; lm-eval calls
them with one doc's reference and prediction, then aggregates the per-doc values). A name
not in this table is an error that lists what is available, never a silent fallback.
"""

from __future__ import annotations

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
    """The local implementation of the ``evaluate`` metric ``name``."""
    try:
        return HF_EVALUATE_METRICS[name]
    except KeyError:
        known = ", ".join(sorted(HF_EVALUATE_METRICS))
        raise ValueError(
            f"metric {name!r} has hf_evaluate: true, but Hugging Face evaluate metrics are "
            f"downloaded at run time, which assay does not do; available locally: {known}"
        ) from None
