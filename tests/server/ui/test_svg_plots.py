"""``server.ui.svg_plots``: the inline SVG the calibration page embeds."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from assay.calibration.view import CalibrationPoint, ReliabilityBin
from assay.server.ui.svg_plots import confusion_svg, reliability_svg, scatter_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_scatter_places_points_inside_the_frame_and_escapes_ids() -> None:
    points = [
        CalibrationPoint(item_id="<a&b>", label=0.0, score=0.0),
        CalibrationPoint(item_id="top", label=1.0, score=1.0),
    ]
    svg = scatter_svg(points, 0.0, 1.0)
    root = ET.fromstring(svg)  # well-formed: user text cannot break the markup
    circles = root.findall(f"{SVG}circle")
    assert len(circles) == 2
    (x0, y0), (x1, y1) = [(float(c.get("cx", "")), float(c.get("cy", ""))) for c in circles]
    assert x0 < x1 and y0 > y1  # higher label is drawn higher up
    assert "&lt;a&amp;b&gt;" in svg and "<a&b>" not in svg


def test_reliability_draws_one_marker_per_bin_and_a_line_through_them() -> None:
    bins = [
        ReliabilityBin(low=0.0, high=0.1, n=3, mean_score=0.05, mean_label=0.0),
        ReliabilityBin(low=0.9, high=1.0, n=9, mean_score=0.95, mean_label=1.0),
    ]
    root = ET.fromstring(reliability_svg(bins, 0.0, 1.0))
    assert len(root.findall(f"{SVG}circle")) == 2
    line = root.find(f"{SVG}polyline")
    assert line is not None and len(line.get("points", "").split()) == 2
    # dot area grows with the bin's count: the 9-item bin's marker is the larger one
    small, large = (float(c.get("r", "")) for c in root.findall(f"{SVG}circle"))
    assert small < large


def test_confusion_heatmap_writes_every_count_in_row_order() -> None:
    svg = confusion_svg({"labels": [0, 1, 2], "matrix": [[5, 1, 0], [2, 7, 1], [0, 0, 4]]})
    ET.fromstring(svg)
    counts = re.findall(r'fill="#[0-9a-f]+">(\d+)</text>', svg)
    assert counts == ["5", "1", "0", "2", "7", "1", "0", "0", "4"]
