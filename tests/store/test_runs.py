"""Runs: creation, lookup by prefix, results round trip, resume keys, score rows."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from assay.store import (
    AmbiguousRunIdError,
    DatasetNotFoundError,
    DuplicateItemError,
    DuplicateResultError,
    RunExistsError,
    RunNotFoundError,
    Store,
)
from assay.store.runs_repo import new_lease_owner
from assay.store.tables import item_results, judge_calls, run_items, scores
from assay.types import (
    Item,
    RunInfo,
    RunSummary,
    ScoreRow,
    ScorerSpec,
    ScorerSummary,
    TargetError,
    TargetSpec,
)
from tests.store.factories import error_score, item_result, not_scorable, ready_score


def run_info(run_id: str, **overrides: object) -> RunInfo:
    values: dict[str, object] = {
        "id": run_id,
        "name": f"run {run_id}",
        "target": TargetSpec(kind="callable", label="app:answer", ref="app:answer"),
        "scorers": [
            ScorerSpec(id="exact", label="Exact", type="check-equals", params={"x": 1}),
            ScorerSpec(id="judge", label="Judge", higher_is_better=False, score_range=(0, 5)),
        ],
        "concurrency": 4,
        "repeats": 2,
        "threshold": 0.5,
        "metadata": {"git": "abc"},
        "created_at": 1_700_000_000.0,
    }
    values.update(overrides)
    return RunInfo.model_validate(values)


def count(store: Store, table: sa.Table) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() or 0)


def test_create_get_and_lifecycle(store: Store) -> None:
    info = run_info("run-1")
    record = store.runs.create(info)
    assert record.status == "pending" and record.info == info
    store.runs.mark_started("run-1")
    assert store.runs.get("run-1").status == "interrupted"  # running, but no process holds it
    store.runs.acquire_lease("run-1", new_lease_owner())
    started = store.runs.get("run-1")
    assert started.status == "running" and started.started_at is not None
    summary = RunSummary(
        items=3, results=6, scorers={"exact": ScorerSummary(scorer_id="exact", scorer_label="E")}
    )
    store.runs.finish("run-1", "completed", summary)
    done = store.runs.get("run-1")
    assert done.status == "completed" and done.summary == summary
    assert done.completed_at is not None and done.info == info
    store.runs.mark_started("run-1")  # a resume keeps the first start time
    assert store.runs.get("run-1").started_at == started.started_at
    with pytest.raises(RunExistsError, match="'run-1' already exists"):
        store.runs.create(info)
    with pytest.raises(RunNotFoundError, match="'nope'"):
        store.runs.mark_started("nope")


def test_get_by_unique_prefix(store: Store) -> None:
    for run_id in ("abc123", "abd456", "x_y%z"):
        store.runs.create(run_info(run_id))
    assert store.runs.get("abc").id == "abc123"
    assert store.runs.get("abd4").id == "abd456"
    assert store.runs.get("abc123").id == "abc123"
    with pytest.raises(AmbiguousRunIdError, match=r"'ab' is ambiguous.*'abc123', 'abd456'"):
        store.runs.get("ab")
    with pytest.raises(RunNotFoundError, match="'zz'"):
        store.runs.get("zz")
    with pytest.raises(RunNotFoundError):
        store.runs.get("x%")  # LIKE wildcards in the prefix are literal
    assert store.runs.get("x_y").id == "x_y%z"


def test_list_newest_first_and_by_dataset(store: Store) -> None:
    ds = store.datasets.create("qa")
    store.runs.create(run_info("old", created_at=1.0))
    store.runs.create(
        run_info("new", created_at=2.0, dataset_id=ds.id, dataset_name="qa", dataset_version=0)
    )
    assert [r.id for r in store.runs.list()] == ["new", "old"]
    assert [r.id for r in store.runs.list(limit=1, offset=1)] == ["old"]
    assert [r.id for r in store.runs.list(dataset="qa")] == ["new"]
    assert [r.id for r in store.runs.list(dataset=ds.id)] == ["new"]
    with pytest.raises(DatasetNotFoundError):
        store.runs.create(run_info("bad", dataset_id="missing", dataset_name="missing"))
    store.datasets.delete("qa")  # the run stays, pointing at the name it ran on
    kept = store.runs.get("new")
    assert kept.info.dataset_id is None and kept.info.dataset_name == "qa"


def test_inline_items_kept_for_resume(store: Store) -> None:
    data = [Item(id=f"q{i}", input=f"question {i}", metadata={"i": i}) for i in range(7)]
    store.runs.CHUNK = 3
    record = store.runs.create(run_info("inline"), data)
    assert record.info.total_items == 7
    assert list(store.runs.inline_items("inline")) == data
    with pytest.raises(DuplicateItemError, match="'q1'"):
        store.runs.create(run_info("dup"), [*data, Item(id="q1", input="again")])
    with pytest.raises(RunNotFoundError):
        store.runs.get("dup")  # the failed create left nothing behind


def test_write_results_round_trip(store: Store) -> None:
    store.runs.create(run_info("r"))
    written = [
        item_result(
            "a",
            0,
            scores={
                "exact": ready_score("exact", 1.0),
                "judge": ready_score("judge", 0.25, calls=2),
            },
        ),
        item_result("a", 0, repeat=1, scores={"exact": ready_score("exact", 0.0)}),
        item_result(
            "b",
            1,
            scores={"exact": not_scorable("exact"), "judge": error_score("judge")},
        ),
        item_result(
            "c",
            2,
            error=TargetError(message="boom", kind="RuntimeError", traceback="Traceback..."),
        ),
    ]
    store.runs.write_results("r", written)
    read = list(store.runs.results("r"))
    assert read == written
    judged = read[0].scores["judge"]
    assert [c.step for c in judged.judge_calls] == ["score", "reason"]
    assert judged.judge_calls[0].usage.total_tokens == 128
    assert judged.judge_calls[0].cost_usd == pytest.approx(0.00042)
    assert read[2].scores["judge"].error is not None
    assert read[2].scores["judge"].judge_calls[0].error == "bad json"
    record = store.runs.get("r")
    assert (record.completed_results, record.failed_results) == (4, 1)
    assert count(store, judge_calls) == 3


def test_results_order_offset_limit_across_chunks(store: Store) -> None:
    store.runs.create(run_info("r"))
    store.runs.CHUNK = 4
    batch = [
        item_result(f"i{p}", p, rep, scores={"exact": ready_score("exact", (p + rep) % 2)})
        for p in reversed(range(10))
        for rep in (1, 0)
    ]
    store.runs.write_results("r", batch[:7])
    store.runs.write_results("r", batch[7:])
    keys = [(r.position, r.repeat) for r in store.runs.results("r")]
    assert keys == [(p, rep) for p in range(10) for rep in (0, 1)]
    page = [(r.position, r.repeat) for r in store.runs.results("r", offset=5, limit=9)]
    assert page == keys[5:14]
    assert [r.scores["exact"].score for r in store.runs.results("r", limit=3)] == [0.0, 1.0, 1.0]


def test_completed_keys_and_duplicate_results(store: Store) -> None:
    store.runs.create(run_info("r"))
    store.runs.write_results("r", [item_result("a", 0), item_result("a", 0, 1)])
    assert store.runs.completed_keys("r") == {("a", 0), ("a", 1)}
    before = count(store, item_results)
    with pytest.raises(DuplicateResultError, match=r"duplicate results for run 'r': 'a#1'"):
        store.runs.write_results("r", [item_result("b", 1), item_result("a", 0, 1)])
    with pytest.raises(DuplicateResultError, match="'c#0'"):
        store.runs.write_results("r", [item_result("c", 2), item_result("c", 2)])
    assert count(store, item_results) == before  # the whole batch was refused
    assert store.runs.completed_keys("r") == {("a", 0), ("a", 1)}
    assert store.runs.get("r").completed_results == 2
    with pytest.raises(RunNotFoundError):
        store.runs.write_results("ghost", [item_result("a", 0)])
    with pytest.raises(RunNotFoundError):
        store.runs.completed_keys("ghost")


def test_score_rows_flat_and_ordered(store: Store) -> None:
    store.runs.create(run_info("r"))
    store.runs.CHUNK = 1  # score rows page by 10 x CHUNK: forces several pages
    results = [
        item_result(
            f"i{p}",
            p,
            rep,
            scores={
                "judge": ready_score("judge", p / 10) if p % 3 else error_score("judge"),
                "exact": ready_score("exact", rep),
            },
        )
        for p in range(9)
        for rep in range(2)
    ]
    store.runs.write_results("r", results[::-1])
    rows = list(store.runs.score_rows("r"))
    expected = [
        ScoreRow(
            f"i{p}",
            p,
            rep,
            scorer,
            "error" if scorer == "judge" and p % 3 == 0 else "ready",
            None if scorer == "judge" and p % 3 == 0 else (p / 10 if scorer == "judge" else rep),
        )
        for p in range(9)
        for rep in range(2)
        for scorer in ("exact", "judge")
    ]
    assert rows == expected


def test_delete_run_cascades(store: Store) -> None:
    store.runs.create(run_info("keep"), [Item(id="x", input=1)])
    store.runs.create(run_info("drop"), [Item(id="x", input=1)])
    for run_id in ("keep", "drop"):
        store.runs.write_results(
            run_id, [item_result("x", 0, scores={"judge": ready_score("judge", 1, calls=1)})]
        )
    store.runs.delete("drop")
    with pytest.raises(RunNotFoundError):
        store.runs.get("drop")
    assert (count(store, item_results), count(store, scores), count(store, judge_calls)) == (
        1,
        1,
        1,
    )
    assert count(store, run_items) == 1
    with pytest.raises(RunNotFoundError):
        store.runs.delete("drop")


def test_values_json_cannot_hold_are_stored_readably(store: Store) -> None:
    """Targets return anything: non-finite floats become null, models and sets plain JSON."""
    store.runs.create(run_info("r"))
    odd = item_result("odd", 0).model_copy(
        update={
            "output": {
                "nan": float("nan"),
                "inf": [float("inf")],
                "spec": TargetSpec(kind="model", label="m"),
            },
            "input": {"tags": ("a", "b"), "text": "naïve ✓"},
        }
    )
    store.runs.write_results("r", [odd])
    (read,) = store.runs.results("r")
    assert read.output == {
        "nan": None,
        "inf": [None],
        "spec": TargetSpec(kind="model", label="m").model_dump(mode="json"),
    }
    assert read.input == {"tags": ["a", "b"], "text": "naïve ✓"}
