"""The calibration parts of the reports: a terminal table and the HTML report's section.

Both read the calibration report as JSON data (``CalibrationReport.to_json()``), the same
shape ``assay calibrate --json`` writes, so the terminal, the HTML page and a file on disk
can never show different numbers. The HTML section has a confusion heatmap, the reliability
curve (binary), a score-vs-label scatter (numeric and ordinal labels), drawn by
``svg_charts``, the statistics with their CIs and gates, the disagreement table and the
certificate; ``write_calibration_report`` hands the section to ``report_html`` (the
analysis room below knows nothing of calibration).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.table import Table

from assay.analysis import svg_charts as charts
from assay.analysis.formatting import clip
from assay.analysis.report_html import write_html_report
from assay.analysis.report_json import write_json_file
from assay.analysis.svg_charts import Chart, Point, Series
from assay.calibration.results import CalibrationReport
from assay.store import Store, using_store

_TEXT_CHARS = 200


def _number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _ci(estimate: Mapping[str, Any]) -> str:
    low, high = estimate.get("ci_low"), estimate.get("ci_high")
    if low is None or high is None:
        return estimate.get("reason") or "—"
    return f"[{low:.4f}, {high:.4f}]"


def _gate_by_statistic(scorer: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    gates: dict[str, list[Mapping[str, Any]]] = {}
    for gate in scorer.get("gates", []):
        gates.setdefault(gate["statistic"], []).append(gate)
    return gates


def _gate_text(gates: list[Mapping[str, Any]] | None) -> str:
    texts = []
    for gate in gates or []:
        mark = "pass" if gate["passed"] else "FAIL"
        if gate.get("bound") is None:  # a `require` gate: defined with a CI
            texts.append(f"{mark} (required)")
        else:
            texts.append(f"{mark} (≥ {gate['bound']:g} on {gate['on']})")
    return "; ".join(texts)


def statistic_rows(scorer: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """(statistic, value, 95% CI, gate) for each statistic of one scorer's calibration."""
    gates = _gate_by_statistic(scorer)
    rows = []
    for name, estimate in scorer.get("statistics", {}).items():
        rows.append(
            (name, _number(estimate.get("value")), _ci(estimate), _gate_text(gates.get(name)))
        )
    return rows


def calibration_tables(report: Mapping[str, Any]) -> list[Table]:
    """One rich table per calibrated scorer: statistic, value, 95% CI, gate (with a
    ``split``: the held-out test split's value and CI too, which is what the gates judge)."""
    tables: list[Table] = []
    for scorer in report.get("scorers", []):
        test = scorer.get("splits", {}).get("test")
        table = Table(
            title=f"calibration of {scorer['scorer_id']} ({report['kind']}, n={scorer['n']})",
            caption=_caption(scorer)
            + (f" · gates judge the held-out test split (n={test['n']})" if test else ""),
        )
        headers = ["statistic", "value", "95% CI"]
        if test:
            headers += ["test value", "test 95% CI"]
        headers.append("gate")
        for header in headers:
            table.add_column(header, justify="left" if header in ("statistic", "gate") else "right")
        test_stats = test.get("statistics", {}) if test else {}
        for name, value, ci, gate in statistic_rows(scorer):
            style = "red" if gate.startswith("FAIL") else None
            cells = [name, value, ci]
            if test:
                held = test_stats.get(name, {})
                cells += [_number(held.get("value")), _ci(held) if held else "—"]
            table.add_row(*cells, gate, style=style)
        tables.append(table)
    return tables


def _caption(scorer: Mapping[str, Any]) -> str:
    parts = [f"run {scorer['run_id'][:8]}"]
    if scorer.get("errors"):
        parts.append(f"{len(scorer['errors'])} items not scored (left out)")
    bias = scorer.get("position_bias")
    if bias:
        parts.append(
            f"position bias {bias['flips']}/{bias['pairs']} pairs flipped (counted as ties)"
        )
    consistency = scorer.get("self_consistency")
    if consistency and consistency.get("statistics"):
        shown = ", ".join(
            f"{k} {_number(v.get('value'))}" for k, v in consistency["statistics"].items()
        )
        parts.append(f"self-consistency: {shown}")
    cert = scorer.get("certificate")
    if cert:
        parts.append(
            f"certificate {cert['id'][:8]} ({'passed' if cert['passed'] else 'gates failed'})"
        )
    return " · ".join(parts)


def comparison_table(report: Mapping[str, Any]) -> Table | None:
    """Paired differences of each statistic (candidate − baseline) with their CIs."""
    comparisons = report.get("comparison") or []
    if not comparisons:
        return None
    table = Table(title="comparison: candidate − baseline, paired bootstrap 95% CI")
    for header in ("baseline", "candidate", "statistic", "Δ", "95% CI"):
        table.add_column(header)
    for cmp in comparisons:
        for name, estimate in cmp["differences"].items():
            table.add_row(
                cmp["baseline"],
                cmp["candidate"],
                name,
                _number(estimate.get("value")),
                _ci(estimate),
            )
    return table


# ---------------------------------------------------------------------- HTML


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value) if value is not None else ""
    return clip(text, _TEXT_CHARS)


def _float(value: Any) -> float | None:
    """A label or score as a number to plot; anything else (a text label) is left out."""
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, int | float) else None


def _confusion_plot(scorer: Mapping[str, Any], index: int) -> Chart | None:
    matrix = scorer.get("confusion_matrix")
    if not matrix:
        return None
    svg = charts.heatmap(
        [str(v) for v in matrix["labels"]],
        matrix["matrix"],
        title=f"confusion: {scorer['scorer_id']}",
        x_title="scorer verdict",
        y_title="human label",
    )
    return Chart(f"cal-confusion-{index}", scorer["scorer_id"], svg)


def _reliability_plot(scorer: Mapping[str, Any], index: int) -> Chart | None:
    curve = scorer.get("reliability")
    if not curve or not curve.get("bins"):
        return None
    points = [
        Point(
            _float(b["mean_score"]),
            _float(b["positive_rate"]),
            f"{b['n']} items: mean score {_number(b['mean_score'])}, "
            f"share positive {_number(b['positive_rate'])}",
        )
        for b in curve["bins"]
    ]
    ece = curve.get("ece")
    svg = charts.xy_chart(
        [Series("scorer", points, line=True)],
        title="reliability" + (f" (ECE {ece:.3f})" if isinstance(ece, float) else ""),
        x_title="mean score in bin",
        y_title="share labelled positive",
        x_range=(0.0, 1.0),
        y_range=(0.0, 1.0),
        diagonal=True,
    )
    return Chart(f"cal-reliability-{index}", scorer["scorer_id"], svg)


def _scatter_plot(
    scorer: Mapping[str, Any], index: int, points: Sequence[Mapping[str, Any]]
) -> Chart | None:
    if not points:
        return None
    shown = [
        Point(
            _float(p["label"]),
            _float(p["score"]),
            f"{p['item_id']}: human {_number(p['label'])}, score {_number(p['score'])}",
        )
        for p in points
    ]
    svg = charts.xy_chart(
        [Series("items", shown, opacity=0.6)],
        title=f"score vs human label: {scorer['scorer_id']}",
        x_title="human label",
        y_title="scorer score",
    )
    return Chart(f"cal-scatter-{index}", scorer["scorer_id"], svg)


def calibration_section(
    report: Mapping[str, Any], points: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
) -> dict[str, Any]:
    """The template context of the HTML report's calibration section. ``points`` (scorer
    id → ``{item_id, label, score}``) feed the score-vs-label scatter of numeric labels."""
    scorers: list[dict[str, Any]] = []
    for index, scorer in enumerate(report.get("scorers", [])):
        plots = [_confusion_plot(scorer, index), _reliability_plot(scorer, index)]
        if report["kind"] in ("numeric", "ordinal"):
            plots.append(_scatter_plot(scorer, index, (points or {}).get(scorer["scorer_id"], [])))
        cert = scorer.get("certificate")
        scorers.append(
            {
                "id": scorer["scorer_id"],
                "n": scorer["n"],
                "errors": len(scorer.get("errors", [])),
                "rows": statistic_rows(scorer),
                "splits": {
                    part: statistic_rows({"statistics": section.get("statistics", {})})
                    for part, section in scorer.get("splits", {}).items()
                },
                "plots": [p for p in plots if p is not None],
                "disagreements": [
                    {
                        "item": str(row["item_id"]),
                        "direction": row["direction"],
                        "label": _clip(row["label"]),
                        "score": _number(row["score"]),
                        "reason": _clip(row.get("reason")),
                        "input": _clip(row.get("input")),
                        "output": _clip(row.get("output")),
                    }
                    for row in scorer.get("disagreements", [])
                ],
                "certificate": None
                if not cert
                else {
                    "id": cert["id"],
                    "fingerprint": cert["fingerprint"][:16],
                    "data_key": cert["data_key"],
                    "passed": cert["passed"],
                    "n": cert["n"],
                    "when": datetime.fromtimestamp(cert["created_at"], tz=UTC).strftime(
                        "%Y-%m-%d %H:%M UTC"
                    ),
                    "judge_model": cert.get("judge_model") or "—",
                },
            }
        )
    comparison = [
        (cmp["baseline"], cmp["candidate"], name, _number(estimate.get("value")), _ci(estimate))
        for cmp in report.get("comparison") or []
        for name, estimate in cmp["differences"].items()
    ]
    return {
        "kind": report["kind"],
        "data_key": report["data_key"],
        "scorers": scorers,
        "comparison": comparison,
    }


def write_disagreements(report: CalibrationReport, path: str | Path) -> int:
    """Write the most-disagreeing items of every scorer as a JSONL dataset file that
    ``assay datasets import`` accepts: the item with its human label as ``expected_output``
    (to relabel, or to use as few-shot examples) and the scorer's score and reason in
    metadata. Returns the number of rows. Written to a temporary file and renamed, so a
    failure never leaves half a file."""
    target = Path(path)
    rows: list[str] = []
    for calibration in report.scorers:
        multi = len(report.scorers) > 1
        for row in calibration.disagreements:
            item_id = f"{calibration.scorer_id}:{row['item_id']}" if multi else row["item_id"]
            record = {
                "id": item_id,
                "input": row["input"],
                "output": row["output"],
                "expected_output": row["label"],
                "context": row["context"],
                "metadata": {
                    "scorer": calibration.scorer_id,
                    "score": row["score"],
                    "reason": row["reason"],
                    "gap": row["gap"],
                    "direction": row["direction"],
                    "split": row["split"],
                    "calibration_run": calibration.run_id,
                },
            }
            rows.append(json.dumps(record, ensure_ascii=False))
    partial = target.with_name(target.name + ".partial")
    partial.write_text("".join(line + "\n" for line in rows), encoding="utf-8")
    partial.replace(target)
    return len(rows)


def write_calibration_report(
    report: CalibrationReport, path: str | Path, *, store: Store | None = None
) -> Path:
    """The HTML report of the (first) calibration run with the calibration section: every
    scorer's statistics, plots, disagreements and certificate."""
    first = report.scorers[0]
    points = {s.scorer_id: s.points for s in report.scorers}
    with using_store(store) as db:
        record = db.runs.get(first.run_id)
        return write_html_report(
            path,
            record,
            db.runs.results(record.id),
            calibration_section=calibration_section(report.to_json(), points),
        )


def judge_corrected_text(corrected: Mapping[str, Any]) -> str:
    """One scorer's judge-corrected mean as a line: the estimate with its CI beside the
    judge alone, how many items were labelled, and λ (how much of the judge it kept)."""
    if corrected.get("value") is None:
        return f"no estimate: {corrected.get('reason')}"
    return (
        f"{corrected['value']:.4f} [{corrected['ci_low']:.4f}, {corrected['ci_high']:.4f}] "
        f"(judge alone {corrected['judge_mean']:.4f}, {corrected['n_labelled']} of "
        f"{corrected['n']} labelled, λ {corrected.get('weight', 1.0):.2f})"
    )


def write_calibration_files(
    report: CalibrationReport,
    data: Mapping[str, Any],
    *,
    json_path: str | Path | None = None,
    disagreements_path: str | Path | None = None,
    html_path: str | Path | None = None,
    store: Store | None = None,
) -> list[str]:
    """Write what ``assay calibrate`` was asked for: ``data`` (the report's JSON, with any
    extra sections) to ``json_path``, the disagreements as a dataset file, the HTML report.
    Returns one ``wrote ...`` line per file. Each file is written whole or not at all."""
    written: list[str] = []
    if json_path is not None:
        written.append(f"wrote {write_json_file(json_path, data)}")
    if disagreements_path is not None:
        count = write_disagreements(report, disagreements_path)
        written.append(f"wrote {count} disagreements to {disagreements_path}")
    if html_path is not None:
        written.append(f"wrote {write_calibration_report(report, html_path, store=store)}")
    return written
