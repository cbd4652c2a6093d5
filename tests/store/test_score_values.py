"""Named values and corpus payloads in the store (both backends), and migration 0002 of an
existing 0001 database in place."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from assay.store import Store, open_store
from assay.store.engine import (
    _alembic_config,
    create_store_engine,
    current_revision,
    head_revision,
    resolve_url,
)
from assay.types import ItemResult, RunInfo, ScoreResult, ScorerSpec, TargetSpec
from tests.store.factories import error_score, item_result, ready_score


def _info(run_id: str) -> RunInfo:
    return RunInfo(
        id=run_id,
        target=TargetSpec(kind="callable", label="app:answer"),
        scorers=[
            ScorerSpec(id="rouge", label="Rouge", aggregations=("mean", "median"), threshold=0.4),
            ScorerSpec(id="judge", label="Judge"),
        ],
    )


def _rouge(position: int) -> ScoreResult:
    return ScoreResult(
        scorer_id="rouge",
        scorer_label="Rouge",
        call_id=f"call-{position}",
        status="ready",
        score=0.5 + position / 100,
        values={"rouge1": 0.75, "rouge2": position / 10, "rougeL": 0.5},
        corpus={"prediction": f"p{position}", "references": ["r", "\u00e9\u0000x"]},
    )


def test_values_and_corpus_round_trip(store: Store) -> None:
    store.runs.create(_info("run-v"))
    results = [
        item_result(f"i{p}", p, scores={"rouge": _rouge(p), "judge": ready_score("judge", 0.3)})
        for p in range(3)
    ] + [item_result("i3", 3, scores={"rouge": error_score("rouge")})]
    store.runs.write_results("run-v", results)

    back = list(store.runs.results("run-v"))
    assert back == results  # values, corpus (a NUL inside JSON too) and call ids all survive
    assert back[1].scores["rouge"].values == {"rouge1": 0.75, "rouge2": 0.1, "rougeL": 0.5}
    assert back[0].scores["judge"].values == {} and back[0].scores["judge"].corpus is None

    rows = list(store.runs.score_rows("run-v"))
    by_key = {(r.item_id, r.scorer_id): r for r in rows}
    assert by_key[("i2", "rouge")].values == {"rouge1": 0.75, "rouge2": 0.2, "rougeL": 0.5}
    assert by_key[("i2", "judge")].values is None
    assert by_key[("i3", "rouge")].values is None and by_key[("i3", "rouge")].status == "error"

    corpus = list(store.runs.corpus_rows("run-v", "rouge"))
    assert [(p, r) for p, r, _ in corpus] == [(0, 0), (1, 0), (2, 0)]
    assert corpus[2][2] == {"prediction": "p2", "references": ["r", "\u00e9\u0000x"]}

    record = store.runs.get("run-v")
    assert record.info.scorers[0].aggregations == ("mean", "median")
    assert record.info.scorers[0].threshold == 0.4

    from assay.summary.columns import ScoreColumnsBuilder

    builder = ScoreColumnsBuilder.from_rows(rows)
    assert builder.value_keys("rouge") == ["rouge1", "rouge2", "rougeL"]
    assert len(builder.value_columns("rouge", "rouge2")) == 3


def test_a_stored_run_summarises_values_and_compares_them(store: Store) -> None:
    from assay.operations.stored_runs import compare_stored, run_stored
    from assay.scoring.score_value import Score
    from assay.scoring.scorer import Scorer

    def scorer(shift: float) -> Scorer:
        return Scorer("rouge").score(
            lambda ctx: Score(0.5, values={"rouge2": float(ctx.call.output) + shift})
        )

    rows = [{"id": f"i{k}", "output": str(k / 10)} for k in range(6)]
    a = run_stored(rows, None, [scorer(0.0)], store=store, progress=False)
    b = run_stored(rows, None, [scorer(0.2)], store=store, progress=False)
    assert a.summary.scorers["rouge"].values["rouge2"].mean == pytest.approx(0.25)
    stored = store.runs.get(b.info.id).summary
    assert stored is not None and stored.scorers["rouge"].values["rouge2"].mean == pytest.approx(
        0.45
    )
    cmp = compare_stored(a.info.id, b.info.id, store=store)
    (rouge,) = cmp.scorers
    assert rouge.delta == pytest.approx(0.0) and rouge.verdict == "not_significant"
    assert rouge.values["rouge2"].delta == pytest.approx(0.2)
    assert rouge.values["rouge2"].verdict == "improved" and rouge.values["rouge2"].n_paired == 6
    assert not cmp.has_regression


def _insert_0001_run(conn: sa.Connection) -> None:
    """One run with a result, a score and a judge call, written with the 0001 schema."""
    meta = sa.MetaData()
    tables = {
        name: sa.Table(name, meta, autoload_with=conn)
        for name in ("runs", "item_results", "scores", "judge_calls")
    }
    conn.execute(
        tables["runs"].insert(),
        {
            "id": "old-run",
            "target_kind": "callable",
            "target_label": "app:answer",
            "target": {"kind": "callable", "label": "app:answer"},
            "scorers": [{"id": "judge", "name": "Judge", "score_range": [0, 5]}],
            "concurrency": 2,
            "repeats": 1,
            "threshold": 0.5,
            "status": "completed",
            "completed_results": 1,
            "failed_results": 0,
            "created_at": 1.0,
            "updated_at": 2.0,
        },
    )
    conn.execute(
        tables["item_results"].insert(),
        {
            "id": "res-1",
            "run_id": "old-run",
            "item_id": "q1",
            "repeat": 0,
            "position": 0,
            "output": "an answer",
            "started_at": 1.0,
            "completed_at": 1.5,
        },
    )
    conn.execute(
        tables["scores"].insert(),
        {
            "id": "score-1",
            "result_id": "res-1",
            "scorer_id": "judge",
            "scorer_name": "Judge",
            "scorer_run_id": "the-old-call-id",
            "status": "ready",
            "score": 4.0,
            "reason": "good",
            "steps": {"score": 4.0},
            "duration_ms": 12.0,
        },
    )
    conn.execute(
        tables["judge_calls"].insert(),
        {
            "score_id": "score-1",
            "seq": 0,
            "step": "score",
            "status": "success",
            "model_id": "m",
            "attempts": 1,
            "duration_ms": 10.0,
            "prompt": "Rate it",
            "cached": False,
            "input_tokens": 5,
            "output_tokens": 2,
            "total_tokens": 7,
        },
    )


def test_migration_upgrades_an_existing_0001_database_in_place(store_url: str) -> None:
    engine = create_store_engine(resolve_url(store_url))
    try:
        with engine.connect() as conn, conn.begin():
            command.upgrade(_alembic_config(conn), "0001")
        with engine.begin() as conn:
            _insert_0001_run(conn)
        assert current_revision(engine) == "0001"
    finally:
        engine.dispose()

    with open_store(store_url) as store:  # opening migrates to the head revision
        assert current_revision(store.engine) == head_revision()  # 0002 and any later
        columns = {c["name"] for c in sa.inspect(store.engine).get_columns("scores")}
        assert {"call_id", "values", "corpus"} <= columns and "scorer_run_id" not in columns
        (result,) = store.runs.results("old-run")
        score = result.scores["judge"]
        assert score.call_id == "the-old-call-id"
        assert (score.status, score.score, score.reason) == ("ready", 4.0, "good")
        assert score.values == {} and score.corpus is None
        assert [c.usage.total_tokens for c in score.judge_calls] == [7]  # not cascaded away
        assert [r.values for r in store.runs.score_rows("old-run")] == [None]
        record = store.runs.get("old-run")
        assert record.info.scorers[0].aggregations == ("mean",)
        assert record.info.scorers[0].threshold is None
        # and the upgraded table takes new rows with values
        new = ItemResult(
            item_id="q2",
            position=1,
            scores={"judge": _rouge(1).model_copy(update={"scorer_id": "judge"})},
        )
        store.runs.write_results("old-run", [new])
        assert list(store.runs.results("old-run"))[1].scores["judge"].values["rouge2"] == 0.1


def test_migration_downgrades_back_to_0001(store_url: str) -> None:
    with open_store(store_url) as store:
        store.runs.create(_info("run-d"))
        store.runs.write_results("run-d", [item_result("i0", 0, scores={"rouge": _rouge(0)})])
        with store.engine.connect() as conn, conn.begin():
            command.downgrade(_alembic_config(conn), "0001")
        columns = {c["name"] for c in sa.inspect(store.engine).get_columns("scores")}
        assert "scorer_run_id" in columns and not {"call_id", "values", "corpus"} & columns
        with store.engine.connect() as conn:
            kept = conn.exec_driver_sql("SELECT scorer_run_id FROM scores").scalars().all()
        assert kept == ["call-0"]
