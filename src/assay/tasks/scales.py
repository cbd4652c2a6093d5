"""The value range of each built-in task metric's per-doc number (what normalization and
ensembles need); anything not listed is unbounded."""

from __future__ import annotations

import math

_UNIT_RANGE = (0.0, 1.0)
_SCALES: dict[str, tuple[float, float]] = {
    "acc": _UNIT_RANGE,
    "acc_norm": _UNIT_RANGE,
    "acc_bytes": _UNIT_RANGE,
    "acc_mutual_info": _UNIT_RANGE,
    "acc_all": _UNIT_RANGE,
    "exact_match": _UNIT_RANGE,
    "exact_match_mc": _UNIT_RANGE,
    "f1": _UNIT_RANGE,
    "mcc": (-1.0, 1.0),
    "brier_score": (0.0, 2.0),
    "bleu": (0.0, 100.0),
    "chrf": (0.0, 100.0),
    "chrf++": (0.0, 100.0),
    "distinct_1": _UNIT_RANGE,
    "distinct_2": _UNIT_RANGE,
    "distinct_n": _UNIT_RANGE,
    "unique_share": _UNIT_RANGE,
    "self_bleu": (0.0, 100.0),
}


def metric_scale(metric: str) -> tuple[float, float]:
    """``metric``'s per-doc range: ``(-inf, inf)`` for metrics without a known bound."""
    return _SCALES.get(metric, (-math.inf, math.inf))
