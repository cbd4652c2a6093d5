"""The web UI's charts: calibration (confusion, reliability, scatter) and the optimization
score trend, drawn by ``assay.analysis.svg_charts``, the module the HTML report draws with.

This module only maps the pages' view models onto chart series: the drawing, the escaping
of user text (item ids, labels) and the handling of empty data live in ``svg_charts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.analysis import svg_charts as charts
from assay.analysis.svg_charts import Point, Series, number
from assay.calibration.view import CalibrationPoint, ReliabilityBin
from assay.server.optimizations_view import CandidateView

SIZE = 360
"""Width and height of the square calibration charts (both axes share one scale)."""


def scatter_svg(points: Sequence[CalibrationPoint], low: float, high: float) -> str:
    """Score (x) against human label (y) per item; the dashed diagonal is agreement."""
    series = Series(
        "items",
        [
            Point(
                p.score, p.label, f"{p.item_id}: score {number(p.score)}, label {number(p.label)}"
            )
            for p in points
        ],
        color="#3367d6",
        opacity=0.6,
    )
    return charts.xy_chart(
        [series],
        title="Scorer score against human label",
        x_title="scorer score",
        y_title="human label (scorer scale)",
        x_range=(low, high),
        y_range=(low, high),
        diagonal=True,
        width=SIZE,
        height=SIZE,
    )


def reliability_svg(bins: Sequence[ReliabilityBin], low: float, high: float) -> str:
    """Mean label per score bin against the bin's mean score; on the diagonal a score means
    what humans would have said. Dot area grows with the bin's item count."""
    largest = max((b.n for b in bins), default=1) or 1
    series = Series(
        "bins",
        [
            Point(
                b.mean_score,
                b.mean_label,
                f"scores {number(b.low)}–{number(b.high)}: n={b.n}, "
                f"mean label {number(b.mean_label)}",
                size=round(2.5 + 4.5 * (b.n / largest) ** 0.5, 1),
            )
            for b in bins
        ],
        color="#d93025",
        line=True,
    )
    return charts.xy_chart(
        [series],
        title="Reliability: mean human label per score bin",
        x_title="mean scorer score in bin",
        y_title="mean human label",
        x_range=(low, high),
        y_range=(low, high),
        diagonal=True,
        width=SIZE,
        height=SIZE,
    )


def confusion_svg(confusion: dict[str, Any]) -> str:
    """The confusion matrix as a heatmap: rows human label, columns scorer verdict."""
    return charts.heatmap(
        [number(float(v)) for v in confusion["labels"]],
        confusion["matrix"],
        title="Confusion matrix",
        x_title="scorer verdict",
        y_title="human label",
    )


def score_trend_svg(candidates: Sequence[CandidateView]) -> str | None:
    """Validation score per candidate (dots) with the best score so far (line), so a
    reader sees every proposal and whether the search still improved; ``None`` when no
    candidate has a validation score (nothing to draw, and no empty axes to mislead)."""
    scored = [(c.idx, c.val_score) for c in candidates if c.val_score is not None]
    if not scored:
        return None
    best, steps = float("-inf"), []
    for x, y in scored:
        best = max(best, y)
        steps.append(Point(x, best))
    ys = [y for _, y in scored]
    return charts.xy_chart(
        [
            Series(
                "best so far",
                steps,
                color="#22aa77",
                markers=False,
                line=True,
                css_class="best-so-far",
            ),
            Series(
                "candidates",
                [Point(x, y, f"candidate {x}: {number(y)}", size=4) for x, y in scored],
                color="#3366cc",
            ),
        ],
        title="Validation score by candidate (line: best so far)",
        x_title="candidate (discovery order)",
        y_title="validation score",
        y_range=(min(min(ys), 0.0), max(max(ys), 1.0)),
        width=480,
        height=240,
        testid="score-trend",
    )
