"""The calibration parts of the reports: the terminal table and the HTML section."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from assay.analysis.report_html import render_html_report
from assay.calibration.report import (
    calibration_section,
    calibration_tables,
    comparison_table,
    judge_corrected_text,
    write_calibration_files,
)
from assay.calibration.results import CalibrationReport
from assay.types import RunInfo, RunRecord, TargetSpec

SVG = "{http://www.w3.org/2000/svg}"


def _report(kind: str = "binary", **scorer: Any) -> dict[str, Any]:
    base = {
        "scorer_id": "judge",
        "run_id": "r" * 32,
        "n": 40,
        "errors": [{"item_id": "x", "error": "boom"}],
        "statistics": {
            "kappa": {"value": 0.71, "ci_low": 0.64, "ci_high": 0.77, "n": 40},
            "roc_auc": {
                "value": None,
                "ci_low": None,
                "ci_high": None,
                "n": 40,
                "reason": "one class",
            },
        },
        "gates": [{"statistic": "kappa", "bound": 0.7, "on": "ci", "passed": False}],
        "confusion_matrix": {"labels": [0, 1], "matrix": [[18, 2], [3, 17]]},
        "reliability": {
            "bins": [{"low": 0, "high": 0.1, "n": 5, "mean_score": 0.05, "positive_rate": 0.2}],
            "ece": 0.04,
        },
        "splits": {},
        "disagreements": [
            {
                "item_id": "i7",
                "direction": "scorer high, humans low",
                "label": "no",
                "score": 0.9,
                "reason": "looks fine <b>",
                "input": "q",
                "output": "a",
            }
        ],
        "certificate": {
            "id": "c" * 32,
            "fingerprint": "f" * 64,
            "data_key": "dataset:d@1",
            "passed": False,
            "n": 40,
            "created_at": 1795480000.0,
            "judge_model": "openai/x",
        },
    }
    base.update(scorer)
    return {
        "kind": kind,
        "data_key": "dataset:d@1",
        "split": None,
        "scorers": [base],
        "comparison": [],
    }


def _text(renderable: Any) -> str:
    console = Console(width=200, record=True)
    console.print(renderable)
    return " ".join(console.export_text().split())  # captions wrap


def test_the_terminal_table_shows_value_ci_and_gate() -> None:
    [table] = calibration_tables(_report())
    text = _text(table)
    assert "kappa" in text and "0.7100" in text and "[0.6400, 0.7700]" in text
    assert "FAIL (≥ 0.7 on ci)" in text
    assert "one class" in text  # an undefined statistic says why
    assert "1 items not scored (left out)" in text and "certificate cccccccc (gates failed)" in text


def test_a_split_adds_the_test_columns_the_gates_judge() -> None:
    report = _report(
        splits={
            "test": {
                "n": 12,
                "statistics": {"kappa": {"value": 0.5, "ci_low": 0.2, "ci_high": 0.8, "n": 12}},
            }
        }
    )
    text = _text(calibration_tables(report)[0])
    assert "test value" in text and "[0.2000, 0.8000]" in text
    assert "gates judge the held-out test split (n=12)" in text


def test_the_comparison_table_lists_each_difference() -> None:
    report = _report()
    assert comparison_table(report) is None
    report["comparison"] = [
        {
            "baseline": "v1",
            "candidate": "v2",
            "n": 40,
            "differences": {"kappa": {"value": -0.2, "ci_low": -0.3, "ci_high": -0.1, "n": 40}},
        }
    ]
    table = comparison_table(report)
    assert table is not None and "-0.2000" in _text(table)
    assert calibration_section(report)["comparison"] == [
        ("v1", "v2", "kappa", "-0.2000", "[-0.3000, -0.1000]")
    ]


def test_the_html_section_has_heatmap_reliability_scatter_disagreements_and_certificate() -> None:
    record = RunRecord(
        info=RunInfo(
            id="r" * 32, target=TargetSpec(kind="scorer", label="scorer judge"), created_at=1.0
        ),
        status="completed",
    )
    points = {"judge": [{"item_id": "i1", "label": 0.2, "score": 0.3}]}
    html = render_html_report(
        record, [], calibration_section=calibration_section(_report("numeric"), points)
    )
    assert 'id="calibration"' in html
    for div in ("cal-confusion-0", "cal-reliability-0", "cal-scatter-0"):
        assert f'id="plot-{div}"' in html
    assert "looks fine &lt;b&gt;" in html  # escaped
    assert "gates failed" in html and "dataset:d@1" in html
    # binary calibrations have no scatter; a run report without calibration has no section
    section = calibration_section(_report("binary"))
    assert [p.div_id for p in section["scorers"][0]["plots"]] == [
        "cal-confusion-0",
        "cal-reliability-0",
    ]
    assert 'id="calibration"' not in render_html_report(record, [])
    heatmap = ET.fromstring(section["scorers"][0]["plots"][0].svg)
    cells = [el for el in heatmap.iter(f"{SVG}rect") if el.get("class") == "cell"]
    counts = [int(str(el.findtext(f"{SVG}title")).rsplit(": ", 1)[1]) for el in cells]
    assert counts == [18, 2, 3, 17]  # row by row: human label, then scorer verdict


def test_the_scatter_leaves_out_labels_that_are_not_numbers_and_escapes_ids() -> None:
    points = {
        "judge": [
            {"item_id": "</svg><script>x</script>", "label": 1, "score": 0.9},
            {"item_id": "i2", "label": "yes", "score": 0.4},
            {"item_id": "i3", "label": 0.5, "score": None},
        ]
    }
    section = calibration_section(_report("numeric"), points)
    scatter = next(p for p in section["scorers"][0]["plots"] if p.div_id == "cal-scatter-0")
    root = ET.fromstring(scatter.svg)
    (dot,) = root.iter(f"{SVG}circle")
    assert str(dot.findtext(f"{SVG}title")).startswith("</svg><script>x</script>: human 1")
    assert "2 non-numeric values left out" in str(root.findtext(f"{SVG}desc"))
    assert "<script>" not in scatter.svg


def _empty_report() -> CalibrationReport:
    return CalibrationReport(
        name=None,
        kind="binary",
        label="label",
        data_key="d",
        threshold=0.5,
        repeats=1,
        split=None,
        gate_on="ci",
        items=0,
        scorers=[],
    )


def test_the_requested_files_are_written_whole_and_named(tmp_path: Path) -> None:
    data = {"kind": "binary", "judge_corrected": {"j": {"value": None}}, "text": "é <b>"}
    lines = write_calibration_files(
        _empty_report(),
        data,
        json_path=tmp_path / "out" / "cal.json",
        disagreements_path=tmp_path / "dis.jsonl",
    )
    assert lines == [
        f"wrote {tmp_path / 'out' / 'cal.json'}",
        f"wrote 0 disagreements to {tmp_path / 'dis.jsonl'}",
    ]
    assert json.loads((tmp_path / "out" / "cal.json").read_text(encoding="utf-8")) == data
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["cal.json", "dis.jsonl", "out"]
    assert write_calibration_files(_empty_report(), data) == []  # nothing asked, nothing written


def test_an_unwritable_json_path_raises_and_leaves_no_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(OSError):
        write_calibration_files(_empty_report(), {}, json_path=blocker / "cal.json")
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_a_judge_corrected_mean_reads_as_one_line() -> None:
    corrected = {
        "value": 0.61234,
        "ci_low": 0.5,
        "ci_high": 0.7,
        "judge_mean": 0.8,
        "n_labelled": 40,
        "n": 400,
        "weight": 0.25,
    }
    assert judge_corrected_text(corrected) == (
        "0.6123 [0.5000, 0.7000] (judge alone 0.8000, 40 of 400 labelled, λ 0.25)"
    )
    assert judge_corrected_text({"value": None, "reason": "2 labelled items"}) == (
        "no estimate: 2 labelled items"
    )
