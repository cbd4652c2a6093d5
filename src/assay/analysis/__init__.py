"""Statistics, comparisons and reports over runs, from plain data only.

Inputs are ``RunRecord``, ``Iterable[ItemResult]`` and ``Iterable[ScoreRow]``: this package
never imports the store or the runner, so the same code summarises a run in memory, one
streamed from SQLite, or one loaded from a JSON export. Reports live in their own modules
(``report_terminal``, ``report_json``, ``report_html``) so importing the statistics does not
pull in Rich or Jinja2; ``svg_charts`` draws the charts of the HTML report and the web UI.
"""

from __future__ import annotations

from assay.analysis.compare import (
    ItemDelta,
    RunComparison,
    RunRef,
    ScorerComparison,
    ValueComparison,
    compare_runs,
    top_items,
)
from assay.summary.accumulator import ItemIdTable, SummaryAccumulator
from assay.summary.columns import ScoreColumns, ScoreColumnsBuilder
from assay.summary.stats import (
    ItemStats,
    bootstrap_mean_ci,
    item_stats,
    summarize_run,
    summarize_scorer,
)

__all__ = [
    "ItemDelta",
    "ItemIdTable",
    "ItemStats",
    "RunComparison",
    "RunRef",
    "ScoreColumns",
    "ScoreColumnsBuilder",
    "ScorerComparison",
    "SummaryAccumulator",
    "ValueComparison",
    "bootstrap_mean_ci",
    "compare_runs",
    "item_stats",
    "summarize_run",
    "summarize_scorer",
    "top_items",
]
