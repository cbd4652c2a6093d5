"""The items where the judge and the humans disagree most: what to read and relabel first.

A disagreement is an item whose verdicts differ at the threshold (judge ``score >=
threshold`` against humans ``label >= threshold``, both on the same scale): the judge passes
what humans fail (``judge_high_human_low``, the dangerous cell for a gate) or the reverse.
They are ranked by the gap ``|score - label|``, largest first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from assay.calibration.statistics.resample import FloatArray
from assay.calibration.statistics.results import Disagreement
from assay.calibration.statistics.statistics import float_array


def disagreements(
    labels: Sequence[float] | FloatArray,
    scores: Sequence[float] | FloatArray,
    *,
    threshold: float,
    limit: int | None = None,
) -> list[Disagreement]:
    """Items whose judge and human verdicts differ, largest gap first (ties by index)."""
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    y = float_array(labels, "labels")
    s = float_array(scores, "scores")
    if y.shape != s.shape:
        raise ValueError(f"labels has {y.shape[0]} items but scores has {s.shape[0]}")
    judge = s >= threshold
    human = y >= threshold
    rows = np.flatnonzero(judge != human)
    gaps = np.abs(s[rows] - y[rows])
    order = rows[np.lexsort((rows, -gaps))]
    out = [
        Disagreement(
            position=int(i),
            kind="judge_high_human_low" if judge[i] else "judge_low_human_high",
            gap=float(abs(s[i] - y[i])),
            label=float(y[i]),
            score=float(s[i]),
        )
        for i in order
    ]
    return out if limit is None else out[:limit]
