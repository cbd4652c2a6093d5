"""Named values, aggregates and the weighted score in comparisons and reports (terminal,
JSON, HTML)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from assay.analysis.compare import compare_runs
from assay.analysis.report_html import render_html_report
from assay.analysis.report_json import run_report_dict, write_run_json
from assay.analysis.report_terminal import comparison_table, summary_table
from assay.summary.accumulator import SummaryAccumulator
from assay.types import ItemResult, RunRecord, ScoreResult, ScoreRow, ScorerSpec

from .factories import record, result


def _render(*renderables: object) -> str:
    console = Console(record=True, width=240, color_system=None)
    for r in renderables:
        console.print(r)
    return console.export_text()


def _rouge(value: float, rouge2: float) -> ScoreResult:
    return ScoreResult(
        scorer_id="rouge",
        scorer_label="Rouge",
        call_id="c",
        status="ready",
        score=value,
        values={"rouge1": value, "rouge2": rouge2},
        reason="overlap",
    )


SPECS = [
    ScorerSpec(id="rouge", label="Rouge", aggregations=("mean", "median"), weight=1.0),
    ScorerSpec(
        id="err",
        label="Errors",
        higher_is_better=False,
        score_range=(0.0, 10.0),
        threshold=3.0,
        weight=3.0,
    ),
]


def _results() -> list[ItemResult]:
    def err(value: float) -> ScoreResult:
        return ScoreResult(
            scorer_id="err", scorer_label="Errors", call_id="c", status="ready", score=value
        )

    return [
        result("q1", 0, {"rouge": _rouge(0.8, 0.4), "err": err(2.0)}),
        result("q2", 1, {"rouge": _rouge(0.4, 0.2), "err": err(6.0)}),
    ]


def _record() -> RunRecord:
    acc = SummaryAccumulator(SPECS)
    for r in _results():
        acc.add(r)
    summary = acc.summary(SPECS, threshold=0.5, duration_s=1.0)
    return record("run-values", scorers=SPECS, threshold=0.5, summary=summary)


def test_summary_table_shows_values_aggregates_thresholds_and_weighted_score() -> None:
    rec = _record()
    assert rec.summary is not None
    assert rec.summary.weighted_score == pytest.approx((0.6 + 3 * 0.6) / 4)  # err: 1 - 4/10
    text = _render(summary_table(rec))
    rouge2 = next(line for line in text.splitlines() if "rouge.rouge2" in line)
    assert "0.300" in rouge2  # mean of 0.4 and 0.2
    assert "rouge.rouge1" in text
    assert "median 0.600" in text  # the declared aggregation
    assert "@3" in text and "@0.5" in text  # per-scorer thresholds differ: shown per row
    assert "weighted score 0.600" in text


def test_comparison_shows_each_value() -> None:
    def rows(shift: float) -> list[ScoreRow]:
        return [
            ScoreRow(f"q{k}", k, 0, "rouge", "ready", 0.5, {"rouge2": k / 10 + shift})
            for k in range(5)
        ]

    cmp = compare_runs(record("a", scorers=SPECS[:1]), rows(0), record("b"), rows(0.1))
    (rouge,) = cmp.scorers
    assert rouge.values["rouge2"].delta is not None
    assert abs(rouge.values["rouge2"].delta - 0.1) < 1e-9
    assert rouge.values["rouge2"].verdict == "improved"
    text = _render(comparison_table(cmp))
    line = next(line for line in text.splitlines() if "rouge.rouge2" in line)
    assert "+0.100" in line and "improved" in line
    html = render_html_report(_record(), _results(), comparison=cmp)
    assert "rouge.rouge2" in html and "+0.100" in html


def test_json_export_carries_values_and_summaries(tmp_path: Path) -> None:
    rec = _record()
    doc = run_report_dict(rec, _results())
    assert doc["results"][0]["scores"]["rouge"]["values"] == {"rouge1": 0.8, "rouge2": 0.4}
    summary = doc["run"]["summary"]
    assert summary["scorers"]["rouge"]["values"]["rouge2"]["mean"] == pytest.approx(0.3)
    assert summary["scorers"]["rouge"]["aggregates"] == {
        "mean": pytest.approx(0.6),
        "median": pytest.approx(0.6),
    }
    assert summary["weighted_score"] == pytest.approx(0.6)
    assert summary["weighted_scorers"] == ["rouge", "err"]
    assert doc["run"]["info"]["scorers"][1]["threshold"] == 3.0
    path = tmp_path / "run.json"
    write_run_json(path, rec, _results())
    assert json.loads(path.read_text()) == doc


def test_html_report_shows_values_aggregates_and_weighted_score() -> None:
    html = render_html_report(_record(), _results())
    assert "rouge.rouge2" in html and "rouge.rouge1" in html
    assert "median 0.600" in html
    assert "weighted score" in html and "0.600 over rouge, err" in html
    assert "rouge1 0.800, rouge2 0.400" in html  # a result's values in its cell's tooltip
    # item cells are marked at each scorer's own threshold: err 2 passes (<= 3), 6 fails
    assert html.count('class="num pass"') >= 2 and 'class="num fail"' in html
