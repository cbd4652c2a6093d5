"""Repeat-aware verdicts: pass^k, pass@k, the flip rate, and a declared rule for the verdict.

An LLM target or judge answers differently from one call to the next, so one run of an item
is one sample. With ``k`` repeats per item the questions are: does the item pass *every*
time (pass^k, what a user who asks once relies on), does it pass *at least once* (pass@k,
what a retry loop gets), and how many items *flip* (pass in some repeats, fail in others:
the flaky ones). A verdict over repeats that straddle the limit is never left undefined:
the caller declares the rule, ``require``:

- ``"all"``: an item's value is its worst repeat (in the scorer's direction): it passes only
  when every repeat passes. For a 0/1 scorer the mean of those values *is* the pass^k rate.
- ``"any"``: an item's value is its best repeat; for a 0/1 scorer the mean is pass@k.
- ``"mean"``: an item's value is the mean of its repeats (what every run summary uses).

Errors and not-scorable results count as failing repeats in pass^k/pass@k and the flip rate
(an item that errors once did not pass that time) and have no value in the reduction.
Everything here is pure: rows in, numbers out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from assay.summary.bootstrap import bootstrap_mean_ci
from assay.types import RunSummary, ScoreRow, ScorerSummary

Require = Literal["all", "any", "mean"]
REQUIRE_RULES: tuple[Require, ...] = ("all", "any", "mean")


def check_require(require: str) -> Require:
    """``require`` as a rule, or a ``ValueError`` naming the three rules."""
    if require not in REQUIRE_RULES:
        raise ValueError(f"require={require!r}: expected one of 'all', 'any', 'mean'")
    return require


def passes(score: float, limit: float, higher_is_better: bool) -> bool:
    """Whether ``score`` is on the good side of ``limit`` (the worst acceptable score)."""
    return score >= limit if higher_is_better else score <= limit


class RepeatStats(BaseModel):
    """One scorer over the repeats of a run's items."""

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    require: Require
    repeats: int
    """The most repeats any item had."""
    items: int
    """Items with at least one result of this scorer."""
    limit: float | None = None
    """The worst acceptable score the pass counts use; ``None``: no pass counts."""
    mean: float | None = None
    """Mean over items of each item's value under ``require`` (worst, best or mean repeat)."""
    ci_low: float | None = None
    ci_high: float | None = None
    pass_all: float | None = None
    """pass^k: share of items whose every repeat passed."""
    pass_any: float | None = None
    """pass@k: share of items with at least one passing repeat."""
    flip_rate: float | None = None
    """Share of items that passed in some repeats and failed in others."""
    flipped_items: list[str] = Field(default_factory=list)


def repeat_stats(
    rows: Iterable[ScoreRow],
    directions: Mapping[str, bool],
    *,
    limits: Mapping[str, float | None],
    require: Require = "mean",
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, RepeatStats]:
    """Per scorer (``directions``: scorer id → higher is better), the statistics above from
    a run's score rows. ``limits`` gives each scorer's worst acceptable score."""
    check_require(require)
    by_scorer: dict[str, dict[str, list[float | None]]] = {}
    for row in rows:
        if row.scorer_id not in directions:
            continue
        values = by_scorer.setdefault(row.scorer_id, {}).setdefault(row.item_id, [])
        values.append(row.score if row.status == "ready" else None)
    out: dict[str, RepeatStats] = {}
    for scorer_id, higher in directions.items():
        items = by_scorer.get(scorer_id, {})
        limit = limits.get(scorer_id)
        reduced: list[float] = []
        n_all = n_any = 0
        flipped: list[str] = []
        for item_id, scores in items.items():
            numbers = [s for s in scores if s is not None]
            if numbers:
                reduced.append(_reduce(numbers, require, higher))
            if limit is None:
                continue
            ok = [s is not None and passes(s, limit, higher) for s in scores]
            n_all += all(ok)
            n_any += any(ok)
            if any(ok) and not all(ok):
                flipped.append(item_id)
        n = len(items)
        array = np.asarray(reduced, dtype=np.float64)
        ci = bootstrap_mean_ci(array, n_boot=n_boot, seed=seed) if len(reduced) else None
        out[scorer_id] = RepeatStats(
            scorer_id=scorer_id,
            require=require,
            repeats=max((len(s) for s in items.values()), default=0),
            items=n,
            limit=limit,
            mean=float(array.mean()) if len(reduced) else None,
            ci_low=ci[0] if ci else None,
            ci_high=ci[1] if ci else None,
            pass_all=n_all / n if limit is not None and n else None,
            pass_any=n_any / n if limit is not None and n else None,
            flip_rate=len(flipped) / n if limit is not None and n else None,
            flipped_items=flipped,
        )
    return out


def _reduce(numbers: list[float], require: Require, higher: bool) -> float:
    if require == "mean":
        return sum(numbers) / len(numbers)
    worst, best = (min, max) if higher else (max, min)
    return worst(numbers) if require == "all" else best(numbers)


def reduced_summary(summary: RunSummary, stats: Mapping[str, RepeatStats]) -> RunSummary:
    """``summary`` with each scorer's mean and CI replaced by the ``require`` reduction's,
    so the gates of ``assay run --fail-under`` (``analysis.gates.check_run``) judge it."""
    scorers: dict[str, ScorerSummary] = {}
    for key, s in summary.scorers.items():
        st = stats.get(key)
        scorers[key] = (
            s
            if st is None or st.require == "mean"
            else s.model_copy(update={"mean": st.mean, "ci_low": st.ci_low, "ci_high": st.ci_high})
        )
    return summary.model_copy(update={"scorers": scorers})
