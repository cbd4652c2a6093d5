"""``analysis.svg_charts``: geometry matches the data, odd data draws, text stays text."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from assay.analysis import svg_charts as charts
from assay.analysis.svg_charts import Bar, Point, Series

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "</svg><script>alert(1)</script>&amp;\"'"


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root[0].tag == f"{SVG}title" and root[0].text  # the accessible name comes first
    assert root[1].tag == f"{SVG}desc" and root[1].text
    return root


def _geometry_is_finite(root: ET.Element) -> bool:
    """No coordinate or size of any element is NaN or infinite."""
    names = ("x", "y", "width", "height", "cx", "cy", "r", "x1", "x2", "y1", "y2", "points", "d")
    values = [str(el.get(n)).lower() for el in root.iter() for n in names if el.get(n)]
    return bool(values) and not any("nan" in v or "inf" in v for v in values)


def _bars(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]


def _f(el: ET.Element, name: str) -> float:
    return float(str(el.get(name)))


def test_histogram_bar_heights_and_positions_match_the_counts() -> None:
    edges = [0.0, 0.25, 0.5, 0.75, 1.0]
    counts = [2, 0, 8, 4]
    root = _parse(charts.histogram(edges, counts, title="acc", x_title="score"))
    bars = _bars(root)
    assert [int(str(b.get("data-count"))) for b in bars] == [2, 8, 4]  # empty bin: no bar
    heights = [_f(b, "height") for b in bars]
    # heights are proportional to the counts (within the 0.1 px rounding)
    for bar, count in zip(bars, [2, 8, 4], strict=True):
        assert _f(bar, "height") == pytest.approx(heights[1] * count / 8, abs=0.2)
    # all bars stand on one baseline
    bottoms = {round(_f(b, "y") + _f(b, "height"), 1) for b in bars}
    assert len(bottoms) == 1
    # x positions follow the bin edges: equal bins are equally spaced, in order
    xs = [_f(b, "x") for b in bars]
    step = (xs[1] - xs[0]) / 2  # bins 0 and 2
    assert xs[2] - xs[1] == pytest.approx(step, abs=0.2)
    assert [b.findtext(f"{SVG}title") for b in bars] == [
        "0 to 0.25: 2",
        "0.5 to 0.75: 8",
        "0.75 to 1: 4",
    ]


def test_histogram_of_nothing_says_so_and_rejects_mismatched_edges() -> None:
    root = _parse(charts.histogram([0.0, 1.0], [0], title="empty"))
    assert not _bars(root)
    assert any(t.get("class") == "no-data" for t in root.iter(f"{SVG}text"))
    _parse(charts.histogram([], [], title="empty"))
    with pytest.raises(ValueError, match="3 edges for 1 counts"):
        charts.histogram([0.0, 0.5, 1.0], [1], title="bad")


def test_histogram_of_a_single_value_fills_one_bin() -> None:
    root = _parse(charts.histogram([3.0, 3.0], [5], title="one"))  # zero-width range
    (bar,) = _bars(root)
    assert _f(bar, "height") > 0 and _geometry_is_finite(root)


def test_bars_go_up_and_down_from_zero_with_error_bars() -> None:
    bars = [
        Bar("up", 0.5, low=0.25, high=0.75),
        Bar("down", -0.25, low=-0.5, high=0.0, color=charts.RED),
        Bar("missing", None),
        Bar("not a number", math.nan),
    ]
    root = _parse(charts.bar_chart(bars, title="delta"))
    up, down = _bars(root)
    zero = next(ln for ln in root.iter(f"{SVG}line") if ln.get("class") == "zero")
    baseline = _f(zero, "y1")
    assert _f(up, "y") + _f(up, "height") == pytest.approx(baseline, abs=0.2)  # up: ends at 0
    assert _f(down, "y") == pytest.approx(baseline, abs=0.2)  # down: starts at 0
    assert _f(up, "height") == pytest.approx(2 * _f(down, "height"), abs=0.3)
    assert down.get("fill") == charts.RED
    assert _f(up, "x") < _f(down, "x")  # in the given order
    # one error bar per bar with an interval
    paths = [p for p in root.iter(f"{SVG}path") if p.get("class") == "error-bar"]
    assert len(paths) == 2
    # the bars without a value keep their slot, marked n/a, and no coordinate is nan
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts.count("n/a") == 2 and "missing" in texts
    assert _geometry_is_finite(root)


def test_bars_with_no_value_at_all_draw_an_empty_chart() -> None:
    root = _parse(charts.bar_chart([Bar("x", None)], title="nothing"))
    assert not _bars(root)
    _parse(charts.bar_chart([], title="nothing"))


def test_xy_points_land_where_the_data_says() -> None:
    series = Series("s", [Point(0.0, 0.0), Point(1.0, 1.0), Point(0.5, 0.25)])
    root = _parse(
        charts.xy_chart(
            [series], title="t", x_title="x", y_title="y", x_range=(0, 1), y_range=(0, 1)
        )
    )
    (a, b, c) = [(_f(p, "cx"), _f(p, "cy")) for p in root.iter(f"{SVG}circle")]
    assert a[0] == charts.LEFT and b[0] == charts.WIDTH - charts.RIGHT
    assert a[1] == charts.HEIGHT - charts.BOTTOM and b[1] == charts.TOP
    assert c[0] == pytest.approx((a[0] + b[0]) / 2, abs=0.1)
    assert c[1] == pytest.approx(a[1] - (a[1] - b[1]) / 4, abs=0.1)


def test_xy_leaves_out_none_and_nan_and_says_how_many() -> None:
    series = Series(
        "s",
        [Point(None, 1.0), Point(math.nan, 0.0), Point(0.0, math.inf), Point(0.2, 0.4)],
        line=True,
    )
    svg = charts.xy_chart([series], title="t", x_title="x", y_title="y")
    root = _parse(svg)
    assert len(list(root.iter(f"{SVG}circle"))) == 1  # a single point: the range widens
    assert _geometry_is_finite(root)
    assert "3 non-numeric values left out" in str(root.findtext(f"{SVG}desc"))
    only_bad = charts.xy_chart(
        [Series("s", [Point(None, None)])], title="t", x_title="x", y_title="y"
    )
    assert "no data; 1 non-numeric values left out" in only_bad
    _parse(charts.xy_chart([], title="t", x_title="x", y_title="y"))


def test_diagonal_joins_the_shared_range() -> None:
    root = _parse(
        charts.xy_chart(
            [Series("s", [Point(0.5, 0.5)])],
            title="t",
            x_title="x",
            y_title="y",
            x_range=(0, 1),
            y_range=(0, 1),
            diagonal=True,
        )
    )
    diagonal = next(ln for ln in root.iter(f"{SVG}line") if ln.get("class") == "diagonal")
    assert (_f(diagonal, "x1"), _f(diagonal, "y1")) == (charts.LEFT, charts.HEIGHT - charts.BOTTOM)
    assert (_f(diagonal, "x2"), _f(diagonal, "y2")) == (charts.WIDTH - charts.RIGHT, charts.TOP)


def test_heatmap_shades_and_writes_each_count_in_row_order() -> None:
    root = _parse(charts.heatmap(["0", "1"], [[9, 1], [0, 3]], title="c", x_title="v", y_title="h"))
    cells = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "cell"]
    assert [c.findtext(f"{SVG}title") for c in cells] == [
        "h 0, v 0: 9",
        "h 0, v 1: 1",
        "h 1, v 0: 0",
        "h 1, v 1: 3",
    ]
    shades = [float(str(c.get("fill-opacity"))) for c in cells]
    assert shades[0] == 1.0 and shades[2] == pytest.approx(0.08) and shades[1] < shades[3]
    # cells sit on a grid: row 1 below row 0, column 1 right of column 0
    assert _f(cells[1], "x") > _f(cells[0], "x") and _f(cells[2], "y") > _f(cells[0], "y")
    _parse(charts.heatmap([], [], title="c", x_title="v", y_title="h"))
    _parse(charts.heatmap(["a"], [[1, 2]], title="ragged", x_title="v", y_title="h"))


@pytest.mark.parametrize(
    "draw",
    [
        lambda: charts.histogram([0.0, 1.0], [3], title=HOSTILE, x_title=HOSTILE, y_title=HOSTILE),
        lambda: charts.bar_chart([Bar(HOSTILE, 1.0, tip=HOSTILE)], title=HOSTILE, y_title=HOSTILE),
        lambda: charts.xy_chart(
            [Series(HOSTILE, [Point(1.0, 2.0, HOSTILE)], color=HOSTILE, css_class=HOSTILE)],
            title=HOSTILE,
            x_title=HOSTILE,
            y_title=HOSTILE,
            testid=HOSTILE,
        ),
        lambda: charts.heatmap([HOSTILE], [[1]], title=HOSTILE, x_title=HOSTILE, y_title=HOSTILE),
    ],
)
def test_hostile_text_stays_text(draw: object) -> None:
    svg = draw()  # type: ignore[operator]
    root = _parse(svg)
    assert "</svg><script>" not in svg and "<script" not in svg
    assert not list(root.iter("script")) and not list(root.iter(f"{SVG}script"))
    # the parser gives the label back exactly: escaped once, not dropped or doubled
    assert HOSTILE in "".join(root.itertext())


def test_nice_ticks_are_round_and_inside_the_range() -> None:
    assert charts.nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert charts.nice_ticks(-0.3, 0.1) == [-0.3, -0.2, -0.1, 0.0, 0.1]
    assert charts.nice_ticks(0.0, 37.0) == [0.0, 10.0, 20.0, 30.0]
    assert charts.nice_ticks(2.0, 2.0) == [2.0]
    assert charts.nice_ticks(math.nan, 1.0) == []
