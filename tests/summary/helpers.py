"""A run summary of bare score columns: every run-level figure empty unless given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.summary.columns import ScoreColumnsBuilder
from assay.summary.stats import summarize_run
from assay.types import RunSummary, ScorerSpec, Usage


def summarize_columns(
    specs: Sequence[ScorerSpec], builder: ScoreColumnsBuilder, **overrides: Any
) -> RunSummary:
    options: dict[str, Any] = {
        "threshold": None,
        "latencies_ms": [],
        "items": 0,
        "results": 0,
        "item_errors": 0,
        "repeats": 1,
        "duration_s": None,
        "judge_calls": 0,
        "usage": Usage(),
        "cost_usd": None,
        "item_id_for": lambda p: f"item-{p}",
    }
    options.update(overrides)
    return summarize_run(list(specs), builder, **options)
