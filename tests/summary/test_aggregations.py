"""Declared aggregations: mean, median, pass@k over repeats, corpus functions; named values
summarised like the headline score."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from assay.runner.api import run_evals
from assay.runner.scorer_set import build_scorers
from assay.scoring.score_value import Score
from assay.scoring.scorer import Scorer
from assay.summary.accumulator import SummaryAccumulator
from assay.summary.aggregations import (
    get_aggregation,
    pass_at_k,
    register_aggregation,
    unregister_aggregation,
)
from assay.summary.columns import ScoreColumnsBuilder
from assay.types import ItemResult, ScoreResult, ScorerSpec

from .helpers import summarize_columns


def _f1(tp: float, fp: float, fn: float) -> float:
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def corpus_f1(payloads: list[Any]) -> float:
    """F1 of the summed counts: the corpus statistic, not a mean of per-item F1."""
    tp = sum(p["tp"] for p in payloads)
    fp = sum(p["fp"] for p in payloads)
    fn = sum(p["fn"] for p in payloads)
    return _f1(tp, fp, fn)


@pytest.fixture
def corpus_f1_registered() -> Iterator[None]:
    register_aggregation("test-corpus-f1", corpus_f1, kind="corpus")
    try:
        yield
    finally:
        unregister_aggregation("test-corpus-f1")


def _f1_scorer(aggregations: tuple[str, ...] = ("mean", "test-corpus-f1")) -> Scorer:
    def score(ctx: Any) -> Score:
        counts = ctx.call.output
        tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        return Score(
            _f1(tp, fp, fn), values={"precision": precision, "recall": recall}, corpus=counts
        )

    return Scorer("f1", aggregations=aggregations).score(score)


ROWS = [
    {"id": "a", "output": {"tp": 1, "fp": 0, "fn": 0}},  # per-item F1 1.0
    {"id": "b", "output": {"tp": 0, "fp": 1, "fn": 9}},  # per-item F1 0.0
]


def test_corpus_aggregation_is_not_the_mean_of_per_item_values(
    corpus_f1_registered: None,
) -> None:
    run = run_evals(ROWS, None, [_f1_scorer()], progress=False)
    s = run.summary.scorers["f1"]
    assert s.mean == pytest.approx(0.5)  # (1.0 + 0.0) / 2
    # corpus: tp 1, fp 1, fn 9 -> 2 / (2 + 10) = 1/6
    assert s.aggregates["test-corpus-f1"] == pytest.approx(1 / 6)
    assert s.aggregates["mean"] == pytest.approx(0.5)
    # the named values are summarised next to the score, over per-item means
    assert set(s.values) == {"precision", "recall"}
    assert s.values["precision"].mean == pytest.approx(0.5)  # (1.0 + 0.0) / 2
    assert s.values["recall"].mean == pytest.approx(0.5)  # (1.0 + 0.0) / 2
    assert s.values["recall"].count == 2 and s.values["recall"].min == 0.0
    assert run.results[0].scores["f1"].values == {"precision": 1.0, "recall": 1.0}


def test_corpus_aggregation_with_repeats_averages_the_repeats(corpus_f1_registered: None) -> None:
    b = ScoreColumnsBuilder()
    spec = ScorerSpec(id="f1", label="f1", aggregations=("test-corpus-f1",))
    for pos in range(2):
        for rep in range(2):
            b.add("f1", pos, rep, "ready", 0.5)
    corpus = {
        "f1": [
            (0, 0, {"tp": 1, "fp": 0, "fn": 0}),
            (1, 0, {"tp": 0, "fp": 1, "fn": 9}),  # repeat 0: 1/6
            (0, 1, {"tp": 1, "fp": 0, "fn": 0}),
            (1, 1, {"tp": 1, "fp": 0, "fn": 0}),  # repeat 1: 1.0
        ]
    }
    summary = _summarize([spec], b, corpus=corpus)
    assert summary.scorers["f1"].aggregates["test-corpus-f1"] == pytest.approx((1 / 6 + 1) / 2)


def _summarize(specs: list[ScorerSpec], b: ScoreColumnsBuilder, **kwargs: Any) -> Any:
    return summarize_columns(specs, b, **kwargs)


def test_pass_at_k_matches_the_hand_computed_estimator() -> None:
    # Chen et al. 2021: 1 - C(n-c, k) / C(n, k), n = 5 repeats
    #   item 0: c = 2 -> 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
    #   item 1: c = 0 -> 0
    #   item 2: c = 4 -> 1 - C(1,2)/C(5,2) = 1 - 0 = 1
    expected = (0.7 + 0.0 + 1.0) / 3
    assert pass_at_k([5, 5, 5], [2, 0, 4], 2) == pytest.approx(expected)
    assert pass_at_k([5], [2], 1) == pytest.approx(2 / 5)  # pass@1 is c / n
    assert math.isnan(pass_at_k([1], [1], 2))  # no item has k repeats

    b = ScoreColumnsBuilder()
    outcomes = {0: [1, 0, 1, 0, 0], 1: [0, 0, 0, 0, 0], 2: [1, 1, 0, 1, 1]}
    for pos, reps in outcomes.items():
        for rep, v in enumerate(reps):
            b.add("acc", pos, rep, "ready", float(v))
    b.add("acc", 3, 0, "ready", 1.0)  # one repeat only: n < k, left out
    spec = ScorerSpec(id="acc", label="acc", aggregations=("mean", "median", "pass@2"))
    s = _summarize([spec], b).scorers["acc"]
    assert s.aggregates["pass@2"] == pytest.approx(expected)
    # without a threshold a repeat is correct at the best end of the range (1.0)
    assert s.aggregates["median"] == pytest.approx(0.6)  # of per-item means 0, 0.4, 0.8, 1
    assert get_aggregation("pass@10").kind == "repeats"


def test_pass_at_k_uses_the_threshold_in_the_scorers_direction() -> None:
    b = ScoreColumnsBuilder()
    for rep, v in enumerate([2.0, 8.0, 3.0]):  # lower is better on 0..10, threshold 3
        b.add("err", 0, rep, "ready", v)
    spec = ScorerSpec(
        id="err",
        label="err",
        higher_is_better=False,
        score_range=(0, 10),
        threshold=3.0,
        aggregations=("pass@1",),
    )
    assert _summarize([spec], b).scorers["err"].aggregates["pass@1"] == pytest.approx(2 / 3)


def test_unknown_aggregations_fail_before_a_run_and_never_break_a_summary() -> None:
    with pytest.raises(ValueError, match=r"unknown aggregation 'meen'.*did you mean 'mean'"):
        build_scorers([Scorer("x", aggregations=("meen",)).score(lambda c: 1)])
    b = ScoreColumnsBuilder()
    b.add("x", 0, 0, "ready", 1.0)
    spec = ScorerSpec(id="x", label="x", aggregations=("mean", "gone"))
    assert _summarize([spec], b).scorers["x"].aggregates == {"mean": 1.0, "gone": None}


def test_a_failing_corpus_function_gives_none() -> None:
    def broken(payloads: list[Any]) -> float:
        raise RuntimeError("no")

    register_aggregation("test-broken", broken, kind="corpus")
    try:
        b = ScoreColumnsBuilder()
        b.add("x", 0, 0, "ready", 1.0)
        spec = ScorerSpec(id="x", label="x", aggregations=("test-broken",))
        summary = _summarize([spec], b, corpus={"x": [(0, 0, {"a": 1})]})
        assert summary.scorers["x"].aggregates == {"test-broken": None}
    finally:
        unregister_aggregation("test-broken")


def _result(position: int, score: ScoreResult) -> ItemResult:
    return ItemResult(item_id=f"i{position}", position=position, scores={score.scorer_id: score})


def _ready(scorer_id: str, corpus: Any) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer_id,
        scorer_label=scorer_id,
        call_id="c",
        status="ready",
        score=0.5,
        values={"p": 0.25},
        corpus=corpus,
    )


def test_accumulator_keeps_corpus_payloads_only_for_declared_corpus_scorers(
    corpus_f1_registered: None,
) -> None:
    specs = [
        ScorerSpec(id="kept", label="kept", aggregations=("mean", "test-corpus-f1")),
        ScorerSpec(id="plain", label="plain"),
    ]
    acc = SummaryAccumulator(specs)
    for pos in range(3):
        acc.add(_result(pos, _ready("kept", {"tp": 1, "fp": 0, "fn": pos})))
        acc.add(_result(pos, _ready("plain", {"big": "x" * 1000})))
    assert set(acc.corpus) == {"kept"}  # the other payloads are not held in memory
    assert [row[0] for row in acc.corpus["kept"]] == [0, 1, 2]
    summary = acc.summary(specs, threshold=None, duration_s=None)
    assert summary.scorers["kept"].aggregates["test-corpus-f1"] == pytest.approx(_f1(3, 0, 3))
    assert summary.scorers["plain"].values["p"].mean == pytest.approx(0.25)
    # values are columns, like the score: one per (scorer, key)
    assert acc.builder.value_keys("plain") == ["p"]
    assert len(acc.builder.value_columns("plain", "p")) == 3


def test_shared_bootstrap_draws_give_each_array_its_own_ci() -> None:
    from assay.summary.stats import bootstrap_mean_ci, bootstrap_mean_cis

    rng = np.random.default_rng(3)
    arrays = [rng.random(40), rng.random(40), rng.random(7), rng.random(1)]
    together = bootstrap_mean_cis(arrays, n_boot=300, seed=5)
    assert together == [bootstrap_mean_ci(a, n_boot=300, seed=5) for a in arrays]
    assert together[3] is None
