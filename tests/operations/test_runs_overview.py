"""The runs list's sorting and the score trend across runs of one dataset (issue 25)."""

from __future__ import annotations

import pytest

from assay.operations.runs_overview import (
    RUN_SORTS,
    score_trend,
    sort_runs,
    trend_choices,
)
from assay.types import RunInfo, RunRecord, RunStatus, RunSummary, ScorerSummary, TargetSpec


def _run(
    run_id: str,
    created: float,
    *,
    name: str | None = None,
    dataset: str | None = "qa",
    score: float | None = None,
    cost: float | None = None,
    target_cost: float | None = None,
    latency: float | None = None,
    done: int = 10,
    status: RunStatus = "completed",
    means: dict[str, float | None] | None = None,
) -> RunRecord:
    info = RunInfo(
        id=run_id,
        name=name,
        dataset_name=dataset,
        target=TargetSpec(kind="stored-output", label="stored"),
        total_items=10,
        created_at=created,
    )
    summary = None
    if status == "completed" or means is not None:
        summary = RunSummary(
            items=done,
            results=done,
            weighted_score=score,
            cost_usd=cost,
            target_cost_usd=target_cost,
            latency_ms_p50=latency,
            scorers={
                key: ScorerSummary(scorer_id=key, scorer_label=key.upper(), mean=mean)
                for key, mean in (means or {}).items()
            },
        )
    return RunRecord(info=info, status=status, completed_results=done, summary=summary)


RECORDS = [  # newest first, as the store lists them
    _run("c", 3.0, name="Charlie", dataset="zeta", score=0.2, cost=0.5, latency=300.0),
    _run("b", 2.0, name="alpha", dataset="Beta", score=None, cost=None, done=4),
    _run("a", 1.0, name=None, dataset="alpha", score=0.9, target_cost=0.1, cost=0.05, latency=50),
]


@pytest.mark.parametrize(
    ("by", "descending", "order"),
    [
        ("created", True, ["c", "b", "a"]),
        ("created", False, ["a", "b", "c"]),
        ("name", False, ["b", "c", "a"]),  # case-insensitive; no name last
        ("name", True, ["c", "b", "a"]),
        ("dataset", False, ["a", "b", "c"]),
        ("score", True, ["a", "c", "b"]),  # no score last ...
        ("score", False, ["c", "a", "b"]),  # ... either way
        ("cost", False, ["a", "c", "b"]),  # a: 0.05 judge + 0.1 target = 0.15
        ("latency", False, ["a", "c", "b"]),
        ("items", True, ["c", "a", "b"]),
    ],
)
def test_sort_runs(by: str, descending: bool, order: list[str]) -> None:
    rows = sort_runs(RECORDS, by, descending=descending)  # type: ignore[arg-type]
    assert [r.record.info.id for r in rows] == order


def test_rows_carry_cost_latency_and_progress() -> None:
    rows = {r.record.info.id: r for r in sort_runs(RECORDS)}
    assert rows["a"].cost_usd == pytest.approx(0.15)
    assert rows["b"].cost_usd is None and rows["c"].latency_ms == 300.0
    assert rows["b"].progress.text == "4 of 10" and rows["b"].progress.partial
    assert set(RUN_SORTS) == {"created", "name", "dataset", "score", "cost", "latency", "items"}


def test_an_unknown_sort_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="sort must be one of created, name"):
        sort_runs(RECORDS, "price")  # type: ignore[arg-type]


def test_score_trend_is_oldest_first_over_one_dataset_and_marks_partial_runs() -> None:
    records = [
        _run("r4", 4.0, dataset="other", means={"acc": 0.1}),
        _run("r3", 3.0, means={"acc": 0.7, "tone": 0.3}, status="interrupted", done=3),
        _run("r2", 2.0, means={"tone": 0.5}),
        _run("r1", 1.0, means={"acc": 0.4}),
        _run("inline", 0.5, dataset=None, means={"acc": 1.0}),
    ]
    assert trend_choices(records) == {"other": ["acc"], "qa": ["acc", "tone"]}
    trend = score_trend(records, "qa", "acc")
    assert trend.scorer_label == "ACC"
    assert [(p.run_id, p.mean, p.partial) for p in trend.points] == [
        ("r1", 0.4, False),
        ("r2", None, False),
        ("r3", 0.7, True),
    ]
    with pytest.raises(ValueError, match="scorer 'nope' is in no run of dataset 'qa'"):
        score_trend(records, "qa", "nope")
    with pytest.raises(ValueError, match="dataset 'inline' has no run"):
        score_trend(records, "inline", "acc")
