"""Small SVG charts drawn in Python, shared by the HTML report and the web UI.

Each function takes plain numbers and returns one ``<svg>`` element as text: no plotting
library and no script, so a chart renders offline, inside a mailed report or a server page,
and costs a few kilobytes. Four shapes cover every chart assay draws: a histogram (score
distributions), labelled bars with error bars (deltas between runs), an x-y chart of point
and line series (calibration scatter and reliability, the optimization trend) and a
heatmap (confusion matrices).

Accessibility: every chart has ``role="img"``, a ``<title>`` (its accessible name) and a
``<desc>`` stating the data in words; every mark carries its own ``<title>``, which browsers
show on hover. Safety: all text, user labels included, goes through ``html.escape``, so a
label like ``</svg><script>`` stays text. Values that are ``None``, NaN or infinite are left
out (and counted in the ``<desc>``), so no coordinate is ever ``nan``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 400
HEIGHT = 260
LEFT = 56
RIGHT = 14
TOP = 30
BOTTOM = 46

BLUE = "#4c78a8"
GREEN = "#54a24b"
RED = "#e45756"
GREY = "#9d9d9d"
INK = "#1f2328"
MUTED = "#6a737d"
GRID = "#e5e8eb"


@dataclass(frozen=True)
class Chart:
    """A chart placed on a page: the element id, a title for the page, the ``<svg>`` text."""

    div_id: str
    title: str
    svg: str


@dataclass(frozen=True)
class Bar:
    """One labelled bar: ``value`` with an optional interval ``[low, high]`` drawn as an
    error bar; ``tip`` is the hover text (defaults to label and value)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    color: str = BLUE
    tip: str = ""


@dataclass(frozen=True)
class Point:
    """One point of a series; ``size`` is the marker's radius in pixels."""

    x: float | None
    y: float | None
    tip: str = ""
    size: float = 3.0


@dataclass(frozen=True)
class Series:
    """Points drawn as markers, a line through them, or both."""

    name: str
    points: Sequence[Point]
    color: str = BLUE
    markers: bool = True
    line: bool = False
    dashed: bool = False
    opacity: float = 1.0
    css_class: str = ""


def finite(value: float | None) -> bool:
    """True for a number that can be drawn: not ``None``, NaN or infinite."""
    return value is not None and math.isfinite(value)


def number(value: float) -> str:
    """A value as shown on axes and in tooltips: three significant digits."""
    return f"{value:.3g}"


def _c(value: float) -> str:
    """A coordinate: one decimal is below a pixel and keeps the file small."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (steps of 1, 2 or 5 × 10^k) within ``[low, high]``."""
    if not (finite(low) and finite(high)) or high <= low:
        return [low] if finite(low) else []
    raw = (high - low) / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    k = first
    while k * step <= high + step * 1e-9:
        ticks.append(round(k * step, 12) + 0.0)  # + 0.0 turns -0.0 into 0.0
        k += 1
    return ticks


class _Frame:
    """The plot area of a chart and the linear maps from data to pixels."""

    def __init__(
        self,
        x_range: tuple[float, float],
        y_range: tuple[float, float],
        width: int = WIDTH,
        height: int = HEIGHT,
    ) -> None:
        self.x_low, self.x_high = _widen(*x_range)
        self.y_low, self.y_high = _widen(*y_range)
        self.width, self.height = width, height
        self.left, self.right = LEFT, width - RIGHT
        self.top, self.bottom = TOP, height - BOTTOM

    def px(self, x: float) -> float:
        share = (x - self.x_low) / (self.x_high - self.x_low)
        return self.left + share * (self.right - self.left)

    def py(self, y: float) -> float:
        share = (y - self.y_low) / (self.y_high - self.y_low)
        return self.bottom - share * (self.bottom - self.top)

    def y_axis(self, title: str) -> list[str]:
        parts = []
        for tick in nice_ticks(self.y_low, self.y_high):
            y = _c(self.py(tick))
            parts.append(
                f'<line x1="{self.left}" y1="{y}" x2="{self.right}" y2="{y}" stroke="{GRID}"/>'
                f'<text x="{self.left - 4}" y="{y}" dy="3" font-size="10" text-anchor="end" '
                f'fill="{MUTED}">{number(tick)}</text>'
            )
        middle = _c((self.top + self.bottom) / 2)
        parts.append(
            f'<text x="12" y="{middle}" font-size="11" text-anchor="middle" '
            f'transform="rotate(-90 12 {middle})" fill="{INK}">{escape(title)}</text>'
        )
        return parts

    def x_axis(self, title: str, *, ticks: bool = True, whole: bool = False) -> list[str]:
        parts = [
            f'<line x1="{self.left}" y1="{self.bottom}" x2="{self.right}" y2="{self.bottom}" '
            f'stroke="{MUTED}"/>'
        ]
        if ticks:
            for tick in nice_ticks(self.x_low, self.x_high):
                if whole and tick != int(tick):
                    continue
                parts.append(
                    f'<text x="{_c(self.px(tick))}" y="{self.bottom + 13}" font-size="10" '
                    f'text-anchor="middle" fill="{MUTED}">{number(tick)}</text>'
                )
        parts.append(
            f'<text x="{_c((self.left + self.right) / 2)}" y="{self.height - 8}" '
            f'font-size="11" text-anchor="middle" fill="{INK}">{escape(title)}</text>'
        )
        return parts


def _widen(low: float, high: float) -> tuple[float, float]:
    """A drawable range: non-finite ends become 0 and 1, an empty one is widened by 0.5."""
    low = low if finite(low) else 0.0
    high = high if finite(high) else 1.0
    if high < low:
        low, high = high, low
    if high == low:
        low, high = low - 0.5, high + 0.5
    return low, high


def _open(
    title: str,
    desc: str,
    width: int,
    height: int,
    *,
    testid: str = "",
    css_class: str = "",
    show_title: bool = True,
) -> list[str]:
    """The ``<svg>`` start: its accessible name and description, and (``show_title``) the
    title drawn on one line, cut to fit. A page that shows the title itself in HTML, where
    it wraps, passes ``show_title=False``: SVG text does not wrap."""
    extra = f' data-testid="{escape(testid)}"' if testid else ""
    classes = escape(" ".join(filter(None, ["chart", css_class])))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{classes}" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="system-ui, sans-serif"{extra}>',
        f"<title>{escape(title)}</title><desc>{escape(desc)}</desc>",
    ]
    if show_title:
        parts.append(
            f'<text x="10" y="18" font-size="13" font-weight="600" fill="{INK}">'
            f"{escape(_short(title, width - 20, 7.5))}</text>"
        )
    return parts


def _empty(
    title: str,
    width: int,
    height: int,
    testid: str,
    why: str = "no data",
    *,
    show_title: bool = True,
) -> str:
    parts = _open(title, why, width, height, testid=testid, show_title=show_title)
    parts.append(
        f'<text class="no-data" x="{width / 2:g}" y="{height / 2:g}" font-size="12" '
        f'text-anchor="middle" fill="{MUTED}">{escape(why)}</text></svg>'
    )
    return "".join(parts)


def _left_out(count: int) -> str:
    return f"; {count} non-numeric values left out" if count else ""


def histogram(
    edges: Sequence[float],
    counts: Sequence[int],
    *,
    title: str,
    x_title: str = "",
    y_title: str = "items",
    testid: str = "",
) -> str:
    """Bars over numeric bins: bar ``k`` spans ``edges[k]..edges[k+1]`` with height
    ``counts[k]`` (``len(edges) == len(counts) + 1``)."""
    if (edges or counts) and len(edges) != len(counts) + 1:
        raise ValueError(f"histogram: {len(edges)} edges for {len(counts)} counts")
    total = sum(counts)
    if not counts or total == 0 or not all(finite(e) for e in edges):
        return _empty(title, WIDTH, HEIGHT, testid)
    frame = _Frame((edges[0], edges[-1]), (0.0, float(max(counts))))
    peak = max(range(len(counts)), key=lambda k: counts[k])
    desc = (
        f"Histogram of {total} values in {len(counts)} bins from {number(edges[0])} to "
        f"{number(edges[-1])}; the fullest bin, {number(edges[peak])} to "
        f"{number(edges[peak + 1])}, holds {counts[peak]}."
    )
    parts = _open(title, desc, WIDTH, HEIGHT, testid=testid)
    parts += frame.y_axis(y_title)
    for k, count in enumerate(counts):
        if count <= 0:
            continue
        x0, x1 = frame.px(edges[k]), frame.px(edges[k + 1])
        top = frame.py(count)
        parts.append(
            f'<rect class="bar" x="{_c(x0)}" y="{_c(top)}" width="{_c(max(x1 - x0 - 1, 0.5))}" '
            f'height="{_c(frame.bottom - top)}" fill="{BLUE}" data-count="{count}">'
            f"<title>{number(edges[k])} to {number(edges[k + 1])}: {count}</title></rect>"
        )
    parts += frame.x_axis(x_title)
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(bars: Sequence[Bar], *, title: str, y_title: str = "", testid: str = "") -> str:
    """Labelled bars from zero (negative values hang below the zero line) with optional
    error bars; a bar without a drawable value keeps its slot and label, marked "n/a"."""
    drawn = [b for b in bars if finite(b.value)]
    if not drawn:
        return _empty(title, WIDTH, HEIGHT, testid)
    values = [0.0]
    for b in drawn:
        values += [v for v in (b.value, b.low, b.high) if v is not None and finite(v)]
    frame = _Frame((0.0, float(len(bars))), (min(values), max(values)))
    desc = "; ".join(
        f"{b.label}: {number(b.value)}"
        if b.value is not None and finite(b.value)
        else f"{b.label}: n/a"
        for b in bars
    )
    parts = _open(title, desc, WIDTH, HEIGHT, testid=testid)
    parts += frame.y_axis(y_title)
    zero = frame.py(0.0)
    slot = (frame.right - frame.left) / len(bars)
    for k, b in enumerate(bars):
        center = frame.left + slot * (k + 0.5)
        half = slot * 0.35
        parts.append(
            f'<text x="{_c(center)}" y="{frame.bottom + 13}" font-size="10" '
            f'text-anchor="middle" fill="{INK}">{escape(_short(b.label, slot))}</text>'
        )
        if b.value is None or not finite(b.value):
            parts.append(
                f'<text x="{_c(center)}" y="{_c(zero - 4)}" font-size="10" '
                f'text-anchor="middle" fill="{MUTED}">n/a</text>'
            )
            continue
        y = frame.py(b.value)
        tip = b.tip or f"{b.label}: {number(b.value)}"
        parts.append(
            f'<rect class="bar" x="{_c(center - half)}" y="{_c(min(y, zero))}" '
            f'width="{_c(2 * half)}" height="{_c(abs(zero - y))}" fill="{escape(b.color)}" '
            f'data-value="{b.value!r}"><title>{escape(tip)}</title></rect>'
        )
        if b.low is not None and b.high is not None and finite(b.low) and finite(b.high):
            lo, hi = frame.py(b.low), frame.py(b.high)
            parts.append(
                f'<path class="error-bar" d="M{_c(center)},{_c(lo)}V{_c(hi)}'
                f'M{_c(center - 5)},{_c(lo)}h10M{_c(center - 5)},{_c(hi)}h10" '
                f'stroke="{INK}" fill="none"/>'
            )
    parts.append(
        f'<line class="zero" x1="{frame.left}" y1="{_c(zero)}" x2="{frame.right}" '
        f'y2="{_c(zero)}" stroke="{INK}" stroke-width="1.5"/>'
    )
    parts += frame.x_axis("", ticks=False)
    parts.append("</svg>")
    return "".join(parts)


def _short(label: str, room: float, char_px: float = 6.0) -> str:
    """A label cut to fit ``room`` pixels (``char_px`` per character, about right for
    the sans-serif at the sizes used here); the full text stays in a ``<title>``."""
    fits = max(int(room / char_px), 3)
    return label if len(label) <= fits else label[: fits - 1] + "…"


def xy_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_title: str,
    y_title: str,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    diagonal: bool = False,
    width: int = WIDTH,
    height: int = HEIGHT,
    testid: str = "",
    whole_x: bool = False,
    show_title: bool = True,
) -> str:
    """Point and line series on numeric axes. The ranges default to the data's; with
    ``diagonal`` a dashed y = x line marks agreement (calibration charts); ``whole_x``
    labels only whole x ticks (x counts things, e.g. runs); without ``show_title`` the
    title is only the chart's accessible name (the page shows it, wrapped). Only data
    markers are ``<circle>`` elements, one per drawable point."""
    kept = [
        [(float(p.x), float(p.y), p) for p in s.points if finite(p.x) and finite(p.y)]  # type: ignore[arg-type]
        for s in series
    ]
    dropped = sum(len(s.points) for s in series) - sum(len(k) for k in kept)
    xs = [x for k in kept for x, _, _ in k]
    ys = [y for k in kept for _, y, _ in k]
    if not xs:
        why = "no data" + _left_out(dropped)
        return _empty(title, width, height, testid, why, show_title=show_title)
    frame = _Frame(x_range or (min(xs), max(xs)), y_range or (min(ys), max(ys)), width, height)
    desc = (
        "; ".join(f"{s.name}: {len(k)} points" for s, k in zip(series, kept, strict=True))
        + f"; x from {number(min(xs))} to {number(max(xs))}, y from {number(min(ys))} to "
        f"{number(max(ys))}" + _left_out(dropped)
    )
    parts = _open(title, desc, width, height, testid=testid, show_title=show_title)
    parts += frame.y_axis(y_title)
    parts.append(
        f'<rect x="{frame.left}" y="{frame.top}" width="{frame.right - frame.left}" '
        f'height="{frame.bottom - frame.top}" fill="none" stroke="{GRID}"/>'
    )
    if diagonal:
        low = max(frame.x_low, frame.y_low)
        high = min(frame.x_high, frame.y_high)
        if high > low:
            parts.append(
                f'<line class="diagonal" x1="{_c(frame.px(low))}" y1="{_c(frame.py(low))}" '
                f'x2="{_c(frame.px(high))}" y2="{_c(frame.py(high))}" stroke="{GREY}" '
                'stroke-dasharray="4 3"/>'
            )
    for s, points in zip(series, kept, strict=True):
        color = escape(s.color)
        cls = f' class="{escape(s.css_class)}"' if s.css_class else ""
        if s.line and points:
            coords = " ".join(f"{_c(frame.px(x))},{_c(frame.py(y))}" for x, y, _ in points)
            dash = ' stroke-dasharray="5 3"' if s.dashed else ""
            parts.append(
                f'<polyline{cls} points="{coords}" fill="none" stroke="{color}" '
                f'stroke-width="2"{dash}/>'
            )
        if s.markers:
            opacity = f' fill-opacity="{s.opacity:g}"' if s.opacity < 1 else ""
            for x, y, p in points:
                tip = p.tip or f"{number(x)}, {number(y)}"
                parts.append(
                    f'<circle cx="{_c(frame.px(x))}" cy="{_c(frame.py(y))}" '
                    f'r="{p.size:g}" fill="{color}"{opacity}><title>{escape(tip)}</title>'
                    "</circle>"
                )
    parts += frame.x_axis(x_title, whole=whole_x)
    parts.append("</svg>")
    return "".join(parts)


def heatmap(
    labels: Sequence[str],
    matrix: Sequence[Sequence[int]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    testid: str = "",
) -> str:
    """A square count matrix: row ``i`` is ``labels[i]`` on the y axis, column ``j`` on
    the x axis; the shade grows with the count and every count is written in its cell."""
    size = len(labels)
    if size == 0 or len(matrix) != size or any(len(row) != size for row in matrix):
        return _empty(title, WIDTH, HEIGHT, testid)
    cell = max(28, min(64, 240 // size))
    left, top = LEFT + 8, TOP + 6
    width = left + cell * size + RIGHT
    height = top + cell * size + 36
    largest = max((v for row in matrix for v in row), default=0) or 1
    desc = "; ".join(
        f"{y_title} {labels[i]}, {x_title} {labels[j]}: {matrix[i][j]}"
        for i in range(size)
        for j in range(size)
    )
    parts = _open(title, desc, max(width, 220), height, testid=testid)
    parts.append(
        f'<text x="{_c(left + cell * size / 2)}" y="{height - 6}" font-size="11" '
        f'text-anchor="middle" fill="{INK}">{escape(x_title)}</text>'
    )
    middle = _c(top + cell * size / 2)
    parts.append(
        f'<text x="12" y="{middle}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {middle})" fill="{INK}">{escape(y_title)}</text>'
    )
    for j, name in enumerate(labels):
        parts.append(
            f'<text fill="{MUTED}" x="{_c(left + cell * j + cell / 2)}" '
            f'y="{top + cell * size + 12}" font-size="10" text-anchor="middle">'
            f"{escape(name)}</text>"
        )
    for i, row in enumerate(matrix):
        parts.append(
            f'<text fill="{MUTED}" x="{left - 6}" y="{_c(top + cell * i + cell / 2 + 4)}" '
            f'font-size="10" text-anchor="end">{escape(labels[i])}</text>'
        )
        for j, count in enumerate(row):
            shade = count / largest
            ink = "#ffffff" if shade > 0.5 else "#222222"
            x, y = left + cell * j, top + cell * i
            parts.append(
                f'<rect class="cell" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="{BLUE}" fill-opacity="{0.08 + 0.92 * shade:.2f}" stroke="#ffffff">'
                f"<title>{escape(f'{y_title} {labels[i]}, {x_title} {labels[j]}: {count}')}"
                f'</title></rect><text x="{_c(x + cell / 2)}" y="{_c(y + cell / 2 + 4)}" '
                f'font-size="12" text-anchor="middle" fill="{ink}">{count}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
