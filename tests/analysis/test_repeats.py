"""Repeat statistics: pass^k, pass@k, flips and the declared reduction, by hand."""

from __future__ import annotations

import pytest

from assay.analysis.repeats import check_require, reduced_summary, repeat_stats
from assay.types import RunSummary, ScoreRow, ScorerSummary


def _rows(scores: dict[str, list[float | None]], scorer: str = "s") -> list[ScoreRow]:
    rows = []
    for position, (item, values) in enumerate(scores.items()):
        for repeat, value in enumerate(values):
            status = "ready" if value is not None else "error"
            rows.append(ScoreRow(item, position, repeat, scorer, status, value))
    return rows


DATA = {"a": [1.0, 1.0, 1.0], "b": [1.0, 0.0, 1.0], "c": [0.0, 0.0, 0.0], "d": [1.0, None, 1.0]}


@pytest.mark.parametrize(
    ("require", "mean"), [("all", 2 / 4), ("any", 3 / 4), ("mean", (1 + 2 / 3 + 0 + 1) / 4)]
)
def test_the_reduction_follows_the_rule(require: str, mean: float) -> None:
    stats = repeat_stats(_rows(DATA), {"s": True}, limits={"s": 0.5}, require=require)  # type: ignore[arg-type]
    s = stats["s"]
    assert s.mean == pytest.approx(mean)
    assert (s.items, s.repeats) == (4, 3)
    # an erred repeat is a failing repeat: d passes twice of three
    assert s.pass_all == pytest.approx(1 / 4)
    assert s.pass_any == pytest.approx(3 / 4)
    assert s.flip_rate == pytest.approx(2 / 4)
    assert s.flipped_items == ["b", "d"]


def test_lower_is_better_reduces_to_the_highest_as_worst() -> None:
    rows = _rows({"a": [0.1, 0.9], "b": [0.2, 0.3]}, scorer="tox")
    worst = repeat_stats(rows, {"tox": False}, limits={"tox": 0.5}, require="all")["tox"]
    assert worst.mean == pytest.approx((0.9 + 0.3) / 2)
    assert (worst.pass_all, worst.pass_any, worst.flipped_items) == (0.5, 1.0, ["a"])
    best = repeat_stats(rows, {"tox": False}, limits={"tox": 0.5}, require="any")["tox"]
    assert best.mean == pytest.approx((0.1 + 0.2) / 2)


def test_without_a_limit_there_are_no_pass_counts() -> None:
    s = repeat_stats(_rows(DATA), {"s": True}, limits={}, require="mean")["s"]
    assert (s.pass_all, s.pass_any, s.flip_rate, s.flipped_items) == (None, None, None, [])


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="'all', 'any', 'mean'"):
        check_require("most")


def test_the_reduced_summary_feeds_the_gates() -> None:
    summary = RunSummary(scorers={"s": ScorerSummary(scorer_id="s", scorer_label="S", mean=0.6)})
    stats = repeat_stats(_rows(DATA), {"s": True}, limits={"s": 0.5}, require="all")
    gated = reduced_summary(summary, stats)
    # the worst numeric repeat per item: a 1, b 0, c 0, d 1 (its erred repeat has no number)
    assert gated.scorers["s"].mean == pytest.approx(0.5)
    assert reduced_summary(summary, {}).scorers["s"].mean == 0.6
