"""Rich tables for the terminal: a run's summary and a comparison of two runs.

User text (scorer names, item ids) goes in as ``rich.text.Text`` so a name like
``[bold]x`` is shown, not interpreted as console markup.
"""

from __future__ import annotations

from typing import Literal

from rich.table import Table
from rich.text import Text

from assay.analysis import formatting as fmt
from assay.analysis.compare import RunComparison, top_items
from assay.types import RunRecord, RunSummary

_VERDICT_STYLE = {
    "improved": "green",
    "regressed": "bold red",
    "not_significant": "dim",
    "insufficient_data": "dim",
}


def _summary_caption(summary: RunSummary) -> str:
    parts = [
        f"items {summary.items:,}",
        f"results {summary.results:,}",
        f"target errors {summary.item_errors:,}",
        f"latency p50 {fmt.ms(summary.latency_ms_p50)} / p95 {fmt.ms(summary.latency_ms_p95)}",
        f"duration {fmt.duration(summary.duration_s)}",
    ]
    if summary.weighted_score is not None:
        parts.append(
            f"weighted score {fmt.num(summary.weighted_score)} "
            f"({fmt.count(len(summary.weighted_scorers), 'scorer')}, normalized 0..1)"
        )
    elif summary.unscored_scorers:
        parts.append(
            f"weighted score undefined (no score from {', '.join(summary.unscored_scorers)})"
        )
    if summary.judge_calls:
        parts.append(f"judge calls {summary.judge_calls:,}, tokens {fmt.tokens(summary.usage)}")
        if summary.cost_usd is not None:
            parts.append(f"cost {fmt.money(summary.cost_usd)}")
    if summary.target_usage.total_tokens or summary.target_cost_usd is not None:
        parts.append(f"target tokens {fmt.tokens(summary.target_usage)}")
        if summary.target_cost_usd is not None:
            parts.append(f"target cost {fmt.money(summary.target_cost_usd)}")
    return " · ".join(parts)


def summary_table(record: RunRecord, *, summary: RunSummary | None = None) -> Table:
    """Per-scorer statistics of a run. ``summary`` overrides ``record.summary`` (e.g. one
    computed from the stored rows of a run that never finished)."""
    summary = summary or record.summary
    table = Table(title=Text(f"Run {record.id} ({record.status})"), title_justify="left")
    table.add_column("scorer")
    table.add_column("dir", justify="center")
    for name in ("n", "mean", "95% CI", "±se", "min", "max", "errors", "n/s"):
        table.add_column(name, justify="right")
    thresholds = {s.threshold for s in summary.scorers.values()} if summary else set()
    shared = next(iter(thresholds)) if len(thresholds) == 1 else None
    table.add_column("pass" if shared is None else f"pass@{shared:g}", justify="right")
    repeats = summary is not None and summary.repeats > 1
    if repeats:
        table.add_column("flips", justify="right")
        table.add_column("spread", justify="right")
    aggregates = summary is not None and any(
        set(s.aggregates) - {"mean"} for s in summary.scorers.values()
    )
    if aggregates:
        table.add_column("aggregates", justify="right")
    if summary is None:
        table.caption = "no summary yet"
        return table
    for s in summary.scorers.values():
        passed = fmt.pct(s.pass_rate)
        if shared is None and s.threshold is not None:
            passed += f" @{s.threshold:g}"
        row: list[str | Text] = [
            Text(s.scorer_id),
            fmt.arrow(s.higher_is_better),
            f"{s.count:,}",
            fmt.num(s.mean),
            fmt.ci(s.ci_low, s.ci_high),
            fmt.num(s.stderr),
            fmt.num(s.min),
            fmt.num(s.max),
            Text(f"{s.errors:,}", style="red" if s.errors else ""),
            f"{s.not_scorable:,}",
            passed,
        ]
        if repeats:
            row += [f"{len(s.flipped_items):,}", fmt.num(s.mean_spread)]
        if aggregates:
            row.append(fmt.aggregates(s.aggregates))
        table.add_row(*row)
        for key, v in s.values.items():  # the scorer's named values, under it
            blank = [""] * (len(row) - 8)
            table.add_row(
                Text(f"  {s.scorer_id}.{key}", style="dim"),
                "",
                f"{v.count:,}",
                fmt.num(v.mean),
                fmt.ci(v.ci_low, v.ci_high),
                fmt.num(v.stderr),
                fmt.num(v.min),
                fmt.num(v.max),
                *blank,
            )
    table.caption = _summary_caption(summary)
    return table


def _run_label(cmp: RunComparison, which: str) -> str:
    ref = cmp.a if which == "A" else cmp.b
    return f"{which} {ref.id[:12]}"


def comparison_table(cmp: RunComparison, *, top: int | None = None) -> Table:
    """Per-scorer paired comparison: means, delta with its bootstrap CI, verdict, counts.

    With ``top``, the result is a grid (still a ``Table``) that stacks the comparison, the
    ``top`` worst regressions and the ``top`` best improvements, so one ``print`` shows
    everything ``assay runs compare`` needs.
    """
    table = _scorers_table(cmp)
    if top is None:
        return table
    grid = Table.grid(padding=(1, 0))
    grid.add_column()
    grid.add_row(table)
    for which in ("regressed", "improved"):
        if any(getattr(s, which) for s in cmp.scorers):  # an empty section is not printed
            grid.add_row(_items_table(cmp, top, which))
    return grid


def _scorers_table(cmp: RunComparison) -> Table:
    table = Table(
        title=Text(f"{_run_label(cmp, 'A')} → {_run_label(cmp, 'B')}"), title_justify="left"
    )
    table.add_column("scorer")
    table.add_column("dir", justify="center")
    for name in ("paired", "mean A", "mean B", "Δ B−A", "95% CI of Δ", "worse", "better"):
        table.add_column(name, justify="right")
    table.add_column("verdict")
    for s in cmp.scorers:
        table.add_row(
            Text(s.scorer_id),
            fmt.arrow(s.higher_is_better),
            f"{s.n_paired:,}",
            fmt.num(s.mean_a),
            fmt.num(s.mean_b),
            fmt.signed(s.delta),
            fmt.ci(s.ci_low, s.ci_high, sign=True),
            f"{len(s.regressed):,}",
            f"{len(s.improved):,}",
            Text(s.verdict.replace("_", " "), style=_VERDICT_STYLE[s.verdict]),
        )
        for key, v in s.values.items():  # the scorer's named values, under it
            table.add_row(
                Text(f"  {s.scorer_id}.{key}", style="dim"),
                "",
                f"{v.n_paired:,}",
                fmt.num(v.mean_a),
                fmt.num(v.mean_b),
                fmt.signed(v.delta),
                fmt.ci(v.ci_low, v.ci_high, sign=True),
                "",
                "",
                Text(v.verdict.replace("_", " "), style=_VERDICT_STYLE[v.verdict]),
            )
    notes = [
        f"items in both {cmp.items_in_both:,}",
        f"only in A {len(cmp.only_in_a):,}",
        f"only in B {len(cmp.only_in_b):,}",
        f"item threshold {fmt.num(cmp.threshold)}",
    ]
    if cmp.scorers_only_in_a:
        notes.append("scorers only in A: " + ", ".join(cmp.scorers_only_in_a))
    if cmp.scorers_only_in_b:
        notes.append("scorers only in B: " + ", ".join(cmp.scorers_only_in_b))
    caption = Text(" · ".join(notes))
    for warning in cmp.warnings:
        caption.append("\nwarning: " + warning, style="yellow")
    table.caption = caption
    return table


def _items_table(cmp: RunComparison, limit: int, which: Literal["regressed", "improved"]) -> Table:
    worse = which == "regressed"
    title = "Regressed items (worst first)" if worse else "Improved items (best first)"
    table = Table(title=title, title_justify="left")
    table.add_column("scorer")
    table.add_column("item")
    for name in ("A", "B", "Δ"):
        table.add_column(name, justify="right")
    for s, d in top_items(cmp, limit, which=which):
        table.add_row(
            Text(s.scorer_id),
            Text(d.item_id),
            fmt.num(d.score_a),
            fmt.num(d.score_b),
            Text(fmt.signed(d.delta), style="red" if worse else "green"),
        )
    total = sum(len(getattr(s, which)) for s in cmp.scorers)
    if total > table.row_count:
        table.caption = f"{total - table.row_count:,} more not shown"
    elif total == 0:
        table.caption = f"no item {which} beyond the threshold"
    return table


def regressions_table(cmp: RunComparison, *, limit: int = 20) -> Table:
    """The items that got worse beyond the threshold, worst first per scorer."""
    return _items_table(cmp, limit, "regressed")


def improvements_table(cmp: RunComparison, *, limit: int = 20) -> Table:
    """The items that got better beyond the threshold, best first per scorer."""
    return _items_table(cmp, limit, "improved")
