from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from importlib.resources import files
from pathlib import Path

import pytest

from assay.analysis import report_html
from assay.analysis.compare import compare_runs
from assay.analysis.report_html import render_html_report, write_html_report
from assay.summary.accumulator import SummaryAccumulator
from assay.types import ItemResult, RunRecord

from .factories import record, result, rows, score, spec

XSS = "<script>alert('pwned-42')</script>"
SVG = "{http://www.w3.org/2000/svg}"


class _Page(HTMLParser):
    """Collects what the tests check: elements by tag, script attributes and bodies."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.script_bodies: list[str] = []
        self.plot_divs: list[str] = []
        self.bars: list[dict[str, str | None]] = []
        self.details = 0
        self.ids: set[str] = set()
        self.links: list[dict[str, str | None]] = []
        self.text: list[str] = []
        self.titles: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if a.get("title"):
            self.titles.append(str(a["title"]))
        if tag == "script":
            self.scripts.append(a)
            self._in_script = True
            self.script_bodies.append("")
        elif tag == "figure" and "plot" in (a.get("class") or "").split():
            self.plot_divs.append(str(a.get("id")))
        elif tag == "rect" and a.get("class") == "bar":
            self.bars.append(a)
        elif tag == "details":
            self.details += 1
        elif tag in ("link", "img", "iframe"):
            self.links.append(a)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.script_bodies[-1] += data
        else:
            self.text.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _results(n: int = 3) -> list[ItemResult]:
    out = [
        result(
            XSS,
            0,
            {"acc": score(1.0, reason=f"reason {XSS}"), "len": score(12.0, scorer_id="len")},
            input={"question": XSS},
            output=f"answer {XSS}",
        ),
        result("q2", 1, {"acc": score(0.0, reason="wrong"), "len": score(30.0, scorer_id="len")}),
        result("q3", 2, {}, error=f"crashed {XSS}"),
    ]
    out += [
        result(f"extra-{k}", 3 + k, {"acc": score(k % 2), "len": score(5.0, scorer_id="len")})
        for k in range(max(0, n - 3))
    ]
    return out


def _record(n: int = 3, *, with_summary: bool = True) -> RunRecord:
    specs = [spec("acc"), spec("len", higher_is_better=False)]
    specs[1] = specs[1].model_copy(update={"score_range": (0.0, 100.0)})
    summary = None
    if with_summary:
        acc = SummaryAccumulator()
        for r in _results(n):
            acc.add(r)
        summary = acc.summary(specs, threshold=0.5, duration_s=4.0)
    return record("run-html", scorers=specs, threshold=0.5, summary=summary)


def test_report_is_self_contained_with_plots_and_escaped_text() -> None:
    html = render_html_report(_record(), _results())
    page = _parse(html)
    assert XSS not in html
    assert "&lt;script&gt;alert(" in html  # shown, escaped
    # no script and no external resource: the charts are inline SVG
    assert not page.scripts and "<script" not in html.replace("&lt;script", "")
    assert not [
        link
        for link in page.links
        if any(str(v).startswith(("http://", "https://")) for v in link.values())
    ]
    assert "<link" not in html and "plotly" not in html.lower()
    # one distribution chart per scorer, each an accessible SVG
    assert page.plot_divs == ["plot-dist-0", "plot-dist-1"]
    figures = _figures(html)
    assert [f.get("role") for f in figures] == ["img", "img"]
    assert all(f.findtext(f"{SVG}title") for f in figures)
    # acc: two items scored (1.0 and 0.0) fall in the first and the last of 20 bins
    bars = [b for b in figures[0].iter(f"{SVG}rect") if b.get("class") == "bar"]
    assert sum(int(str(b.get("data-count"))) for b in bars) == 2
    assert "comparison" not in page.ids


def _figures(html: str) -> list[ET.Element]:
    """The charts of the page, parsed as XML (each must be well-formed on its own)."""
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", html, re.S)]


def test_header_summary_and_item_table() -> None:
    html = render_html_report(_record(), _results())
    page = _parse(html)
    text = " ".join(page.text)
    for needle in (
        "run-html",
        "qa v1",
        "app:answer",
        "completed",
        "acc ↑",
        "len ↓",
        "judge",
        "4.00 s",
    ):
        assert needle in text, needle
    assert "0.500" in text  # acc mean
    assert "RuntimeError: crashed" in text  # the target error in the output column
    assert f"reason {XSS}" in text  # the reason under its score, shown as text
    assert not any(XSS in t for t in page.titles)  # no text is copied into tooltips
    assert "3 results." in text and "rows-omitted" not in page.ids


def test_row_cap_note() -> None:
    html = render_html_report(_record(50), _results(50), max_rows=10)
    page = _parse(html)
    assert "rows-omitted" in page.ids
    text = " ".join(page.text)
    assert "Showing the first 10 of 50 results; 40 omitted" in text
    assert "extra-6" in text and "extra-7" not in text
    # the charts still cover every result, not just the shown rows
    bars = [b for b in _figures(html)[0].iter(f"{SVG}rect") if b.get("class") == "bar"]
    assert sum(int(str(b.get("data-count"))) for b in bars) == 49


def test_summary_is_computed_when_the_run_has_none() -> None:
    html = render_html_report(_record(with_summary=False), _results())
    assert "computed from its results" in html
    assert "0.500" in " ".join(_parse(html).text)


def test_comparison_section_and_hostile_scorer_id(tmp_path: Path) -> None:
    hostile = "</script><b>x"
    a_rows = rows({"x": [0.9], "y": [0.8], "z": [0.1]}, scorer_id=hostile)
    b_rows = rows({"x": [0.3], "y": [0.7], "z": [0.6]}, scorer_id=hostile)
    specs = [spec(hostile)]
    cmp = compare_runs(record("A", scorers=specs), a_rows, record("B", scorers=specs), b_rows)
    res = [result("x", 0, {hostile: score(0.3, scorer_id=hostile)})]
    path = write_html_report(tmp_path / "r.html", record("B", scorers=specs), res, comparison=cmp)
    html = path.read_text(encoding="utf-8")
    page = _parse(html)
    assert "comparison" in page.ids and "plot-delta" in page.plot_divs
    assert hostile not in html
    # the hostile id stayed text: the chart is still well-formed SVG
    delta = next(f for f in _figures(html) if "paired bootstrap" in str(f.findtext(f"{SVG}title")))
    (bar,) = [b for b in delta.iter(f"{SVG}rect") if b.get("class") == "bar"]
    assert abs(float(str(bar.get("data-value"))) + 0.2 / 3) < 1e-9
    assert hostile in str(bar.findtext(f"{SVG}title"))  # unescaped by the XML parser
    # a negative delta hangs below the zero line; its error bar spans the CI around it
    zero = next(ln for ln in delta.iter(f"{SVG}line") if ln.get("class") == "zero")
    assert float(str(bar.get("y"))) == float(str(zero.get("y1")))
    assert delta.find(f"{SVG}path[@class='error-bar']") is not None
    text = " ".join(page.text)
    assert "Regressed items" in text and "-0.600" in text


def test_template_ships_inside_the_package() -> None:
    assert (files("assay.analysis") / "templates" / "report.html.j2").is_file()


def _long_results(n: int, words: int) -> list[ItemResult]:
    return [
        result(
            f"long-{k}",
            k,
            {
                "acc": score(1.0, reason=" ".join(["because"] * words)),
                "len": score(5.0, scorer_id="len"),
            },
            input={"question": " ".join(f"w{k}x{j}" for j in range(words))},
            output=" ".join(f"word{j}" for j in range(words)) + f" {XSS}",
        )
        for k in range(n)
    ]


def test_long_text_opens_on_demand_whole_and_is_cut_at_a_word() -> None:
    html = render_html_report(_record(), _long_results(3, 200))
    page = _parse(html)
    assert "texts-cut" not in page.ids  # small run: every text is whole
    assert page.details == 3 * 3  # input and output of each row, and the acc reason
    output = " ".join(f"word{j}" for j in range(200)) + f" {XSS}"
    # the cell's head ends at a whole word, the rest follows in <details>, escaped
    head = re.search(r"<summary>(word0 [^<]*)<span class=\"ell\">", html)
    assert head is not None and len(head.group(1)) <= report_html.CELL_CHARS
    assert output.startswith(head.group(1)) and output[len(head.group(1))] == " "
    assert "word199 &lt;script&gt;alert(" in html
    text = "".join(page.text)
    assert text.count("word199") == 3  # once per row: not copied into a tooltip
    assert not [t for t in page.titles if "word" in t]


def test_many_long_texts_share_one_length_cap_within_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(report_html, "TEXT_BUDGET", 5_000)
    results = _long_results(20, 100)
    page = _parse(render_html_report(_record(20), results))
    assert "texts-cut" in page.ids
    note = " ".join(page.text)
    cap = int(re.search(r"kept up to ([\d,]+) characters", note).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert 0 < cap < 5_000 // 20
    assert "more characters" in note  # each cut text says how much is missing
    shown = "".join(page.text)
    assert "word99" not in shown  # the ends of the long outputs are not in the file


def test_length_cap_is_the_largest_that_fits() -> None:
    assert report_html.length_cap([10, 20, 30], 60) is None
    assert report_html.length_cap([10, 20, 30], 59) == 29  # 10 + 20 + 29
    assert report_html.length_cap([10, 20, 30], 40) == 15  # 10 + 15 + 15
    assert report_html.length_cap([100, 100], 3) == 1
    assert report_html.length_cap([], 0) is None
    for lengths, budget in (([5, 7, 300, 301, 2], 100), ([50] * 9, 449)):
        cap = report_html.length_cap(lengths, budget)
        assert cap is not None
        assert sum(min(n, cap) for n in lengths) <= budget < sum(min(n, cap + 1) for n in lengths)
