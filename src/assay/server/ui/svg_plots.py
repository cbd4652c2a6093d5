"""The web UI's charts: calibration (confusion, reliability, scatter), the optimization
score trend, a scorer's trend across runs and the items' score histograms, drawn by
``assay.analysis.svg_charts``, the module the HTML report draws with.

This module only maps the pages' view models onto chart series: the drawing, the escaping
of user text (item ids, labels) and the handling of empty data live in ``svg_charts``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from assay.analysis import svg_charts as charts
from assay.analysis.svg_charts import Point, Series, number
from assay.calibration.view import CalibrationPoint, ReliabilityBin
from assay.operations.runs_overview import ScoreTrend, TrendPoint
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
    return _against_labels(
        series,
        (low, high),
        title="Scorer score against human label",
        x_title="scorer score",
        y_title="human label (scorer scale)",
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
    return _against_labels(
        series,
        (low, high),
        title="Reliability: mean human label per score bin",
        x_title="mean scorer score in bin",
        y_title="mean human label",
    )


def _against_labels(
    series: Series, scale: tuple[float, float], *, title: str, x_title: str, y_title: str
) -> str:
    """The square chart both calibration plots share: scores against labels on one scale
    (``scale`` on both axes), the dashed diagonal marking agreement."""
    return charts.xy_chart(
        [series],
        title=title,
        x_title=x_title,
        y_title=y_title,
        x_range=scale,
        y_range=scale,
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


def judge_corrected_svg(corrected: dict[str, Any]) -> str:
    """The judge's plain mean beside the judge-corrected (PPI++) mean with its 95% CI, so
    the bias the labels removed is the gap between the two bars."""
    return charts.bar_chart(
        [
            charts.Bar("judge alone", corrected.get("judge_mean"), color="#9aa0a6"),
            charts.Bar(
                "judge-corrected",
                corrected.get("value"),
                low=corrected.get("ci_low"),
                high=corrected.get("ci_high"),
            ),
        ],
        title="Judge-corrected mean",
        y_title="mean score",
        testid="judge-corrected-chart",
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


def run_trend_title(trend: ScoreTrend) -> str:
    """The trend chart's title. The runs page shows it in HTML above the chart, where a
    long dataset or scorer name wraps; drawn in the SVG it was cut with an ellipsis."""
    direction = "higher is better" if trend.higher_is_better else "lower is better"
    return f"{trend.scorer_label} on {trend.data} ({direction})"


def run_trend_svg(trend: ScoreTrend) -> str:
    """A scorer's mean per run of one dataset, oldest to newest (x: the run's place in
    time). Finished runs are a solid line with dots; a partial run (interrupted, failed,
    still going) is a grey dot off the line, since its mean covers only part of the data.
    Its title is the chart's accessible name only: the page shows ``run_trend_title``."""

    def point(k: int, p: TrendPoint) -> Point:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(p.created_at))
        label = f"{p.run_id[:12]}{f' {p.name}' if p.name else ''} ({when})"
        mean = "no mean" if p.mean is None else number(p.mean)
        return Point(k, p.mean, f"run {k}: {label}: {mean}{' (partial)' if p.partial else ''}")

    numbered = list(enumerate(trend.points, start=1))
    whole = [point(k, p) for k, p in numbered if not p.partial]
    partial = [point(k, p) for k, p in numbered if p.partial]
    return charts.xy_chart(
        [
            Series("finished runs", whole, color="#3366cc", line=True, css_class="trend-whole"),
            Series("partial runs", partial, color="#9d9d9d", css_class="trend-partial"),
        ],
        title=run_trend_title(trend),
        x_title="run, oldest to newest",
        y_title=f"mean {trend.scorer_label}",
        x_range=(1.0, float(max(len(trend.points), 2))),
        width=560,
        height=260,
        testid="run-trend",
        whole_x=True,
        show_title=False,
    )


def score_histogram_svg(label: str, edges: Sequence[float], counts: Sequence[int]) -> str:
    """How one scorer's numeric scores are spread over its range (results, not items:
    each repeat counts); an empty chart says "no data" when the scorer has no number."""
    return charts.histogram(
        edges,
        counts,
        title=f"{label}: score distribution",
        x_title="score",
        y_title="results",
        testid="score-histogram",
    )
