"""Small inline SVG plots for the calibration page, drawn server-side in Python.

The UI works offline (no CDN, no plotting library in the browser), and these plots are a
few dozen shapes each, so plain SVG text is enough. Every piece of text that reaches the
markup goes through ``html.escape``: item ids and labels are user data.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from assay.operations.calibration_view import CalibrationPoint, ReliabilityBin

WIDTH = 360
HEIGHT = 300
MARGIN = 44


def _number(value: float) -> str:
    return f"{value:.3g}"


def _open(title: str, width: int = WIDTH, height: int = HEIGHT) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f"<title>{escape(title)}</title>",
    ]


class _Axes:
    """Maps data on ``[low, high]`` (both axes) into the plot area."""

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high
        self.span = (high - low) or 1.0

    def x(self, value: float) -> float:
        return MARGIN + (value - self.low) / self.span * (WIDTH - 2 * MARGIN)

    def y(self, value: float) -> float:
        return HEIGHT - MARGIN - (value - self.low) / self.span * (HEIGHT - 2 * MARGIN)

    def frame(self, x_title: str, y_title: str) -> list[str]:
        left, right = MARGIN, WIDTH - MARGIN
        top, bottom = MARGIN, HEIGHT - MARGIN
        return [
            f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
            'fill="none" stroke="#999"/>',
            f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{top}" stroke="#bbb" '
            'stroke-dasharray="4 3"/>',
            f'<text x="{left}" y="{bottom + 14}" font-size="10">{_number(self.low)}</text>',
            f'<text x="{right}" y="{bottom + 14}" font-size="10" text-anchor="end">'
            f"{_number(self.high)}</text>",
            f'<text x="{left - 4}" y="{bottom}" font-size="10" text-anchor="end">'
            f"{_number(self.low)}</text>",
            f'<text x="{left - 4}" y="{top + 8}" font-size="10" text-anchor="end">'
            f"{_number(self.high)}</text>",
            f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle">'
            f"{escape(x_title)}</text>",
            f'<text x="12" y="{HEIGHT / 2}" font-size="11" text-anchor="middle" '
            f'transform="rotate(-90 12 {HEIGHT / 2})">{escape(y_title)}</text>',
        ]


def scatter_svg(points: Sequence[CalibrationPoint], low: float, high: float) -> str:
    """Score (x) against human label (y) per item; the dashed diagonal is agreement."""
    axes = _Axes(low, high)
    parts = _open("Scorer score against human label")
    parts += axes.frame("scorer score", "human label (scorer scale)")
    for p in points:
        parts.append(
            f'<circle cx="{axes.x(p.score):.1f}" cy="{axes.y(p.label):.1f}" r="3" '
            f'fill="#3367d6" fill-opacity="0.6"><title>{escape(p.item_id)}: score '
            f"{_number(p.score)}, label {_number(p.label)}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def reliability_svg(bins: Sequence[ReliabilityBin], low: float, high: float) -> str:
    """Mean label per score bin against the bin's mean score; on the diagonal a score means
    what humans would have said. Dot area grows with the bin's item count."""
    axes = _Axes(low, high)
    parts = _open("Reliability: mean human label per score bin")
    parts += axes.frame("mean scorer score in bin", "mean human label")
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{axes.x(b.mean_score):.1f},{axes.y(b.mean_label):.1f}"
        for i, b in enumerate(bins)
    )
    if path:
        parts.append(f'<path d="{path}" fill="none" stroke="#d93025" stroke-width="2"/>')
    largest = max((b.n for b in bins), default=1)
    for b in bins:
        radius = 2.5 + 4.5 * (b.n / largest) ** 0.5
        parts.append(
            f'<circle cx="{axes.x(b.mean_score):.1f}" cy="{axes.y(b.mean_label):.1f}" '
            f'r="{radius:.1f}" fill="#d93025"><title>scores {_number(b.low)}–'
            f"{_number(b.high)}: n={b.n}, mean label {_number(b.mean_label)}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def confusion_svg(confusion: dict[str, Any]) -> str:
    """The confusion matrix as a heatmap: rows human label, columns scorer verdict."""
    labels = [_number(float(v)) for v in confusion["labels"]]
    matrix: list[list[int]] = confusion["matrix"]
    size = len(labels)
    cell = max(28, min(64, 240 // max(size, 1)))
    width = height = MARGIN + 20 + cell * size + 10
    top = left = MARGIN + 20
    largest = max((v for row in matrix for v in row), default=0) or 1
    parts = _open("Confusion matrix: human label (rows) by scorer verdict (columns)", width, height)
    parts.append(
        f'<text x="{left + cell * size / 2}" y="14" font-size="11" '
        'text-anchor="middle">scorer verdict</text>'
    )
    parts.append(
        f'<text x="12" y="{top + cell * size / 2}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + cell * size / 2})">human label</text>'
    )
    for j, name in enumerate(labels):
        parts.append(
            f'<text x="{left + cell * j + cell / 2}" y="{top - 6}" font-size="10" '
            f'text-anchor="middle">{escape(name)}</text>'
        )
    for i, row in enumerate(matrix):
        parts.append(
            f'<text x="{left - 6}" y="{top + cell * i + cell / 2 + 4}" font-size="10" '
            f'text-anchor="end">{escape(labels[i])}</text>'
        )
        for j, count in enumerate(row):
            shade = count / largest
            ink = "#fff" if shade > 0.5 else "#222"
            parts.append(
                f'<rect x="{left + cell * j}" y="{top + cell * i}" width="{cell}" '
                f'height="{cell}" fill="#1a73e8" fill-opacity="{0.08 + 0.92 * shade:.2f}" '
                f'stroke="#fff"/><text x="{left + cell * j + cell / 2}" '
                f'y="{top + cell * i + cell / 2 + 4}" font-size="12" text-anchor="middle" '
                f'fill="{ink}">{count}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
