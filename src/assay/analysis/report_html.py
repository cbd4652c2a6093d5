"""A self-contained HTML report of a run: header, summary, distributions, comparison, items.

One file that opens offline and has no script: the charts are inline SVG drawn by
``analysis.svg_charts`` (the module the web UI draws with), so a report can be mailed or
attached to a ticket. The results are read in a single streaming pass: all scores go into
compact columns (for the charts and, when the run has no stored summary, the statistics)
while only the first ``max_rows`` results are kept as table rows.

The file stays small at any size of text: a table cell shows the start of its text, cut at
a word boundary, and the rest opens in a ``<details>`` element. Every text of the item table
is kept up to one common length, the largest that keeps all of them within
``TEXT_BUDGET`` characters; the note under the table says when texts were cut, and
``assay runs export`` has them in full. All user text is escaped by Jinja2's autoescaping or
``html.escape`` in the charts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, TypedDict, Unpack

import jinja2
import numpy as np

from assay.analysis import formatting as fmt
from assay.analysis import svg_charts as charts
from assay.analysis.compare import RunComparison, top_items
from assay.analysis.svg_charts import Chart
from assay.summary.accumulator import SummaryAccumulator
from assay.summary.columns import ScoreColumns
from assay.summary.stats import effective_threshold, item_stats
from assay.types import (
    ItemResult,
    RunRecord,
    RunSummary,
    ScoreResult,
    ScorerSpec,
    ScorerSummary,
    ValueSummary,
)

CELL_CHARS = 200
"""Characters of a text shown in its table cell before the rest folds into ``<details>``."""
REASON_CHARS = 80
"""Characters of a score's reason shown under the score."""
TEXT_BUDGET = 650_000
"""Characters of item text (inputs, expected outputs, outputs, reasons) in one report."""
NOTE_CHARS = 2000
"""Characters of a list of item ids in a note (items only in one run)."""
REGRESSION_ROWS = 100
HIST_BINS = 20

__all__ = ["Chart", "render_html_report", "write_html_report"]


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
    """One table cell: the shown text, its tooltip (short fixed texts only), a CSS class."""

    text: str
    title: str = ""
    cls: str = ""


@dataclass(frozen=True)
class Text:
    """A cell of user text: ``head`` is shown, ``more`` opens on demand (``<details>``),
    ``left_out`` counts the characters past the report's common length cap."""

    head: str
    more: str = ""
    left_out: int = 0
    cls: str = ""


@dataclass
class _Collected:
    acc: SummaryAccumulator = field(default_factory=SummaryAccumulator)
    rows: list[ItemResult] = field(default_factory=list)
    total: int = 0


def length_cap(lengths: Sequence[int], budget: int) -> int | None:
    """The largest cap ``c`` with ``sum(min(n, c)) <= budget``: every text is kept whole
    up to ``c`` characters, so short texts stay whole and long ones share what is left.
    ``None`` when everything fits."""
    if sum(lengths) <= budget:
        return None
    ordered = sorted(lengths)
    used = 0
    for k, n in enumerate(ordered):
        remaining = len(ordered) - k
        if used + n * remaining > budget:
            return max(0, (budget - used) // remaining)
        used += n
    return None  # unreachable: the sum exceeded the budget


def _text(text: str, cap: int | None, *, head_chars: int = CELL_CHARS, cls: str = "") -> Text:
    kept, dropped = (text, "") if cap is None else fmt.split_words(text, cap)
    head, more = fmt.split_words(kept, head_chars)
    return Text(head, more, len(dropped), cls)


def _score_cell(score: ScoreResult | None, threshold: float | None, spec: ScorerSpec) -> Cell:
    if score is None:
        return Cell("")
    if score.status == "error":
        return Cell("error", cls="error")
    if score.status == "not_scorable":
        return Cell("n/s", cls="muted")
    value = float(score.score if score.score is not None else math.nan)
    cls = ""
    if threshold is not None:
        ok = value >= threshold if spec.higher_is_better else value <= threshold
        cls = "pass" if ok else "fail"
    return Cell(fmt.num(value), cls=cls)


def _score_note(score: ScoreResult | None) -> str:
    """The text under a score: the error, why it was not scorable, or the reason and the
    named values."""
    if score is None:
        return ""
    if score.status == "error":
        return score.error.message if score.error else "error"
    if score.status == "not_scorable":
        return score.reason or f"not scorable at {score.not_scorable_step or 'a step'}"
    note = score.reason or ""
    if score.values:
        note = f"{note}\n{fmt.values_text(score.values)}".strip()
    return note


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


def _distribution(spec: ScorerSpec, cols: ScoreColumns, n: int) -> Chart | None:
    """Histogram of per-item mean scores, binned here (20 bars, not 100k raw values)."""
    means = item_stats(cols).mean
    means = means[np.isfinite(means)]
    if means.shape[0] == 0:
        return None
    lo, hi = spec.score_range
    in_range = hi > lo and bool(np.all((means >= lo) & (means <= hi)))
    edges = np.linspace(lo, hi, HIST_BINS + 1) if in_range else HIST_BINS
    counts, bins = np.histogram(means, bins=edges)
    svg = charts.histogram(
        bins.tolist(),
        counts.tolist(),
        title=f"{spec.id} {fmt.arrow(spec.higher_is_better)}",
        x_title="per-item mean score",
        y_title="items",
    )
    return Chart(f"dist-{n}", spec.id, svg)


def _delta_plot(cmp: RunComparison) -> Chart | None:
    """Delta of means per scorer with the paired bootstrap CI as error bars."""
    shown = [s for s in cmp.scorers if s.delta is not None]
    if not shown:
        return None
    colors = {"improved": charts.GREEN, "regressed": charts.RED}
    bars = [
        charts.Bar(
            label=f"{s.scorer_id} {fmt.arrow(s.higher_is_better)}",
            value=s.delta,
            low=s.ci_low,
            high=s.ci_high,
            color=colors.get(s.verdict, charts.GREY),
            tip=f"{s.scorer_id}: Δ {fmt.signed(s.delta, 4)} "
            f"CI {fmt.ci(s.ci_low, s.ci_high, 4, sign=True)} ({s.verdict.replace('_', ' ')})",
        )
        for s in shown
    ]
    svg = charts.bar_chart(
        bars, title="Δ mean (B − A) with 95% paired bootstrap CI", y_title="Δ mean"
    )
    return Chart("delta", "delta", svg)


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


def _figure_cells(s: ScorerSummary | ValueSummary) -> list[Cell]:
    """Count, mean, CI, standard error, min and max: the columns a scorer's row and the rows
    of its named values share."""
    return [
        Cell(f"{s.count:,}"),
        Cell(fmt.num(s.mean)),
        Cell(fmt.ci(s.ci_low, s.ci_high)),
        Cell(fmt.num(s.stderr)),
        Cell(fmt.num(s.min)),
        Cell(fmt.num(s.max)),
    ]


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
                *_figure_cells(s),
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
                    *_figure_cells(v),
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
            _id_cell(d.item_id),
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
        "only_in_a": fmt.clip(", ".join(cmp.only_in_a), NOTE_CHARS),
        "only_in_b": fmt.clip(", ".join(cmp.only_in_b), NOTE_CHARS),
    }


def _id_cell(item_id: str) -> Cell:
    clipped = fmt.clip(item_id, CELL_CHARS)
    return Cell(clipped, item_id if clipped != item_id else "")


def _item_rows(
    rows: Sequence[ItemResult], specs: Sequence[ScorerSpec], threshold: float | None
) -> tuple[list[dict[str, Any]], int | None]:
    """Table rows and the common length cap of their texts (``None``: all whole).
    ``threshold`` is the run-wide level; each scorer's cell is marked pass or fail at its
    own effective threshold (``effective_threshold``)."""
    thresholds = {spec.id: effective_threshold(spec, threshold) for spec in specs}
    raw = []
    for r in rows:
        if r.error is not None:
            output, output_cls = f"{r.error.kind}: {r.error.message}", "error"
        elif r.warnings:  # e.g. the target returned None: visible, not a silent 0
            shown = "" if r.output is None else f" · {fmt.as_text(r.output)}"
            output, output_cls = f"warning: {'; '.join(r.warnings)}{shown}", "error"
        else:
            output, output_cls = fmt.as_text(r.output), ""
        notes = [_score_note(r.scores.get(spec.id)) for spec in specs]
        raw.append(
            (r, fmt.as_text(r.input), fmt.as_text(r.expected_output), output, output_cls, notes)
        )
    cap = length_cap(
        [len(t) for _, i, e, o, _, notes in raw for t in (i, e, o, *notes)], TEXT_BUDGET
    )
    out = []
    for r, input_text, expected, output, output_cls, notes in raw:
        scores = [
            (
                _score_cell(r.scores.get(spec.id), thresholds[spec.id], spec),
                _text(note, cap, head_chars=REASON_CHARS),
            )
            for spec, note in zip(specs, notes, strict=True)
        ]
        out.append(
            {
                "position": r.position,
                "item": _id_cell(r.item_id),
                "repeat": r.repeat,
                "input": _text(input_text, cap),
                "expected": _text(expected, cap),
                "output": _text(output, cap, cls=output_cls),
                "scores": scores,
                "latency": fmt.ms(r.latency_ms),
            }
        )
    return out, cap


class ReportOptions(TypedDict, total=False):
    """The keywords of ``render_html_report`` that ``write_html_report`` passes on."""

    comparison: RunComparison | None
    max_rows: int
    calibration_section: Mapping[str, Any] | None
    calibrated: Mapping[str, str] | None
    judge_corrected: Mapping[str, Mapping[str, Any]] | None


def render_html_report(
    record: RunRecord,
    results: Iterable[ItemResult],
    *,
    comparison: RunComparison | None = None,
    max_rows: int = 2000,
    calibration_section: Mapping[str, Any] | None = None,
    calibrated: Mapping[str, str] | None = None,
    judge_corrected: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The report as one HTML string (see the module docstring). ``calibration_section``
    (``assay.calibration.report.calibration_section``: built by the calibration room, which
    sits above this one) adds the calibration section; ``calibrated`` (scorer id →
    ``calibrated: yes (...)``) a header line; ``judge_corrected`` (scorer id → a
    prediction-powered mean) the judge-corrected means beside the plain ones."""
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
    item_rows, text_cap = _item_rows(collected.rows, specs, record.info.threshold)
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
        "calibration": calibration_section,
        "score_columns": [s.id for s in specs],
        "show_repeat": record.info.repeats > 1,
        "item_rows": item_rows,
        "text_cap": text_cap,
        "total_rows": collected.total,
        "omitted_rows": collected.total - len(collected.rows),
        "generated": _when(datetime.now(tz=UTC).timestamp()),
    }
    return _environment().get_template("report.html.j2").render(**context)


def write_html_report(
    path: str | os.PathLike[str],
    record: RunRecord,
    results: Iterable[ItemResult],
    **options: Unpack[ReportOptions],
) -> Path:
    """Render (``render_html_report``, same options) and write the report; returns the path
    written. A lone surrogate in a result's text (UTF-8 cannot encode one) is written as
    its escape ``\\udXXX``, as the JSON and CSV exports write it."""
    target = Path(path)
    html = render_html_report(record, results, **options)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8", errors="backslashreplace")
    return target
