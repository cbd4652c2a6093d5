"""What the calibration page shows for one certificate: the certificate, and the per-item
(label, score) points of its stored run with the confusion matrix, reliability bins and
disagreements derived from them.

The certificate keeps only statistics and gates, so the plots are rebuilt from the run the
certificate links: its results hold the scores, and its metadata holds each item's label
on the scorer's scale (``calibrate`` records them there; results carry no item metadata).
A run without them (calibrated before they were recorded, or pairwise) yields no points
and a ``note`` saying why, never plots of something else.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from assay.calibration.measures import confusion_json, ordinal_predictions
from assay.store import Certificate, Store, using_store

RELIABILITY_BINS = 10
DISAGREEMENTS = 20


class CalibrationPoint(BaseModel):
    """One item: the human label on the scorer's scale and the scorer's mean score."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    label: float
    score: float
    reason: str | None = None


class ReliabilityBin(BaseModel):
    """Items whose score fell in ``[low, high)``: their mean score and mean label."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    n: int
    mean_score: float
    mean_label: float


class CalibrationView(BaseModel):
    """A certificate with the data of its plots (empty when ``note`` says why)."""

    certificate: Certificate
    threshold: float | None = None
    score_range: tuple[float, float] = (0.0, 1.0)
    points: list[CalibrationPoint] = Field(default_factory=list)
    confusion: dict[str, Any] | None = None
    reliability: list[ReliabilityBin] = Field(default_factory=list)
    disagreements: list[CalibrationPoint] = Field(default_factory=list)
    unscored: int = 0
    note: str | None = None


def _scores(results: list[Any]) -> tuple[dict[str, float], dict[str, str | None]]:
    """Mean score over the repeats that produced one, per item (as ``calibrate`` does)."""
    by_item: dict[str, list[float]] = defaultdict(list)
    reasons: dict[str, str | None] = {}
    for result in results:
        output = result.output if isinstance(result.output, Mapping) else None
        score = output.get("score") if output is not None else None
        if result.error is not None or not isinstance(score, int | float):
            continue
        by_item[result.item_id].append(float(score))
        reason = output.get("reason") if output is not None else None
        reasons.setdefault(result.item_id, None if reason is None else str(reason))
    return {k: float(np.mean(v)) for k, v in by_item.items()}, reasons


def _range(value: Any, points: list[CalibrationPoint]) -> tuple[float, float]:
    """The scorer's range when finite, else the span of the points."""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int | float) for v in value)
    ):
        return float(value[0]), float(value[1])
    every = [p.score for p in points] + [p.label for p in points]
    low, high = (min(every), max(every)) if every else (0.0, 1.0)
    return (low, high) if high > low else (low, low + 1.0)


def _reliability(points: list[CalibrationPoint], low: float, high: float) -> list[ReliabilityBin]:
    width = (high - low) / RELIABILITY_BINS
    bins: dict[int, list[CalibrationPoint]] = defaultdict(list)
    for point in points:
        # rounded before the floor: 0.9 // 0.1 is 8.0 and 0.3 / 0.1 is 2.999..., which
        # would file a score on a bin edge into the bin below
        position = math.floor(round((point.score - low) / width, 9))
        index = min(RELIABILITY_BINS - 1, max(0, position))
        bins[index].append(point)
    return [
        ReliabilityBin(
            low=low + i * width,
            high=low + (i + 1) * width,
            n=len(members),
            mean_score=float(np.mean([p.score for p in members])),
            mean_label=float(np.mean([p.label for p in members])),
        )
        for i, members in sorted(bins.items())
    ]


def _disagreements(
    points: list[CalibrationPoint], kind: str, threshold: float | None
) -> list[CalibrationPoint]:
    """Largest gaps between score and label first; binary keeps only verdicts that differ."""
    if kind == "binary" and threshold is not None:
        points = [p for p in points if (p.score >= threshold) != (p.label >= 0.5)]
    ranked = sorted(points, key=lambda p: -abs(p.score - p.label))
    return [p for p in ranked if p.score != p.label][:DISAGREEMENTS]


def calibration_view(certificate_id: str, *, store: Store | None = None) -> CalibrationView:
    """The certificate (id or unique prefix) with its plots' data, read from its run."""
    with using_store(store) as db:
        certificate = db.certificates.get(certificate_id)
        view = CalibrationView(certificate=certificate)
        if certificate.run_id is None:
            view.note = "the certificate links no run, so there is nothing to plot"
            return view
        record = db.runs.get(certificate.run_id)
        recorded = (record.info.metadata or {}).get("calibration") or {}
        labels = recorded.get("labels")
        if not isinstance(labels, Mapping):
            view.note = (
                "the calibration run does not record its labels (pairwise, or calibrated "
                "before they were recorded): calibrate again to see the plots"
            )
            return view
        scores, reasons = _scores(list(db.runs.results(record.info.id)))
    points = [
        CalibrationPoint(item_id=i, label=float(v), score=scores[i], reason=reasons.get(i))
        for i, v in labels.items()
        if i in scores and isinstance(v, int | float) and math.isfinite(v)
    ]
    view.unscored = len(labels) - len(points)
    threshold = recorded.get("threshold")
    view.threshold = float(threshold) if isinstance(threshold, int | float) else None
    view.score_range = _range(recorded.get("score_range"), points)
    view.points = points
    if not points:
        view.note = "no item of the calibration run has a score"
        return view
    label_values = np.array([p.label for p in points])
    score_values = np.array([p.score for p in points])
    if certificate.kind == "binary" and view.threshold is not None:
        verdicts = (score_values >= view.threshold).astype(np.float64)
        view.confusion = confusion_json(label_values, verdicts)
    elif certificate.kind == "ordinal":
        view.confusion = confusion_json(
            label_values, ordinal_predictions(label_values, score_values)
        )
    view.reliability = _reliability(points, *view.score_range)
    view.disagreements = _disagreements(points, certificate.kind, view.threshold)
    return view
