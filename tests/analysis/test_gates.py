"""Gates that fail a CI job: all items failed, --fail-under (direction-aware), --max-errors,
significant regressions."""

from __future__ import annotations

import pytest

from assay.analysis.compare import compare_runs
from assay.analysis.gates import (
    GateError,
    MaxErrors,
    check_regressions,
    check_run,
    parse_thresholds,
)
from assay.types import RunSummary, ScorerSummary

from .factories import record, rows


def _summary(**scorers: ScorerSummary) -> RunSummary:
    return RunSummary(items=10, results=10, item_errors=1, scorers=scorers)


def _scorer(
    sid: str, mean: float, low: float, high: float, *, higher: bool = True
) -> ScorerSummary:
    return ScorerSummary(
        scorer_id=sid,
        scorer_label=sid.title(),
        higher_is_better=higher,
        count=9,
        mean=mean,
        ci_low=low,
        ci_high=high,
        errors=1,
    )


SUMMARY = _summary(
    faith=_scorer("faith", 0.82, 0.70, 0.90),
    tox=_scorer("tox", 0.15, 0.05, 0.30, higher=False),
)


def test_fail_under_is_direction_aware_on_the_mean() -> None:
    assert check_run(SUMMARY, fail_under={"faith": 0.8, "tox": 0.2}) == []
    failed = check_run(SUMMARY, fail_under={"faith": 0.9, "tox": 0.1})
    assert [f.scorer_id for f in failed] == ["faith", "tox"]
    assert "below 0.9" in failed[0].reason and "above 0.1" in failed[1].reason


def test_fail_under_on_the_ci_uses_the_pessimistic_bound() -> None:
    failed = check_run(SUMMARY, fail_under={"faith": 0.8, "tox": 0.2}, on="ci")
    assert [(f.scorer_id, f.value) for f in failed] == [("faith", 0.70), ("tox", 0.30)]


def test_scorers_are_found_by_id_or_name_and_unknown_ones_are_errors() -> None:
    assert check_run(SUMMARY, fail_under={"Faith": 0.5}) == []
    with pytest.raises(GateError, match="no scorer 'fiath'; did you mean 'faith'"):
        check_run(SUMMARY, fail_under={"fiath": 0.5})


def test_every_item_failed_fails_the_run() -> None:
    dead = RunSummary(items=3, results=3, item_errors=3)
    assert [f.gate for f in check_run(dead)] == ["all-failed"]
    assert check_run(RunSummary(items=3, results=3, item_errors=2)) == []


@pytest.mark.parametrize(
    ("spec", "fails"), [("3", False), ("2", True), ("30%", False), ("20%", True)]
)
def test_max_errors_counts_target_and_scorer_errors(spec: str, fails: bool) -> None:
    # 1 target error + 1 + 1 scorer errors = 3 errors in 10 results
    failed = check_run(SUMMARY, max_errors=MaxErrors.parse(spec))
    assert bool(failed) is fails


@pytest.mark.parametrize("bad", ["x", "-1", "1.5", "120%", ""])
def test_bad_max_errors_are_named(bad: str) -> None:
    with pytest.raises(GateError, match="--max-errors"):
        MaxErrors.parse(bad)


def test_parse_thresholds() -> None:
    assert parse_thresholds(["a=0.5", " b = 1 "]) == {"a": 0.5, "b": 1.0}
    for bad in ("a", "=1", "a=high"):
        with pytest.raises(GateError, match="--fail-under"):
            parse_thresholds([bad])


def test_a_significant_regression_fails_and_noise_does_not() -> None:
    n = 40
    worse_a = {f"i{i}": [0.9] for i in range(n)}
    worse_b = {f"i{i}": [0.3 + 0.01 * (i % 5)] for i in range(n)}
    noise_a = {f"i{i}": [0.5 + 0.01 * (i % 3)] for i in range(n)}
    noise_b = {f"i{i}": [0.5 + 0.01 * ((i + 1) % 3)] for i in range(n)}
    a = rows(worse_a, scorer_id="x") + rows(noise_a, scorer_id="y")
    b = rows(worse_b, scorer_id="x") + rows(noise_b, scorer_id="y")
    failures = check_regressions(compare_runs(record("a"), a, record("b"), b))
    assert [f.scorer_id for f in failures] == ["x"]
    assert "significant regression" in failures[0].reason


def test_a_scorer_that_errored_on_every_item_fails_the_run_and_the_weighted_score() -> None:
    from assay.analysis.report_terminal import summary_table
    from assay.runner.api import run_evals
    from assay.scoring.scorer import Scorer

    def judge_down(ctx: object) -> float:
        raise RuntimeError("judge unreachable")

    items = [{"id": str(k), "input": "a", "expected_output": "a"} for k in range(4)]
    result = run_evals(
        items,
        lambda text: text,
        ["exact-match", Scorer("judge").score(judge_down)],
        progress=False,
    )
    summary = result.summary
    assert summary.scorers["exact-match"].mean == 1.0
    assert summary.weighted_score is None and summary.unscored_scorers == ["judge"]
    failures = check_run(summary)
    assert [(f.gate, f.scorer_id) for f in failures] == [("no-score", "judge")]
    assert "judge: produced no score (4 errors" in failures[0].reason
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(summary_table(result.record))
    text = console.export_text()
    assert "weighted score undefined (no score from judge)" in text
    assert "weighted score 1" not in text


def test_unknown_fail_under_names_are_found_before_a_run() -> None:
    from assay.analysis.gates import validate_thresholds

    validate_thresholds(["exact-match", "Exact"], {"exact-match": "Exact"})
    with pytest.raises(GateError, match="no scorer 'exact-mach'; did you mean 'exact-match'"):
        validate_thresholds(["exact-mach"], {"exact-match": "Exact"})
