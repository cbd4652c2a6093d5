"""The score-trend plot of the optimization page, as inline SVG drawn in Python.

Like ``svg_plots`` (the UI works offline, no plotting library): each scored candidate is
a dot at (discovery order, validation score) and a line follows the best score so far, so
a reader sees both every proposal and whether the search was still improving. Text is
escaped: candidate labels come from stored data."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from assay.operations.optimizations_view import CandidateView

WIDTH = 480
HEIGHT = 240
MARGIN = 40


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def score_trend_svg(candidates: Sequence[CandidateView]) -> str | None:
    """Validation score per candidate with the best-so-far line; ``None`` when no
    candidate has a validation score (nothing to draw, and no empty axes to mislead)."""
    scored = [(c.idx, c.val_score) for c in candidates if c.val_score is not None]
    if not scored:
        return None
    xs = [x for x, _ in scored]
    ys = [y for _, y in scored]
    x_low, x_high = min(xs), max(xs)
    y_low, y_high = min(min(ys), 0.0), max(max(ys), 1.0)
    x_span, y_span = (x_high - x_low) or 1, (y_high - y_low) or 1.0

    def px(x: int) -> float:
        return MARGIN + (x - x_low) / x_span * (WIDTH - 2 * MARGIN)

    def py(y: float) -> float:
        return HEIGHT - MARGIN - (y - y_low) / y_span * (HEIGHT - 2 * MARGIN)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" data-testid="score-trend">',
        "<title>Validation score by candidate (line: best so far)</title>",
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{WIDTH - 2 * MARGIN}" '
        f'height="{HEIGHT - 2 * MARGIN}" fill="none" stroke="#999"/>',
        f'<text x="{MARGIN - 4}" y="{HEIGHT - MARGIN}" font-size="10" text-anchor="end">'
        f"{_fmt(y_low)}</text>",
        f'<text x="{MARGIN - 4}" y="{MARGIN + 8}" font-size="10" text-anchor="end">'
        f"{_fmt(y_high)}</text>",
        f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle">'
        "candidate (discovery order)</text>",
    ]
    best, steps = float("-inf"), []
    for x, y in scored:
        best = max(best, y)
        steps.append(f"{px(x):.1f},{py(best):.1f}")
    parts.append(
        f'<polyline class="best-so-far" points="{" ".join(steps)}" fill="none" '
        'stroke="#2a7" stroke-width="2"/>'
    )
    for x, y in scored:
        parts.append(
            f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="#36c">'
            f"<title>{escape(f'candidate {x}: {_fmt(y)}')}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)
