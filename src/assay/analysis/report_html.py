"""A self-contained HTML report of a run: header, summary, distributions, comparison, items.

One file that opens offline: plotly.js is inlined once and every figure is a JSON spec
rendered by it, so a report can be mailed or attached to a ticket. The results are read in
a single streaming pass: all scores go into compact columns (for the plots and, when the
run has no stored summary, the statistics) while only the first ``max_rows`` results are
kept as table rows, so the file stays small and memory flat for large runs.

All user text is escaped by Jinja2's autoescaping; figure JSON has ``<``, ``>`` and ``&``
as unicode escapes so a scorer named ``</script>`` cannot end the script block.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from assay.analysis import formatting as fmt
from assay.analysis.compare import RunComparison, top_items
from assay.summary.accumulator import SummaryAccumulator
from assay.summary.columns import ScoreColumns
from assay.summary.stats import effective_threshold, item_stats
from assay.types import ItemResult, RunRecord, RunSummary, ScoreResult, ScorerSpec

CELL_CHARS = 300
"""Characters of input/expected/output shown in a table cell."""
TOOLTIP_CHARS = 2000
"""Characters kept in a cell's tooltip: enough to read, bounded so the file stays small."""
REASON_CHARS = 80
REGRESSION_ROWS = 100
HIST_BINS = 20
TEMPLATE = "plotly_white"

_JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("assay.analysis", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@dataclass(frozen=True)
class Cell:
    """One table cell: the shown text, its tooltip, a CSS class."""

    text: str
    title: str = ""
    cls: str = ""


@dataclass(frozen=True)
class Plot:
    """A figure to render: the div id and its escaped plotly JSON spec."""

    div_id: str
    title: str
    spec_json: str


@dataclass
class _Collected:
    acc: SummaryAccumulator = field(default_factory=SummaryAccumulator)
    rows: list[ItemResult] = field(default_factory=list)
    total: int = 0


def _script_safe(json_text: str) -> str:
    """JSON text made safe to embed in a ``<script>`` element."""
    return json_text.translate(_JSON_ESCAPES)


def _figure_json(fig: go.Figure) -> str:
    """A figure without its template: the page sets the shared one (``TEMPLATE``) once
    instead of repeating ~6 KB of theme in every figure."""
    fig.update_layout(template=None)
    return _script_safe(str(fig.to_json()))


@cache
def _template_json() -> str:
    return _script_safe(json.dumps(pio.templates[TEMPLATE].to_plotly_json()))


def _label(text: str) -> str:
    """User text for a plotly label: plotly renders a subset of HTML tags in labels and
    decodes entities, so escaping shows ``<b>x`` literally instead of bold."""
    return html.escape(text, quote=False)


def _text_cell(value: Any, *, cls: str = "") -> Cell:
    text = fmt.as_text(value)
    return Cell(fmt.clip(text, CELL_CHARS), fmt.clip(text, TOOLTIP_CHARS), cls)


def _score_cell(score: ScoreResult | None, threshold: float | None, spec: ScorerSpec) -> Cell:
    if score is None:
        return Cell("")
    if score.status == "error":
        message = score.error.message if score.error else "error"
        return Cell("error", fmt.clip(message, TOOLTIP_CHARS), "error")
    if score.status == "not_scorable":
        why = score.reason or f"not scorable at {score.not_scorable_step or 'a step'}"
        return Cell("n/s", fmt.clip(why, TOOLTIP_CHARS), "muted")
    value = float(score.score if score.score is not None else math.nan)
    cls = ""
    if threshold is not None:
        ok = value >= threshold if spec.higher_is_better else value <= threshold
        cls = "pass" if ok else "fail"
    tip = score.reason or ""
    if score.values:  # the named values go in the tooltip, under the reason
        tip = f"{tip}\n{fmt.values_text(score.values)}".strip()
    return Cell(fmt.num(value), fmt.clip(tip, TOOLTIP_CHARS), cls)


def _collect(
    results: Iterable[ItemResult], max_rows: int, specs: Sequence[ScorerSpec] = ()
) -> _Collected:
    out = _Collected(acc=SummaryAccumulator(specs))
    for result in results:
        out.acc.add(result)
        out.total += 1
        if len(out.rows) < max_rows:
            out.rows.append(result)
    return out


def _specs(record: RunRecord, seen: Sequence[str]) -> list[ScorerSpec]:
    specs = list(record.info.scorers)
    known = {s.id for s in specs}
    return specs + [ScorerSpec(id=sid, label=sid) for sid in seen if sid not in known]


def _distribution(spec: ScorerSpec, cols: ScoreColumns, n: int) -> Plot | None:
    """Histogram of per-item mean scores, binned here (20 bars, not 100k raw values)."""
    means = item_stats(cols).mean
    if means.shape[0] == 0:
        return None
    lo, hi = spec.score_range
    in_range = hi > lo and bool(np.all((means >= lo) & (means <= hi)))
    edges = np.linspace(lo, hi, HIST_BINS + 1) if in_range else HIST_BINS
    counts, bins = np.histogram(means, bins=edges)
    centers = (bins[:-1] + bins[1:]) / 2.0
    fig = go.Figure(
        go.Bar(
            x=centers.tolist(),  # lists, not numpy: plain JSON instead of base64 typed arrays
            y=counts.tolist(),
            width=np.diff(bins).tolist(),
            marker={"color": "#4c78a8"},
            hovertemplate="%{x:.3f}: %{y} items<extra></extra>",
        )
    )
    fig.update_layout(
        height=260,
        margin={"l": 50, "r": 10, "t": 30, "b": 40},
        title={
            "text": f"{_label(spec.id)} {fmt.arrow(spec.higher_is_better)}",
            "font": {"size": 13},
        },
        xaxis={"title": {"text": "per-item mean score"}},
        yaxis={"title": {"text": "items"}},
        bargap=0.02,
    )
    return Plot(f"dist-{n}", spec.id, _figure_json(fig))


def _delta_plot(cmp: RunComparison) -> Plot | None:
    """Delta of means per scorer with the paired bootstrap CI as error bars."""
    shown = [s for s in cmp.scorers if s.delta is not None]
    if not shown:
        return None
    deltas = [s.delta or 0.0 for s in shown]
    pairs = list(zip(shown, deltas, strict=True))
    up = [(s.ci_high - d) if s.ci_high is not None else 0.0 for s, d in pairs]
    down = [(d - s.ci_low) if s.ci_low is not None else 0.0 for s, d in pairs]
    colors = {"improved": "#54a24b", "regressed": "#e45756"}
    fig = go.Figure(
        go.Bar(
            x=[f"{_label(s.scorer_id)} {fmt.arrow(s.higher_is_better)}" for s in shown],
            y=deltas,
            error_y={"type": "data", "symmetric": False, "array": up, "arrayminus": down},
            marker={"color": [colors.get(s.verdict, "#9d9d9d") for s in shown]},
            hovertemplate="%{x}: Δ %{y:+.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        height=300,
        margin={"l": 60, "r": 10, "t": 30, "b": 60},
        title={"text": "Δ mean (B − A) with 95% paired bootstrap CI", "font": {"size": 13}},
        yaxis={"title": {"text": "Δ mean"}, "zeroline": True, "zerolinewidth": 2},
    )
    return Plot("delta", "delta", _figure_json(fig))


def _when(ts: float | None) -> str:
    if not ts:
        return fmt.DASH
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _header(record: RunRecord, summary: RunSummary, specs: Sequence[ScorerSpec]) -> list[Cell]:
    info = record.info
    if info.dataset_name or info.dataset_id:
        data = f"{info.dataset_name or info.dataset_id} v{info.dataset_version}"
    else:
        data = info.data_source or "inline data"
    duration = summary.duration_s
    if duration is None and record.started_at and record.completed_at:
        duration = record.completed_at - record.started_at
    pairs = [
        ("run", info.id),
        ("name", info.name or fmt.DASH),
        ("status", record.status),
        ("data", data),
        ("target", f"{info.target.label} ({info.target.kind})"),
        ("scorers", ", ".join(f"{s.id} {fmt.arrow(s.higher_is_better)}" for s in specs)),
        (
            "items",
            f"{summary.items:,} of {info.total_items:,}"
            if info.total_items
            else f"{summary.items:,}",
        ),
        ("results", f"{summary.results:,} ({summary.item_errors:,} target errors)"),
        ("repeats", str(info.repeats)),
        ("threshold", fmt.DASH if info.threshold is None else f"{info.threshold:g}"),
        (
            "weighted score",
            f"{fmt.num(summary.weighted_score)} over {', '.join(summary.weighted_scorers)}"
            if summary.weighted_score is not None
            else f"undefined: no score from {', '.join(summary.unscored_scorers)}"
            if summary.unscored_scorers
            else fmt.DASH,
        ),
        ("started", _when(record.started_at or info.created_at)),
        ("duration", fmt.duration(duration)),
        (
            "latency",
            f"mean {fmt.ms(summary.latency_ms_mean)} · p50 "
            f"{fmt.ms(summary.latency_ms_p50)} · p95 {fmt.ms(summary.latency_ms_p95)}",
        ),
        (
            "judge",
            f"{summary.judge_calls:,} calls · {fmt.tokens(summary.usage)} tokens · "
            f"{fmt.money(summary.cost_usd)}",
        ),
    ]
    return [Cell(value, label) for label, value in pairs]


def _summary_rows(summary: RunSummary) -> list[list[Cell]]:
    rows = []
    for s in summary.scorers.values():
        rows.append(
            [
                Cell(s.scorer_id, s.scorer_label),
                Cell(
                    fmt.arrow(s.higher_is_better),
                    "higher is better" if s.higher_is_better else "lower is better",
                ),
                Cell(f"{s.count:,}"),
                Cell(fmt.num(s.mean)),
                Cell(fmt.ci(s.ci_low, s.ci_high)),
                Cell(fmt.num(s.stderr)),
                Cell(fmt.num(s.min)),
                Cell(fmt.num(s.max)),
                Cell(f"{s.errors:,}", cls="error" if s.errors else ""),
                Cell(f"{s.not_scorable:,}"),
                Cell(
                    fmt.pct(s.pass_rate),
                    "" if s.threshold is None else f"at threshold {s.threshold:g}",
                ),
                Cell(f"{len(s.flipped_items):,}", ", ".join(s.flipped_items[:50])),
                Cell(fmt.num(s.mean_spread)),
                Cell(fmt.aggregates(s.aggregates)),
            ]
        )
        for key, v in s.values.items():  # the scorer's named values, under it
            rows.append(
                [
                    Cell(f"{s.scorer_id}.{key}", f"value {key!r} of {s.scorer_label}", "value"),
                    Cell(""),
                    Cell(f"{v.count:,}"),
                    Cell(fmt.num(v.mean)),
                    Cell(fmt.ci(v.ci_low, v.ci_high)),
                    Cell(fmt.num(v.stderr)),
                    Cell(fmt.num(v.min)),
                    Cell(fmt.num(v.max)),
                    *(Cell("") for _ in range(6)),
                ]
            )
    return rows


def _comparison_context(cmp: RunComparison) -> dict[str, Any]:
    rows = [
        [
            Cell(s.scorer_id, s.scorer_label),
            Cell(fmt.arrow(s.higher_is_better)),
            Cell(f"{s.n_paired:,}"),
            Cell(fmt.num(s.mean_a)),
            Cell(fmt.num(s.mean_b)),
            Cell(fmt.signed(s.delta)),
            Cell(fmt.ci(s.ci_low, s.ci_high, sign=True)),
            Cell(f"{len(s.regressed):,}"),
            Cell(f"{len(s.improved):,}"),
            Cell(s.verdict.replace("_", " "), cls=s.verdict),
        ]
        for s in cmp.scorers
    ]
    for s in reversed(cmp.scorers):  # each scorer's named values right under its row
        at = next(k for k, row in enumerate(rows) if row[0].text == s.scorer_id) + 1
        rows[at:at] = [
            [
                Cell(f"{s.scorer_id}.{key}", f"value {key!r} of {s.scorer_label}", "value"),
                Cell(""),
                Cell(f"{v.n_paired:,}"),
                Cell(fmt.num(v.mean_a)),
                Cell(fmt.num(v.mean_b)),
                Cell(fmt.signed(v.delta)),
                Cell(fmt.ci(v.ci_low, v.ci_high, sign=True)),
                Cell(""),
                Cell(""),
                Cell(v.verdict.replace("_", " "), cls=v.verdict),
            ]
            for key, v in s.values.items()
        ]
    worst = top_items(cmp, REGRESSION_ROWS)
    regressions = [
        [
            Cell(s.scorer_id),
            Cell(fmt.clip(d.item_id, CELL_CHARS), d.item_id),
            Cell(fmt.num(d.score_a)),
            Cell(fmt.num(d.score_b)),
            Cell(fmt.signed(d.delta), cls="fail"),
        ]
        for s, d in worst
    ]
    total = sum(len(s.regressed) for s in cmp.scorers)
    return {
        "cmp": cmp,
        "rows": rows,
        "plot": _delta_plot(cmp),
        "regressions": regressions,
        "regressions_omitted": total - len(regressions),
        "only_in_a": fmt.clip(", ".join(cmp.only_in_a), TOOLTIP_CHARS),
        "only_in_b": fmt.clip(", ".join(cmp.only_in_b), TOOLTIP_CHARS),
    }


def _item_rows(
    rows: Sequence[ItemResult], specs: Sequence[ScorerSpec], threshold: float | None
) -> list[dict[str, Any]]:
    """Table rows; ``threshold`` is the run-wide level, each scorer's cell is marked pass or
    fail at its own effective threshold (``effective_threshold``)."""
    thresholds = {spec.id: effective_threshold(spec, threshold) for spec in specs}
    out = []
    for r in rows:
        if r.error is not None:
            output = _text_cell(f"{r.error.kind}: {r.error.message}", cls="error")
        elif r.warnings:  # e.g. the target returned None: visible, not a silent 0
            shown = "" if r.output is None else f" · {fmt.as_text(r.output)}"
            output = _text_cell(f"warning: {'; '.join(r.warnings)}{shown}", cls="error")
        else:
            output = _text_cell(r.output)
        scores = []
        for spec in specs:
            score = r.scores.get(spec.id)
            cell = _score_cell(score, thresholds[spec.id], spec)
            reason = score.reason if score is not None and score.status == "ready" else None
            scores.append((cell, fmt.clip(reason or "", REASON_CHARS)))
        out.append(
            {
                "position": r.position,
                "item": Cell(fmt.clip(r.item_id, CELL_CHARS), r.item_id),
                "repeat": r.repeat,
                "input": _text_cell(r.input),
                "expected": _text_cell(r.expected_output),
                "output": output,
                "scores": scores,
                "latency": fmt.ms(r.latency_ms),
            }
        )
    return out


def render_html_report(
    record: RunRecord,
    results: Iterable[ItemResult],
    *,
    comparison: RunComparison | None = None,
    max_rows: int = 2000,
    calibration: Mapping[str, Any] | None = None,
    calibration_points: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    calibrated: Mapping[str, str] | None = None,
    judge_corrected: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The report as one HTML string (see the module docstring). ``calibration`` (a
    calibration report's JSON, with ``calibration_points`` for the scatter) adds the
    calibration section; ``calibrated`` (scorer id → ``calibrated: yes (...)``) a header
    line; ``judge_corrected`` (scorer id → a prediction-powered mean) the judge-corrected
    means beside the plain ones."""
    from assay.analysis.report_calibration import calibration_section

    collected = _collect(results, max_rows, record.info.scorers)
    acc = collected.acc
    specs = _specs(record, acc.builder.scorer_ids())
    summary = record.summary
    computed = summary is None
    if summary is None:
        summary = acc.summary(
            specs,
            threshold=record.info.threshold,
            duration_s=None,
            repeats=record.info.repeats,
        )
    plots = [
        p
        for n, spec in enumerate(specs)
        if (p := _distribution(spec, acc.builder.columns(spec.id), n)) is not None
    ]
    header = _header(record, summary, specs)
    if calibrated:
        shown = "; ".join(f"{sid}: {text}" for sid, text in calibrated.items())
        header.append(Cell(shown, "calibration"))
    context = {
        "title": f"assay run {record.info.name or record.id}",
        "record": record,
        "header": header,
        "judge_corrected": [
            {
                "scorer": sid,
                "judge_mean": fmt.num(ppi.get("judge_mean")),
                "value": fmt.num(ppi.get("value")),
                "ci": fmt.DASH
                if ppi.get("ci_low") is None
                else f"[{fmt.num(ppi['ci_low'])}, {fmt.num(ppi['ci_high'])}]",
                "n_labelled": ppi.get("n_labelled"),
                "n": ppi.get("n"),
                # λ: how much of the judge the estimate kept (1 classical PPI, 0 labels alone)
                "weight": fmt.DASH if ppi.get("weight") is None else f"{ppi['weight']:.2f}",
                "reason": "; ".join(str(t) for t in (ppi.get("reason"), ppi.get("warning")) if t),
            }
            for sid, ppi in (judge_corrected or {}).items()
        ],
        "summary_rows": _summary_rows(summary),
        "summary_computed": computed,
        "distributions": plots,
        "comparison": _comparison_context(comparison) if comparison is not None else None,
        "calibration": calibration_section(calibration, calibration_points)
        if calibration is not None
        else None,
        "score_columns": [s.id for s in specs],
        "show_repeat": record.info.repeats > 1,
        "item_rows": _item_rows(collected.rows, specs, record.info.threshold),
        "total_rows": collected.total,
        "omitted_rows": collected.total - len(collected.rows),
        "generated": _when(datetime.now(tz=UTC).timestamp()),
        "plotly_js": get_plotlyjs(),
        "plotly_template": _template_json(),
    }
    return _environment().get_template("report.html.j2").render(**context)


def write_html_report(
    path: str | os.PathLike[str],
    record: RunRecord,
    results: Iterable[ItemResult],
    *,
    comparison: RunComparison | None = None,
    max_rows: int = 2000,
    calibration: Mapping[str, Any] | None = None,
    calibration_points: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    calibrated: Mapping[str, str] | None = None,
    judge_corrected: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Render and write the report; returns the path written."""
    target = Path(path)
    html = render_html_report(
        record,
        results,
        comparison=comparison,
        max_rows=max_rows,
        calibration=calibration,
        calibration_points=calibration_points,
        calibrated=calibrated,
        judge_corrected=judge_corrected,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    return target
